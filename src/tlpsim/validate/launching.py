"""What the validation's host programs share: the result of one program run, a
launcher that passes GPGPU-Sim's ptxas resources and records each launch (with
its label and, when the %clock probe is plugged in, the launch's %clock reads),
and the CUDA runtime calls GPGPU-Sim performs differently from a host copy.

The device's toolchain (gpu.toolchain) decides which code runs. `cuda11`: the
reference's own PTX, which CUDA 11.8 (the cuda11 toolchain's release) compiled for
compute_35, with GPGPU-Sim's ptxas -v counts for sm_35 — the same code GPGPU-Sim
ran. `cuda13`: the reference programs' `.cu` sources compiled by nvcc 13.5 for
gpu.arch with the preset's register cap, with ptxas 13.5's counts — what the
CUDA 13.5 toolchain makes of the same programs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import tlpsim as cp
from tlpsim.validate.clock import ClockRead, drain

__all__ = ["Launcher", "RunResult", "device_memset", "load_module"]


@dataclass
class RunResult:
    """One host program's run: its launches in order and its own output check."""

    name: str
    records: list = field(default_factory=list)   # tlpsim LaunchRecords
    labels: list[str] = field(default_factory=list)  # one per record: the launch's validation id
    clock: list[list[ClockRead]] = field(default_factory=list)  # one per record: its %clock reads
    verified: bool = False
    output: str = ""                              # our version of the program's output line
    bad: int = -1


class Launcher:
    """Launches on the current device with fixed ptxas resources and records each
    launch into a `RunResult` under a label."""

    def __init__(self, result: RunResult, registers: int, shared_bytes: int) -> None:
        self.result = result
        # the reference PTX carries GPGPU-Sim's counts; a cuda13 compilation its own ptxas's
        self.resources: dict | None = {"registers": int(registers), "shared_bytes": int(shared_bytes)} \
            if runs_reference_ptx() else None

    def __call__(self, kernel: Any, grid: Any, block: Any, args: tuple, shared_mem: int = 0,
                 label: str | None = None) -> Any:
        rec = kernel(grid, block, args, shared_mem=shared_mem, resources=self.resources)
        r = self.result
        r.records.append(rec)
        r.labels.append(label or (r.name if not r.labels else f"{r.name}#{len(r.labels)}"))
        r.clock.append(drain(cp.Device.current()))
        return rec


def runs_reference_ptx() -> bool:
    """Whether the current device runs the reference's CUDA 11.8 PTX (toolchain cuda11)
    rather than its own CUDA 13.5 compilation of the sources (cuda13)."""
    return cp.Device.current().toolchain == "cuda11"


def load_module(ref_dir: Path, ptx: str) -> Any:
    """A reference program's module as a `tlpsim.RawModule`: its PTX file `NAME.sm35.ptx`
    (toolchain cuda11), or its source `NAME.cu` compiled with CUDA 13.5 (cuda13); a
    missing file is a clear error."""
    path = Path(ref_dir) / ptx
    if not runs_reference_ptx():
        path = path.with_name(path.name.split(".")[0] + ".cu")
    if not path.is_file():
        raise cp.TlpsimError(f"reference {'PTX' if path.suffix == '.ptx' else 'source'} {path} not found (the "
                             "reference data is incomplete)")
    return cp.RawModule(path=str(path))


def device_memset(arr: Any, value: int = 0) -> None:
    """cudaMemset: GPGPU-Sim performs it functionally only (gpgpu_t::gpu_memset), so
    unlike a host-to-device copy under -gpgpu_perf_sim_memcpy 1 it leaves nothing in
    the L2; the host-copy hooks (l2.memcpy_fills) are bypassed here for the same reason."""
    mem = arr.device.memory
    hooks, mem.host_write_hooks = mem.host_write_hooks, []
    try:
        mem.write(arr.ptr, np.full(arr.nbytes, value & 0xFF, np.uint8))
    finally:
        mem.host_write_hooks = hooks

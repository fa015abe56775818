"""Real-GPU measurements a validation compares against (`--hardware NAME`): the
directory `hardware/NAME/` of the shared reference data, as the collection script
left it —

- `facts.json`: device properties and the occupancy limits read on the card;
- `workloads-small.json`, `workloads-paper.json`: per launch of every built-in
  workload (kernel, grid, block, dynamic shared memory, median µs), the kernels'
  register and static shared-memory counts, whether the run verified;
- `sweeps.json`: CTA-occupancy sweeps (dynamic shared memory padded so that the
  occupancy API reports N CTAs/SM; the achieved N per point, 0 when the pad failed);
- `programs.json`: native builds and runs of the microbenchmarks, whose output
  lines carry the figures (`cycles_per_dep_op_warp0=`, `cycles_per_step=`,
  `cycles_per_access=`).

The directory is, in order: the one given, `$TLPSIM_HARDWARE_DIR/NAME`, or
`shared/reference/hardware/NAME` next to the project checkout. A missing or
malformed file is a `ReferenceDataError` naming it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tlpsim.validate.reference import ReferenceDataError, _load, _need

__all__ = ["HardwareReference", "Launch", "MicroFigure", "find_hardware_dir", "load_hardware", "micro_figures"]

FILES = ("facts.json", "workloads-small.json", "sweeps.json", "programs.json")


def find_hardware_dir(name: str, explicit: str | Path | None = None) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name or ""):
        raise ReferenceDataError(f"--hardware {name!r}: not a machine name (e.g. h200)")
    cands: list[Path] = []
    if explicit:
        cands.append(Path(explicit))
    elif os.environ.get("TLPSIM_HARDWARE_DIR", "").strip():
        cands.append(Path(os.environ["TLPSIM_HARDWARE_DIR"].strip()) / name)
    else:
        here = Path(__file__).resolve()
        cands += [here.parents[4] / "shared" / "reference" / "hardware" / name,
                  Path.cwd().parent / "shared" / "reference" / "hardware" / name]
    for c in cands:
        if (c / "facts.json").is_file():
            return c
    raise ReferenceDataError(f"no hardware measurements of {name!r} (facts.json) in "
                             f"{', '.join(str(c) for c in cands)}; pass --hardware-dir DIR or set TLPSIM_HARDWARE_DIR")


@dataclass(frozen=True)
class Launch:
    """One measured launch of a workload run."""

    ordinal: int            # position in the run's launch sequence (0-based)
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dyn_smem: int
    us: float               # median kernel time over the timed runs


@dataclass(frozen=True)
class MicroFigure:
    """A microbenchmark figure measured on the card (core cycles)."""

    id: str                 # e.g. dep_chain.fma.32, pointer_chase.256KB, smem_stride.tput.8
    value: float
    unit: str


@dataclass
class HardwareReference:
    dir: Path
    name: str
    facts: dict
    workloads: dict[str, dict[str, dict]] = field(default_factory=dict)   # size -> name -> entry
    skipped: dict[str, Any] = field(default_factory=dict)                  # size -> what the collection skipped
    sweeps: dict[str, dict] = field(default_factory=dict)                  # "suite:name" -> entry
    programs: dict[str, dict] = field(default_factory=dict)

    @property
    def clock_mhz(self) -> float:
        """The SM clock of the measured runs (the device's clockRate)."""
        return float(self.facts["device"]["props"]["clockRate"]) / 1000.0

    def launches(self, size: str, name: str) -> list[Launch]:
        """The measured launches of workload `name` at `size`, in order."""
        e = self.workloads[size][name]
        kernels = list(e["kernels"])
        cols = list(e["launch_columns"])
        idx = {c: cols.index(c) for c in ("kernel", "grid", "block", "dyn_smem", "us_median")}
        out = []
        for k, row in enumerate(e["launches"]):
            out.append(Launch(k, kernels[int(row[idx["kernel"]])], tuple(row[idx["grid"]]), tuple(row[idx["block"]]),
                              int(row[idx["dyn_smem"]]), float(row[idx["us_median"]])))
        return out


def load_hardware(name: str, explicit: str | Path | None = None) -> HardwareReference:
    d = find_hardware_dir(name, explicit)
    facts = _load(d / "facts.json")
    _need(_need(facts, "device", str(d / "facts.json")), "props", f"{d / 'facts.json'}: device")
    hw = HardwareReference(d, name, facts)
    for size in ("small", "paper"):
        path = d / f"workloads-{size}.json"
        if not path.is_file():
            continue
        data = _load(path)
        items = _need(data, "items", str(path))
        hw.workloads[size] = {}
        hw.skipped[size] = {str(k): "not reached" for k in data.get("skipped", [])}
        for wl, entry in (items.items() if isinstance(items, dict) else items):
            if "error" in entry and "launches" not in entry:   # the collection gave up on it
                hw.skipped[size][wl] = str(entry["error"])
                continue
            for key in ("kernels", "launches", "launch_columns", "verified"):
                _need(entry, key, f"{path}: items.{wl}")
            hw.workloads[size][wl] = entry
    if "small" not in hw.workloads:
        raise ReferenceDataError(f"reference file {d / 'workloads-small.json'} not found")
    sw = _load(d / "sweeps.json")
    hw.sweeps = dict(_need(sw, "items", str(d / "sweeps.json")))
    for key, entry in hw.sweeps.items():
        _need(entry, "points", f"{d / 'sweeps.json'}: items.{key}")
    hw.programs = dict(_need(_load(d / "programs.json"), "items", str(d / "programs.json")))
    return hw


_DEP = re.compile(r"dep_chain (\w+) threads=(\d+) .*cycles_per_dep_op_warp0=([\d.]+)")
_CHASE = re.compile(r"pointer_chase footprint=(\w+) .*cycles_per_step=([\d.]+)")
_SMEM = re.compile(r"smem_stride (chain|tput) stride=(\d+) .*cycles_per_access=([\d.]+)")


def micro_figures(hw: HardwareReference) -> dict[str, MicroFigure]:
    """The microbenchmarks' figures from their native runs' output, by launch id (the ids
    of tlpsim.validate.micro: `dep_chain.fma.32` is the fma.f32 chain at 32 threads)."""
    out: dict[str, MicroFigure] = {}
    for prog, rx in (("micro:dep_chain", _DEP), ("micro:pointer_chase", _CHASE), ("micro:smem_stride", _SMEM)):
        entry = hw.programs.get(prog)
        if entry is None or entry.get("rc") != 0:
            continue
        for line in str(entry.get("stdout", "")).splitlines():
            m = rx.match(line.strip())
            if m is None:
                continue
            if prog == "micro:dep_chain":
                op = m.group(1).split("_")[0]          # fma_f32 -> fma, mad_s32 -> mad
                fid, unit = f"dep_chain.{op}.{m.group(2)}", "cycles per dependent op"
                value = float(m.group(3))
            elif prog == "micro:pointer_chase":
                fid, unit, value = f"pointer_chase.{m.group(1)}", "cycles per chase step", float(m.group(2))
            else:
                fid, unit = f"smem_stride.{m.group(1)}.{m.group(2)}", "cycles per shared access"
                value = float(m.group(3))
            out[fid] = MicroFigure(fid, value, unit)
    return out

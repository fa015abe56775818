"""The four GTX480 calibration microbenchmarks (reference kernels/micro/) as host
programs driving tlpsim: the same compute_35 PTX with GPGPU-Sim's register and
shared-memory counts, the same inputs (the programs' fixed-seed LCG), launches in
the same order and each program's own output check; and their derived figures
exactly as micro/README.md defines them:

=================  ========================================================  =======================
program            figure                                                    from
=================  ========================================================  =======================
dep_chain          cycles per dependent op = warp 0's %clock cycles / 256     the %clock probe
stream_copy        bytes per cycle = 2 x 8 MiB / the launch's cycles          the launch's cycles
pointer_chase      cycles per chase step = %clock cycles / 4096               the %clock probe
smem_stride        cycles per shared access = warp 0's %clock cycles / 256    the %clock probe
=================  ========================================================  =======================

The %clock cycles are measured in the timing model (`tlpsim.validate.clock`);
every launch also reports its whole-launch cycles. Launch ids name one launch:
`dep_chain.fma.32` (kernel, threads), `stream_copy`, `pointer_chase.256KB`,
`smem_stride.tput.8` (variant, stride in words). Launches selected alone run on a
fresh GPU with only the host copies before them, so their caches may start colder
than at their place in the whole program.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import tlpsim as cp
from tlpsim.errors import TlpsimError
from tlpsim.validate.launching import Launcher, RunResult, device_memset, load_module
from tlpsim.validate.lcg import LCG

__all__ = ["MICRO", "MicroBench", "launch_ids"]

DEP_CHAIN, DEP_PASSES = 256, 2
STREAM_N, STREAM_THREADS = 1 << 21, 256
CHASE_STEPS, CHASE_LINE = 4096, 128
SMEM_WORDS, SMEM_REPS, SMEM_PASSES = 1024, 256, 2


@dataclass(frozen=True)
class MicroBench:
    """A microbenchmark: its launch ids (from its reference entry), its host program
    and the derived figure of one launch."""

    launch_id: Callable[[dict], str]                       # reference launch -> id
    run: Callable[[dict, Path, set[str] | None], RunResult]
    figure: Callable[[dict, dict, dict[int, int]], dict]   # (reference launch, our metrics, clock) -> figure


def launch_ids(spec: dict, bench: MicroBench) -> list[str]:
    return [bench.launch_id(launch) for launch in spec["launches"]]


def _resources(spec: dict, kernel: str) -> tuple[int, int]:
    for k in spec["run"]["kernel_resources"]:
        if k["kernel"] == kernel:
            return int(k["regs"]), int(k["smem"])
    raise TlpsimError(f"micro reference {spec['source']}: no kernel_resources entry for {kernel}")


def _kernel_of(spec: dict, key: str, value: Any) -> str:
    """The mangled kernel of the reference launches whose `key` equals `value`."""
    for launch in spec["launches"]:
        if launch.get(key) == value:
            return launch["kernel"]
    raise TlpsimError(f"micro reference {spec['source']}: no launch with {key} = {value!r}")


def _figure(name: str, unit: str, ours: float | None, theirs: float, **extra: Any) -> dict:
    return {"figure": name, "unit": unit, "ours": ours, "gpgpusim": theirs, **extra}


def _warp0(clock: dict[int, int]) -> int | None:
    return clock.get(0)


# ---------------------------------------------------------------- dep_chain

def _dep_id(launch: dict) -> str:
    return f"dep_chain.{launch['op'].split('.')[0]}.{launch['threads']}"


def run_dep_chain(spec: dict, ref_dir: Path, only: set[str] | None) -> RunResult:
    maxt, fa, fb, ia, ib = 512, np.float32(0.999), np.float32(0.001), np.uint32(1664525), np.uint32(1013904223)
    s = LCG(7).draws(maxt)
    hf = (s >> 8).astype(np.float32) * np.float32(1.0 / 16777216.0)
    r = RunResult("dep_chain")
    mod = load_module(ref_dir, spec["ptx"])
    dfin, dfout = cp.zeros(maxt, cp.float32), cp.zeros(maxt, cp.float32)
    diin, diout, dclk = cp.zeros(maxt, cp.uint32), cp.zeros(maxt, cp.uint32), cp.zeros(maxt, cp.uint32)
    dfin.set(hf)
    diin.set(s)
    bad, ran, maxrel = 0, 0, 0.0
    for op in ("fma", "mad"):
        name = _kernel_of(spec, "op", "fma.rn.f32" if op == "fma" else "mad.lo.s32")
        k = mod.get_function(name)
        launch = Launcher(r, *_resources(spec, name))
        for nt in (32, 64, 128, 256, 512):
            label = f"dep_chain.{op}.{nt}"
            if only is not None and label not in only:
                continue
            ran += 1
            if op == "fma":
                device_memset(dfout)
                launch(k, (1,), (nt,), (dfin, dfout, dclk, fa, fb, np.int32(DEP_PASSES)), label=label)
                x = hf[:nt].astype(np.float64)
                for _ in range(DEP_PASSES * DEP_CHAIN):
                    x = x * float(fa) + float(fb)
                rel = np.abs(dfout.get()[:nt].astype(np.float64) - x) / np.abs(x)
                maxrel = max(maxrel, float(rel.max()))
                bad += int((~(rel < 1e-4)).sum())
            else:
                device_memset(diout)
                launch(k, (1,), (nt,), (diin, diout, dclk, ia, ib, np.int32(DEP_PASSES)), label=label)
                x = s[:nt].astype(np.uint64)
                for _ in range(DEP_PASSES * DEP_CHAIN):
                    x = (x * np.uint64(ia) + np.uint64(ib)) & np.uint64(0xFFFFFFFF)
                bad += int((diout.get()[:nt] != x.astype(np.uint32)).sum())
    r.bad, r.verified = bad, bad == 0
    r.output = (f"dep_chain chain={DEP_CHAIN} passes={DEP_PASSES} launches={ran} fma_max_rel_err={maxrel:.3e} "
                f"bad={bad}")
    return r


def _dep_figure(ref: dict, ours: dict, clock: dict[int, int]) -> dict:
    w0 = _warp0(clock)
    vals = list(clock.values())
    return _figure("cycles per dependent op", "cycles", None if w0 is None else w0 / DEP_CHAIN,
                   float(ref["cycles_per_dependent_op"]),
                   clock_cycles_warp0=w0, gs_clock_cycles_warp0=ref["clock_cycles_warp0"],
                   mean_over_warps=(sum(vals) / len(vals) / DEP_CHAIN) if vals else None,
                   gs_mean_over_warps=ref.get("cycles_per_dependent_op_mean_over_warps"),
                   clock_cycles_min_mean_max=[min(vals), sum(vals) / len(vals), max(vals)] if vals else None,
                   gs_clock_cycles_min_mean_max=[ref.get("clock_cycles_min_over_warps"),
                                                 ref.get("clock_cycles_mean_over_warps"),
                                                 ref.get("clock_cycles_max_over_warps")],
                   warps_measured=len(vals))


# ---------------------------------------------------------------- stream_copy

def run_stream_copy(spec: dict, ref_dir: Path, only: set[str] | None) -> RunResult:
    r = RunResult("stream_copy")
    if only is not None and "stream_copy" not in only:
        return r
    name = spec["launches"][0]["kernel"]
    k = load_module(ref_dir, spec["ptx"]).get_function(name)
    ha = (LCG(99).draws(STREAM_N) >> 8).astype(np.float32)
    da, db = cp.zeros(STREAM_N, cp.float32), cp.zeros(STREAM_N, cp.float32)
    da.set(ha)
    blocks = (STREAM_N + STREAM_THREADS - 1) // STREAM_THREADS
    Launcher(r, *_resources(spec, name))(k, (blocks,), (STREAM_THREADS,), (da, db, np.int32(STREAM_N)),
                                         label="stream_copy")
    r.bad = int((db.get() != ha).sum())
    r.verified = r.bad == 0
    r.output = (f"stream_copy n={STREAM_N} grid={blocks} block={STREAM_THREADS} bytes_moved={2 * ha.nbytes} "
                f"bad={r.bad}")
    return r


def _stream_figure(ref: dict, ours: dict, clock: dict[int, int]) -> dict:
    moved = 2 * STREAM_N * 4
    cyc = ours.get("cycles")
    return _figure("bytes per cycle", "B/cycle", moved / cyc if cyc else None, float(ref["bytes_per_cycle"]),
                   bytes_moved=moved, gb_per_s_at_700mhz=(moved / cyc * 0.7) if cyc else None,
                   gs_gb_per_s_at_700mhz=ref.get("gb_per_s_at_700mhz"))


# ---------------------------------------------------------------- pointer_chase

_FOOTPRINTS = (("4KB", 4 << 10), ("256KB", 256 << 10), ("32MB", 32 << 20))


def _sattolo(g: LCG, n: int) -> list[int]:
    """The program's random single cycle: for i = n-1 .. 1, swap perm[i] with perm[lcg % i]."""
    perm = list(range(n))
    draws = g.draws(n - 1).tolist() if n > 1 else []
    for k, i in enumerate(range(n - 1, 0, -1)):
        j = draws[k] % i
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def run_pointer_chase(spec: dict, ref_dir: Path, only: set[str] | None) -> RunResult:
    r = RunResult("pointer_chase")
    name = spec["launches"][0]["kernel"]
    k = load_module(ref_dir, spec["ptx"]).get_function(name)
    launch = Launcher(r, *_resources(spec, name))
    dout, dcyc = cp.zeros(1, cp.uint64), cp.zeros(1, cp.uint32)
    g = LCG(4242)   # one generator across the three footprints, as in the program
    bad, lines = 0, []
    for f, (fp, nbytes) in enumerate(_FOOTPRINTS):
        n = nbytes // CHASE_LINE
        perm = _sattolo(g, n)   # drawn even when the launch is not selected: later footprints continue the stream
        label = f"pointer_chase.{fp}"
        if only is not None and label not in only:
            continue
        dbuf = cp.zeros(nbytes // 8, cp.uint64)
        base = dbuf.ptr
        host = np.zeros(nbytes // 8, np.uint64)
        host[np.arange(n) * (CHASE_LINE // 8)] = np.uint64(base) + np.asarray(perm, np.uint64) * np.uint64(CHASE_LINE)
        dbuf.set(host)
        warm = n if f == 0 else 0
        launch(k, (1,), (1,), (dbuf, np.int32(warm), np.int32(CHASE_STEPS), dout, dcyc), label=label)
        cur = 0
        for _ in range(warm + CHASE_STEPS):
            cur = perm[cur]
        ok = int(dout.get()[0]) == base + cur * CHASE_LINE
        bad += not ok
        lines.append(f"{fp}:{'ok' if ok else 'MISMATCH'}")
    r.bad, r.verified = bad, bad == 0
    r.output = f"pointer_chase steps={CHASE_STEPS} " + " ".join(lines)
    return r


def _chase_figure(ref: dict, ours: dict, clock: dict[int, int]) -> dict:
    w0 = _warp0(clock)
    steps = int(ref["warm_steps"]) + CHASE_STEPS
    cyc = ours.get("cycles")
    return _figure("cycles per chase step", "cycles", None if w0 is None else w0 / CHASE_STEPS,
                   float(ref["cycles_per_step"]), clock_cycles=w0, gs_clock_cycles=ref["clock_cycles"],
                   kernel_cycles_per_step=(cyc / steps) if cyc else None,
                   gs_kernel_cycles_per_step=ref.get("kernel_cycles_per_step"))


# ---------------------------------------------------------------- smem_stride

def run_smem_stride(spec: dict, ref_dir: Path, only: set[str] | None) -> RunResult:
    r = RunResult("smem_stride")
    mod = load_module(ref_dir, spec["ptx"])
    dout, dclk = cp.zeros(32, cp.uint32), cp.zeros(32, cp.uint32)
    bad = ran = 0
    for variant in ("chain", "tput"):
        name = _kernel_of(spec, "variant", variant)
        k = mod.get_function(name)
        launch = Launcher(r, *_resources(spec, name))
        for stride in (1, 2, 4, 8, 16, 32):
            label = f"smem_stride.{variant}.{stride}"
            if only is not None and label not in only:
                continue
            ran += 1
            device_memset(dout)
            launch(k, (1,), (32,), (np.int32(stride), np.int32(SMEM_PASSES), dout, dclk), label=label)
            w = (np.arange(32, dtype=np.uint32) * np.uint32(stride)) & np.uint32(SMEM_WORDS - 1)
            expect = w if variant == "chain" else np.uint32(32) * w
            bad += int((dout.get() != expect).sum())
    r.bad, r.verified = bad, bad == 0
    r.output = f"smem_stride warps=1 reps={SMEM_REPS} passes={SMEM_PASSES} launches={ran} bad={bad}"
    return r


def _smem_figure(ref: dict, ours: dict, clock: dict[int, int]) -> dict:
    w0 = _warp0(clock)
    return _figure("cycles per shared access", "cycles", None if w0 is None else w0 / SMEM_REPS,
                   float(ref["cycles_per_shared_access"]), clock_cycles=w0, gs_clock_cycles=ref["clock_cycles"],
                   gs_bank_conflict_stall_cycles=ref.get("smem_bank_conflict_stall_cycles"))


MICRO: dict[str, MicroBench] = {
    "dep_chain": MicroBench(_dep_id, run_dep_chain, _dep_figure),
    "stream_copy": MicroBench(lambda launch: "stream_copy", run_stream_copy, _stream_figure),
    "pointer_chase": MicroBench(lambda launch: f"pointer_chase.{launch['footprint']}", run_pointer_chase,
                                _chase_figure),
    "smem_stride": MicroBench(lambda launch: f"smem_stride.{launch['variant']}.{launch['stride_words']}",
                              run_smem_stride, _smem_figure),
}

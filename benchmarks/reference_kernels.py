"""The six GPGPU-Sim reference kernels (../shared/reference/kernels) re-run in tlpsim:
same PTX, problem size, inputs (the programs' fixed-seed LCG, replicated in NumPy),
launches and output check; then tlpsim's counts and timing against GPGPU-Sim's.

    .venv/bin/python benchmarks/reference_kernels.py [--functional | --timing]
        [--kernels mm_naive,histogram_atomic,...] [--json] [--time-limit 1800]

`--functional` (default): warp instructions and thread instructions against
GPGPU-Sim's `warp_insn` and `gpu_tot_sim_insn`. tlpsim's trace holds two
thread-instruction counts: `active` lanes (the SIMT mask, `trace.active_thread_instructions`)
and `executed` lanes (active lanes whose guard predicate held; `rec.thread_instructions`
and the timing model's `thread_insts` count these). GPGPU-Sim's
`gpu_tot_sim_insn` is the second: its functional model clears the lanes of a
guarded instruction whose predicate is false from the instruction's active mask
(`ptx_thread_info::ptx_exec_inst` -> `inst.set_not_active(lane)`), and
`warp_inst_complete` adds `active_count()` of that mask. Its
`gpgpu_n_tot_thrd_icount` is 32 x warp_insn (every lane).

`--timing`: `Device(mode="timing", config="gtx480")`, one fresh device per kernel;
cycles, IPC, L1D/L2 miss rates and simulation speed against GPGPU-Sim, with the
Pearson correlation of cycles and the mean absolute relative error. A kernel that
fails or exceeds `--time-limit` seconds (SIGALRM) is reported and skipped.

The reference directory is ../shared/reference/kernels relative to the project
(override with --ref-dir or TLPSIM_REFERENCE_DIR). PTX ISA 7.8 for sm_35 cannot be
assembled by the pinned ptxas, so every launch passes the register and shared-memory
counts GPGPU-Sim read from ptxas -v (`regs_per_thread`, `smem_bytes_per_cta`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import tlpsim as cp

REF_DIR = Path(os.environ.get("TLPSIM_REFERENCE_DIR",
                              Path(__file__).resolve().parents[2] / "shared" / "reference" / "kernels"))
REF_JSON = "gpgpusim-gtx480.json"

# ---------------------------------------------------------------- the programs' LCG

_A, _C, _M = 1664525, 1013904223, 0xFFFFFFFF


class LCG:
    """`g = g * 1664525u + 1013904223u` (32-bit), as in every reference program.
    `next()` is one draw; `draws(n)` the next n draws at once (jump-ahead doubling)."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _M

    def next(self) -> int:
        self.state = (self.state * _A + _C) & _M
        return self.state

    def draws(self, n: int) -> np.ndarray:
        out = np.empty(n, dtype=np.uint64)
        if n == 0:
            return out.astype(np.uint32)
        out[0] = (self.state * _A + _C) & _M
        a, c, filled = _A, _C, 1  # (a, c) maps x_k to x_{k+filled}
        mask = np.uint64(_M)
        while filled < n:
            m = min(filled, n - filled)
            out[filled: filled + m] = (np.uint64(a) * out[:m] + np.uint64(c)) & mask
            a, c = (a * a) & _M, (a * c + c) & _M
            filled += m
        self.state = int(out[-1])
        return out.astype(np.uint32)

    # the programs' float helpers, bit-exact in float32 (x86-64 SSE, no FMA contraction)
    def unit(self, n: int) -> np.ndarray:          # lcg_unit(): [0, 1)
        return (self.draws(n) >> 8).astype(np.float32) * np.float32(1.0 / 16777216.0)

    def sym(self, n: int) -> np.ndarray:           # lcg_sym(): [-1, 1)
        return (self.draws(n) >> 8).astype(np.float32) * np.float32(2.0 / 16777216.0) - np.float32(1.0)


def _lcg_range(u24: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """lcg_range(lo, hi) = lo + (hi - lo) * ((float)(r >> 8) * (1.0f / 16777216.0f))."""
    lo32, span = np.float32(lo), np.float32(hi) - np.float32(lo)
    return lo32 + span * (u24.astype(np.float32) * np.float32(1.0 / 16777216.0))


# ---------------------------------------------------------------- results

@dataclass
class RunResult:
    name: str
    records: list = field(default_factory=list)   # tlpsim LaunchRecords
    verified: bool = False
    output: str = ""                              # our version of the program's output line
    bad: int = -1


def _launcher(ref: dict, records: list) -> Callable:
    """A launch function passing the reference's ptxas resources on every launch."""
    res = {"registers": int(ref["regs_per_thread"]), "shared_bytes": int(ref["smem_bytes_per_cta"])}

    def launch(kernel, grid, block, args, shared_mem: int = 0):
        rec = kernel(grid, block, args, shared_mem=shared_mem, resources=res)
        records.append(rec)
        return rec
    return launch


def _module(ref: dict, ref_dir: Path):
    mod = cp.RawModule(path=str(ref_dir / ref["ptx"]))
    return mod, mod.get_function(ref["kernel"])


# ---------------------------------------------------------------- the six programs

def run_mm_naive(ref: dict, ref_dir: Path) -> RunResult:
    N, TB = 224, 16
    g = LCG(12345)
    ha = g.sym(N * N)
    hb = g.sym(N * N)
    r = RunResult("mm_naive")
    launch = _launcher(ref, r.records)
    _, k = _module(ref, ref_dir)
    da, db, dc = cp.asarray(ha), cp.asarray(hb), cp.zeros(N * N, cp.float32)
    grid = ((N + TB - 1) // TB, (N + TB - 1) // TB)
    launch(k, grid, (TB, TB), (da, db, dc, np.int32(N)))
    c = dc.get().astype(np.float64).reshape(N, N)
    a64, b64 = ha.astype(np.float64).reshape(N, N), hb.astype(np.float64).reshape(N, N)
    s = a64 @ b64
    sabs = np.abs(a64) @ np.abs(b64)
    err = np.abs(c - s)
    r.bad = int((err > N * 1.2e-7 * sabs + 1e-6).sum())
    r.verified = r.bad == 0
    r.output = (f"mm_naive N={N} grid=({grid[0]},{grid[1]}) block=({TB},{TB}) "
                f"max_abs_err={err.max():.3e} bad={r.bad}")
    return r


def run_histogram_atomic(ref: dict, ref_dir: Path) -> RunResult:
    NBYTES, NBINS, THREADS, BLOCKS = 1 << 20, 256, 256, 128
    rr = LCG(2024).draws(NBYTES)
    u1, u2 = rr >> 24, (rr >> 16) & 0xFF
    data = np.minimum(u1, u2).astype(np.uint8)
    ref_hist = np.bincount(data, minlength=NBINS)
    words = data.view("<u4")  # the bytes memcpy'd to the device (little-endian words)
    r = RunResult("histogram_atomic")
    launch = _launcher(ref, r.records)
    _, k = _module(ref, ref_dir)
    dw, dh = cp.asarray(words), cp.zeros(NBINS, cp.uint32)
    launch(k, (BLOCKS,), (THREADS,), (dw, np.int32(NBYTES // 4), dh))
    hist = dh.get()
    total = int(hist.astype(np.uint64).sum())
    r.bad = int((hist != ref_hist).sum())
    r.verified = r.bad == 0 and total == NBYTES
    r.output = (f"histogram_atomic bytes={NBYTES} grid={BLOCKS} block={THREADS} total={total} "
                f"bin0={hist[0]} bin255={hist[255]} bad_bins={r.bad}")
    return r


def run_kmeans_assign(ref: dict, ref_dir: Path) -> RunResult:
    NPTS, NFEAT, NCLUST, THREADS = 65536, 16, 8, 256
    g = LCG(777)
    hc = np.float32(10.0) * g.unit(NCLUST * NFEAT)
    stream = g.draws(NPTS * (1 + NFEAT)).reshape(NPTS, 1 + NFEAT)  # per point: cluster draw, 16 features
    cl = (stream[:, 0] >> 29).astype(np.int64)
    u = (stream[:, 1:] >> 8).astype(np.float32) * np.float32(1.0 / 16777216.0)
    hp = (hc.reshape(NCLUST, NFEAT)[cl] + np.float32(6.0) * u) - np.float32(3.0)
    r = RunResult("kmeans_assign")
    launch = _launcher(ref, r.records)
    _, k = _module(ref, ref_dir)
    dp, dc, dm = cp.asarray(hp.ravel()), cp.asarray(hc), cp.zeros(NPTS, cp.int32)
    blocks = (NPTS + THREADS - 1) // THREADS
    launch(k, (blocks,), (THREADS,), (dp, dc, dm, np.int32(NPTS)))
    m = dm.get()
    diff = hp.astype(np.float64)[:, None, :] - hc.astype(np.float64).reshape(1, NCLUST, NFEAT)
    dist = np.zeros((NPTS, NCLUST))
    for f in range(NFEAT):  # sequential f order as the C reference (double)
        dist += diff[:, :, f] ** 2
    best = np.argmin(dist, axis=1)  # first minimum, like `if (d < dist[best])`
    valid = (m >= 0) & (m < NCLUST)
    gsel = np.where(valid, m, 0)
    dg = dist[np.arange(NPTS), gsel]
    db = dist[np.arange(NPTS), best]
    differ = valid & (gsel != best)
    r.bad = int((~valid).sum() + (differ & (dg - db > 1e-4 * db + 1e-5)).sum())
    r.verified = r.bad == 0
    counts = np.bincount(m[valid], minlength=NCLUST)
    r.output = (f"kmeans_assign points={NPTS} features={NFEAT} clusters={NCLUST} grid={blocks} block={THREADS} "
                f"differ={int(differ.sum())} bad={r.bad} counts=" + ",".join(str(int(c)) for c in counts))
    return r


def run_spmv_csr(ref: dict, ref_dir: Path) -> RunResult:
    NROWS, NCOLS, MIN_NNZ, MAX_NNZ, THREADS = 16384, 16384, 8, 24, 256
    g = LCG(31337)
    rowptr = np.zeros(NROWS + 1, np.int32)
    cols: list[int] = []
    for row in range(NROWS):
        k = MIN_NNZ + ((g.next() >> 16) % (MAX_NNZ - MIN_NNZ + 1))
        seen: set[int] = set()
        while len(seen) < k:  # the C insertion sort keeps the first k distinct draws, sorted
            seen.add((g.next() >> 8) % NCOLS)
        cols.extend(sorted(seen))
        rowptr[row + 1] = len(cols)
    nnz = len(cols)
    col = np.asarray(cols, np.int32)
    val = g.sym(nnz)
    x = g.sym(NCOLS)
    r = RunResult("spmv_csr")
    launch = _launcher(ref, r.records)
    _, k = _module(ref, ref_dir)
    drp, dcol, dval, dx = cp.asarray(rowptr), cp.asarray(col), cp.asarray(val), cp.asarray(x)
    dy = cp.zeros(NROWS, cp.float32)
    blocks = (NROWS + THREADS - 1) // THREADS
    launch(k, (blocks,), (THREADS,), (np.int32(NROWS), drp, dcol, dval, dx, dy))
    y = dy.get().astype(np.float64)
    p = val.astype(np.float64) * x.astype(np.float64)[col]
    rows = np.repeat(np.arange(NROWS), np.diff(rowptr))
    s = np.bincount(rows, weights=p, minlength=NROWS)
    sabs = np.bincount(rows, weights=np.abs(p), minlength=NROWS)
    err = np.abs(y - s)
    r.bad = int((err > 32 * 1.2e-7 * sabs + 1e-6).sum())
    r.verified = r.bad == 0
    r.output = (f"spmv_csr rows={NROWS} nnz={nnz} ({nnz / NROWS:.2f}/row) grid={blocks} block={THREADS} "
                f"max_abs_err={err.max():.3e} bad={r.bad}")
    return r


def _seqsum(x: np.ndarray) -> float:
    """Left-to-right double accumulation, as the programs' `sum += v` loops (np.sum is pairwise)."""
    return float(np.cumsum(x, dtype=np.float64)[-1])


def _cpu_cdf(z: np.ndarray) -> np.ndarray:
    p, b1, b2, b3, b4, b5 = 0.2316419, 0.319381530, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    az = np.abs(z)
    t = 1.0 / (1.0 + p * az)
    poly = t * (b1 + t * (b2 + t * (b3 + t * (b4 + t * b5))))
    tail = 0.398942280401432678 * np.exp(-0.5 * az * az) * poly
    return np.where(z >= 0.0, 1.0 - tail, tail)


def run_blackscholes(ref: dict, ref_dir: Path) -> RunResult:
    NOPT, THREADS = 1 << 18, 256
    RATE, VOL = np.float32(0.03), np.float32(0.25)
    u = (LCG(4242).draws(3 * NOPT) >> 8).reshape(NOPT, 3)  # per option: spot, strike, years
    hs, hk, ht = _lcg_range(u[:, 0], 5.0, 30.0), _lcg_range(u[:, 1], 1.0, 100.0), _lcg_range(u[:, 2], 0.25, 10.0)
    r = RunResult("blackscholes")
    launch = _launcher(ref, r.records)
    _, k = _module(ref, ref_dir)
    ds, dk, dt = cp.asarray(hs), cp.asarray(hk), cp.asarray(ht)
    dc, dp = cp.zeros(NOPT, cp.float32), cp.zeros(NOPT, cp.float32)
    blocks = (NOPT + THREADS - 1) // THREADS
    launch(k, (blocks,), (THREADS,), (ds, dk, dt, dc, dp, RATE, VOL, np.int32(NOPT)))
    gc, gp = dc.get().astype(np.float64), dp.get().astype(np.float64)
    s, kk, t, rr, v = hs.astype(np.float64), hk.astype(np.float64), ht.astype(np.float64), float(RATE), float(VOL)
    sq = np.sqrt(t)
    d1 = (np.log(s / kk) + (rr + 0.5 * v * v) * t) / (v * sq)
    d2 = d1 - v * sq
    n1, n2 = _cpu_cdf(d1), _cpu_cdf(d2)
    disc = kk * np.exp(-rr * t)
    c = s * n1 - disc * n2
    pp = disc * (1.0 - n2) - s * (1.0 - n1)
    ec, ep = np.abs(gc - c), np.abs(gp - pp)
    tol = 1e-4 * (s + kk) + 1e-4
    r.bad = int(((ec > tol) | (ep > tol)).sum())
    r.verified = r.bad == 0
    maxerr = max(float(ec.max()), float(ep.max()))
    r.output = (f"blackscholes options={NOPT} grid={blocks} block={THREADS} sum_call={_seqsum(gc):.4f} "
                f"sum_put={_seqsum(gp):.4f} max_abs_err={maxerr:.3e} bad={r.bad}")
    return r


def run_conv2d_smem(ref: dict, ref_dir: Path) -> RunResult:
    W = H = 512
    FSIZE, FRAD, BDIM, TILE_OUT = 5, 2, 16, 14
    g = LCG(99991)
    img = g.unit(W * H)
    filt = g.unit(FSIZE * FSIZE) - np.float32(0.25)
    r = RunResult("conv2d_smem")
    launch = _launcher(ref, r.records)
    mod, k = _module(ref, ref_dir)
    mod.get_global("c_filter").set(filt.view(np.uint8))   # cudaMemcpyToSymbol
    din, dout = cp.asarray(img), cp.zeros(W * H, cp.float32)
    grid = ((W + TILE_OUT - 1) // TILE_OUT, (H + TILE_OUT - 1) // TILE_OUT)
    launch(k, grid, (BDIM, BDIM), (din, dout, np.int32(W), np.int32(H)))
    out = dout.get().astype(np.float64).reshape(H, W)
    pad = np.zeros((H + 2 * FRAD, W + 2 * FRAD))
    pad[FRAD:FRAD + H, FRAD:FRAD + W] = img.astype(np.float64).reshape(H, W)
    s = np.zeros((H, W))
    sabs = np.zeros((H, W))
    for fy in range(FSIZE):
        for fx in range(FSIZE):
            p = float(filt[fy * FSIZE + fx]) * pad[fy:fy + H, fx:fx + W]
            s += p
            sabs += np.abs(p)
    err = np.abs(out - s)
    r.bad = int((err > 32 * 1.2e-7 * sabs + 1e-6).sum())
    r.verified = r.bad == 0
    r.output = (f"conv2d_smem {W}x{H} filter={FSIZE}x{FSIZE} grid=({grid[0]},{grid[1]}) block=({BDIM},{BDIM}) "
                f"checksum={_seqsum(out.ravel()):.4f} max_abs_err={err.max():.3e} bad={r.bad}")
    return r


PROGRAMS: dict[str, Callable[[dict, Path], RunResult]] = {
    "mm_naive": run_mm_naive,
    "histogram_atomic": run_histogram_atomic,
    "kmeans_assign": run_kmeans_assign,
    "spmv_csr": run_spmv_csr,
    "blackscholes": run_blackscholes,
    "conv2d_smem": run_conv2d_smem,
}


def load_reference(ref_dir: Path = REF_DIR) -> dict[str, dict]:
    with open(ref_dir / REF_JSON) as f:
        return {k["name"]: k for k in json.load(f)["kernels"]}


# ---------------------------------------------------------------- functional comparison

def _launch_shape_ok(ref: dict, recs: list) -> bool:
    return (len(recs) == int(ref["n_launches"])
            and all(list(rc.grid) == list(ref["grid"]) and list(rc.block) == list(ref["block"]) for rc in recs))


def counts(recs: list) -> dict:
    """Warp / thread instruction totals of a run's launches, under both lane conventions."""
    warp = sum(rc.warp_instructions for rc in recs)
    active = sum(rc.trace.active_thread_instructions for rc in recs if rc.trace is not None)
    executed = sum(rc.trace.thread_instructions for rc in recs if rc.trace is not None)
    return {"warp_insn": warp, "thread_insn_active": active, "thread_insn_executed": executed}


def run_functional(name: str, ref: dict, ref_dir: Path = REF_DIR) -> dict:
    with cp.Device(trace_cache=False):
        t0 = time.perf_counter()
        r = PROGRAMS[name](ref, ref_dir)
        wall = time.perf_counter() - t0
    c = counts(r.records)
    sim_wall = sum(rc.wall_seconds for rc in r.records)
    return {
        "kernel": name, "verified": r.verified, "bad": r.bad, "output": r.output,
        "reference_output": ref.get("program_output", ""), "launch_shape_ok": _launch_shape_ok(ref, r.records),
        **c,
        "gs_warp_insn": int(ref["warp_insn"]), "gs_thread_insn": int(ref["gpu_tot_sim_insn"]),
        "gs_thrd_icount_all_lanes": int(ref["gpgpu_n_tot_thrd_icount"]),
        "warp_diff": c["warp_insn"] - int(ref["warp_insn"]),
        "thread_diff_executed": c["thread_insn_executed"] - int(ref["gpu_tot_sim_insn"]),
        "thread_diff_active": c["thread_insn_active"] - int(ref["gpu_tot_sim_insn"]),
        "functional_wall_s": sim_wall, "program_wall_s": wall,
        "thread_insn_per_s": c["thread_insn_executed"] / sim_wall if sim_wall else 0.0,
    }


# ---------------------------------------------------------------- timing comparison

class _TimeLimit(Exception):
    pass


def _on_alarm(signum, frame):
    raise _TimeLimit()


def run_timing(name: str, ref: dict, ref_dir: Path = REF_DIR, time_limit: int = 1800) -> dict:
    row: dict = {"kernel": name, "error": None, "gs_cycles": int(ref["gpu_tot_sim_cycle"]),
                 "gs_ipc": float(ref["gpu_tot_ipc"]), "gs_l1d_miss_rate": float(ref["l1d_miss_rate"]),
                 "gs_l2_miss_rate": float(ref["l2_miss_rate"]), "gs_wall_s": float(ref["wall_s"]),
                 "gs_thread_insn_per_wall_s": float(ref["thread_insn_per_wall_s"]),
                 "gs_occupancy_pct": float(ref["gpu_tot_occupancy_pct"]),
                 "gs_cta_per_sm_limit": int(ref["cta_per_sm_limit"]),
                 **{f"gs_{k}": ref[k] for k in ("l1d_accesses", "l1d_misses", "l1d_pending_hits",
                                                 "l1d_reservation_fails", "l2_accesses", "l2_misses",
                                                 "dram_reads", "dram_writes") if k in ref}}
    old = signal.signal(signal.SIGALRM, _on_alarm) if time_limit else None
    t0 = time.perf_counter()
    records: list = []
    max_warps = 48
    try:
        if time_limit:
            signal.alarm(int(time_limit))
        with cp.Device(mode="timing", config="gtx480", trace_cache=False) as dev:
            max_warps = dev._timing.config.sm.max_warps
            try:
                r = PROGRAMS[name](ref, ref_dir)
                records = r.records
                row.update(verified=r.verified, output=r.output)
            finally:
                records = records or list(dev.launches)
    except _TimeLimit:
        row["error"] = f"time limit {time_limit} s exceeded after {len(records)} completed launch(es)"
    except Exception as exc:  # noqa: BLE001 - the timing model is new: report and go on
        row["error"] = f"{type(exc).__name__}: {exc}".strip()[:400]
        row["traceback"] = traceback.format_exc(limit=6)
    finally:
        if time_limit:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    row["total_wall_s"] = time.perf_counter() - t0
    if row["error"] is None:
        stats = [rc.stats for rc in records]
        if any(s is None for s in stats):
            row["error"] = "a launch record has no timing statistics"
            return row
        row.update(_timing_metrics(records, stats, max_warps))
        row["rel_err"] = (row["cycles"] - row["gs_cycles"]) / row["gs_cycles"]
        # end to end: PTX parse + functional (cold: trace_cache=False) + timing + the host program
        row["e2e_thread_insn_per_s"] = row["thread_insn_executed"] / row["total_wall_s"]
        row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def _timing_metrics(records: list, stats: list, max_warps: int) -> dict:
    """tlpsim's figures, counted the way GPGPU-Sim counts the reference's."""
    c = counts(records)
    cycles = sum(s.cycles for s in stats)
    func_wall = sum(rc.wall_seconds for rc in records)
    tim_wall = sum(s.wall_seconds for s in stats)

    def sm_total(key):
        return sum(sum(p[key] for p in s.per_sm) for s in stats)

    def l2_total(key):
        return sum(sum(sl.get(key, 0) for sl in s.components.get("l2_slices", [])) for s in stats)

    l1_acc, l1_miss = sm_total("l1d_accesses"), sm_total("l1d_misses")
    l2_acc = l2_total("accesses")
    l2_miss = l2_total("misses") + l2_total("sector_misses")
    return {
        "cycles": cycles,
        "warp_insn": sum(s.warp_insts for s in stats), "thread_insn_active": c["thread_insn_active"],
        "thread_insn_executed": c["thread_insn_executed"],
        "ipc_active": c["thread_insn_active"] / cycles if cycles else 0.0,
        "ipc": c["thread_insn_executed"] / cycles if cycles else 0.0,                   # GPGPU-Sim's gpu_tot_ipc
        # GPGPU-Sim: accesses = hits + pending hits + misses; miss rate = misses / accesses
        "l1d_accesses": l1_acc, "l1d_misses": l1_miss, "l1d_pending_hits": sm_total("l1d_pending_hits"),
        "l1d_reservation_fails": sm_total("l1d_reservation_fails"),
        "l1d_miss_rate": l1_miss / l1_acc if l1_acc else 0.0,
        "l2_accesses": l2_acc, "l2_misses": l2_miss, "l2_pending_hits": l2_total("pending_hits"),
        "l2_miss_rate": l2_miss / l2_acc if l2_acc else 0.0,
        "l2_miss_rate_incl_pending": (1.0 - l2_total("hits") / l2_acc) if l2_acc else 0.0,
        "dram_reads": sum(s.dram_reads for s in stats), "dram_writes": sum(s.dram_writes for s in stats),
        "occupancy_pct": 100.0 * float(np.mean([s.avg_resident_warps for s in stats])) / max_warps,
        "ctas_per_sm_limit": stats[0].ctas_per_sm_limit, "limited_by": stats[0].limited_by,
        "functional_wall_s": func_wall, "timing_wall_s": tim_wall,
        "thread_insn_per_wall_s": c["thread_insn_executed"] / (func_wall + tim_wall) if func_wall + tim_wall else 0.0,
        "timing_thread_insn_per_s": c["thread_insn_executed"] / tim_wall if tim_wall else 0.0,
    }


def summary(rows: list[dict]) -> dict:
    ok = [r for r in rows if r.get("error") is None and "cycles" in r]
    out: dict = {"kernels_ok": len(ok), "kernels_failed": len(rows) - len(ok)}
    if ok:
        out["mean_abs_rel_err"] = float(np.mean([abs(r["rel_err"]) for r in ok]))
    if len(ok) >= 2:
        x = np.array([r["cycles"] for r in ok], float)
        y = np.array([r["gs_cycles"] for r in ok], float)
        out["pearson_cycles"] = float(np.corrcoef(x, y)[0, 1]) if x.std() and y.std() else math.nan
    return out


# ---------------------------------------------------------------- reports

def _pct(x: float) -> str:
    return f"{100 * x:+.1f}%"


def table_functional(rows: list[dict]) -> str:
    lines = [("| kernel | verified | warp insn (tlpsim) | warp insn (GPGPU-Sim) | diff | thread insn executed "
             "(tlpsim) | gpu_tot_sim_insn (GPGPU-Sim) | diff | thread insn active lanes (tlpsim) | "
             "functional wall s | M thread-insn/s |"),
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r.get("error"):
            lines.append(f"| {r['kernel']} | ERROR: {r['error']} |" + " |" * 9)
            continue
        lines.append(
            f"| {r['kernel']} | {'PASS' if r['verified'] else 'FAIL'} | {r['warp_insn']:,} | {r['gs_warp_insn']:,} | "
            f"{r['warp_diff']:+,} | {r['thread_insn_executed']:,} | {r['gs_thread_insn']:,} | "
            f"{r['thread_diff_executed']:+,} | {r['thread_insn_active']:,} | {r['functional_wall_s']:.2f} | "
            f"{r['thread_insn_per_s'] / 1e6:.2f} |")
    return "\n".join(lines)


def table_timing(rows: list[dict], summ: dict) -> str:
    lines = [("| kernel | cycles (tlpsim) | cycles (GPGPU-Sim) | rel. err | IPC (tlpsim) | IPC (GPGPU-Sim) | "
             "L1D miss (tlpsim / GPGPU-Sim) | L2 miss (tlpsim / GPGPU-Sim) | occupancy % (tlpsim / GPGPU-Sim) | "
             "wall s functional + timing | thread-insn/s (tlpsim / GPGPU-Sim) | verified |"),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if r.get("error") is not None or "cycles" not in r:
            lines.append(f"| {r['kernel']} | — | {r['gs_cycles']:,} | — | — | {r['gs_ipc']:.1f} | — / "
                         f"{r['gs_l1d_miss_rate']:.3f} | — / {r['gs_l2_miss_rate']:.3f} | — / {r['gs_occupancy_pct']:.1f} | "
                         f"(failed after {r['total_wall_s']:.0f} s) | — / {r['gs_thread_insn_per_wall_s']:,.0f} | "
                         f"ERROR: {str(r.get('error', '')).replace('|', '/')[:200]} |")
            continue
        lines.append(
            f"| {r['kernel']} | {r['cycles']:,} | {r['gs_cycles']:,} | {_pct(r['rel_err'])} | {r['ipc']:.1f} | "
            f"{r['gs_ipc']:.1f} | {r['l1d_miss_rate']:.3f} / {r['gs_l1d_miss_rate']:.3f} | "
            f"{r['l2_miss_rate']:.3f} / {r['gs_l2_miss_rate']:.3f} | "
            f"{r['occupancy_pct']:.1f} / {r['gs_occupancy_pct']:.1f} | {r['functional_wall_s']:.1f} + {r['timing_wall_s']:.1f} | "
            f"{r['thread_insn_per_wall_s']:,.0f} / {r['gs_thread_insn_per_wall_s']:,.0f} | "
            f"{'PASS' if r.get('verified') else 'FAIL'} |")
    lines.append("")
    pear = summ.get("pearson_cycles")
    mare = summ.get("mean_abs_rel_err")
    lines.append(f"Kernels simulated: {summ['kernels_ok']}, failed: {summ['kernels_failed']}. "
                 f"Pearson r(cycles): {'n/a' if pear is None else f'{pear:.3f}'}; "
                 f"mean |relative error| of cycles: {'n/a' if mare is None else f'{100 * mare:.1f}%'}.")
    lines.append("IPC = thread instructions (GPGPU-Sim's convention: active lanes whose guard held) per core cycle. "
                 "Miss rates = misses / accesses with MSHR-merged pending hits counted as accesses, not misses "
                 "(GPGPU-Sim's L1D/L2_total_cache_miss_rate); tlpsim's L1D counts load line-accesses only, its L2 "
                 "one access per request (line + sector mask), GPGPU-Sim's L2 one per sector. "
                 "thread-insn/s = those instructions over tlpsim's functional + timing wall time, against "
                 "GPGPU-Sim's thread_insn_per_wall_s (whole program wall time).")
    return "\n".join(lines)


def table_speed(rows: list[dict]) -> str:
    """Simulation speed against GPGPU-Sim's (issue 6 targets: timing alone >= 5x, end to end >= 2x)."""
    lines = ["| kernel | thread insn | cycles | timing s | timing-alone thread-insn/s | x GPGPU-Sim | "
             "warp-insn/s | cycles/s | end-to-end s | end-to-end thread-insn/s | x GPGPU-Sim | peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r.get("error") is not None or "cycles" not in r:
            continue
        gs = r["gs_thread_insn_per_wall_s"]
        t = r["timing_wall_s"]
        lines.append(
            f"| {r['kernel']} | {r['thread_insn_executed']:,} | {r['cycles']:,} | {t:.1f} | "
            f"{r['timing_thread_insn_per_s'] / 1e6:.2f} M | {r['timing_thread_insn_per_s'] / gs:.1f}x | "
            f"{r['warp_insn'] / t / 1e3:.0f} k | {r['cycles'] / t:,.0f} | {r['total_wall_s']:.1f} | "
            f"{r['e2e_thread_insn_per_s'] / 1e6:.2f} M | {r['e2e_thread_insn_per_s'] / gs:.1f}x | "
            f"{r['peak_rss_mb']:.0f} |")
    lines.append("")
    lines.append("GPGPU-Sim's rate is its thread_insn_per_wall_s (whole program) on the same machine class; "
                 "timing alone = the timing model's wall time with the trace in hand; end to end = PTX parse, "
                 "functional execution with tracing (no trace cache), timing and the host program. Peak RSS is "
                 "the benchmark process's maximum so far (kernels run one after another in one process).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--functional", action="store_true", help="instruction counts (default)")
    mode.add_argument("--timing", action="store_true", help="cycles, IPC, miss rates, speed (gtx480 preset)")
    ap.add_argument("--kernels", default="", help="comma-separated subset of " + ",".join(PROGRAMS))
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument("--time-limit", type=int, default=1800, help="seconds per kernel in --timing (0 = none)")
    ap.add_argument("--ref-dir", type=Path, default=REF_DIR)
    args = ap.parse_args(argv)
    refs = load_reference(args.ref_dir)
    names = [n.strip() for n in args.kernels.split(",") if n.strip()] or [n for n in PROGRAMS if n in refs]
    unknown = [n for n in names if n not in PROGRAMS or n not in refs]
    if unknown:
        ap.error(f"unknown kernel(s) {', '.join(unknown)}; choose from {', '.join(PROGRAMS)}")
    rows = []
    for n in names:
        if args.timing:
            row = run_timing(n, refs[n], args.ref_dir, args.time_limit)
        else:
            try:
                row = run_functional(n, refs[n], args.ref_dir)
            except Exception as exc:  # noqa: BLE001 - report the kernel and go on
                row = {"kernel": n, "error": f"{type(exc).__name__}: {exc}"[:400]}
        rows.append(row)
        print(f"  {n}: done" + (f" (error: {row['error']})" if row.get("error") else ""), file=sys.stderr,
              flush=True)
    if args.json:
        out = {"mode": "timing" if args.timing else "functional", "kernels": rows}
        if args.timing:
            out["summary"] = summary(rows)
        print(json.dumps(out, indent=1, default=str))
    elif args.timing:
        print(table_timing(rows, summary(rows)))
        print()
        print(table_speed(rows))
    else:
        print(table_functional(rows))
        for r in rows:
            if not r.get("error"):
                same = "identical" if r["output"] == r["reference_output"] else "differs"
                print(f"\n{r['kernel']}: output {same}\n  tlpsim:     {r['output']}\n"
                      f"  GPGPU-Sim:  {r['reference_output']}")
    bad = any(r.get("error") or not r.get("verified", False) for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""The six GPGPU-Sim reference programs (gpgpusim-gtx480.json) as host programs
driving tlpsim: the same PTX, problem size, inputs (the programs' fixed-seed LCG,
replicated in NumPy), launches and output check as the CUDA programs.

Under the cuda11 toolchain (gtx480's default) every launch runs the reference PTX
(ISA 7.8, compute_35) and passes the register and shared-memory counts GPGPU-Sim
read from ptxas -v (`regs_per_thread`, `smem_bytes_per_cta`; ptxas 11.8 for sm_35
reports the same for all six); under cuda13 the `.cu` sources are compiled by
CUDA 13.5 and launched with its ptxas's counts (tlpsim.validate.launching). Each `run_NAME(ref, ref_dir)` runs on
the current `tlpsim.Device` and returns a `RunResult` with the launch records.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

import tlpsim as cp
from tlpsim.validate.launching import Launcher, RunResult, load_module
from tlpsim.validate.lcg import LCG, lcg_range

__all__ = ["PROGRAMS", "RunResult"]


def _launcher(ref: dict, result: RunResult) -> Launcher:
    """A launch function passing the reference's ptxas resources on every launch."""
    return Launcher(result, ref["regs_per_thread"], ref["smem_bytes_per_cta"])


def _module(ref: dict, ref_dir: Path):
    mod = load_module(ref_dir, ref["ptx"])
    return mod, mod.get_function(ref["kernel"])


# ---------------------------------------------------------------- the six programs

def run_mm_naive(ref: dict, ref_dir: Path) -> RunResult:
    N, TB = 224, 16
    g = LCG(12345)
    ha = g.sym(N * N)
    hb = g.sym(N * N)
    r = RunResult("mm_naive")
    launch = _launcher(ref, r)
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
    launch = _launcher(ref, r)
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
    launch = _launcher(ref, r)
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
    launch = _launcher(ref, r)
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
    hs, hk, ht = lcg_range(u[:, 0], 5.0, 30.0), lcg_range(u[:, 1], 1.0, 100.0), lcg_range(u[:, 2], 0.25, 10.0)
    r = RunResult("blackscholes")
    launch = _launcher(ref, r)
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
    launch = _launcher(ref, r)
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

"""Functional-model throughput: simulated thread- and warp-instructions per
wall-clock second, with trace recording on (as the timing model needs it) and off,
plus the peak memory of a 1 M-thread launch (measured in a child process).

    .venv/bin/python benchmarks/functional_speed.py [--quick]

Kernels are defined here so the figures do not move when workloads change:
vecadd (1 M threads), a 16x16-tiled SGEMM, a shared-memory 5-point 2D stencil, and a
level-synchronous thread-per-vertex BFS on a random graph (divergent, irregular).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np

import tlpsim as cp

VECADD = r'''extern "C" __global__ void vecadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }'''

SGEMM = r'''#define T 16
extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int n) {
    __shared__ float As[T][T], Bs[T][T];
    int tx = threadIdx.x, ty = threadIdx.y, row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < n; k0 += T) {
        As[ty][tx] = A[row * n + k0 + tx]; Bs[ty][tx] = B[(k0 + ty) * n + col];
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc; }'''

STENCIL = r'''#define BX 32
#define BY 8
extern "C" __global__ void stencil(const float* in, float* out, int w, int h) {
    __shared__ float s[BY + 2][BX + 2];
    int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
    int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
    float c = in[y * w + x];
    s[ty][tx] = c;
    if (threadIdx.x == 0) s[ty][0] = x > 0 ? in[y * w + x - 1] : c;
    if (threadIdx.x == BX - 1) s[ty][BX + 1] = x < w - 1 ? in[y * w + x + 1] : c;
    if (threadIdx.y == 0) s[0][tx] = y > 0 ? in[(y - 1) * w + x] : c;
    if (threadIdx.y == BY - 1) s[BY + 1][tx] = y < h - 1 ? in[(y + 1) * w + x] : c;
    __syncthreads();
    out[y * w + x] = 0.2f * (c + s[ty][tx - 1] + s[ty][tx + 1] + s[ty - 1][tx] + s[ty + 1][tx]); }'''

BFS = r'''extern "C" __global__ void bfs_level(const int* rowp, const int* adj, int* level, int* changed,
                                         int n, int depth) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || level[v] != depth) return;
    for (int e = rowp[v]; e < rowp[v + 1]; ++e) {
        int u = adj[e];
        if (level[u] < 0) { level[u] = depth + 1; *changed = 1; }
    } }'''


def _rate(dev, first: int) -> tuple[int, int, float]:
    recs = dev.launches[first:]
    thr = sum(r.thread_instructions for r in recs)
    warp = sum(r.warp_instructions for r in recs)
    wall = sum(r.wall_seconds for r in recs)
    return thr, warp, wall


def bench_vecadd(n: int) -> dict:
    k = cp.RawKernel(VECADD, "vecadd")
    a = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    da, db, dc = cp.asarray(a), cp.asarray(a), cp.zeros(n, np.float32)
    k(((n + 255) // 256,), (256,), (da, db, dc, np.int32(n)))
    assert np.array_equal(dc.get(), a + a)
    return {"threads": n}


def bench_sgemm(n: int) -> dict:
    k = cp.RawKernel(SGEMM, "sgemm")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    dc = cp.zeros((n, n), np.float32)
    k((n // 16, n // 16), (16, 16), (cp.asarray(a), cp.asarray(b), dc, np.int32(n)))
    assert np.allclose(dc.get(), a @ b, rtol=1e-3, atol=1e-3)
    return {"threads": n * n}


def bench_stencil(w: int, h: int) -> dict:
    k = cp.RawKernel(STENCIL, "stencil")
    x = np.random.default_rng(2).standard_normal((h, w), dtype=np.float32)
    out = cp.zeros((h, w), np.float32)
    k((w // 32, h // 8), (32, 8), (cp.asarray(x), out, np.int32(w), np.int32(h)))
    p = np.pad(x, 1, mode="edge")
    ref = np.float32(0.2) * (x + p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1])
    assert np.allclose(out.get(), ref, rtol=1e-5, atol=1e-5)
    return {"threads": w * h}


def bench_bfs(n: int, avg_degree: int) -> dict:
    rng = np.random.default_rng(3)
    deg = np.minimum(rng.zipf(1.8, n), 64 * avg_degree).astype(np.int64)
    rowp = np.zeros(n + 1, np.int64)
    np.cumsum(deg, out=rowp[1:])
    adj = rng.integers(0, n, int(rowp[-1])).astype(np.int32)
    level = np.full(n, -1, np.int32)
    level[0] = 0
    k = cp.RawKernel(BFS, "bfs_level")
    d_rowp, d_adj, d_level = cp.asarray(rowp.astype(np.int32)), cp.asarray(adj), cp.asarray(level)
    changed = cp.zeros(1, np.int32)
    depth = 0
    while True:
        changed.set(np.zeros(1, np.int32))
        k(((n + 255) // 256,), (256,), (d_rowp, d_adj, d_level, changed, np.int32(n), np.int32(depth)))
        depth += 1
        if changed.get()[0] == 0:
            break
    ref = np.full(n, -1)
    ref[0] = 0
    frontier = [0]
    d = 0
    while frontier:
        nxt = []
        for v in frontier:
            for u in adj[rowp[v]:rowp[v + 1]]:
                if ref[u] < 0:
                    ref[u] = d + 1
                    nxt.append(u)
        frontier, d = nxt, d + 1
    assert np.array_equal(d_level.get(), ref)
    return {"threads": n, "levels": depth}


def measure(name: str, fn, *args, trace: bool = True) -> dict:
    with cp.Device(trace=trace) as dev:
        fn(*args)  # warm up: compile, first-touch
        first = len(dev.launches)
        info = fn(*args)
        thr, warp, wall = _rate(dev, first)
    if not trace:  # thread counts come from the trace; take them from a traced twin run
        with cp.Device(trace=True) as dev2:
            fn(*args)
            thr = sum(r.thread_instructions for r in dev2.launches)
    return {"kernel": name, "trace": trace, **info, "warp_insts": warp, "thread_insts": thr, "wall_s": wall,
            "M_thread_inst_per_s": thr / wall / 1e6, "M_warp_inst_per_s": warp / wall / 1e6}


def peak_memory_child(n: int) -> float:
    code = (
        "import resource, numpy as np, tlpsim as cp, benchmarks.functional_speed as b\n"
        f"b.bench_vecadd({n})\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=__file__.rsplit("/benchmarks/", 1)[0])
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller inputs")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    q = args.quick
    cases = [
        ("vecadd", bench_vecadd, (1 << 18 if q else 1 << 20,)),
        ("sgemm_tiled", bench_sgemm, (128 if q else 256,)),
        ("stencil2d", bench_stencil, (512, 256) if q else (1024, 1024)),
        ("bfs_divergent", bench_bfs, (1 << 14 if q else 1 << 16, 4)),
    ]
    rows = []
    for name, fn, a in cases:
        for trace in (True, False):
            t0 = time.perf_counter()
            r = measure(name, fn, *a, trace=trace)
            r["bench_wall_s"] = time.perf_counter() - t0
            rows.append(r)
            if not args.json:
                print(f"{name:14s} trace={'on ' if trace else 'off'} {r['warp_insts']:>10d} warp-inst "
                      f"{r['thread_insts']:>12d} thread-inst {r['wall_s']:7.2f} s  "
                      f"{r['M_thread_inst_per_s']:7.1f} M thread-inst/s  {r['M_warp_inst_per_s']:6.2f} M warp-inst/s")
    mem = peak_memory_child(1 << 20)
    if args.json:
        print(json.dumps({"rows": rows, "peak_rss_mb_1M_thread_vecadd": mem}, indent=2))
    else:
        print(f"peak RSS of a 1 M-thread vecadd launch (whole process): {mem:.0f} MB")


if __name__ == "__main__":
    main()

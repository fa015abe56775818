"""montecarlo: Monte-Carlo European option pricing with an in-kernel RNG (SDK MonteCarlo).

Per-thread xorshift128 generator and Box-Muller transform (log/sqrt/sin/cos/exp on
the SFU), a long per-thread path loop, a shared-memory CTA reduction and a
finalize kernel. The reference replays the very same random streams in NumPy
(uint32 arithmetic) and prices them in float64, so the check is tight and
deterministic, not statistical.

Stands in for: EIP (Lee et al. HPCA 2014, Table 2: 256-thread 1D CTAs, Type III); MC and EST (EXPARS
Table 3: SDK MonteCarlo, EstimatePiInlineP).
Trait that matters: in-kernel random numbers, SFU-heavy, register-limited; 1D CTAs on a 2D grid."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

THREADS = 256
RATE = 0.05
VOL = 0.25
SEED = 20240601
# (options, CTAs per option, Box-Muller pairs per thread);
# paper: the SDK sample's 256 options x 262144 paths (16 CTAs x 256 threads x 32 pairs x 2)
SIZES = {"tiny": (4, 1, 4), "small": (64, 2, 16), "study": (128, 6, 8), "paper": (256, 16, 32)}

M32 = np.uint64(0xFFFFFFFF)


def _mix32(v):
    v = v.astype(np.uint64)
    v = (v ^ np.uint64(61)) ^ (v >> np.uint64(16))
    v = (v * np.uint64(0x27D4EB2D)) & M32
    v ^= v >> np.uint64(15)
    v = (v * np.uint64(0x9E3779B1)) & M32
    v ^= v >> np.uint64(13)
    return v


def _uniform_pairs(first, n_threads, pairs, seed):
    """The uniforms device threads first .. first+n_threads-1 draw: array
    [pairs, 2, n_threads] (float64, exact copies of the device's float32 values)."""
    gid = np.arange(first, first + n_threads, dtype=np.uint64)
    seed = np.uint64(seed)
    x, y, z, w = (_mix32((gid * np.uint64(4) + np.uint64(j) + seed) & M32) for j in range(4))
    w |= np.uint64(1)
    out = np.empty((pairs, 2, n_threads))
    for p in range(pairs):
        for j in range(2):
            t = x ^ ((x << np.uint64(11)) & M32)
            x, y, z = y, z, w
            w = w ^ (w >> np.uint64(19)) ^ (t ^ (t >> np.uint64(8)))
            out[p, j] = ((w >> np.uint64(8)) + np.uint64(1)).astype(np.float64) * 2.0 ** -24
    return out


def _reference(spot, strike, years, bpo, pairs, seed):
    """Replay every thread's random stream and price it in float64, a few options at a
    time. Threads are numbered option-major, then CTA, then lane. Returns the per-CTA
    (sum, sum of squares) partials, the mean payoff and its unbiased variance."""
    n_opt = len(spot)
    per_opt = bpo * THREADS
    paths = per_opt * pairs * 2
    r, v = float(np.float32(RATE)), float(np.float32(VOL))
    two_pi = float(np.float32(6.28318530717958648))
    pi = float(np.float32(3.14159265358979324))
    partial = np.zeros((n_opt, bpo, 2))
    mean = np.zeros(n_opt)
    var = np.zeros(n_opt)
    chunk = max(1, (1 << 16) // per_opt)
    for o0 in range(0, n_opt, chunk):
        o1 = min(n_opt, o0 + chunk)
        u = _uniform_pairs(o0 * per_opt, (o1 - o0) * per_opt, pairs, seed).reshape(pairs, 2, o1 - o0, per_opt)
        s0, k, t = (a[o0:o1].astype(np.float64)[:, None] for a in (spot, strike, years))
        radius = np.sqrt(-2.0 * np.log(u[:, 0]))
        angle = two_pi * u[:, 1] - pi
        z = np.stack([radius * np.cos(angle), radius * np.sin(angle)])      # [2, pairs, opt, thread]
        pay = np.maximum(s0 * np.exp((r - 0.5 * v * v) * t + v * np.sqrt(t) * z) - k, 0.0)
        per_cta = pay.reshape(2, pairs, o1 - o0, bpo, THREADS)
        partial[o0:o1, :, 0] = per_cta.sum(axis=(0, 1, 4))
        partial[o0:o1, :, 1] = (per_cta ** 2).sum(axis=(0, 1, 4))
        m = pay.sum(axis=(0, 1, 3)) / paths
        mean[o0:o1] = m
        var[o0:o1] = np.maximum((pay ** 2).sum(axis=(0, 1, 3)) / paths - m ** 2, 0) * paths / (paths - 1)
    return partial, mean, var


@register("montecarlo", "Monte-Carlo option pricing: in-kernel xorshift RNG, Box-Muller, CTA reduction",
          "montecarlo.cu", stands_for=("MC", "MonteCarlo"),
          traits=("compute-bound", "sfu-heavy", "shared-memory", "multi-kernel", "2d-grid"))
def run(size, rng):
    n_opt, bpo, pairs = SIZES[size]
    paths = bpo * THREADS * pairs * 2
    spot = rng.uniform(10.0, 50.0, n_opt).astype(np.float32)
    strike = (spot * rng.uniform(0.8, 1.2, n_opt)).astype(np.float32)
    years = rng.uniform(0.25, 5.0, n_opt).astype(np.float32)
    seed = int(rng.integers(0, 1 << 31)) ^ SEED

    mod = cp.RawModule(code=kernel_source("montecarlo.cu"))
    paths_k = mod.get_function("mc_paths")
    final_k = mod.get_function("mc_finalize")
    d_spot, d_strike, d_years = cp.asarray(spot), cp.asarray(strike), cp.asarray(years)
    d_partial = cp.zeros(2 * n_opt * bpo, np.float32)
    d_price, d_err = cp.zeros(n_opt, np.float32), cp.zeros(n_opt, np.float32)
    paths_k((bpo, n_opt), (THREADS,), (d_spot, d_strike, d_years, d_partial, np.float32(RATE),
                                       np.float32(VOL), np.int32(pairs), np.uint32(seed)))
    final_k(((n_opt + 127) // 128,), (128,), (d_partial, d_years, d_price, d_err, np.float32(RATE),
                                              np.int32(bpo), np.int32(paths), np.int32(n_opt)))

    ref_partial, mean, var = _reference(spot, strike, years, bpo, pairs, seed)
    disc = np.exp(-float(np.float32(RATE)) * years.astype(np.float64))
    # The fast intrinsics (__logf, __sinf, __cosf, __expf) differ from float64 by
    # ~2^-21 per sample; float32 sums over <= 2*pairs terms per thread and a
    # 256-leaf tree add ~1e-6 relative. Payoffs are non-negative sums, so rtol 2e-4
    # covers it with margin; the standard error is a difference of two such sums.
    return [
        compare("CTA partial sums", d_partial.get().reshape(n_opt, bpo, 2), ref_partial, rtol=2e-4, atol=1e-3),
        compare("price", d_price.get(), disc * mean, rtol=2e-4, atol=1e-4),
        compare("standard error", d_err.get(), disc * np.sqrt(var / paths), rtol=2e-3, atol=1e-5),
    ]

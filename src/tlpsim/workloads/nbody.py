"""nbody: all-pairs gravitational n-body integration (CUDA SDK nbody).

One thread per body; bodies are staged through shared memory in 128-body tiles
and every pair costs ~15 instructions around one rsqrt (compute-bound,
SFU-heavy). One launch per time step with ping-pong position buffers.

Stands in for: SDK nbody.
Trait that matters: compute-bound, register-limited (40 registers), shared-memory tiles."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

BLOCK = 128            # NB_BLOCK in nbody.cu
DT = np.float32(0.005)
EPS2 = np.float32(1e-3)
# (bodies, time steps); paper ~ the SDK sample's default body counts
SIZES = {"tiny": (256, 2), "small": (1920, 1), "study": (1920, 1), "paper": (16384, 2)}


def _accel(pos, mass, eps2):
    """float64 softened accelerations and, per body, sum_j m_j |r_ij| / d^3 (the error scale)."""
    acc = np.zeros_like(pos)
    mag = np.zeros(len(pos))
    for s in range(0, len(pos), 1024):
        r = pos[None, :, :] - pos[s:s + 1024, None, :]
        d2 = (r * r).sum(-1) + eps2
        w = mass[None, :] / (d2 * np.sqrt(d2))
        acc[s:s + 1024] = (r * w[..., None]).sum(1)
        mag[s:s + 1024] = (np.sqrt((r * r).sum(-1)) * w).sum(1)
    return acc, mag


@register("nbody", "all-pairs n-body: shared-memory tiles of bodies, rsqrt per pair, one launch per step",
          "nbody.cu", stands_for=("NBODY", "nbody", "NB"),
          traits=("compute-bound", "sfu-heavy", "shared-memory", "multi-kernel"))
def run(size, rng):
    n, steps = SIZES[size]
    pos0 = rng.standard_normal((n, 3)).astype(np.float32)
    mass = rng.uniform(0.5, 1.5, n).astype(np.float32) / np.float32(n)
    vel0 = (0.1 * rng.standard_normal((n, 3))).astype(np.float32)

    k = cp.RawKernel(kernel_source("nbody.cu"), "nbody_step")
    p4 = np.concatenate([pos0, mass[:, None]], axis=1)
    v4 = np.concatenate([vel0, np.zeros((n, 1), np.float32)], axis=1)
    bufs = [cp.asarray(p4), cp.zeros((n, 4), np.float32)]
    d_vel = cp.asarray(v4)
    for t in range(steps):
        k(((n + BLOCK - 1) // BLOCK,), (BLOCK,), (bufs[t % 2], bufs[(t + 1) % 2], d_vel, np.int32(n), DT, EPS2))
    got_p, got_v = bufs[steps % 2].get(), d_vel.get()

    pos, vel, m = pos0.astype(np.float64), vel0.astype(np.float64), mass.astype(np.float64)
    vscale = np.zeros(n)
    pscale = np.zeros(n)
    for _ in range(steps):
        acc, mag = _accel(pos, m, float(EPS2))
        vel = vel + acc * float(DT)
        pos = pos + vel * float(DT)
        # error scales: the acceleration's magnitude sum (float32 terms and running
        # sums) times dt, plus the rounding of the stored velocity / position
        vscale += mag * float(DT) + np.abs(vel).max(1)
        pscale += (mag * float(DT) + np.abs(vel).max(1)) * float(DT) + np.abs(pos).max(1)
    # Each pair term carries a few ulp (rsqrt, cubing) and the n-term float32 sum
    # loses ~2^-24 of the partial sum per step, mostly cancelling: relative to the
    # scales above everything stays below 2e-6 (measured 7e-8; a missing tile is > 1e-3).
    return [compare("velocity (relative to error scale)", got_v[:, :3] / vscale[:, None], vel / vscale[:, None],
                    atol=2e-6),
            compare("position (relative to error scale)", got_p[:, :3] / pscale[:, None], pos / pscale[:, None],
                    atol=2e-6),
            compare("mass carried", got_p[:, 3], mass)]

"""kmeans: Lloyd iterations of k-means clustering (Rodinia kmeans).

Per iteration: assignment (features in registers, centroids in constant memory,
register-limited occupancy), per-CTA accumulation with shared then global atomics,
and a centroid update; the host copies the centroids into constant memory between
iterations. Every iteration is verified against a float64 NumPy reference computed
from the centroids the device actually used.

Stands in for: KM (GPUDuet Table 2: Rodinia kmeans, 494,020 points); kmeans (RegLess: all of
Rodinia). Lee et al.'s KMN is `kmeans_rodinia`.
Trait that matters: register-heavy assignment (62 registers: 2 CTAs/SM on Fermi), four kernels over
dependent iterations."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import Check, compare, kernel_source, register

NF = 34     # must match kernels/kmeans.cu
MAXK = 16
BLOCK = 256
# (points, clusters, iterations); paper: Rodinia's kdd_cup input (494020 x 34, k = 5)
SIZES = {"tiny": (1024, 5, 2), "small": (16384, 5, 3), "study": (172032, 5, 2), "paper": (494020, 5, 5)}


def _points(n, k, rng):
    centres = rng.uniform(-4.0, 4.0, size=(k, NF))
    label = rng.integers(0, k, size=n)
    return (centres[label] + rng.standard_normal((n, NF))).astype(np.float32)


def _check_assignment(name, feat64, cent, member):
    """The chosen centroid must be a nearest one: its float64 distance may exceed the
    minimum only by float32 rounding of a 34-term sum (relative 1e-5)."""
    d = np.stack([((feat64 - c) ** 2).sum(axis=1) for c in cent.astype(np.float64)], axis=1)
    dmin = d.min(axis=1)
    if member.min() < 0 or member.max() >= cent.shape[0]:
        return Check(name, False, float("inf"), 1e-5)
    excess = (d[np.arange(len(member)), member] - dmin) / np.maximum(dmin, 1e-30)
    worst = float(excess.max())
    return Check(name, worst <= 1e-5, worst, 1e-5)


@register("kmeans", "k-means: register-heavy assignment with constant-memory centroids, atomic centroid update",
          "kmeans.cu", stands_for=("KM", "kmeans"),
          traits=("multi-kernel", "register-heavy", "constant-memory", "atomics", "shared-memory"))
def run(size, rng):
    n, k, iters = SIZES[size]
    assert k <= MAXK
    pts = _points(n, k, rng)
    mod = cp.RawModule(code=kernel_source("kmeans.cu"))
    transpose = mod.get_function("kmeans_transpose")
    assign = mod.get_function("kmeans_assign")
    accumulate = mod.get_function("kmeans_accumulate")
    update = mod.get_function("kmeans_update")
    cmem = mod.get_global("c_centroids")

    d_pts = cp.asarray(pts)
    d_feat = cp.zeros((NF, n), np.float32)
    d_member = cp.asarray(np.full(n, -1, np.int32))
    d_changed = cp.zeros(1, np.int32)
    d_sums = cp.zeros(k * NF, np.float32)
    d_counts = cp.zeros(k, np.int32)
    d_cent = cp.asarray(pts[:k].copy())     # initial centroids: the first k points
    grid = ((n + BLOCK - 1) // BLOCK,)

    transpose(grid, (BLOCK,), (d_pts, d_feat, np.int32(n)))
    checks = [compare("feature-major layout", d_feat.get(), pts.T.copy())]

    feat64 = pts.astype(np.float64)
    member_prev = np.full(n, -1, np.int64)
    for it in range(iters):
        cent = d_cent.get()
        table = np.zeros(MAXK * NF, np.float32)
        table[: k * NF] = cent.ravel()
        cmem.set(table.view(np.uint8))
        d_changed.set(np.zeros(1, np.int32))
        assign(grid, (BLOCK,), (d_feat, d_member, d_changed, np.int32(n), np.int32(k)))
        member = d_member.get().astype(np.int64)
        checks.append(_check_assignment(f"iter {it} membership", feat64, cent, member))
        checks.append(compare(f"iter {it} changed", d_changed.get(),
                              np.array([np.count_nonzero(member != member_prev)], np.int32)))
        member_prev = member

        d_sums.set(np.zeros(k * NF, np.float32))
        d_counts.set(np.zeros(k, np.int32))
        accumulate(grid, (BLOCK,), (d_feat, d_member, d_sums, d_counts, np.int32(n), np.int32(k)))
        update(((k * NF + 127) // 128,), (128,), (d_sums, d_counts, d_cent, np.int32(k)))

        # memberships outside 0..k-1 fail the membership check above; the reference
        # sums leave them out instead of failing with an IndexError
        ok = (member >= 0) & (member < k)
        counts = np.bincount(member[ok], minlength=k)
        sums = np.zeros((k, NF))
        np.add.at(sums, member[ok], feat64[ok])
        abs_sums = np.zeros((k, NF))
        np.add.at(abs_sums, member[ok], np.abs(feat64[ok]))
        # float32 atomics accumulate in arbitrary order: error ~ eps * (terms per
        # partial sum) * sum|x|; 1e-5 * sum|x| covers 256-deep CTA partials plus the
        # global chain of CTA partials with margin.
        checks.append(compare(f"iter {it} counts", d_counts.get(), counts.astype(np.int32)))
        checks.append(compare(f"iter {it} sums", d_sums.get().reshape(k, NF), sums,
                              rtol=1e-5, atol=1e-5 * float(abs_sums.max())))
        new_cent = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], cent)
        checks.append(compare(f"iter {it} centroids", d_cent.get(), new_cent,
                              rtol=1e-5, atol=1e-5 * float((abs_sums / np.maximum(counts, 1)[:, None]).max())))
    return checks

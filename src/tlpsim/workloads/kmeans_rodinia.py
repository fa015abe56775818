"""kmeans_rodinia: k-means as Rodinia runs it (stands in for KMN in Lee et al., HPCA 2014,
Type III; Rodinia kmeans in the other papers).

Trait that matters: one small kernel (about 20 registers, so threads, not registers,
limit occupancy: 6 CTAs of 256 threads per Fermi SM) whose threads re-read their
point's 34 features from global memory for each of the 5 clusters. A warp's features
are 34 L1 lines (a CTA's 34 KiB), so the cluster loop's reuse survives in a 16 KiB L1
only with few warps per SM: L1 thrashing as CTAs per SM rise. The built-in `kmeans`
keeps features in registers instead (62 registers, 4 kernels).

Per iteration one `kmeans_point` launch assigns every point to its nearest centroid
(centroids in constant memory); the host recomputes the centroids from the
memberships and copies them back, as Rodinia's CPU side does."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import Check, kernel_source, register

NF = 34      # features per point: Rodinia's kdd_cup input
MAXK, MAXF = 16, 64   # must match kernels/kmeans_rodinia.cu
BLOCK = 256  # Rodinia's BLOCK_SIZE
# (points, clusters, iterations); paper: kdd_cup, 494020 points, k = 5 (Rodinia's default), one
# launch (Lee et al.'s KMN: 1 kernel, 1936 CTAs). Point counts
# avoid large powers of two: the feature-major stride (4 x points bytes) would map a warp's 34
# feature lines onto the same cache sets.
SIZES = {"tiny": (1000, 5, 2), "small": (16000, 5, 2), "study": (175000, 5, 1), "paper": (494020, 5, 1)}


def points(n, k, rng):
    """n points around k random centres (unit Gaussian spread)."""
    centres = rng.uniform(-4.0, 4.0, size=(k, NF))
    label = rng.integers(0, k, size=n)
    return (centres[label] + rng.standard_normal((n, NF))).astype(np.float32)


def check_membership(name, feat64, cent, member, rtol=1e-5):
    """The chosen centroid must be a nearest one: its float64 squared distance may exceed
    the minimum only by float32 rounding of a 34-term sum (relative `rtol`)."""
    if member.min() < 0 or member.max() >= cent.shape[0]:
        return Check(name, False, float("inf"), rtol, f"membership outside 0..{cent.shape[0] - 1}")
    d = np.stack([((feat64 - c) ** 2).sum(axis=1) for c in cent.astype(np.float64)], axis=1)  # (n, k)
    dmin = d.min(axis=1)
    excess = (d[np.arange(len(member)), member] - dmin) / np.maximum(dmin, 1e-30)
    worst = float(excess.max())
    bad = int((excess > rtol).sum())
    return Check(name, worst <= rtol, worst, rtol, f"{bad} of {len(member)} points not at a nearest centroid")


@register("kmeans_rodinia", "k-means as Rodinia: one low-register kernel re-reading each point's features per "
          "cluster from a feature-major array", "kmeans_rodinia.cu", stands_for=("KMN", "kmeans (Rodinia)"),
          traits=("cache-sensitive", "constant-memory", "memory-bound"))
def run(size, rng):
    n, k, iters = SIZES[size]
    pts = points(n, k, rng)
    mod = cp.RawModule(code=kernel_source("kmeans_rodinia.cu"))
    kernel = mod.get_function("kmeans_point")
    cmem = mod.get_global("c_clusters")
    d_feat = cp.asarray(np.ascontiguousarray(pts.T))   # feature-major, as Rodinia's invert_mapping leaves it
    d_member = cp.zeros(n, np.int32)
    feat64 = pts.astype(np.float64)
    cent = pts[:k].copy()   # Rodinia starts from the first k points
    checks = []
    for it in range(iters):
        table = np.zeros(MAXK * MAXF, np.float32)
        table[: k * NF] = cent.ravel()
        cmem.set(table.view(np.uint8))
        kernel(((n + BLOCK - 1) // BLOCK,), (BLOCK,), (d_feat, np.int32(NF), np.int32(n), np.int32(k), d_member))
        member = d_member.get().astype(np.int64)
        checks.append(check_membership(f"iter {it} membership", feat64, cent, member))
        # the host's centroid update (Rodinia's CPU side); empty clusters keep their centroid
        counts = np.bincount(member, minlength=k)
        sums = np.zeros((k, NF))
        np.add.at(sums, member, feat64)
        cent = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], cent).astype(np.float32)
    return checks

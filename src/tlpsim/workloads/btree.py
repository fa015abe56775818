"""btree: point and range queries on a static implicit B+tree in global memory (Rodinia b+tree).

Stands in for: BT (EXPARS Table 3: findRangeK; GPUDuet Table 2); b+tree (RegLess: all of Rodinia).
Trait that matters: pointer-chasing tree descent, divergent; thread-limited 256-thread CTAs."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

FANOUT = 16   # children per inner node (matches btree.cu)
LEAF = 16     # keys per leaf (matches btree.cu)
INT_MAX = np.iinfo(np.int32).max
# keys in the tree, point queries, range queries, mean keys per range
SIZES = {"tiny": (4096, 1024, 1024, 12), "small": (65536, 8192, 8192, 24),
         "study": (65536, 215040, 215040, 8), "paper": (1 << 22, 1 << 20, 1 << 20, 24)}
BLOCK = 256


def build_inner(keys):
    """Inner levels bottom-up; each node's FANOUT separators are the first keys of its children.
    Returns (inner keys, root-first level start offsets in nodes, depth)."""
    firsts = keys[::LEAF].astype(np.int64)  # first key of each leaf
    levels = []
    while True:
        nodes = -(-firsts.size // FANOUT)
        sep = np.full(nodes * FANOUT, INT_MAX, np.int64)
        sep[:firsts.size] = firsts
        levels.append(sep)
        if nodes == 1:
            break
        firsts = sep[::FANOUT]
    levels.reverse()
    starts = np.cumsum([0] + [lv.size // FANOUT for lv in levels[:-1]]).astype(np.int32)
    return np.concatenate(levels).astype(np.int32), starts, len(levels)


@register("btree", "B+tree point and range queries, one thread per query descending an implicit tree",
          "btree.cu", stands_for=("B+T", "b+tree", "BT"),
          traits=("divergent", "irregular", "cache-sensitive"))
def run(size, rng):
    nkeys, npoint, nrange, span = SIZES[size]
    keys = np.cumsum(rng.integers(1, 9, nkeys)).astype(np.int32)   # sorted, unique, uneven gaps
    vals = rng.integers(0, 1000, nkeys).astype(np.int32)
    inner, starts, depth = build_inner(keys)
    kmax = int(keys[-1])

    # Half the point queries hit stored keys, half are random (mostly misses).
    hits = keys[rng.integers(0, nkeys, npoint // 2)]
    randoms = rng.integers(-5, kmax + 5, npoint - npoint // 2).astype(np.int32)
    points = rng.permutation(np.concatenate([hits, randoms])).astype(np.int32)
    # Range widths are geometric in key units, so the leaf scans have very uneven lengths.
    lo = rng.integers(-20, kmax + 20, nrange).astype(np.int32)
    hi = (lo + rng.geometric(1.0 / (4.5 * span), nrange) - 1).astype(np.int32)

    mod = cp.RawModule(code=kernel_source("btree.cu"))
    find, rangeq = mod.get_function("btree_find"), mod.get_function("btree_range")
    d_inner, d_starts = cp.asarray(inner), cp.asarray(starts)
    d_keys, d_vals = cp.asarray(keys), cp.asarray(vals)
    d_points, d_found = cp.asarray(points), cp.zeros(npoint, np.int32)
    d_lo, d_hi = cp.asarray(lo), cp.asarray(hi)
    d_start, d_count, d_total = (cp.zeros(nrange, np.int32) for _ in range(3))

    find(((npoint + BLOCK - 1) // BLOCK,), (BLOCK,),
         (d_inner, d_starts, np.int32(depth), d_keys, d_vals, np.int32(nkeys), d_points, d_found, np.int32(npoint)))
    rangeq(((nrange + BLOCK - 1) // BLOCK,), (BLOCK,),
           (d_inner, d_starts, np.int32(depth), d_keys, d_vals, np.int32(nkeys), d_lo, d_hi,
            d_start, d_count, d_total, np.int32(nrange)))

    idx = np.searchsorted(keys, points)
    present = (idx < nkeys) & (keys[np.minimum(idx, nkeys - 1)] == points)
    ref_found = np.where(present, vals[np.minimum(idx, nkeys - 1)], -1).astype(np.int32)
    first = np.searchsorted(keys, lo, "left")
    last = np.searchsorted(keys, hi, "right")
    prefix = np.concatenate([[0], np.cumsum(vals, dtype=np.int64)])
    return [compare("found", d_found.get(), ref_found),
            compare("start", d_start.get(), first.astype(np.int32)),
            compare("count", d_count.get(), (last - first).astype(np.int32)),
            compare("sum", d_total.get(), (prefix[last] - prefix[first]).astype(np.int32))]

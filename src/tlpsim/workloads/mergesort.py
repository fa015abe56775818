"""mergesort: key-value merge sort (CUDA SDK mergeSort).

ms_tile_sort bitonic-sorts 2048-pair tiles in 16 KiB of shared memory (barrier
after each of the 66 steps, data-dependent swaps: divergent; shared-memory-
limited on Fermi), then log2(n/2048) ms_merge_pass launches merge neighbouring
runs, each thread binary-searching its rank in the partner run.

Stands in for: MERG (EXPARS Table 3: SDK mergeSortShared).
Trait that matters: shared-memory-limited bitonic tile sort, divergent merge passes."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

TILE = 2048        # MS_TILE in mergesort.cu
THREADS = 256      # MS_THREADS
MERGE_BLOCK = 256
# pairs (a multiple of TILE); paper approaches the SDK sample's 4M pairs
SIZES = {"tiny": 4096, "small": 32768, "study": 786432, "paper": 1 << 20}


@register("mergesort", "bitonic sort of 2048-pair tiles in shared memory, then global merge passes",
          "mergesort.cu", stands_for=("MS", "mergeSort", "SORT"),
          traits=("multi-kernel", "shared-memory", "divergent", "barrier-heavy", "irregular"))
def run(size, rng):
    n = SIZES[size]
    keys = rng.integers(0, 1 << 16, n, dtype=np.uint32)   # many duplicate keys: ties broken by value
    vals = np.arange(n, dtype=np.uint32)                   # original positions -> stable order

    mod = cp.RawModule(code=kernel_source("mergesort.cu"))
    k_tile, k_merge = mod.get_function("ms_tile_sort"), mod.get_function("ms_merge_pass")
    dk, dv = cp.asarray(keys), cp.asarray(vals)
    k_tile((n // TILE,), (THREADS,), (dk, dv))
    tiles_k, tiles_v = dk.get(), dv.get()
    bufs = [(dk, dv), (cp.zeros(n, np.uint32), cp.zeros(n, np.uint32))]
    run_len, cur = TILE, 0
    while run_len < n:
        (ki, vi), (ko, vo) = bufs[cur], bufs[1 - cur]
        k_merge(((n + MERGE_BLOCK - 1) // MERGE_BLOCK,), (MERGE_BLOCK,), (ki, vi, ko, vo, np.int32(n),
                                                                        np.int32(run_len)))
        run_len, cur = run_len * 2, 1 - cur
    out_k, out_v = bufs[cur][0].get(), bufs[cur][1].get()

    # reference: per-tile and global stable sorts by key (integers: exact)
    t = np.arange(n) // TILE
    tile_order = np.lexsort((vals, keys, t))
    order = np.lexsort((vals, keys))
    return [compare("tile-sorted keys", tiles_k, keys[tile_order]),
            compare("tile-sorted values", tiles_v, vals[tile_order]),
            compare("sorted keys", out_k, keys[order]),
            compare("sorted values (stable permutation)", out_v, vals[order])]

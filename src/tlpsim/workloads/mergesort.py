"""mergesort: key-value merge sort (CUDA SDK mergeSort).

ms_tile_sort bitonic-sorts 1024-pair tiles in 8 KiB of shared memory with 512
threads, one compare-exchange per thread per step (the SDK's shared-memory stage:
SHARED_SIZE_LIMIT 1024 keys, SHARED_SIZE_LIMIT / 2 threads; a barrier before each
of the 55 steps, data-dependent swaps: divergent), then log2(n/1024)
ms_merge_pass launches merge neighbouring runs, each thread binary-searching its
rank in the partner run.

Stands in for: MERG (EXPARS Table 3: SDK mergeSortSharedKernel, 16 warps and
8,192 B of shared memory per CTA, 2 CTAs/SM on Fermi).
Trait that matters: 16-warp CTAs that hold 8 KiB of shared memory but are
register-limited (2 CTAs/SM on Fermi, where shared memory would allow 6: the spare
scratchpad EXPARS spills registers into), divergent merge passes. At ptxas's count
(18 registers), which the presets reserve as GPGPU-Sim does, the tile sort fits 3 CTAs
on a GTX480 SM, limited by threads and registers at once: one more than MERG's 2.

`study` is 336 tiles: 4 waves of the tile sort on `tesla_m2050` (28 SMs x 3 CTAs,
thread- and register-limited at ptxas's 18 registers), the least any tile count meets
the rule with; every merge pass runs n/256 CTAs (>= 8 waves everywhere; the last pass
merges a run of 256 tiles with one of 80), so none is exempt."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

TILE = 1024        # MS_TILE in mergesort.cu
THREADS = 512      # MS_THREADS
MERGE_BLOCK = 256
# pairs (a multiple of TILE); paper approaches the SDK sample's 4M pairs; study = 4 tile-sort
# waves of 28 SMs x 3 CTAs (tesla_m2050)
SIZES = {"tiny": 4096, "small": 32768, "study": 336 * TILE, "paper": 1 << 20}


@register("mergesort", "bitonic sort of 1024-pair tiles in shared memory, then global merge passes",
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

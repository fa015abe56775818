"""bfs: level-synchronous breadth-first search on a skewed random CSR graph (Rodinia BFS).

Stands in for: BFS (Lee et al. HPCA 2014, Table 2: 512-thread CTAs, Type II; ours 256); BFS (GPUDuet
Table 2); bfs (RegLess: all of Rodinia).
Trait that matters: irregular, divergent frontier expansion over many dependent launches; bfs_expand
register-limited."""

from collections import deque

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

# vertices, cap on the out-degree of the skewed part
SIZES = {"tiny": (2048, 64), "small": (32768, 256), "study": (215040, 256), "paper": (1 << 20, 4096)}
BLOCK = 256


def make_graph(n, max_degree, rng):
    """A directed graph whose out-degrees follow a heavy-tailed (Zipf) law, plus one edge
    into every vertex v > 0 from a random earlier vertex so that all vertices are reachable
    from vertex 0. Returns CSR (row_ptr, col_idx) as int32 arrays."""
    tree_src = (rng.random(n - 1) * np.arange(1, n)).astype(np.int64)  # a random earlier vertex
    tree_dst = np.arange(1, n, dtype=np.int64)
    deg = np.minimum(rng.zipf(1.9, n), max_degree) - 1 + rng.integers(0, 4, n)
    extra_src = np.repeat(np.arange(n, dtype=np.int64), deg)
    extra_dst = rng.integers(0, n, extra_src.size)
    src = np.concatenate([tree_src, extra_src])
    dst = np.concatenate([tree_dst, extra_dst])
    order = np.lexsort((dst, src))
    src, dst = src[order], dst[order]
    row_ptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(row_ptr, src + 1, 1)
    return np.cumsum(row_ptr).astype(np.int32), dst.astype(np.int32)


def reference_levels(row_ptr, col_idx, source):
    n = row_ptr.size - 1
    level = np.full(n, -1, dtype=np.int32)
    level[source] = 0
    queue = deque([source])
    while queue:
        v = queue.popleft()
        for u in col_idx[row_ptr[v]:row_ptr[v + 1]]:
            if level[u] < 0:
                level[u] = level[v] + 1
                queue.append(u)
    return level


@register("bfs", "level-synchronous BFS over a skewed CSR graph, two launches per level", "bfs.cu",
          stands_for=("BFS", "bfs", "Rodinia BFS"),
          traits=("divergent", "irregular", "multi-kernel", "memory-bound"))
def run(size, rng):
    n, max_degree = SIZES[size]
    row_ptr, col_idx = make_graph(n, max_degree, rng)
    source = 0
    mod = cp.RawModule(code=kernel_source("bfs.cu"))
    expand, commit = mod.get_function("bfs_expand"), mod.get_function("bfs_commit")

    frontier = np.zeros(n, np.uint8)
    frontier[source] = 1
    level = np.full(n, -1, np.int32)
    level[source] = 0
    d_row, d_col = cp.asarray(row_ptr), cp.asarray(col_idx)
    d_front, d_visit = cp.asarray(frontier), cp.asarray(frontier.copy())
    d_disc = cp.zeros(n, np.uint8)
    d_level = cp.asarray(level)
    d_grew = cp.zeros(1, np.int32)
    grid = ((n + BLOCK - 1) // BLOCK,)
    levels = 0
    while True:
        d_grew.set(np.zeros(1, np.int32))
        expand(grid, (BLOCK,), (d_row, d_col, d_front, d_disc, d_visit, d_level, np.int32(n)))
        commit(grid, (BLOCK,), (d_front, d_disc, d_visit, d_grew, np.int32(n)))
        levels += 1
        if not d_grew.get()[0] or levels > n:
            break

    ref = reference_levels(row_ptr, col_idx, source)
    return [compare("level", d_level.get(), ref),
            compare("visited", d_visit.get().astype(np.int32), (ref >= 0).astype(np.int32))]

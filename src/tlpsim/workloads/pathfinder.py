"""pathfinder: row-by-row dynamic programming with a shared-memory pyramid
(Rodinia pathfinder).

Each launch advances `pyramid` rows; 256-thread CTAs overlap by 2*pyramid columns
and lanes fall idle as the valid region shrinks. Integer costs, verified exactly.

Stands in for: pathfinder (RegLess: all of Rodinia).
Trait that matters: thread-limited, lanes idle as the pyramid shrinks, barrier-heavy."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

BLOCK = 256
# (columns, rows, rows per launch); paper: Rodinia's 100000 x 100 grid, pyramid 20
SIZES = {"tiny": (2000, 14, 5), "small": (10000, 101, 20), "study": (181440, 41, 20), "paper": (100000, 100, 20)}


def _reference(wall):
    big = np.iinfo(np.int64).max // 4
    cost = wall[0].astype(np.int64)
    for r in range(1, wall.shape[0]):
        left = np.concatenate(([big], cost[:-1]))
        right = np.concatenate((cost[1:], [big]))
        cost = np.minimum(cost, np.minimum(left, right)) + wall[r]
    return cost.astype(np.int32)


@register("pathfinder", "grid DP: several rows per launch in a shrinking shared-memory pyramid",
          "pathfinder.cu", stands_for=("PF", "PFN", "pathfinder"),
          traits=("divergent", "shared-memory", "multi-kernel", "barrier-heavy"))
def run(size, rng):
    cols, rows, pyramid = SIZES[size]
    wall = rng.integers(0, 10, size=(rows, cols), dtype=np.int32)
    k = cp.RawKernel(kernel_source("pathfinder.cu"), "pathfinder_rows")
    d_wall = cp.asarray(wall)
    bufs = [cp.asarray(wall[0].copy()), cp.zeros(cols, np.int32)]
    cur = 0
    row = 1
    while row < rows:
        steps = min(pyramid, rows - row)
        width = BLOCK - 2 * steps
        k(((cols + width - 1) // width,), (BLOCK,),
          (d_wall, bufs[cur], bufs[1 - cur], np.int32(cols), np.int32(row), np.int32(steps)))
        cur = 1 - cur
        row += steps
    return [compare("last-row costs", bufs[cur].get(), _reference(wall))]

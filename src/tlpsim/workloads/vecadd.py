"""vecadd: streaming element-wise addition (CUDA SDK vectorAdd).

Stands in for: VADD (Lee et al. HPCA 2014, Table 2: 256-thread CTAs, Type II); SDK vectorAdd.
Trait that matters: thread-limited streaming."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

N = {"tiny": 4096, "small": 1 << 20, "study": 1 << 20, "paper": 1 << 24}


@register("vecadd", "c = a + b over float32 vectors", "vecadd.cu", stands_for=("VA", "vectorAdd"),
          traits=("memory-bound", "thread-limited"))
def run(size, rng):
    n = N[size]
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    k = cp.RawKernel(kernel_source("vecadd.cu"), "vecadd")
    da, db, dc = cp.asarray(a), cp.asarray(b), cp.zeros(n, np.float32)
    k(((n + 255) // 256,), (256,), (da, db, dc, np.int32(n)))
    return [compare("c", dc.get(), a + b)]

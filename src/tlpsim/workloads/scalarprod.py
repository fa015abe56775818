"""scalarprod: batched dot products, one CTA per vector pair (SDK scalarProd).

Stands in for: SDK scalarProd.
Trait that matters: one CTA per vector pair, barrier-heavy."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

# (vector pairs, elements per vector); tiny's length is not a multiple of the CTA size.
SIZE = {"tiny": (8, 1000), "small": (256, 4096), "study": (768, 4096), "paper": (1024, 8192)}
BLOCK = 256


@register("scalarprod", "out[v] = dot(a[v], b[v]) for a batch of vector pairs, shared-memory tree per CTA",
          "scalarprod.cu", stands_for=("SP", "scalarProd", "SDK scalarProd"),
          traits=("shared-memory", "barrier-heavy", "memory-bound"))
def run(size, rng):
    nvec, elems = SIZE[size]
    a = rng.uniform(0, 1, (nvec, elems)).astype(np.float32)
    b = rng.uniform(0, 1, (nvec, elems)).astype(np.float32)
    k = cp.RawKernel(kernel_source("scalarprod.cu"), "scalarprod")
    da, db = cp.asarray(a), cp.asarray(b)
    dout = cp.zeros(nvec, np.float32)
    k((nvec,), (BLOCK,), (da, db, dout, np.int32(nvec), np.int32(elems)))
    ref = np.einsum("ij,ij->i", a.astype(np.float64), b.astype(np.float64))
    # non-negative products: per-thread FMA chains of elems/256 terms plus an 8-level
    # tree keep the float32 result within ~1e-6 relative; 1e-5 leaves margin
    return [compare("dots", dout.get(), ref, rtol=1e-5)]

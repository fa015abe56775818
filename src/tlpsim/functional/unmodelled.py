"""PTX features of Volta-to-Hopper GPUs tlpsim does not model, named so that a kernel
using one is refused with what the feature is, rather than as an unknown instruction:
tensor cores (mma, wmma, wgmma and their matrix loads), the Tensor Memory Accelerator
(cp.async.bulk, tensormaps), the mbarriers asynchronous copies signal, and
thread-block clusters (distributed shared memory, cluster barriers and
special registers). README "Hopper" lists them."""

from __future__ import annotations

from tlpsim.frontend.ir import Instruction, Special

__all__ = ["unmodelled_feature"]

_TENSOR = frozenset({"mma", "wmma", "wgmma", "ldmatrix", "stmatrix", "movmatrix", "tcgen05"})
_CLUSTER_OPS = frozenset({"mapa", "getctarank", "clusterlaunchcontrol"})
_CLUSTER_SREGS = frozenset({"clusterid", "nclusterid", "cluster_ctaid", "cluster_nctaid", "cluster_ctarank",
                            "cluster_nctarank", "is_explicit_cluster"})


def unmodelled_feature(ins: Instruction) -> str | None:
    """The unmodelled feature `ins` belongs to (a phrase for an error message), or None."""
    base, mods = ins.base, ins.mods
    if base in ("membar", "fence"):     # a cluster-scope fence orders nothing more without clusters
        return None
    if base in _TENSOR:
        return "tensor-core matrix instructions (mma/wmma/wgmma) are not modelled"
    if base == "cp" and ("bulk" in mods or "tensor" in mods) or base == "tensormap":
        return "the Tensor Memory Accelerator (cp.async.bulk, tensormaps) is not modelled"
    # Ampere's cp.async.{ca,cg} with commit/wait groups executes (semantics/async_copy.py)
    if base == "mbarrier":
        return "mbarriers (the completion barriers of asynchronous copies and TMA) are not modelled"
    if base in _CLUSTER_OPS or "cluster" in mods or any(m.endswith("::cluster") for m in mods):
        return "thread-block clusters (distributed shared memory, cluster barriers) are not modelled"
    if any(isinstance(op, Special) and op.name in _CLUSTER_SREGS for op in ins.srcs):
        return "thread-block clusters (the %cluster* special registers) are not modelled"
    return None

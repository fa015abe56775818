"""`AnalyzedKernel`: a flattened kernel and its (lazily computed) analysis results.

The timing model and the policies read analyses only through this container.
Every result is plain immutable data computed on first access and cached.

Analyses are looked up by name in a registry.  Built in: ``liveness``
(GPU-aware), ``standard_liveness``, ``allocation``, ``weights`` (EXPARS order),
``switch_points`` (GPUDuet).  ``regions`` (RegLess Algorithm 1), ``bundles``
(EXPARS) and ``release_points`` (RFV) are placeholders: their modules --
``tlpsim.analysis.regions``, ``tlpsim.analysis.bundles`` and
``tlpsim.analysis.release`` -- provide them by registering a function::

    from tlpsim.analysis.analyzed import register_analysis

    @register_analysis("regions")
    def _regions(ak: AnalyzedKernel) -> Regions: ...

Accessing ``ak.regions`` imports the module (which registers the provider) the
first time; without a provider it raises ``NotImplementedError``.

Register numbering: ``analyze()`` gives the analyses' packed allocation (the
fewest registers).  ``ak.within(n_regs, n_banks)`` is the same kernel numbered
as the hardware holds it -- values spread bank-aware over the compiler's
``n_regs`` registers (:mod:`tlpsim.analysis.spread`) -- and every analysis that
derives from the allocation (``allocation``, ``weights``, ``switch_points``,
``regions``, ``bundles``, ``release_points``) is computed on those names; the
liveness results are shared with the packed kernel.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tlpsim.analysis.kernel_cfg import kernel_cfg, reconvergence_points
from tlpsim.frontend.inline import flatten_kernel
from tlpsim.frontend.ir import Function, Module

__all__ = ["AnalyzedKernel", "analyze", "register_analysis", "registered_analyses"]

_PROVIDERS: dict[str, Callable[[AnalyzedKernel], Any]] = {}
_NUMBERING_FREE = ("liveness", "standard_liveness")  # results that do not depend on the register numbering
_PROVIDER_MODULES = {  # where a not-yet-registered analysis lives
    "regions": "tlpsim.analysis.regions",
    "bundles": "tlpsim.analysis.bundles",
    "release_points": "tlpsim.analysis.release",
}


def register_analysis(name: str) -> Callable[[Callable[[AnalyzedKernel], Any]], Callable[[AnalyzedKernel], Any]]:
    """Decorator: make ``fn(ak)`` compute ``ak.get(name)`` (and the property of that name)."""

    def deco(fn: Callable[[AnalyzedKernel], Any]) -> Callable[[AnalyzedKernel], Any]:
        _PROVIDERS[name] = fn
        return fn

    return deco


def registered_analyses() -> tuple[str, ...]:
    return tuple(sorted(_PROVIDERS))


@dataclass(frozen=True, eq=False)
class AnalyzedKernel:
    """A kernel as the simulator runs it (calls inlined) with its analyses."""

    module: Module
    kernel: Function  # as parsed
    fn: Function  # flattened: what the simulator executes and the analyses describe
    budget: tuple[int, int] | None = None  # (registers, banks) of within(); None: the packed allocation
    packed: AnalyzedKernel | None = field(default=None, repr=False)  # the packed kernel this one renumbers
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    _numbered: dict[tuple[int, int], AnalyzedKernel] = field(default_factory=dict, init=False, repr=False)

    @property
    def name(self) -> str:
        return self.kernel.name

    def within(self, n_regs: int, n_banks: int) -> AnalyzedKernel:
        """This kernel with its values spread over ``n_regs`` physical registers (or the
        packed count when that is larger), bank-aware for ``n_banks`` banks; cached."""
        root = self.packed or self
        key = (n_regs, n_banks)
        if key not in root._numbered:
            root._numbered[key] = AnalyzedKernel(self.module, self.kernel, self.fn, key, root)
        return root._numbered[key]

    @property
    def packed_allocation(self):
        """The analyses' packed allocation (fewest registers), whatever this kernel's numbering."""
        return (self.packed or self).allocation

    def get(self, name: str) -> Any:
        """The result of analysis ``name``, computed once."""
        if self.packed is not None and name in _NUMBERING_FREE:
            return self.packed.get(name)
        if name not in self._cache:
            provider = _PROVIDERS.get(name)
            if provider is None and name in _PROVIDER_MODULES:
                try:
                    importlib.import_module(_PROVIDER_MODULES[name])
                except ModuleNotFoundError as e:
                    if e.name != _PROVIDER_MODULES[name]:
                        raise
                provider = _PROVIDERS.get(name)
            if provider is None:
                raise NotImplementedError(f"no analysis named {name!r} is registered "
                                          f"(known: {', '.join(registered_analyses())})")
            self._cache[name] = provider(self)
        return self._cache[name]

    def has(self, name: str) -> bool:
        """Whether ``name`` has been computed already."""
        return name in self._cache

    # -- structure (cached on the function)
    @property
    def cfg(self):
        return kernel_cfg(self.fn)

    @property
    def reconvergence(self) -> dict[int, int]:
        return reconvergence_points(self.fn)

    # -- built-in analyses
    @property
    def liveness(self):
        """GPU-aware liveness (:class:`~tlpsim.analysis.liveness.Liveness`)."""
        return self.get("liveness")

    @property
    def standard_liveness(self):
        return self.get("standard_liveness")

    @property
    def allocation(self):
        """Physical registers (:class:`~tlpsim.analysis.regalloc.Allocation`)."""
        return self.get("allocation")

    @property
    def weights(self):
        """EXPARS reference weights and order (:class:`~tlpsim.analysis.weights.RegisterWeights`)."""
        return self.get("weights")

    @property
    def switch_points(self):
        """GPUDuet switch points (:class:`~tlpsim.analysis.switch_points.SwitchPoints`)."""
        return self.get("switch_points")

    # -- placeholders, provided by other modules
    @property
    def regions(self):
        """RegLess regions (provided by ``tlpsim.analysis.regions``)."""
        return self.get("regions")

    @property
    def bundles(self):
        """EXPARS instruction bundles (provided by ``tlpsim.analysis.bundles``)."""
        return self.get("bundles")

    @property
    def release_points(self):
        """RFV register release flags (provided by ``tlpsim.analysis.release``)."""
        return self.get("release_points")


@register_analysis("liveness")
def _liveness(ak: AnalyzedKernel):
    from tlpsim.analysis.liveness import liveness

    return liveness(ak.fn, gpu_aware=True)


@register_analysis("standard_liveness")
def _standard_liveness(ak: AnalyzedKernel):
    from tlpsim.analysis.liveness import liveness

    return liveness(ak.fn, gpu_aware=False)


@register_analysis("allocation")
def _allocation(ak: AnalyzedKernel):
    from tlpsim.analysis.regalloc import allocate

    if ak.budget is None or ak.packed is None:
        return allocate(ak.fn)
    from tlpsim.analysis.spread import spread_allocation

    return spread_allocation(ak.fn, ak.budget[0], ak.budget[1], packed=ak.packed.allocation)


@register_analysis("weights")
def _weights(ak: AnalyzedKernel):
    from tlpsim.analysis.weights import register_weights

    return register_weights(ak.fn, ak.allocation)


@register_analysis("switch_points")
def _switch_points(ak: AnalyzedKernel):
    from tlpsim.analysis.switch_points import switch_points

    return switch_points(ak.fn, ak.liveness, ak.allocation)


def analyze(module: Module, kernel: Function | str, scheduled: bool = False) -> AnalyzedKernel:
    """Flatten ``kernel`` (a Function or a kernel name) and wrap it; cached on the kernel.
    ``scheduled``: the flattened kernel as an assembler lays it out, short if-regions
    predicated (:func:`tlpsim.analysis.ifconvert.if_convert`) and blocks list-scheduled
    (:func:`tlpsim.analysis.schedule.reschedule`; ``gpu.block_schedule = "list"``).

    Raises :class:`~tlpsim.errors.UnsupportedPTX` for kernels that cannot be
    flattened (calls to external functions such as ``vprintf``).
    """
    k = module.get_kernel(kernel) if isinstance(kernel, str) else kernel
    key = "analyzed_scheduled" if scheduled else "analyzed"
    cached = k.analyses.get(key)
    if cached is not None and cached.module is module:
        return cached
    fn = flatten_kernel(module, k)
    if scheduled:  # as ptxas lays it out: short if-regions predicated, then blocks list-scheduled
        from tlpsim.analysis.ifconvert import if_convert
        from tlpsim.analysis.schedule import reschedule

        fn = reschedule(if_convert(fn))
    ak = AnalyzedKernel(module, k, fn)
    k.analyses[key] = ak
    return ak

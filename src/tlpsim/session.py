"""A timing-model session: one configured GPU, with its plug-ins resolved and the
energy model attached, that kernel launches are replayed on, one after another,
keeping L2 and DRAM state between launches (L1s are flushed per kernel, as
GPGPU-Sim's gpgpu_flush_l1_cache does).

This is the layer that joins the timing model, the plug-in registry and the energy
model (none of which import each other's way up). The host API calls `simulate()`
with what the functional model produced; this module knows nothing about the
functional model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tlpsim.config.loader import load_config
from tlpsim.plugin_guard import guarded
from tlpsim.timing.builder import latency_tables
from tlpsim.timing.gpu import GPU
from tlpsim.timing.static import StaticKernel

__all__ = ["RegisterNumbering", "TimingSession", "build_gpu", "register_numbering", "rf_register_count"]


@dataclass(frozen=True)
class RegisterNumbering:
    """How one kernel's registers are numbered and how many the register file reserves."""

    compiler_regs: int    # ptxas's per-thread count (or the launch's resources override)
    allocation_regs: int  # the analyses' packed allocation (fewest registers)
    rf_regs: int          # per-thread registers the RF reserves
    sized_by: str         # which count rf_regs is: "ptxas" or "allocation"
    allocation: Any       # analysis.regalloc.Allocation: the physical registers instructions name
    analyzed: Any = None  # analysis.analyzed.AnalyzedKernel on those names (None without one)
    named_regs: int = 0   # highest register an instruction names + 1: rf_regs, except under
    #                       'ptxas_exact' where the allocation needs more names than ptxas's count


def rf_bank_period(sm: Any) -> int:
    """Banks one warp's registers rotate through (registers r and r + this share a bank):
    the RF's banks, or one scheduler's share of them in the sub-core model."""
    return sm.rf_banks // sm.n_schedulers if sm.sub_core_model else sm.rf_banks


def rf_register_count(register_count: str, compiler_regs: int, packed_regs: int) -> int:
    """Registers per thread the RF reserves under `sm.register_count` for a kernel whose
    compiler count is `compiler_regs` and packed allocation `packed_regs`: the
    `rf_regs` of `register_numbering`, without computing the numbering (the catalogue)."""
    if register_count == "allocation":
        return packed_regs
    return compiler_regs if register_count == "ptxas_exact" else max(compiler_regs, packed_regs)


def register_numbering(config: Any, fn: Any, compiler_regs: int, analyzed: Any = None) -> RegisterNumbering:
    """The numbering `sm.register_count` chooses for kernel `fn` (flattened) whose compiler
    count is `compiler_regs`: 'ptxas' spreads the values over max(compiler, packed)
    registers, bank-aware, and the RF reserves that many; 'ptxas_exact' numbers them the
    same way but the RF reserves exactly `compiler_regs` (the card's occupancy); 'allocation'
    keeps the packed allocation and sizes the RF by it.

    Under 'ptxas_exact' the names past `compiler_regs` are not folded onto the reserved
    ones: they stand for values ptxas's SASS does not hold in registers at all (PTX's extra
    address arithmetic, 64-bit pointer halves, rematerialisable constants), so aliasing them
    with live registers would invent dependencies the card does not have. They keep their own
    scoreboard bits, and their bank is the name's, as for any register (bank = name mod banks,
    placed bank-aware by the spreading allocator)."""
    from tlpsim.analysis.regalloc import allocate

    packed = analyzed.packed_allocation if analyzed is not None else allocate(fn)
    mode = config.sm.register_count
    if mode == "allocation":
        return RegisterNumbering(compiler_regs, packed.n_regs, packed.n_regs, "allocation", packed, analyzed,
                                 packed.n_regs)
    banks = rf_bank_period(config.sm)
    if analyzed is not None:
        analyzed = analyzed.within(compiler_regs, banks)
        alloc = analyzed.allocation
    else:
        from tlpsim.analysis.spread import spread_allocation

        alloc = spread_allocation(fn, compiler_regs, banks, packed=packed)
    if mode == "ptxas_exact":
        return RegisterNumbering(compiler_regs, packed.n_regs, compiler_regs, "ptxas", alloc, analyzed, alloc.n_regs)
    return RegisterNumbering(compiler_regs, packed.n_regs, alloc.n_regs,
                             "ptxas" if alloc.n_regs == compiler_regs else "allocation", alloc, analyzed,
                             alloc.n_regs)


def build_gpu(config: Any, dense: bool = False) -> GPU:
    """A `GPU` for `config` (a preset name or GPUConfig) with the plug-ins it chooses
    (resolved through the registry: a bad choice is a ConfigError naming the key)
    and, when `power.enabled`, the energy model."""
    from tlpsim.policies.registry import resolve_config
    from tlpsim.power.model import EnergyModel

    cfg = load_config(config) if isinstance(config, str) else config
    plugins = resolve_config(cfg)
    energy = None
    if cfg.power.enabled:
        energy = EnergyModel(cfg)
        energy.check_plugins(plugins)
    with guarded():  # a plug-in whose __init__ raises is named
        return GPU(cfg, dense=dense, plugins=plugins, energy_model=energy)


class TimingSession:
    """`time_limit`: wall-clock seconds each `simulate_many` may take (None: no limit);
    past it, or when a plug-in fails, the run ends in a clear error (tlpsim.plugin_guard)."""

    def __init__(self, config="gtx480", dense: bool = False, time_limit: float | None = None,
                 sampling: Any = None) -> None:
        self.time_limit = time_limit
        self.config = load_config(config) if isinstance(config, str) else config
        self.gpu = build_gpu(self.config, dense=dense)
        # sampled simulation (tlpsim.sampling.SamplingSpec; None or mode "off": full detail)
        self.sampling = sampling if sampling is not None and sampling.on else None
        self.kernel_sampler: Any = None
        if self.sampling is not None:
            from tlpsim.sampling.kernels import KernelSampler
            from tlpsim.sampling.waves import WaveSampler

            if self.sampling.waves:
                self.gpu.sampler = WaveSampler(self.sampling, self.gpu)
            if self.sampling.kernels:
                self.kernel_sampler = KernelSampler(self.sampling)
        self.last_sampling: list[dict | None] = []  # the last simulate_many's sampling record per launch
        self.tables = latency_tables(self.config)
        # per (kernel, compiler count): its per-instruction facts and register numbering
        self._static: dict[tuple[int, int], StaticKernel] = {}
        self._numbering: dict[tuple[int, int], RegisterNumbering] = {}

    def host_copy(self, address: int, nbytes: int) -> None:
        """A host-to-device copy: with l2.memcpy_fills, its lines become valid in the L2
        slices that own them (copies are not timed)."""
        if not self.config.l2.memcpy_fills or nbytes <= 0:
            return
        mem = self.gpu.mem
        first, last = address & ~127, (address + nbytes - 1) & ~127
        for line in range(first, last + 1, 128):
            mem.slices[mem.partition_of(line)].host_fill(line)

    def simulate(self, fn, space_of, trace, regs_per_thread: int, smem_per_cta: int, stream: int = 0,
                 analyzed: Any = None):
        """Replay one launch's trace; returns its LaunchStats."""
        (stats,) = self.simulate_many([(fn, space_of, trace, regs_per_thread, smem_per_cta, stream, analyzed)])
        return stats

    def simulate_many(self, launches: list) -> list:
        """`_simulate_many`, with kernel sampling when it is on: a launch alone in its
        batch whose group already has its representatives is projected, not simulated
        (tlpsim.sampling.kernels). `last_sampling` gets each launch's sampling record."""
        ks = self.kernel_sampler
        group = None
        if ks is not None and len(launches) == 1:
            group, projected = ks.consider(launches[0], self._static_kernel, self.gpu.mem)
            if projected is not None:
                stats, record = projected
                self.last_sampling = [record]
                return [stats]
        out = self._simulate_many(launches)
        if self.sampling is None:
            self.last_sampling = [None] * len(out)
            return out
        sampler = self.gpu.sampler
        runs = self.gpu.finished[-len(out):]
        records = []
        for run, st in zip(runs, out):
            rec = sampler.records.pop(run.kid, None) if sampler is not None else None
            if rec is None:
                rec = {"method": "detail", "cycles": st.cycles, "interval": [st.cycles, st.cycles],
                       "confidence": self.sampling.confidence, "warp_insts": st.warp_insts,
                       "detail_warp_insts": st.warp_insts, "detail_fraction": 1.0,
                       "reason": "launches run concurrently" if len(out) > 1 else ""}
            records.append(rec)
        if group is not None:
            ks.simulated(group, out[0])
            records[0].update({"group": group.index, "group_label": group.label(), "representative": True})
        self.last_sampling = records
        return out

    def _simulate_many(self, launches: list) -> list:
        """Replay several launches together: kernels of one stream in order, different
        streams concurrently (sharing SMs as the CTA scheduler decides). Each item is
        (fn, space_of, trace, regs_per_thread, smem_per_cta, stream[, analyzed[, carveout]]) —
        `analyzed`, the launch's AnalyzedKernel, gives the timing model its physical
        registers and liveness; `regs_per_thread` is the compiler's count, which
        `sm.register_count` turns into the numbering and the RF's per-thread count
        (`register_numbering`)."""
        for sm in self.gpu.sms:
            for port in (sm.ldst.l1d, sm.ldst.l1c):
                if port is not None:
                    port.flush()
        with guarded(self.time_limit, "the timing simulation of " + ", ".join(
                dict.fromkeys(getattr(item[0], "name", "?") for item in launches))):
            for item in launches:
                fn, space_of, trace, regs, smem, stream = item[:6]
                sk = self._static_kernel(fn, space_of, regs, item[6] if len(item) > 6 else None)
                num = self._numbering[(id(fn), regs)]
                self.gpu.launch(sk, trace, num.rf_regs, smem, stream, registers=num,
                                carveout=item[7] if len(item) > 7 else -1)
            return self.gpu.run(self.config.monitor.watchdog_cycles)

    def _static_kernel(self, fn: Any, space_of: Any, regs: int, analyzed: Any) -> StaticKernel:
        """Kernel `fn`'s per-instruction facts at compiler count `regs` (built once, with its
        register numbering)."""
        key = (id(fn), regs)
        sk = self._static.get(key)
        if sk is None:
            num = self._numbering[key] = register_numbering(self.config, fn, regs, analyzed)
            sk = self._static[key] = StaticKernel(fn, self.tables, space_of, analyzed=num.analyzed,
                                                  allocation=num.allocation)
        return sk

"""Building the timing model from a typed `GPUConfig`: clock domains, the
memory system (crossbars, L2 slices, DRAM channels) and each SM's parts, with the
plug-ins at the SM's extension points built on their ports. Plug-in classes come
resolved (`{point: (class, params)}`, from `tlpsim.policies.registry.resolve_config`):
the timing model never imports the policies. Nothing here simulates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tlpsim.errors import ConfigError
from tlpsim.timing.cache import MSHR, CacheArray
from tlpsim.timing.cache_policy import CachePolicy
from tlpsim.timing.cache_port import CachePort
from tlpsim.timing.dram import AddressMap, DramChannel
from tlpsim.timing.engine import ClockDomain, Engine
from tlpsim.timing.events import SMEvents
from tlpsim.timing.icnt import Crossbar, FlitQueue, route_to_slice, route_to_sm
from tlpsim.timing.l2 import L2Slice
from tlpsim.timing.ldst import LdstParams, LdstUnit
from tlpsim.timing.occupancy import SMLimits
from tlpsim.timing.partition import SliceMux, SliceOf
from tlpsim.timing.plugin import check_declarations, construct, plugin_key
from tlpsim.timing.port import BUILD_ORDER, SMPlugins, SMPort
from tlpsim.timing.queues import TimedQueue
from tlpsim.timing.sm import SMParams
from tlpsim.timing.static import DP, SFU, SP, LatencyTables


def clock_domains(cfg) -> tuple[ClockDomain, ClockDomain, ClockDomain, ClockDomain]:
    g = cfg.gpu
    l2_mhz = getattr(g, "l2_clock_mhz", None) or g.icnt_clock_mhz
    return (ClockDomain.from_mhz("core", g.core_clock_mhz), ClockDomain.from_mhz("icnt", g.icnt_clock_mhz),
            ClockDomain.from_mhz("l2", l2_mhz), ClockDomain.from_mhz("dram", g.dram_clock_mhz))


def build_plugin(plugins: dict, point: str, port: Any, cfg: Any, **context: Any) -> Any:
    """The plug-in chosen for `point`, constructed on `port` (None at an optional point set to none)."""
    cls, params = plugins[point]
    if cls is None:
        return None
    check_declarations(cls, f"{point} '{getattr(cls, 'plugin_name', cls.__name__)}'")
    obj = construct(cls, params, {**context, "port": port, "config": cfg})
    if port is not None:
        port.owner = obj
    return obj


def latency_tables(cfg) -> LatencyTables:
    lat, ini = cfg.sm.latency, cfg.sm.initiation
    cols_i = ("add", "max", "mul", "mad", "div", "shfl")
    cols_f = ("add", "max", "mul", "mad", "div")
    return LatencyTables(
        int_lat={c: getattr(lat.int, c) for c in cols_i}, int_init={c: getattr(ini.int, c) for c in cols_i},
        fp_lat={c: getattr(lat.fp32, c) for c in cols_f}, fp_init={c: getattr(ini.fp32, c) for c in cols_f},
        dp_lat={c: getattr(lat.fp64, c) for c in cols_f}, dp_init={c: getattr(ini.fp64, c) for c in cols_f},
        sfu_lat=lat.sfu, sfu_init=ini.sfu, simt_passes=max(1, cfg.sm.warp_size // cfg.sm.simt_width),
        dispatch_delay=cfg.sm.pipelines.dispatch_delay, writeback_delay=cfg.sm.pipelines.writeback_delay,
        shared_cas_ops=frozenset(cfg.sm.shared_atomic_cas_ops))


def sm_limits(cfg) -> SMLimits:
    s = cfg.sm
    return SMLimits(max_threads=s.max_threads, max_ctas=s.max_ctas, registers=s.registers,
                    shared_bytes=s.shared_bytes, warp_size=s.warp_size, reg_granularity=s.register_alloc_granularity,
                    smem_granularity=s.shared_alloc_granularity, reg_per_warp=s.register_alloc_unit == "warp",
                    reg_partitions=s.register_partitions, smem_reserved=s.shared_reserved_per_cta)


class MemorySystem:
    """Crossbars both ways, one L2 slice per memory sub-partition, one DRAM channel
    per partition (its slices share it through a SliceMux)."""

    def __init__(self, cfg, engine: Engine, icnt: ClockDomain, l2: ClockDomain, dram: ClockDomain) -> None:
        d, c2, ic = cfg.dram, cfg.l2, cfg.icnt
        n_sms = cfg.gpu.n_sms
        self.n_parts = d.n_partitions
        self.per_part = c2.slices_per_partition
        n_slices = self.n_parts * self.per_part
        self.n_slices = n_slices
        self.amap = AddressMap.from_gpgpusim(d.address_mapping, d.n_partitions, self.per_part)
        fb = ic.flit_bytes
        self.sm_out = [FlitQueue(f"sm{k}.out", ic.input_buffer_flits, fb) for k in range(n_sms)]
        # a reply waits ejection_cycles in the SM cluster's response FIFO after leaving the network
        self.sm_in = [FlitQueue(f"sm{k}.in", ic.output_buffer_flits, fb, delay=1 + ic.ejection_cycles)
                      for k in range(n_sms)]
        self.l2_in = [FlitQueue(f"l2{k}.in", ic.output_buffer_flits, fb) for k in range(n_slices)]
        self.l2_out = [FlitQueue(f"l2{k}.out", ic.input_buffer_flits, fb) for k in range(n_slices)]
        arb = {"islip": "islip", "round_robin": "rr", "random": "random"}[ic.arbiter]
        self.up = Crossbar(icnt, "icnt.up", n_sms, n_slices, fb, latency=ic.latency, inputs=self.sm_out,
                           outputs=self.l2_in, arbitration=arb, route=route_to_slice,
                           internal_speedup=ic.internal_speedup)
        self.down = Crossbar(icnt, "icnt.down", n_slices, n_sms, fb, latency=ic.latency, inputs=self.l2_out,
                             outputs=self.sm_in, arbitration=arb, route=route_to_sm,
                             internal_speedup=ic.internal_speedup)
        q = c2.queue_entries
        self.slices: list[L2Slice] = []
        self.channels: list[DramChannel] = []
        self.muxes: list[SliceMux] = []
        size_per_slice = c2.size_kb * 1024 // n_slices
        policy = _gpgpusim_policy_letters(c2)
        dram_delay = max(1, round(d.latency * cfg.gpu.dram_clock_mhz / cfg.gpu.core_clock_mhz))
        local = self.amap  # set index by its partition_address: without the slice-select bits
        # near/far L2 halves (l2.far_latency): channels 0..n/2-1 and the even SMs are half 0
        self.far_latency = c2.far_latency
        sm_sides = [k % 2 for k in range(n_sms)] if c2.far_latency else None
        for p in range(self.n_parts):
            # GPGPU-Sim's dram_latency: a fixed delay (core cycles) on every request from
            # the L2 to DRAM, modelled as the queue's delay in DRAM cycles; the queue holds
            # the requests in flight during it (GPGPU-Sim's latency queue is unbounded)
            to_dram = [TimedQueue(f"l2{p}.{s}.to_dram", q + 2 * dram_delay, delay=dram_delay)
                       for s in range(self.per_part)]
            from_dram = [TimedQueue(f"l2{p}.{s}.from_dram", q) for s in range(self.per_part)]
            for s in range(self.per_part):
                k = p * self.per_part + s
                self.slices.append(L2Slice(
                    l2, k, size_bytes=size_per_slice, assoc=c2.assoc, from_icnt=self.l2_in[k], to_icnt=self.l2_out[k],
                    to_dram=to_dram[s], from_dram=from_dram[s], line_bytes=c2.line_bytes,
                    sector_bytes=c2.sector_bytes if c2.sectored else None, mshr_entries=c2.mshr_entries,
                    mshr_max_merge=c2.mshr_max_merge, hit_latency=c2.hit_latency, policy=policy,
                    miss_queue_entries=max(c2.miss_queue_entries, 4), data_port_bytes=c2.data_port_bytes,
                    set_index_addr=local, side=self.side_of_partition(p) if c2.far_latency else -1,
                    sm_sides=sm_sides, far_latency=c2.far_latency, sector_lookups=c2.sector_lookups,
                    sector_write_acks=c2.sector_write_acks, sector_replies=c2.sector_replies))
            ch_in = TimedQueue(f"dram{p}.in", d.queue_size)
            ch_out = TimedQueue(f"dram{p}.out", d.return_queue_size)
            self.muxes.append(SliceMux(dram, f"mux{p}", to_dram, from_dram, ch_in, ch_out,
                                       SliceOf(p * self.per_part)))
            timing = {k: getattr(d, k) for k in ("tCCD", "tCCDL", "tRRD", "tRCD", "tRAS", "tRP", "tRC", "tCL",
                                                 "tWL", "tCDLR", "tWR", "tRTPL") if hasattr(d, k)}
            self.channels.append(DramChannel(dram, p, d.banks, d.bank_groups, d.row_bytes, d.bus_width_bytes,
                                             d.burst_length, d.data_rate, timing, d.scheduler, d.queue_size,
                                             ch_in, ch_out, address_map=self.amap,
                                             chips_per_channel=d.chips_per_partition,
                                             return_queue_size=d.return_queue_size,
                                             sector_columns=d.sector_columns))

    def partition_of(self, line_addr: int) -> int:
        return self.amap.partition_of(line_addr)

    def warm(self, lines: Any, masks: Any, kinds: Any) -> None:
        """Functional warming of the L2 with accesses a sampled run projected: line
        addresses, sector masks and kinds (READ, WRITE, ATOMIC), in order."""
        slices, part = self.slices, self.partition_of
        for line, mask, kind in zip(lines, masks, kinds):
            slices[part(line)].warm(line, mask, kind)

    def side_of_partition(self, p: int) -> int:
        """Which L2 half memory channel `p` and its slices belong to (l2.far_latency)."""
        return 0 if 2 * p < self.n_parts else 1

    def register(self, engine: Engine) -> None:
        # consumers before producers keeps same-cycle hand-offs in pipeline order
        for comp in self.channels + self.muxes + self.slices + [self.up, self.down]:
            engine.add(comp, active=False)

    def counters(self) -> dict:
        l2 = [s.stats.to_dict() for s in self.slices]
        dr = [c.stats.to_dict() for c in self.channels]

        def total(rows, key):
            return sum(r.get(key, 0) for r in rows)

        out = {
            "l2_accesses": total(l2, "accesses"), "l2_hits": total(l2, "hits"),
            "dram_reads": total(dr, "reads"), "dram_writes": total(dr, "writes"),
            "dram_row_hits": total(dr, "row_hits"), "dram_row_misses": total(dr, "row_misses") +
            total(dr, "row_conflicts"), "dram_activates": total(dr, "activates"),
            "dram_busy_cycles": total(dr, "busy_bus_cycles"),
            "icnt_up_flits": self.up.stats.flits, "icnt_down_flits": self.down.stats.flits,
            "l2_busy_cycles": total(l2, "busy_cycles"),
            "l2_slices": l2, "dram_channels": dr,
        }
        if self.far_latency:   # only with near/far halves, so other configurations' records are unchanged
            out["l2_far_requests"] = sum(s.far_requests for s in self.slices)
            out["l2_replica_hits"] = sum(s.replica_hits for s in self.slices)
        return out


def _gpgpusim_policy_letters(c2) -> str:
    rep = {"lru": "L", "fifo": "F"}[c2.replacement]
    wr = {"read_only": "R", "write_back": "B", "write_through": "T", "write_evict": "E",
          "local_wb_global_wt": "L"}[c2.write_policy]
    alloc = {"on_miss": "m", "on_fill": "f", "streaming": "s"}[c2.allocation]
    wa = {"no_write_allocate": "N", "write_allocate": "W", "fetch_on_write": "F",
          "lazy_fetch_on_read": "L"}[c2.write_allocate]
    idx = {"linear": "L", "hash": "H", "ipoly": "P", "xor": "X"}[c2.set_index]
    return f"{rep}:{wr}:{alloc}:{wa}:{idx}"


@dataclass
class SMParts:
    params: SMParams
    schedulers: list
    operands: Any
    allocator: Any
    ldst: LdstUnit
    events: SMEvents = field(default_factory=SMEvents)
    ports: list = field(default_factory=list)      # SMPorts to bind to the SM once it exists
    plugins: list = field(default_factory=list)    # (statistics key, instance) of every SM-level plug-in


def ldst_queue_entries(s) -> int:
    """Memory instructions issued but not yet in the LD/ST unit's dispatch register:
    GPGPU-Sim's ID_OC_MEM register, the memory collector units and OC_EX_MEM (`s`: the
    SM config; generic collectors when they are not specialized)."""
    oc = s.operand_collector
    return 2 * s.pipelines.ldst.width + (oc.units.mem if oc.specialized else oc.units.gen)


def build_sm_parts(cfg, sm_id: int, core: ClockDomain, mem: MemorySystem, plugins: dict, gpu: Any) -> SMParts:
    """An SM's parameters, plug-ins (on ports not yet bound to the SM) and LD/ST unit."""
    s = cfg.sm
    pl = s.pipelines
    units = {SP: max(pl.sp.count, 1), SFU: max(pl.sfu.count, 1)}
    if pl.dp.count:
        units[DP] = pl.dp.count
    events = SMEvents()
    ports: list[SMPort] = []
    insts: list[tuple[str, Any]] = []
    peers = SMPlugins()
    peers.chosen = {p for p in BUILD_ORDER if plugins[p][0] is not None}

    def make(point: str, **context: Any) -> Any:
        port = SMPort(None, point, gpu, sm_id=sm_id, plugins=peers)  # bound to the SM once it exists
        obj = build_plugin(plugins, point, port, cfg, **context)
        if obj is not None:
            ports.append(port)
            events.subscribe(obj)
            insts.append((plugin_key(type(obj)), obj))
            peers.by_point.setdefault(point, []).append(obj)
        return obj

    _check_allocate(plugins["resource_allocator"][0])
    allocator = make("resource_allocator", limits=sm_limits(cfg), cta_cap=cfg.gpu.max_ctas_per_sm)
    max_ctas, max_warps = allocator.max_contexts()
    peers.contexts = (max_ctas, max_warps)
    params = SMParams(max_warps=max_warps, max_ctas=max_ctas, n_schedulers=s.n_schedulers,
                      ibuf_entries=s.ibuffer_entries, units=units, issue_width=s.issue_width,
                      dual_issue_diff_units=s.dual_issue_diff_units, sub_core=s.sub_core_model,
                      fetch_throughput=s.fetch_throughput, wb_width=pl.wb_width,
                      fetch_width=s.fetch_width, rotate_schedulers=s.scheduler_order == "rotate")
    params.aliases = {} if pl.dp.count else {DP: SFU}  # fp64 runs on the SFU pipes when there is no DP unit
    ci = cfg.l1i
    if not ci.perfect:
        params.l1i = CachePort("l1i", CacheArray(ci.size_kb * 1024, ci.assoc, ci.line_bytes,
                                                 ci.sector_bytes if ci.sectored else None, ci.replacement,
                                                 _set_index(ci.set_index)),
                               MSHR(ci.mshr_entries, ci.mshr_max_merge), ci.hit_latency)
        params.iprefetch_lines = ci.prefetch_lines
    scheds = [make("warp_scheduler", n_slots=max_warps, index=k) for k in range(s.n_schedulers)]
    operands = make("operand_storage", n_warp_slots=max_warps)
    make("context_switcher")
    make("execution_checker")
    l1d = None
    if cfg.l1d.enabled:
        c = cfg.l1d
        l1d = CachePort("l1d", CacheArray(c.size_kb * 1024, c.assoc, c.line_bytes,
                                          c.sector_bytes if c.sectored else None, c.replacement,
                                          _set_index(c.set_index)),
                        MSHR(c.mshr_entries, c.mshr_max_merge), c.hit_latency,
                        CachePolicy(c.replacement, c.write_policy, c.allocation, c.write_allocate, c.set_index))
    c = cfg.l1c
    l1c = CachePort("l1c", CacheArray(c.size_kb * 1024, c.assoc, c.line_bytes,
                                      c.sector_bytes if c.sectored else None, c.replacement, _set_index(c.set_index)),
                    MSHR(c.mshr_entries, c.mshr_max_merge), c.hit_latency)
    ldst = LdstUnit(sm_id, LdstParams(smem_latency=s.shared_latency, smem_wave_cycles=s.shared_cycles_per_conflict,
                                      sub_issue_cycles=s.shared_subcore_issue_cycles,
                                      sub_wave_cycles=s.shared_subcore_cycles_per_conflict,
                                      atomic_serialize=s.shared_atomic_same_word == "serialize",
                                      cas_round_cycles=s.shared_atomic_cas_round_cycles,
                                      l1_pipeline=cfg.l1d.hit_latency if cfg.l1d.enabled else 0,
                                      l1_miss_queue=cfg.l1d.miss_queue_entries,
                                      l1_banks=cfg.l1d.banks if cfg.l1d.enabled else 1,
                                      l1_bank_sectors=cfg.l1d.enabled and cfg.l1d.sectored,
                                      queue_entries=ldst_queue_entries(s),
                                      wb_register=s.pipelines.ldst_writeback_register,
                                      sector_write_acks=cfg.l2.sector_write_acks and cfg.l2.sectored,
                                      n_sms=cfg.gpu.n_sms, cta_slots=max_ctas),
                    l1d, l1c, mem.sm_out[sm_id], mem.sm_in[sm_id],
                    mem.amap)  # the map itself: asked per request through a compiled call
    ldst.bypass_global = cfg.l1d.enabled and cfg.l1d.bypass_global
    return SMParts(params, scheds, operands, allocator, ldst, events, ports, insts)


def _check_allocate(cls: Any) -> None:
    """The resource allocator's allocate() takes (kres, slot): port v2 tells it the CTA slot."""
    import inspect

    try:
        params = list(inspect.signature(cls.allocate).parameters.values())[1:]  # after self
    except (TypeError, ValueError):  # a compiled method: trust it
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < 2 and not any(p.kind is p.VAR_POSITIONAL for p in params):
        name = getattr(cls, "plugin_name", cls.__name__)
        raise ConfigError(f"resource_allocator '{name}': allocate() must take (kres, slot) — the CTA's resources "
                          "(kres.kid is its launch) and the CTA slot it will occupy; it takes "
                          f"({', '.join(p.name for p in params)})")


def _set_index(name: str) -> str:
    return {"hash": "fermi_hash", "xor": "xor", "linear": "linear", "ipoly": "ipoly"}.get(name, name)

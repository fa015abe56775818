"""Turning component counters into a `LaunchStats` record: per-launch deltas of the
SM and memory-system counters, derived rates and GPUDuet-style utilisations."""

from __future__ import annotations

from tlpsim.timing.builder import sm_limits
from tlpsim.timing.occupancy import occupancy
from tlpsim.timing.stats import CYCLE_CLASSES, EnergyInputs, LaunchStats, Utilisation


def _delta(after, before):
    if isinstance(after, dict):
        return {k: _delta(v, before.get(k, 0) if isinstance(before, dict) else 0) for k, v in after.items()}
    if isinstance(after, list):
        b = before if isinstance(before, list) else []
        return [_delta(v, b[i] if i < len(b) else 0) for i, v in enumerate(after)]
    if isinstance(after, (int, float)) and isinstance(before, (int, float)):
        return after - before
    return after


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


SUSTAINABLE = 0.6  # GPUDuet §4.1: crossbar utilisation against its sustainable ~60% of peak


def _cycles_in(gpu, domain, core_cycles: int) -> int:
    """Cycles of `domain` elapsed during `core_cycles` core cycles."""
    return max(core_cycles * gpu.core.period_fs // domain.period_fs, 1)


def _plugin_stats(gpu, base: dict, span: int) -> dict:
    """The plug-ins' counters of a launch (`Counter.agg`): sums' increase since `base`,
    "max" counters' peak since the batch started, "mean" counters' integral over the
    `span` core cycles since then, per cycle and per instance."""
    aggs = gpu.plugin_aggs()
    insts = gpu.plugin_instances()
    out = {}
    for key, vals in gpu.plugin_counts().items():
        before = base.get(key, {})
        levels = aggs.get(key, {})
        mine = {}
        for n, v in vals.items():
            agg = levels.get(n, "sum")
            if agg == "max":
                mine[n] = v
            elif agg == "mean":
                mine[n] = (v - before.get(n, 0)) / (span * insts.get(key, 1))
            else:
                mine[n] = _delta(v, before.get(n, 0))
        out[key] = mine
    return out


def launch_stats(gpu, run, base: dict, start_cycle: int, wall: float, extra_cycles: int = 0) -> LaunchStats:
    """Statistics of `run`, measured from the counters snapshot `base` taken when it was queued.
    `extra_cycles`: core cycles of work that was projected, not simulated (wave sampling
    lowers `base` by the projected counters, tlpsim.sampling.waves); 0 in full detail."""
    now = gpu.core.cycle_at(gpu.engine.now)
    # with a launch latency the launch begins at its turn, the latency counted (GPGPU-Sim's
    # gpu_sim_cycle); without one, at its first CTA dispatch
    first = max(run.t_turn if gpu.cfg.gpu.kernel_launch_latency else run.t_start, start_cycle)
    cycles = max(run.t_end - first, 0) + 1 if run.t_end >= 0 else now - start_cycle
    cycles += extra_cycles
    per_sm = [_delta(sm.collect(now), base["sm"][k]) for k, sm in enumerate(gpu.sms)]
    for s, sm in zip(per_sm, gpu.sms):  # peaks are levels, not deltas
        s["peak_resident_ctas"] = sm.stats.peak_resident_ctas
        s["peak_resident_warps"] = sm.stats.peak_resident_warps
    mem = _delta(gpu.mem.counters(), base["mem"])
    warp_insts = run.warp_insts       # this launch's own (SM counters mix concurrent launches)
    thread_insts = run.thread_insts
    sm_cycles = {c: sum(s["cycles"][c] for s in per_sm) for c in CYCLE_CLASSES}
    l1_acc = sum(s["l1d_accesses"] for s in per_sm)
    l1_hit = sum(s["l1d_hits"] for s in per_sm)
    resident = sum(s["resident_warp_cycles"] for s in per_sm)
    # SM-cycles with resident warps (each adds an issue slot per scheduler): the occupancy
    # averages' base, as GPGPU-Sim's over its SMs' active cycles. Not the non-idle cycles:
    # an SM whose resident warps wait on nothing classified (a barrier, a fetch) is idle
    # with warps resident, and dividing by those put the averages above the CTA limit.
    resident_cycles = sum(s["issue_slots"] for s in per_sm) // max(gpu.cfg.sm.n_schedulers, 1) or 1
    n_sms = len(gpu.sms)
    cfg = gpu.cfg
    sched_slots = sum(s["issue_slots"] for s in per_sm)
    util = Utilisation(
        scheduler=_ratio(sum(s["issued"] for s in per_sm), sched_slots),
        rf=_ratio(sum(s["rf_reads"] + s["rf_writes"] for s in per_sm),
                  cycles * n_sms * cfg.sm.rf_banks * cfg.sm.rf_bank_read_ports),
        smem=_ratio(sum(s["smem_accesses"] for s in per_sm), cycles * n_sms),
        l1d=_ratio(l1_acc, cycles * n_sms),
        l2=_ratio(mem["l2_busy_cycles"], _cycles_in(gpu, gpu.l2_dom, cycles) * gpu.mem.n_slices),
        icnt_up=_ratio(mem["icnt_up_flits"], _cycles_in(gpu, gpu.icnt_dom, cycles) * gpu.mem.n_slices * SUSTAINABLE),
        icnt_down=_ratio(mem["icnt_down_flits"], _cycles_in(gpu, gpu.icnt_dom, cycles) * n_sms * SUSTAINABLE),
        dram=_ratio(mem["dram_busy_cycles"], _cycles_in(gpu, gpu.dram_dom, cycles) * gpu.mem.n_parts),
    )
    # the baseline's occupancy on the configured SM (an allocator may keep more resident: peak_resident_*)
    occ = occupancy(sm_limits(cfg), run.kres.regs_per_thread, run.kres.smem_per_cta,
                    run.kres.threads_per_cta, cfg.gpu.max_ctas_per_sm)
    # launches on concurrent streams share the SMs: every kernel's CTAs count, so cap at 1
    full = [min(_ratio(sum(s["cta_count_cycles"][occ.ctas:]), cycles), 1.0) for s in per_sm]
    energy = None
    if cfg.power.enabled and gpu.energy_model is not None:
        parts = [_delta(sm.part_counters(), base["sm_parts"][k]) for k, sm in enumerate(gpu.sms)]
        ops = gpu.sms[0].operands
        plugin_energy = _delta(dict(gpu.energy_events), base.get("energy_events", {}))
        for p in parts:
            for name, n in p.pop("plugin_energy", {}).items():
                plugin_energy[name] = plugin_energy.get(name, 0) + n
        declared = {}
        structures = dict(ops.structures)   # the energy table's structures the plug-ins use, instances per SM
        for _, obj in [p for sm in gpu.sms[:1] for p in sm.plugins] + gpu.gpu_plugins:
            declared.update(getattr(type(obj), "energy", {}) or {})
            if obj is not ops:
                for name, n in (getattr(obj, "structures", {}) or {}).items():
                    structures[name] = structures.get(name, 0) + n
        energy = gpu.energy_model(EnergyInputs(
            cycles, per_sm, parts, mem, run.kres.regs_per_thread, run.kres.threads_per_cta, run.kres.smem_per_cta,
            bool(ops.gates_subarrays), structures, {k: v for k, v in plugin_energy.items() if v},
            declared))
    plugins = _plugin_stats(gpu, base.get("plugins", {}), max(now - start_cycle, 1) + extra_cycles)
    l2_acc = mem.get("l2_accesses", 0)
    l2_hits = mem.get("l2_hits", 0)
    rows = mem.get("dram_row_hits", 0) + mem.get("dram_row_misses", 0)
    return LaunchStats(
        kernel=run.name, cycles=cycles, warp_insts=warp_insts, thread_insts=thread_insts,
        ipc=_ratio(thread_insts, cycles), warp_ipc=_ratio(warp_insts, cycles), sm_cycles=sm_cycles,
        per_sm=per_sm, utilisation=util,
        l1d_hit_rate=_ratio(l1_hit, l1_acc), l1d_miss_rate=_ratio(l1_acc - l1_hit, l1_acc),
        l2_hit_rate=_ratio(l2_hits, l2_acc), l2_miss_rate=_ratio(l2_acc - l2_hits, l2_acc),
        mshr_reservation_fails=sum(s["l1d_reservation_fails"] for s in per_sm),
        dram_reads=mem.get("dram_reads", 0), dram_writes=mem.get("dram_writes", 0),
        dram_row_hit_rate=_ratio(mem.get("dram_row_hits", 0), rows),
        avg_resident_warps=_ratio(resident, resident_cycles),
        avg_resident_ctas=_ratio(sum(s["resident_cta_cycles"] for s in per_sm), resident_cycles),
        ctas_per_sm_limit=occ.ctas, limited_by=occ.limiter,
        peak_resident_ctas=max((s["peak_resident_ctas"] for s in per_sm), default=0),
        peak_resident_warps=max((s["peak_resident_warps"] for s in per_sm), default=0), components=mem, wall_seconds=wall, energy=energy,
        plugins=plugins, plugin_units=gpu.plugin_units(), plugin_aggs=gpu.plugin_aggs(),
        timeline=gpu.timeline.series(first, run.t_end if run.t_end >= 0 else now),
        first_cycle=first, last_cycle=run.t_end, l1d_kb=run.l1d_bytes // 1024,
        avg_mem_latency=_ratio(sum(s["mem_latency_sector_cycles"] for s in per_sm),
                               sum(s["mem_latency_sectors"] for s in per_sm)),
        full_occupancy_share_min=min(full) if full else 0.0,
        full_occupancy_share_mean=_ratio(sum(full), len(full)),
    )

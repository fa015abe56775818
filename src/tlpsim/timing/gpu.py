"""The GPU: SMs, the CTA dispatcher, and the memory system (crossbars, L2 slices,
DRAM channels), built from a typed `GPUConfig` and its resolved plug-ins and run
on one engine.

`GPU.launch()` queues a kernel launch (its flattened kernel, trace and resource
usage); `GPU.run()` simulates until every queued launch has finished and returns
one `LaunchStats` per launch. Launches on different streams run concurrently.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tlpsim.errors import ConfigError, KernelError
from tlpsim.timing.builder import (
    MemorySystem,
    build_plugin,
    build_sm_parts,
    clock_domains,
    sm_limits,
)
from tlpsim.timing.carveout import choose_carveout
from tlpsim.timing.clock import PluginClock, WindowMonitor
from tlpsim.timing.engine import Component, Engine
from tlpsim.timing.occupancy import occupancy
from tlpsim.timing.plugin import PluginCounts, aggregations_of, counts_of, plugin_key
from tlpsim.timing.port import GPUPort
from tlpsim.timing.sm import SM
from tlpsim.timing.static import StaticKernel
from tlpsim.timing.summary import launch_stats
from tlpsim.timing.timeline import Timeline
from tlpsim.timing.views import DispatchGroup, KernelInfo, KernelResources, KernelView, SMView
from tlpsim.timing.warp import TraceFeed
from tlpsim.timing.xcta import CrossCtaGates

GPU_WIDE_EVENTS = ("kernel_start", "kernel_end", "window", "timer")  # a GPU-level plug-in hears these once
BACKING_STORE_BASE = 0x7C00_0000_0000
PROGRAM_MEM_START = 0xF000_0000  # kernels' code, 8 bytes per instruction (GPGPU-Sim's instruction memory)  # plug-in backing store (spills, saved contexts), beyond device memory


@dataclass
class KernelRun:
    """One launch inside the timing model."""

    kid: int
    name: str
    static: StaticKernel
    trace: object
    kres: KernelResources
    stream: int = 0
    next_cta: int = 0
    ctas_done: int = 0
    t_start: int = -1      # core cycle of the first CTA dispatch
    t_turn: int = -1       # core cycle the launch took its turn (gpu.kernel_launch_latency counts from it)
    t_end: int = -1
    warp_insts: int = 0    # issued by this launch (the SM counters mix concurrent launches)
    thread_insts: int = 0
    snapshot: dict = field(default_factory=dict)
    feed: Any = None       # the trace a piece at a time, with each piece's memory table (timing.warp.TraceFeed)
    watch: list | None = None  # per SM: per-pc instr_issued handlers (SMEvents.watch_list), None if nobody watches
    shared_banks: int = 32     # shared-memory banks (which conflict-degree column of the trace applies)
    info: KernelInfo | None = None
    started: bool = False  # kernel_start reported
    gates: CrossCtaGates | None = None  # reads of other CTAs' writes (timing.xcta), None: there are none
    l1d_bytes: int = 0     # each SM's L1 data cache while this launch ran (GPU._split_l1)
    carveout: int = -1     # the kernel's own shared-memory carveout preference (-1: none)

    @property
    def n_ctas(self) -> int:
        return self.trace.n_warps // max(self.trace.warps_per_cta, 1)

    @property
    def finished(self) -> bool:
        return self.ctas_done >= self.n_ctas


class CtaDispatcher(Component):
    """Asks the CTAScheduler policy for assignments every core cycle while CTAs wait."""

    name = "cta_dispatcher"

    def __init__(self, gpu: GPU) -> None:
        super().__init__(gpu.core)
        self.gpu = gpu

    def busy(self) -> bool:
        return any(r.next_cta < r.n_ctas for r in self.gpu.running)

    def tick(self, now: int) -> bool:
        gpu = self.gpu
        pending = [r for r in gpu.running if r.next_cta < r.n_ctas and gpu.stream_ready(r)]
        if not pending:
            return False
        # at most gpu.max_concurrent_kernels launches run at once (GPGPU-Sim's
        # gpgpu_max_concurrent_kernel): one that has not had its turn waits for a running one to finish
        room = gpu.cfg.gpu.max_concurrent_kernels - sum(1 for r in gpu.running if r.t_turn >= 0 and not r.finished)
        if any(r.t_turn < 0 for r in pending):
            kept = []
            for r in pending:
                if r.t_turn >= 0:
                    kept.append(r)
                elif room > 0:
                    r.t_turn = now
                    kept.append(r)
                    room -= 1
            pending = kept
        latency = gpu.cfg.gpu.kernel_launch_latency
        if latency:  # a launch's CTAs leave the front end `latency` cycles after its turn
            ready = []
            for r in pending:
                if now < r.t_turn + latency:
                    self.wake_at(r.t_turn + latency)
                else:
                    ready.append(r)
            pending = ready
        if not pending:
            return False
        by_kid = {r.kid: r for r in pending}
        policy = gpu.cta_policy
        if getattr(policy, "inline_rule", "") == "round_robin":
            assignments = self._round_robin(policy, pending)
        else:
            sviews, kviews = self._views(pending, by_kid)
            assignments = policy.assign(sviews, kviews, now)
        placed = False
        for sm_id, kid in assignments:
            run = by_kid.get(kid)
            if run is None or not 0 <= sm_id < len(gpu.sms):
                raise ConfigError(f"CTA scheduler '{gpu.cta_policy.plugin_name}' assigned kernel {kid} to SM {sm_id}; "
                                  f"it may only assign the kernels and SMs it was shown")
            sm = gpu.sms[sm_id]
            if run.next_cta >= run.n_ctas or not sm.can_accept(run):
                continue
            if run.t_start < 0:
                run.t_start = now
            if not run.started:
                gpu.kernel_started(run, now)
            sm.launch_cta(run, run.next_cta, now)
            run.next_cta += 1
            if run.gates is not None:
                run.gates.dispatched(run, run.next_cta - 1, gpu.sms)
            placed = True
        return placed

    def _views(self, pending: list, by_kid: dict) -> tuple[list, list]:
        """The SMs and the launches with CTAs waiting, as the CTA scheduler sees them."""
        kviews = [KernelView(r.kid, r.stream, r.n_ctas - r.next_cta, r.n_ctas, r.kres.threads_per_cta, r.next_cta,
                             r.kres.regs_per_thread, r.kres.smem_per_cta, r.trace.warps_per_cta,
                             r.next_cta - r.ctas_done, r.ctas_done, tuple(r.trace.grid), r.name, tuple(r.trace.block))
                  for r in pending]
        sviews = [SMView(sm.id, sm.n_ctas, (lambda kid, sm=sm: sm.can_accept(by_kid[kid])),
                         dict(sm.slots.by_kernel), dict(sm.slots.limits), bool(sm.slots.dispatch_holds))
                  for sm in self.gpu.sms]
        return sviews, kviews

    def _round_robin(self, policy: Any, pending: list) -> list[tuple[int, int]]:
        """The baseline round-robin rule's `assign` (policies/cta/round_robin.py) step for
        step on the SMs and launches themselves: the same assignments and `next_sm`,
        without building a view of every SM each time CTAs wait."""
        sms = self.gpu.sms
        n = len(sms)
        out: list[tuple[int, int]] = []
        given: dict[int, int] = {}
        start = policy.next_sm
        for k in range(n):
            sm = sms[(start + k) % n]
            for r in pending:  # oldest launch first; a later one fills what an earlier leaves
                if r.n_ctas - r.next_cta > given.get(r.kid, 0) and sm.can_accept(r):
                    out.append((sm.id, r.kid))
                    given[r.kid] = given.get(r.kid, 0) + 1
                    break
        if out:
            policy.next_sm = (out[-1][0] + 1) % n
        return out

class GPU:
    """A configured GPU: build once, launch kernels, run.

    `plugins` are the resolved extension-point choices, {point: (class, params)}
    (`tlpsim.policies.registry.resolve_config(config)`); `energy_model`, when given,
    turns each launch's `EnergyInputs` into its `EnergyStats` (`tlpsim.power`)."""

    def __init__(self, config, dense: bool = False, plugins: dict | None = None,
                 energy_model: Callable[[Any], Any] | None = None) -> None:
        if plugins is None:
            raise ConfigError("GPU needs its resolved plug-ins: GPU(config, plugins=resolve_config(config)) "
                              "(tlpsim.policies.registry), or build it with tlpsim.session.build_gpu(config)")
        if dense and config.monitor.watchdog_cycles == 0:
            raise ConfigError("monitor.watchdog_cycles = 0 turns the deadlock watchdog off, but dense mode "
                              "ticks every component every cycle and needs it to stop a deadlocked run")
        self.cfg = config
        self.plugins = plugins
        self.energy_model = energy_model
        self.engine = Engine(dense=dense)
        self.core, self.icnt_dom, self.l2_dom, self.dram_dom = clock_domains(config)
        self.mem = MemorySystem(config, self.engine, self.icnt_dom, self.l2_dom, self.dram_dom)
        self.energy_events: dict[str, int] = {}     # GPU-level plug-in energy structures -> accesses
        # (kid, CTA index) -> the CTA scheduler's dispatch group of that CTA (GPUPort.group_ctas)
        self.dispatch_groups: dict[tuple[int, int], DispatchGroup] = {}
        self.next_group = 0
        self._backing: dict[tuple[int, str], tuple[int, int]] = {}
        self._backing_next = BACKING_STORE_BASE
        self._code_next = PROGRAM_MEM_START
        self.running: list[KernelRun] = []
        self._batch: list[KernelRun] = []  # the launches GPU.run simulates now
        self.finished: list[KernelRun] = []
        self.kid = 0
        # wave sampling (tlpsim.sampling.waves.WaveSampler; None: full detail) and the
        # (plug-in id, kid) pairs whose last decision point has passed (port.settled)
        self.sampler: Any = None
        self.settled: set[tuple[int, int]] = set()
        self.sms: list[SM] = []
        all_parts = []
        for k in range(config.gpu.n_sms):
            parts = build_sm_parts(config, k, self.core, self.mem, plugins, self)
            sm = SM(k, self.core, parts.params, parts.schedulers, parts.operands, parts.allocator, parts.ldst,
                    self._cta_done, parts.events)
            for port in parts.ports:
                port.bind(sm)
            sm.plugins = parts.plugins
            self.mem.sm_in[k].consumer = sm    # replies wake the SM
            self.mem.sm_out[k].producer = sm   # freed request-queue space wakes it too
            self.engine.add(sm, active=False)
            self.sms.append(sm)
            all_parts.append(parts)
        self.mem.register(self.engine)
        # GPU-level plug-ins: built once the SMs exist (their ports reach every SM)
        self.cta_policy = build_plugin(plugins, "cta_scheduler", GPUPort(self, "cta_scheduler"), config,
                                       n_sms=config.gpu.n_sms)
        self.monitor = build_plugin(plugins, "monitor", GPUPort(self, "monitor"), config)
        self.gpu_plugins: list[tuple[str, Any]] = [(plugin_key(type(p)), p) for p in (self.cta_policy, self.monitor)
                                                   if p is not None]
        # GPU-level plug-ins hear every SM's events; launch and window events once
        self.gpu_events: dict[str, list[Callable[..., Any]]] = {e: [] for e in GPU_WIDE_EVENTS}
        for _, p in self.gpu_plugins:
            for sm in self.sms:
                sm.events.subscribe(p, exclude=GPU_WIDE_EVENTS)
            for e in GPU_WIDE_EVENTS:
                if e in getattr(p, "events", ()):
                    self.gpu_events[e].append(getattr(p, "on_" + e))
        window_handlers = [h for sm in self.sms for h in sm.events.window] + self.gpu_events["window"]
        for sm in self.sms:
            ev = sm.events
            sm.issue.block_events = ev.block_events
            sm.ldst.l1d_handlers = ev.l1d_access
            sm.slots.keep_masks = bool(ev.instr_issued)
            sm.slots.keep_vclass = bool(ev.writeback)
        self.dispatcher = self.engine.add(CtaDispatcher(self), active=False)
        mon = config.monitor
        self.timeline = self.engine.add(Timeline(self.core, self.sms, mon.timeline_interval_cycles,
                                                 mon.watchdog_cycles), active=False)
        self.clock = self.engine.add(PluginClock(self.core), active=False)
        self.window: WindowMonitor | None = None
        if window_handlers:
            own = _declared_window(self.gpu_plugins)
            self.window = self.engine.add(WindowMonitor(self.core, self, own or mon.window_cycles,
                                                        window_handlers), active=False)
            for sm in self.sms:
                sm.count_mem_wait = True

    # ------------------------------------------------------------ launches

    def launch(self, static: StaticKernel, trace, regs_per_thread: int, smem_per_cta: int, stream: int = 0,
               name: str = "", registers: Any = None, carveout: int = -1) -> KernelRun:
        """Queue a launch; `regs_per_thread` sizes its RF allocation. `registers` (a
        session.RegisterNumbering) says where that count came from, for KernelInfo.
        `carveout`: the kernel's shared-memory carveout preference (-1: none, the
        config's l1d.carveout_preference applies)."""
        tpc = trace.block[0] * trace.block[1] * trace.block[2]
        run = KernelRun(self.kid, name or trace.kernel, static, trace,
                        KernelResources(tpc, regs_per_thread, smem_per_cta, self.kid), stream)
        run.shared_banks = self.cfg.sm.shared_banks
        run.carveout = carveout
        run.feed = TraceFeed(trace, run.shared_banks, self.cfg.sm.shared_atomic_same_word == "serialize")
        deps = getattr(trace, "deps", None)
        if deps is not None and len(deps):
            run.gates = CrossCtaGates(deps, trace.warps_per_cta)
        if not static.code_addr:  # load the kernel's code once: its lines stay cached across launches
            static.code_addr = self._code_next
            self._code_next += -(-len(static.instrs) * 8 // 256) * 256
        self.kid += 1
        lim = self.sms[0].allocator
        if not lim.fits(run.kres) and not any(sm.n_ctas for sm in self.sms):
            occ = occupancy(lim.limits, regs_per_thread, smem_per_cta, tpc)
            why = ""
            if registers is not None and regs_per_thread > registers.compiler_regs:
                why = (f"; the analyses' allocation needs {regs_per_thread} registers/thread, more than ptxas's "
                       f"{registers.compiler_regs}, and nothing is spilled (sm.register_count)")
            raise KernelError(f"a CTA of kernel {run.name} never fits on an SM (limited by {occ.limiter}: "
                              f"{regs_per_thread} regs/thread, {smem_per_cta} B shared, {tpc} threads){why}")
        counts = ((registers.compiler_regs, registers.allocation_regs, registers.sized_by, registers.named_regs)
                  if registers is not None
                  else (regs_per_thread, static.n_regs, "ptxas", static.n_regs))  # the caller's count, as given
        run.info = KernelInfo(run.kid, run.name, stream, tuple(trace.grid), tuple(trace.block), run.n_ctas,
                              trace.warps_per_cta, regs_per_thread, smem_per_cta, static, static.analyzed, *counts)
        self.running.append(run)
        watch = [sm.events.watch_list(static) for sm in self.sms]
        run.watch = watch if any(w is not None for w in watch) else None
        return run

    def kernel_info(self, kid: int) -> KernelInfo:
        for r in self.running + self.finished:
            if r.kid == kid and r.info is not None:
                return r.info
        raise KeyError(f"no launch with kernel id {kid}")

    def kernel_started(self, run: KernelRun, now: int) -> None:
        """The launch's first CTA is dispatched: report kernel_start."""
        run.started = True
        self._kernel_event(run, now, "kernel_start")

    def _kernel_event(self, run: KernelRun, now: int, event: str) -> None:
        for sm in self.sms:
            for h in getattr(sm.events, event):
                h(run.info, now)
        for h in self.gpu_events[event]:
            h(run.info, now)

    def redispatch(self) -> None:
        """Something that decides dispatch changed: poll the CTA scheduler again."""
        self.dispatcher.wake()

    def backing_store(self, sm_id: int, name: str, nbytes: int) -> int:
        """A line-aligned region of off-chip memory for a plug-in's state on SM `sm_id`."""
        key = (sm_id, name)
        have = self._backing.get(key)
        if have is not None:
            if nbytes > have[1]:
                raise ConfigError(f"backing store '{name}' of SM {sm_id} has {have[1]} B; {nbytes} B requested")
            return have[0]
        size = -(-max(int(nbytes), 1) // 128) * 128
        base = self._backing_next
        self._backing_next += size
        self._backing[key] = (base, size)
        return base

    def plugin_counts(self) -> dict[str, dict[str, int | float]]:
        """Every plug-in's declared counters over its instances: {key: {counter: value}}.
        "sum" counters and "mean" counters' integrals (value x cycles) add up over the
        instances, "max" counters' peaks take the highest (`Counter.agg`)."""
        out: dict[str, dict[str, int | float]] = {}
        for key, obj in self._plugin_instances():
            c = counts_of(obj)
            if not c:
                continue
            aggs = aggregations_of(obj)
            mine = out.setdefault(key, {})
            for n, v in c.items():
                if aggs.get(n) == "max":
                    mine[n] = max(mine.get(n, v), v)
                else:
                    mine[n] = mine.get(n, 0) + v
        return out

    def plugin_instances(self) -> dict[str, int]:
        """{key: instances} of every plug-in that declares counters (SM-level: one per SM)."""
        out: dict[str, int] = {}
        for key, obj in self._plugin_instances():
            if getattr(type(obj), "counters", None):
                out[key] = out.get(key, 0) + 1
        return out

    def _plugin_instances(self) -> list:
        return [p for sm in self.sms for p in sm.plugins] + self.gpu_plugins

    def mark_plugin_levels(self) -> None:
        """A batch of launches starts: the "max" counters' peaks restart from the current levels."""
        for _, obj in self._plugin_instances():
            c = getattr(obj, "counts", None)
            if isinstance(c, PluginCounts):
                c.mark()

    def plugin_units(self) -> dict[str, dict[str, str]]:
        """{key: {counter: unit}} of every plug-in that declares counters."""
        out: dict[str, dict[str, str]] = {}
        for key, obj in [p for sm in self.sms[:1] for p in sm.plugins] + self.gpu_plugins:
            decl = getattr(type(obj), "counters", {}) or {}
            if decl:
                out[key] = {n: c.unit for n, c in decl.items()}
        return out

    def plugin_aggs(self) -> dict[str, dict[str, str]]:
        """{key: {counter: agg}} of the counters that are levels ("max", "mean"), not sums."""
        out: dict[str, dict[str, str]] = {}
        for key, obj in [p for sm in self.sms[:1] for p in sm.plugins] + self.gpu_plugins:
            levels = {n: a for n, a in aggregations_of(obj).items() if a != "sum"}
            if levels:
                out[key] = levels
        return out

    def stream_ready(self, run: KernelRun) -> bool:
        """Kernels of one stream run in order; different streams overlap."""
        return all(r.finished for r in self.running if r.stream == run.stream and r.kid < run.kid)

    def _cta_done(self, sm_id: int, run: KernelRun, index: int, now: int) -> None:
        self.cta_policy.on_cta_done(sm_id, run.kid, index, now)
        if self.sampler is not None:
            self.sampler.cta_done(run, now)
        if run.finished:
            run.t_end = now
            run.feed.release()  # its pieces are no longer needed
            self._kernel_event(run, now, "kernel_end")
            if self.dispatch_groups:
                for key in [k for k in self.dispatch_groups if k[0] == run.kid]:
                    del self.dispatch_groups[key]
            if all(r.finished for r in self._batch):
                self.engine.request_stop()  # GPU.run's launches are all done
        self.dispatcher.wake()

    # ------------------------------------------------------------ running

    def run(self, watchdog_cycles: int | None = None) -> list:
        """Simulate every queued launch to completion; return their LaunchStats."""
        t0 = time.perf_counter()
        runs = list(self.running)
        base = {id(r): self._snapshot() for r in runs}
        start_cycle = self.core.cycle_at(self.engine.now)
        self.dispatcher.wake()
        self.timeline.start(start_cycle)
        self.timeline.stuck_at = None
        if self.window is not None:
            self.window.start(start_cycle)
        self._batch = runs
        self._split_l1(runs)
        if self.sampler is not None:
            self.sampler.batch_started(runs, start_cycle)
        if not all(r.finished for r in runs):
            # the model allocates many short-lived tuples and few reference cycles: a
            # larger first GC generation saves most collection passes
            gc_threshold = gc.get_threshold()
            gc.set_threshold(max(gc_threshold[0], 50_000), *gc_threshold[1:])
            try:
                # until the last launch finishes (_cta_done) or the watchdog fires (timeline)
                self.engine.run(until_stop_request=True)
            finally:
                gc.set_threshold(*gc_threshold)
        self.timeline.stop()
        self.engine.settle()
        unfinished = [r for r in runs if not r.finished]
        if unfinished:
            raise self._deadlock(unfinished)
        out = []
        for r in runs:
            self.running.remove(r)
            self.finished.append(r)
            if self.sampler is not None:  # projected waves: counters and cycles of the skipped CTAs added
                out.append(self.sampler.launch_stats(r, base[id(r)], start_cycle, time.perf_counter() - t0))
            else:
                out.append(launch_stats(self, r, base[id(r)], start_cycle, time.perf_counter() - t0))
        return out

    def _split_l1(self, runs: list[KernelRun]) -> None:
        """Each SM's L1 for this batch: what the carveout of a unified L1/shared array
        leaves (timing/carveout.py), or the fixed L1."""
        c = self.cfg.l1d
        if not c.enabled:
            return
        nbytes = c.size_kb * 1024
        if c.shared_carveouts_kb:
            lim = sm_limits(self.cfg)
            kb = max((choose_carveout(c.shared_carveouts_kb, lim, [r.kres],
                                      r.carveout if r.carveout >= 0 else c.carveout_preference) for r in runs),
                     default=0)
            nbytes -= kb * 1024
            for sm in self.sms:
                if sm.ldst.l1d is not None:
                    sm.ldst.l1d.resize(nbytes)
        for r in runs:
            r.l1d_bytes = nbytes

    def _snapshot(self) -> dict:
        for sm in self.sms:  # the launches' peaks start from what is resident now
            sm.stats.peak_resident_ctas = sm.slots.n_ctas
            sm.stats.peak_resident_warps = sm.slots.n_warps
        self.mark_plugin_levels()
        now = self.core.cycle_at(self.engine.now)
        return {"sm": [sm.collect(now) for sm in self.sms], "mem": self.mem.counters(),
                "sm_parts": [sm.part_counters() for sm in self.sms], "plugins": self.plugin_counts(),
                "energy_events": dict(self.energy_events)}

    def _deadlock(self, runs: list[KernelRun]) -> KernelError:
        for r in runs:  # warps that wait for a CTA no SM can take: the launch cannot run on this GPU
            err = r.gates.deadlock_error(r, self) if r.gates is not None else None
            if err is not None:
                return err
        stuck = []
        for sm in self.sms:
            for w in sm.warps:
                if w is not None and not w.done:
                    why = sm.waiting_on(w)
                    stuck.append(f"SM {sm.id} warp {w.slot} (CTA {w.cta.index}) at pc {w.pcs[w.pos] if w.pos < w.n else 'end'}"
                                 f" waiting on {why}")
        names = ", ".join(r.name for r in runs)
        when = (f"no instruction issued for {self.timeline.watchdog} cycles (watchdog, cycle {self.timeline.stuck_at})"
                if self.timeline.stuck_at is not None else "every unit went idle")
        return KernelError(f"timing simulation of {names} deadlocked ({when}) with work left: "
                           + ("; ".join(stuck[:8]) or self._undispatched(runs)) + (" ..." if len(stuck) > 8 else ""))

    def _undispatched(self, runs: list[KernelRun]) -> str:
        """Why CTAs were left undispatched (no SM would admit one)."""
        why = []
        for sm in self.sms:
            sl = sm.slots
            if sl.dispatch_holds:
                from tlpsim.timing.plugin import HOLD_BITS

                who = [p for p, b in HOLD_BITS.items() if sl.dispatch_holds & b]
                why.append(f"SM {sm.id} dispatch held by the {' and '.join(who)} plug-in")
            for r in runs:
                lim = sl.limits.get(r.kid)
                if lim is not None and sl.by_kernel.get(r.kid, 0) >= lim:
                    why.append(f"SM {sm.id} CTA limit {lim} for {r.name}")
        left = ", ".join(f"{r.name}: {r.n_ctas - r.next_cta} of {r.n_ctas}" for r in runs if r.next_cta < r.n_ctas)
        return (f"CTAs never dispatched ({left}); the CTA scheduler '{self.cta_policy.plugin_name}' assigned none"
                + (" (" + "; ".join(why[:6]) + ")" if why else ""))


def _declared_window(plugins: list[tuple[str, Any]]) -> int | None:
    """The sampling window a GPU-level plug-in (monitor or CTA scheduler, e.g. DYNCTA)
    declares through a `window_cycles` parameter; None when none does. Two plug-ins
    declaring different windows is a configuration error (there is one window)."""
    found: dict[str, int] = {}
    for key, p in plugins:
        w = getattr(getattr(p, "params", None), "window_cycles", None)
        if w is not None and "window" in getattr(p, "events", ()):
            found[key] = int(w)
    if len(set(found.values())) > 1:
        raise ConfigError("GPU-level plug-ins declare different sampling windows ("
                          + ", ".join(f"{k}: {w} cycles" for k, w in found.items()) + "); there is one window")
    return next(iter(found.values()), None)

"""The GPU: SMs, the CTA dispatcher, and the memory system (crossbars, L2 slices,
DRAM channels), built from a typed `GPUConfig` and run on one engine.

`GPU.launch()` queues a kernel launch (its flattened kernel, trace and resource
usage); `GPU.run()` simulates until every queued launch has finished and returns
one `LaunchStats` per launch. Launches on different streams run concurrently.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from typing import Any

from tlpsim.errors import KernelError
from tlpsim.policies.alloc.base import KernelResources
from tlpsim.policies.cta.base import KernelView, SMView
from tlpsim.timing.builder import (
    MemorySystem,
    build_sm_parts,
    clock_domains,
    resolve_policy,
)
from tlpsim.timing.engine import Component, Engine
from tlpsim.timing.occupancy import occupancy
from tlpsim.timing.sm import SM
from tlpsim.timing.static import StaticKernel
from tlpsim.timing.summary import launch_stats
from tlpsim.timing.timeline import Timeline


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
    t_end: int = -1
    warp_insts: int = 0    # issued by this launch (the SM counters mix concurrent launches)
    thread_insts: int = 0
    snapshot: dict = field(default_factory=dict)
    mem_rows: Any = None   # the trace's memory table as lists (timing.warp.MemRows), built once

    @property
    def n_ctas(self) -> int:
        return self.trace.n_warps // max(self.trace.warps_per_cta, 1)

    @property
    def finished(self) -> bool:
        return self.ctas_done >= self.n_ctas


class CtaDispatcher(Component):
    """Asks the CTAScheduler policy for assignments every core cycle while CTAs wait."""

    name = "cta_dispatcher"

    def __init__(self, gpu: "GPU") -> None:
        super().__init__(gpu.core)
        self.gpu = gpu

    def busy(self) -> bool:
        return any(r.next_cta < r.n_ctas for r in self.gpu.running)

    def tick(self, now: int) -> bool:
        gpu = self.gpu
        pending = [r for r in gpu.running if r.next_cta < r.n_ctas and gpu.stream_ready(r)]
        if not pending:
            return False
        kviews = [KernelView(r.kid, r.stream, r.n_ctas - r.next_cta, r.n_ctas,
                             r.kres.threads_per_cta, r.next_cta) for r in pending]
        by_kid = {r.kid: r for r in pending}
        sviews = [SMView(sm.id, sm.n_ctas, (lambda kid, sm=sm: sm.can_accept(by_kid[kid]))) for sm in gpu.sms]
        placed = False
        for sm_id, kid in gpu.cta_policy.assign(sviews, kviews, now):
            run = by_kid[kid]
            sm = gpu.sms[sm_id]
            if run.next_cta >= run.n_ctas or not sm.can_accept(run):
                continue
            if run.t_start < 0:
                run.t_start = now
            sm.launch_cta(run, run.next_cta, now)
            run.next_cta += 1
            placed = True
        return placed


class GPU:
    """A configured GPU: build once, launch kernels, run."""

    def __init__(self, config, dense: bool = False) -> None:
        self.cfg = config
        self.engine = Engine(dense=dense)
        self.core, self.icnt_dom, self.l2_dom, self.dram_dom = clock_domains(config)
        self.mem = MemorySystem(config, self.engine, self.icnt_dom, self.l2_dom, self.dram_dom)
        self.sms: list[SM] = []
        for k in range(config.gpu.n_sms):
            parts = build_sm_parts(config, k, self.core, self.mem)
            sm = SM(k, self.core, parts.params, parts.schedulers, parts.operands, parts.allocator, parts.ldst,
                    self._cta_done)
            self.mem.sm_in[k].consumer = sm    # replies wake the SM
            self.mem.sm_out[k].producer = sm   # freed request-queue space wakes it too
            self.engine.add(sm, active=False)
            self.sms.append(sm)
        self.mem.register(self.engine)
        self.cta_policy = resolve_policy(config, "gpu.cta_scheduler", config.gpu.cta_scheduler, "cta_scheduler",
                                         n_sms=config.gpu.n_sms)
        self.dispatcher = self.engine.add(CtaDispatcher(self), active=False)
        mon = config.monitor
        self.timeline = self.engine.add(Timeline(self.core, self.sms, mon.timeline_interval_cycles,
                                                 mon.watchdog_cycles), active=False)
        self.running: list[KernelRun] = []
        self._batch: list[KernelRun] = []  # the launches GPU.run simulates now
        self.finished: list[KernelRun] = []
        self.kid = 0

    # ------------------------------------------------------------ launches

    def launch(self, static: StaticKernel, trace, regs_per_thread: int, smem_per_cta: int, stream: int = 0,
               name: str = "") -> KernelRun:
        tpc = trace.block[0] * trace.block[1] * trace.block[2]
        run = KernelRun(self.kid, name or trace.kernel, static, trace,
                        KernelResources(tpc, regs_per_thread, smem_per_cta), stream)
        self.kid += 1
        lim = self.sms[0].allocator
        if not lim.fits(run.kres) and not any(sm.n_ctas for sm in self.sms):
            occ = occupancy(lim.limits, regs_per_thread, smem_per_cta, tpc)
            raise KernelError(f"a CTA of kernel {run.name} never fits on an SM (limited by {occ.limiter}: "
                              f"{regs_per_thread} regs/thread, {smem_per_cta} B shared, {tpc} threads)")
        self.running.append(run)
        return run

    def stream_ready(self, run: KernelRun) -> bool:
        """Kernels of one stream run in order; different streams overlap."""
        return all(r.finished for r in self.running if r.stream == run.stream and r.kid < run.kid)

    def _cta_done(self, sm: SM, run: KernelRun, now: int) -> None:
        self.cta_policy.on_cta_done(sm.id, run.kid, run.ctas_done - 1, now)
        if run.finished:
            run.t_end = now
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
        self._batch = runs
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
            out.append(launch_stats(self, r, base[id(r)], start_cycle, time.perf_counter() - t0))
        return out

    def _snapshot(self) -> dict:
        return {"sm": [sm.collect() for sm in self.sms], "mem": self.mem.counters(),
                "sm_parts": [sm.part_counters() for sm in self.sms]}

    def _deadlock(self, runs: list[KernelRun]) -> KernelError:
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
                           + ("; ".join(stuck[:8]) or "CTAs never dispatched") + (" ..." if len(stuck) > 8 else ""))

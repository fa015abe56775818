"""GPUDuet-like context switching: a sketch on the port, not Wang et al.'s model.
Two plug-ins of one SM share state through `port.peer()`:

- `duet_alloc` (resource allocator) keeps up to `extra_ctas` CTAs resident beyond
  the baseline's CTA and warp slots, as long as their registers and shared memory
  fit beside the contexts the switcher has parked (it asks the switcher).
- `duet_switch` (context switcher) runs at most the baseline's warp slots of warps
  at once (the schedulers' limit; it asks the allocator). A running warp that
  blocks on memory or at a barrier is switched out: its live registers move into
  spare register file, or spare scratchpad when the RF has none, through that
  storage's ports (`reserve` + `transfer`) and the warp is held; a switched-out
  warp that can run is switched in, issuing once its registers are back.

    tlpsim run vecadd --mode timing --plugin examples/plugins/duet_like.py --set gpu.n_sms=1 \\
        --set 'sm.resource_allocator={impl="duet_alloc", extra_ctas=4}' --set sm.context_switcher=duet_switch
"""
from collections import deque
from dataclasses import dataclass

from tlpsim.policies.alloc.base import BaselineAllocator
from tlpsim.policies.ctxswitch.base import ContextSwitcher
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter

WARP_REG_BYTES = 32 * 4          # one 32-bit register of every lane of a warp


@register("resource_allocator", "duet_alloc")
class DuetAllocator(BaselineAllocator):
    """Baseline accounting with more CTA and warp slots; parked contexts use up RF and scratchpad."""

    @dataclass(frozen=True)
    class Params:
        extra_ctas: int = 4      # CTA slots beyond the baseline's
        extra_warps: int = 32    # warp slots beyond the baseline's

    counters = {"extra_ctas": Counter("CTAs", "CTAs admitted beyond the baseline's CTA or warp slots")}

    def max_contexts(self):
        ctas, warps = super().max_contexts()
        return ctas + self.params.extra_ctas, warps + self.params.extra_warps

    def fits(self, kres):
        n, u, lim = self.need(kres), self.used, self.limits
        ctas, warps = self.max_contexts()
        if self.ctas >= ctas or u.warps + n.warps > warps:
            return False
        # what the switcher parked must stay where it is (another switcher parks nothing)
        parked = getattr(self.port.peer("context_switcher"), "parked", lambda storage: 0)
        return (4 * (u.regs + n.regs) + parked("rf") <= 4 * lim.registers
                and u.smem + n.smem + parked("smem") <= lim.shared_bytes)

    def allocate(self, kres, slot):
        lim = self.limits
        if self.ctas >= lim.max_ctas or self.used.warps + self.need(kres).warps > lim.max_threads // lim.warp_size:
            self.counts.extra_ctas += 1
        return super().allocate(kres, slot)


@register("context_switcher", "duet_switch")
class DuetSwitcher(ContextSwitcher):
    """Runs the baseline's warp slots' worth of warps; parks blocked ones' live registers in spare RF/scratchpad."""

    @dataclass(frozen=True)
    class Params:
        bytes_per_cycle: int = 128   # context bytes a storage's port moves per cycle

    events = frozenset({"cta_admitted", "cta_retired", "warp_blocked", "warp_finished"})
    counters = {"switch_outs": Counter("warps", "warps switched out"),
                "switch_ins": Counter("warps", "warps switched in"),
                "rf_bytes": Counter("bytes", "context bytes moved to and from spare register file"),
                "smem_bytes": Counter("bytes", "context bytes moved to and from spare scratchpad")}

    def __init__(self, params=None, **context):
        super().__init__(params, **context)
        lim = self.port.peer("resource_allocator").limits   # built before the switcher
        self.limit = lim.max_threads // lim.warp_size
        self.active: set[int] = set()   # warp slots switched in
        self.out: deque = deque()       # (warp slot, saved bytes, storage), oldest first

    def parked(self, storage):
        """Bytes of `storage` holding switched-out contexts (the allocator asks)."""
        return self.port.reserved(storage)

    def on_cta_admitted(self, cta, now):
        for w in cta.warps:
            if len(self.active) < self.limit:
                self.active.add(w.slot)
            else:                                           # starts switched out, nothing live yet
                self.out.append((w.slot, 0, "rf"))
                self.port.hold_warp(w.slot)

    def on_cta_retired(self, cta, now):
        for w in cta.warps:                                 # (a warp with no work never reports finishing)
            self.active.discard(w.slot)

    def on_warp_blocked(self, warp, reason, now):
        slot = warp.slot
        if reason == "hold":                                # a switched-out warp that can run again
            if len(self.active) < self.limit and any(s == slot for s, _, _ in self.out):
                self._switch_in(next(k for k, (s, _, _) in enumerate(self.out) if s == slot))
            return
        if reason not in ("memory", "barrier") or slot not in self.active or self.port.held(slot):
            return                                          # (held: its registers are still coming back)
        k = self._candidate(runnable_only=reason == "memory")
        nbytes = self.port.live_registers(slot) * WARP_REG_BYTES
        store = next((s for s in ("rf", "smem") if self.port.spare_bytes(s) >= nbytes), None)
        if k is None or store is None:
            return
        self.port.reserve(store, nbytes)
        self.port.transfer(store, nbytes, self.params.bytes_per_cycle)
        self.port.hold_warp(slot)
        self.active.discard(slot)
        self.counts.switch_outs += 1
        self.counts.add(store + "_bytes", nbytes)
        self._switch_in(k)
        self.out.append((slot, nbytes, store))

    def on_warp_finished(self, warp, now):
        self.active.discard(warp.slot)
        k = self._candidate(runnable_only=False)
        if k is not None:
            self._switch_in(k)

    def _candidate(self, runnable_only):
        """The oldest switched-out warp that can run; else one waiting on memory (unless
        `runnable_only`); never one waiting at a barrier (it could not issue)."""
        waiting = None
        for k, (slot, _, _) in enumerate(self.out):
            why = self.port.blocked_on(slot)
            if why in ("hold", "fetch", "scoreboard"):
                return k
            if why == "memory" and waiting is None:
                waiting = k
        return None if runnable_only else waiting

    def _switch_in(self, k):
        slot, nbytes, store = self.out[k]
        del self.out[k]
        self.active.add(slot)
        self.counts.switch_ins += 1
        if not nbytes:
            self.port.release_warp(slot)
            return
        self.port.unreserve(store, nbytes)
        done = self.port.transfer(store, nbytes, self.params.bytes_per_cycle)
        self.counts.add(store + "_bytes", nbytes)
        self.port.hold_warp_until(slot, done)              # issues once its registers are back

"""GPUDuet-like context switcher (a test of the port, not Wang et al.'s model): at
most `active_warps` warps per SM run; the others are switched out. A running warp
that blocks on an outstanding global load is switched out — its live registers
(the analyses' count at its next instruction) moved to spare scratchpad (or,
with `storage = "rf"`, spare register file) at `bytes_per_cycle` through its
ports — and the longest switched-out warp is brought back in, its saved
registers moved back before it may issue. A finished warp also makes room."""

from collections import deque
from dataclasses import dataclass

from tlpsim.policies.ctxswitch.base import ContextSwitcher
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter

WARP_REG_BYTES = 32 * 4


@register("context_switcher", "contract_duet")
class SpillToScratchpad(ContextSwitcher):
    """Switch memory-blocked warps out to the scratchpad, FIFO back in."""

    @dataclass(frozen=True)
    class Params:
        active_warps: int = 1
        bytes_per_cycle: int = 128
        storage: str = "smem"         # where saved contexts go: "smem" or "rf" (the RF's banks are busy meanwhile)

    events = frozenset({"warp_started", "warp_blocked", "warp_finished"})
    counters = {"switch_outs": Counter("warps", "warps switched out"),
                "switch_ins": Counter("warps", "warps switched in"),
                "bytes_moved": Counter("bytes", "context bytes moved to and from the scratchpad"),
                "peak_saved": Counter("bytes", "most scratchpad bytes holding saved contexts")}

    def __init__(self, params=None, **context):
        super().__init__(params, **context)
        self.active: set[int] = set()
        self.out: deque = deque()     # (slot, saved bytes), oldest first

    def on_warp_started(self, warp, now):
        if len(self.active) < self.params.active_warps:
            self.active.add(warp.slot)
        else:
            self.port.hold_warp(warp.slot)
            self.out.append((warp.slot, 0))

    def on_warp_blocked(self, warp, reason, now):
        if reason != "memory" or not warp.waiting_mem or warp.slot not in self.active or not self.out:
            return
        nbytes = self.port.live_registers(warp.slot) * WARP_REG_BYTES
        store = self.params.storage
        self.port.reserve(store, nbytes)
        self.counts.peak_saved = max(self.counts.peak_saved, self.port.reserved(store))
        self.port.transfer(store, nbytes, self.params.bytes_per_cycle)
        self.port.hold_warp(warp.slot)
        self.active.discard(warp.slot)
        self.counts.switch_outs += 1
        self.counts.bytes_moved += nbytes
        self._switch_in()
        self.out.append((warp.slot, nbytes))

    def on_warp_finished(self, warp, now):
        self.active.discard(warp.slot)
        if self.out:
            self._switch_in()

    def _switch_in(self):
        slot, nbytes = self.out.popleft()
        self.port.unreserve(self.params.storage, nbytes)
        done = self.port.transfer(self.params.storage, nbytes, self.params.bytes_per_cycle)
        self.port.release_warp(slot)
        self.port.hold_warp_until(slot, done)
        self.active.add(slot)
        self.counts.switch_ins += 1
        self.counts.bytes_moved += nbytes

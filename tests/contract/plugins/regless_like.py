"""RegLess-like operand storage (a test of the port, not Kim et al.'s model): when
a warp enters another compiler region (tlpsim.analysis.regions), it is held until
the region's input registers are preloaded through the SM's L1 port from a backing
store (one 128-byte line per warp register), contending with the warps' loads."""

from tlpsim.policies.operands.banked_rf import BankedRegisterFile
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter

WARP_REG_BYTES = 32 * 4


@register("operand_storage", "contract_regless")
class RegionPreload(BankedRegisterFile):
    """Banked RF whose warps wait for their region's inputs to be staged through L1."""

    events = frozenset({"warp_finished"})
    counters = {"preloads": Counter("regions", "region entries that preloaded registers"),
                "preload_bytes": Counter("bytes", "bytes staged through the L1 port")}
    staged: list = []   # (warp gwarp, region index, requested at, arrived at), for tests

    def __init__(self, params=None, **context):
        super().__init__(params, **context)
        self.region_of_slot: dict[int, int] = {}
        self.base = -1
        self.retry = False

    def try_read(self, warp, instr, now):
        regions = self.port.kernel(warp.kid).analyzed.regions
        r = regions.regions[regions.region_of[instr.pc]]
        if self.region_of_slot.get(warp.slot) != r.index:
            if not self.port.can_request():   # the L1 port's queue is full: try again next cycle
                self.retry = True
                return None
            nbytes = r.input_regs * WARP_REG_BYTES
            if nbytes:
                if self.base < 0:
                    self.base = self.port.backing_store("regless", self.n_warp_slots * 256 * WARP_REG_BYTES)
                self.port.hold_warp(warp.slot)
                entry = (warp.gwarp, r.index, now)
                self.port.mem_request("read", self.base + warp.slot * 256 * WARP_REG_BYTES, nbytes,
                                      on_done=lambda t, s=warp.slot, e=entry: self._staged(s, e, t))
                self.counts.preloads += 1
                self.counts.preload_bytes += nbytes
                self.region_of_slot[warp.slot] = r.index
                return None
            self.region_of_slot[warp.slot] = r.index
        return super().try_read(warp, instr, now)

    def next_event(self, now):
        retry, self.retry = self.retry, False
        return now + 1 if retry else super().next_event(now)

    def _staged(self, slot, entry, usable):
        type(self).staged.append((*entry, usable))
        if usable > self.port.now():
            self.port.hold_warp_until(slot, usable)
        else:
            self.port.release_warp(slot)

    def on_warp_finished(self, warp, now):
        self.region_of_slot.pop(warp.slot, None)

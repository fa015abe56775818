"""RFV-like operand storage (a test of the port, not Jeon's model): every written
(warp, register) takes an entry of a per-SM pool smaller than the register file,
allocated at issue; entries are freed at the compiler's release points
(tlpsim.analysis.release). An instruction whose results find no free entry waits."""

from dataclasses import dataclass

from tlpsim.policies.operands.banked_rf import BankedRegisterFile
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter


@register("operand_storage", "contract_rfv")
class RenamedPool(BankedRegisterFile):
    """Banked RF renamed into a pool of `pool_entries` warp registers per SM."""

    @dataclass(frozen=True)
    class Params(BankedRegisterFile.Params):
        pool_entries: int = 256   # warp registers (32 x 4 B) in the physical pool

    events = frozenset({"warp_finished"})
    counters = {"allocations": Counter("warp registers", "pool entries allocated at issue"),
                "releases": Counter("warp registers", "pool entries freed at release points"),
                "peak_entries": Counter("warp registers", "most entries in use at once"),
                "waits": Counter("issue attempts", "issues refused for lack of free entries"),
                "freed_at_exit": Counter("warp registers", "entries still mapped when their warp exited")}

    def __init__(self, params=None, **context):
        super().__init__(params, **context)
        self.mapped: set[tuple[int, int, int]] = set()   # (kernel, warp, physical register)

    def try_read(self, warp, instr, now):
        new = {(warp.kid, warp.gwarp, r) for r in instr.dst_regs} - self.mapped
        if len(self.mapped) + len(new) > self.params.pool_entries:
            self.counts.waits += 1
            return None
        ready = super().try_read(warp, instr, now)
        if ready is None:
            return None
        self.mapped |= new
        self.counts.allocations += len(new)
        self.counts.peak_entries = max(self.counts.peak_entries, len(self.mapped))
        freed = self.port.kernel(warp.kid).analyzed.release_points.released_phys[instr.pc]
        gone = {(warp.kid, warp.gwarp, r) for r in freed} & self.mapped
        self.mapped -= gone
        self.counts.releases += len(gone)
        return ready

    def on_warp_finished(self, warp, now):
        mine = {e for e in self.mapped if e[0] == warp.kid and e[1] == warp.gwarp}
        self.mapped -= mine
        self.counts.freed_at_exit += len(mine)

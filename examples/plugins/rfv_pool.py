"""An RFV-like operand storage (a sketch, not Jeon's model): the register file keeps
only `pool_fraction` of its registers physically; a warp register is renamed onto a
pool entry when an instruction first writes it and freed at the compiler's release
points (`analyzed.release_points`) or when its warp exits. An instruction whose
results find no room is refused and its warp held; it is released when entries
free ("refuse + hold + release when space frees", docs/plugins.md).

Throttling keeps the pool deadlock-free: one warp at a time, the *guarantor*, is
always able to finish (the free entries cover what it may still need, at most the
kernel's registers per thread); any other warp allocates only from what lies above
that reserve. When the guarantor exits, its entries cover the next one's needs.

    tlpsim run spmv --mode timing --plugin examples/plugins/rfv_pool.py \
        --set 'sm.operand_storage={impl="rfv_pool", pool_fraction=0.3}'
"""
from collections import deque
from dataclasses import dataclass

from tlpsim.errors import ConfigError
from tlpsim.policies.operands.banked_rf import BankedRegisterFile
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter, EnergyStructure

WARP_REG_BYTES = 32 * 4   # one 32-bit register of 32 lanes


@register("operand_storage", "rfv_pool")
class RenamedRegisterPool(BankedRegisterFile):
    """Banked RF renamed onto a physical pool of pool_fraction of its registers."""

    @dataclass(frozen=True)
    class Params(BankedRegisterFile.Params):
        pool_fraction: float = 0.3

    events = frozenset({"kernel_start", "warp_finished"})
    counters = {"renames": Counter("warp registers", "pool entries allocated at a first write"),
                "releases": Counter("warp registers", "entries freed at release points or warp exit"),
                "entries_peak": Counter("warp registers", "most pool entries in use at once", agg="max"),
                "entries_mean": Counter("warp registers", "pool entries in use, cycle-weighted", agg="mean"),
                "throttled": Counter("holds", "warps held for lack of pool entries")}
    energy = {"rfv_rename": EnergyStructure(access_pj=1.1, source="sketch estimate: a 1 KB SRAM lookup "
                                                                  "per renamed register (not measured)")}

    def __init__(self, params=None, **context):
        super().__init__(params, **context)
        if not 0.0 < self.params.pool_fraction <= 1.0:
            raise ConfigError(f"rfv_pool: pool_fraction must be in (0, 1], got {self.params.pool_fraction}")
        self.pool = int(self.port.capacity("rf") * self.params.pool_fraction) // WARP_REG_BYTES
        self.free = self.pool
        self.mapped: dict[tuple[int, int], set[int]] = {}   # (kid, gwarp) -> registers with an entry
        self.need = 0          # most registers per thread any kernel names (a warp's worst case)
        self.guarantor: tuple[int, int] | None = None
        self.waiting: deque = deque()                        # (warp view, entries it asked for)

    def on_kernel_start(self, kernel, now):
        regs = [r for si in kernel.static.instrs for r in (*si.src_regs, *si.dst_regs)]
        need = max(regs, default=-1) + 1
        if need > self.pool:
            raise ConfigError(f"rfv_pool: kernel {kernel.name} names {need} registers per thread, more than the "
                              f"{self.pool}-entry pool (pool_fraction={self.params.pool_fraction})")
        self.need = max(self.need, need)

    def _headroom(self, key):
        """Entries warp `key` may take now without eating the guarantor's reserve."""
        g = self.guarantor
        if g is None or g == key:
            return self.free
        return self.free - (self.need - len(self.mapped.get(g, ())))

    def try_read(self, warp, instr, now):
        key = (warp.kid, warp.gwarp)
        if self.guarantor is None:
            self.guarantor = key
        mine = self.mapped.setdefault(key, set())
        new = [r for r in instr.dst_regs if r not in mine]
        if len(new) > self._headroom(key):
            self.port.hold_warp(warp.slot)          # refuse + hold: no retry until entries free
            self.waiting.append((warp, len(new)))
            self.counts.throttled += 1
            return None
        ready = super().try_read(warp, instr, now)
        if ready is None:
            return None
        mine.update(new)
        self._taken(len(new))
        self.counts.renames += len(new)
        self.port.count_energy("rfv_rename", len(instr.src_regs) + len(new))
        gone = mine.intersection(self.port.kernel(warp.kid).analyzed.release_points.released_phys[instr.pc])
        if gone:
            mine.difference_update(gone)
            self._freed(len(gone))
        return ready

    def on_warp_finished(self, warp, now):
        key = (warp.kid, warp.gwarp)
        self.waiting = deque(e for e in self.waiting if e[0] is not warp)
        gone = len(self.mapped.pop(key, ()))
        if key == self.guarantor:       # its entries now cover any warp's whole need
            self.guarantor = next((e[0].kid, e[0].gwarp) for e in self.waiting) if self.waiting else \
                next(iter(self.mapped), None)
        self._freed(gone)

    def _taken(self, n):
        self.free -= n
        self.counts.entries_peak = self.counts.entries_mean = self.pool - self.free

    def _freed(self, n):
        """Entries came back: release the waiting warps that now fit, oldest refusal first."""
        self._taken(-n)
        self.counts.releases += n
        while self.waiting:
            w, asked = self.waiting[0]
            if asked > self._headroom((w.kid, w.gwarp)):
                break
            self.waiting.popleft()
            self.port.release_warp(w.slot)

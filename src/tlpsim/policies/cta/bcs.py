"""Block CTA scheduling, BCS (Lee et al., HPCA 2014, §4.2, Fig. 9).

For a kernel with two-dimensional (or 3D) CTAs, consecutive CTAs — CTA(0,0) and
CTA(1,0), then CTA(2,0) and CTA(3,0), ... in dispatch order — go to the same SM as a
block of `block_size` (the paper's pairs), so their inter-CTA locality meets in that
SM's L1. Dispatch is *delayed*: an SM receives a new block only when one of its
blocks has retired completely. An SM may hold T CTAs of the kernel (the occupancy
limit, or a lower per-kernel limit set through the port, e.g. LCS's T_new); with
b = min(block_size, T) that is T // b full blocks, and when b does not divide T:

- `odd_slot = "fill"` (default): one more block of the T mod b CTAs left over (a
  single CTA for pairs), so no CTA slot stays empty. The paper specifies only the
  delayed pairing, not what happens to an odd slot (T = 3 or 5 are common: Fermi's
  8-CTA, 1536-thread limits); filling it is the neutral reading, since leaving it
  empty throttles the kernel beyond what BCS is about.
- `odd_slot = "idle"`: the leftover slots stay empty (T // b blocks only).

SMs are visited round robin, one block each per visit. BCS applies by the shape of
the CTA (§4.2: "not applicable to workloads with one-dimensional CTAs", as there is
little inter-CTA L1 locality): a kernel whose CTAs are 1D is dispatched like the
baseline round robin, whatever its grid, unless `only_2d` is false.

Each block is declared to the SMs through the port (`GPUPort.group_ctas`): the SCA
warp scheduler (`sm.warp_scheduler = "sca"`) groups warps by the block their CTA
came in. BCS+GTO is the paper's ablation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Sequence

from tlpsim.policies.cta.base import CTAScheduler, KernelView, SMView
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter
from tlpsim.timing.views import CTAView, KernelInfo

__all__ = ["BCSParams", "BlockCTAScheduler", "is_2d", "occupancy_limit"]


@dataclass(frozen=True)
class BCSParams:
    block_size: int = 2     # consecutive CTAs per block (§4.2: pairs, for L1 spatial locality)
    only_2d: bool = True    # kernels with 1D CTAs dispatched round robin, one CTA at a time (§4.2, Fig. 10)
    odd_slot: Literal["fill", "idle"] = "fill"  # CTA slots left over by whole blocks: a smaller block, or empty

    def __post_init__(self) -> None:
        if self.block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {self.block_size}")
        if self.odd_slot not in ("fill", "idle"):
            raise ValueError(f"odd_slot must be 'fill' or 'idle', got {self.odd_slot!r}")


def is_2d(shape: tuple[int, ...]) -> bool:
    """A shape (a CTA's threads, or a grid's CTAs) with more than one along y or z."""
    return len(shape) > 1 and (shape[1] > 1 or (len(shape) > 2 and shape[2] > 1))


def occupancy_limit(config: Any, kv: KernelView) -> int:
    """CTAs of the kernel one SM holds by its resources alone (with gpu.max_ctas_per_sm)."""
    from tlpsim.timing.builder import sm_limits
    from tlpsim.timing.occupancy import occupancy

    return occupancy(sm_limits(config), kv.regs_per_thread, kv.smem_per_cta, kv.threads_per_cta,
                     config.gpu.max_ctas_per_sm).ctas


@register("cta_scheduler", "bcs")
class BlockCTAScheduler(CTAScheduler):
    """Block CTA scheduling (Lee et al. HPCA'14): consecutive CTA pairs to one SM, a new pair once a pair retired."""
    stationarity = "stationary"  # pairs of consecutive CTAs, the same rule all launch long

    Params = BCSParams
    events = frozenset({"kernel_end", "cta_admitted"})
    counters = {
        "blocks": Counter("blocks", "blocks of consecutive CTAs dispatched to one SM"),
        "split": Counter("CTAs", "CTAs of a planned block the dispatcher placed elsewhere (not expected)"),
    }

    def __init__(self, params: Any = None, n_sms: int = 1, **context: Any) -> None:
        super().__init__(params or BCSParams(), n_sms, **context)
        self.next_sm = 0
        self.open: dict[tuple[int, int], list[set[int]]] = {}     # (sm, kid) -> its blocks' CTAs not retired
        self.planned: dict[tuple[int, int], tuple[int, set[int]]] = {}  # (kid, CTA index) -> (sm, block)
        self._tmax: dict[int, int] = {}

    # ------------------------------------------------------------ decisions

    def blocked(self, kv: KernelView) -> bool:
        """Whether the kernel is dispatched in blocks: its CTAs are 2D (§4.2), or `only_2d` is off."""
        return not self.params.only_2d or is_2d(kv.block)

    def limit(self, sm: SMView, kv: KernelView) -> int:
        """CTAs of the kernel the SM may hold: the occupancy limit, or the port's lower limit."""
        t = self._tmax.get(kv.kid)
        if t is None:
            t = self._tmax[kv.kid] = occupancy_limit(self.config, kv)
        lim = sm.limits.get(kv.kid)
        return t if lim is None else min(t, lim)

    def block_slots(self, limit: int) -> tuple[int, int]:
        """(block size, blocks per SM) under a CTA limit; with `odd_slot = "fill"` the
        last block may be smaller (the limit's remainder)."""
        b = max(1, min(self.params.block_size, limit))
        if limit <= 0:
            return b, 0
        return b, (-(-limit // b) if self.params.odd_slot == "fill" else max(1, limit // b))

    def assign(self, sms: Sequence[SMView], kernels: Sequence[KernelView], now: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        if not kernels:
            return out
        self._drop_undispatched(kernels)
        given: dict[int, int] = {}
        n = len(sms)
        start = self.next_sm
        for k in range(n):
            sm = sms[(start + k) % n]
            for kv in kernels:  # oldest launch first
                left = kv.remaining - given.get(kv.kid, 0)
                if left <= 0 or not sm.fits(kv.kid):
                    continue
                if not self.blocked(kv):
                    out.append((sm.sm, kv.kid))
                    given[kv.kid] = given.get(kv.kid, 0) + 1
                    break
                lim = self.limit(sm, kv)
                b, slots = self.block_slots(lim)
                blocks = self.open.setdefault((sm.sm, kv.kid), [])
                size = min(b, left)
                if self.params.odd_slot == "fill":
                    size = min(size, lim - sm.resident_of(kv.kid))  # the odd slot takes a smaller block
                if len(blocks) >= slots or size <= 0 or sm.resident_of(kv.kid) + size > lim:
                    continue  # delayed: wait until one of its blocks has retired
                first = kv.next_cta + given.get(kv.kid, 0)
                block = set(range(first, first + size))
                blocks.append(block)
                for i in block:
                    self.planned[(kv.kid, i)] = (sm.sm, block)
                self.port.group_ctas(sm.sm, kv.kid, sorted(block))
                out += [(sm.sm, kv.kid)] * size
                given[kv.kid] = given.get(kv.kid, 0) + size
                self.counts.blocks += 1
                break
        if out:
            self.next_sm = (out[-1][0] + 1) % n
        return out

    def _drop_undispatched(self, kernels: Sequence[KernelView]) -> None:
        """Planned CTAs the dispatcher did not dispatch (its index is still ahead of the
        kernel's next CTA) leave their block: they will be planned again."""
        if not self.planned:
            return
        nxt = {kv.kid: kv.next_cta for kv in kernels}
        for (kid, i), (sm, block) in list(self.planned.items()):
            if i >= nxt.get(kid, 1 << 62):
                del self.planned[(kid, i)]
                self._leave(sm, kid, block, i)

    def _leave(self, sm: int, kid: int, block: set[int], index: int) -> None:
        block.discard(index)
        self.port.ungroup(kid, index)
        if not block:
            blocks = self.open.get((sm, kid), [])
            if any(b is block for b in blocks):
                blocks[:] = [b for b in blocks if b is not block]

    # ------------------------------------------------------------ events

    def on_cta_admitted(self, cta: CTAView, now: int) -> None:
        plan = self.planned.pop((cta.kid, cta.index), None)
        if plan is not None and plan[0] != cta.sm:
            self.counts.split += 1
            self._leave(plan[0], cta.kid, plan[1], cta.index)

    def on_cta_done(self, sm: int, kid: int, cta: int, now: int) -> None:
        for block in self.open.get((sm, kid), ()):
            if cta in block:
                self._leave(sm, kid, block, cta)
                return

    def on_kernel_end(self, kernel: KernelInfo, now: int) -> None:
        for key in [k for k in self.open if k[1] == kernel.kid]:
            del self.open[key]
        self._tmax.pop(kernel.kid, None)

"""Hand-made neighbours for policy unit tests: ports that record the commands a
plug-in gives and answer its queries from lists the test sets, and views built by
hand. No simulator runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tlpsim.timing.views import CTAView, DispatchGroup, KernelView, SMView, WarpView


class FakeSMPort:
    def __init__(self, sm: int) -> None:
        self.sm_id = sm
        self.limits: dict[int, int | None] = {}
        self.ctas: list[CTAView] = []          # what resident_ctas() answers
        self.held: set[int] = set()
        self.log: list[tuple] = []
        self.pcs: dict[int, int] = {}          # warp slot -> next pc (warp_pc)
        self.kernels: dict[int, Any] = {}
        self.blocked: dict[int, str] = {}      # warp slot -> what blocked_on() answers ("" when absent)
        self.groups: dict[tuple[int, int], DispatchGroup] = {}  # (kid, CTA index) -> dispatch_group()

    def set_cta_limit(self, kid: int, limit: int | None) -> None:
        self.limits[kid] = limit
        self.log.append(("limit", kid, limit))

    def resident_ctas(self) -> list[CTAView]:
        return list(self.ctas)

    def hold_warp(self, slot: int) -> None:
        self.held.add(slot)
        self.log.append(("hold", slot))

    def release_warp(self, slot: int) -> None:
        self.held.discard(slot)
        self.log.append(("release", slot))

    def warp_pc(self, slot: int) -> int:
        return self.pcs.get(slot, 0)

    def kernel(self, kid: int) -> Any:
        return self.kernels[kid]

    def blocked_on(self, slot: int) -> str:
        return self.blocked.get(slot, "")

    def dispatch_group(self, kid: int, cta_index: int) -> DispatchGroup | None:
        g = self.groups.get((kid, cta_index))
        return g if g is not None and g.sm == self.sm_id else None

    def group(self, kid: int, gid: int, ctas: tuple[int, ...]) -> DispatchGroup:
        """Declare a dispatch group on this SM, as a CTA scheduler's GPUPort.group_ctas would."""
        g = DispatchGroup(kid, gid, self.sm_id, ctas)
        for i in ctas:
            self.groups[(kid, i)] = g
        return g


class FakeGPUPort:
    def __init__(self, n_sms: int) -> None:
        self.sms = [FakeSMPort(k) for k in range(n_sms)]
        self.timers: list[tuple[int, Any]] = []
        self.groups: list[DispatchGroup] = []   # every group_ctas() in order
        self.ungrouped: list[tuple[int, int]] = []
        self.settled_kids: list[int] = []       # every settled() in order (sampling's last decision points)

    def settled(self, kid: int) -> None:
        self.settled_kids.append(kid)

    def group_ctas(self, sm: int, kid: int, ctas) -> DispatchGroup:
        g = self.sms[sm].group(kid, len(self.groups) + 1, tuple(ctas))
        self.groups.append(g)
        return g

    def ungroup(self, kid: int, cta_index: int) -> None:
        self.ungrouped.append((kid, cta_index))
        for p in self.sms:
            p.groups.pop((kid, cta_index), None)

    @property
    def n_sms(self) -> int:
        return len(self.sms)

    def sm(self, k: int) -> FakeSMPort:
        return self.sms[k]

    def set_cta_limit(self, kid: int, limit: int | None) -> None:
        for p in self.sms:
            p.set_cta_limit(kid, limit)

    def wake_at(self, cycle: int, tag: Any = None) -> None:
        self.timers.append((cycle, tag))


def cta(sm: int, index: int, insts: int, kid: int = 0, slot: int = 0, n_warps: int = 1, admitted: int = 0,
        warps: list[WarpView] | None = None) -> CTAView:
    return CTAView(sm=sm, kid=kid, index=index, slot=slot, n_warps=n_warps, warps=warps or [], insts=insts,
                   admitted=admitted)


def warp(slot: int, age: int, cta_index: int = 0, gwarp: int = 0, kid: int = 0, sched: int = 0,
         cta_slot: int = 0) -> WarpView:
    return WarpView(slot=slot, age=age, cta=cta_slot, last_issue=-1, sched=sched, kid=kid, cta_index=cta_index,
                    gwarp=gwarp)


def kernel(kid: int = 0, n_ctas: int = 64, grid=(8, 8, 1), threads: int = 256, regs: int = 16, smem: int = 0,
           next_cta: int = 0, stream: int = 0, name: str = "k", block=None) -> KernelView:
    """A launch; its CTAs are `block` (default: `threads` along x, 1D)."""
    return KernelView(kid=kid, stream=stream, remaining=n_ctas - next_cta, n_ctas=n_ctas, threads_per_cta=threads,
                      next_cta=next_cta, regs_per_thread=regs, smem_per_cta=smem, warps_per_cta=threads // 32,
                      grid=grid, name=name, block=tuple(block) if block is not None else (threads, 1, 1))


@dataclass
class SMState:
    """One SM as a dispatcher test drives it: resident CTAs per kernel and limits."""

    sm: int
    cap: int = 8                                   # CTAs it admits in all
    by_kernel: dict[int, int] = field(default_factory=dict)
    limits: dict[int, int] = field(default_factory=dict)

    def view(self) -> SMView:
        def fits(kid: int) -> bool:
            lim = self.limits.get(kid)
            if lim is not None and self.by_kernel.get(kid, 0) >= lim:
                return False
            return sum(self.by_kernel.values()) < self.cap
        return SMView(self.sm, sum(self.by_kernel.values()), fits, dict(self.by_kernel), dict(self.limits))


def dispatch(sched: Any, states: list[SMState], kernels: list[KernelView], now: int = 0) -> list[tuple[int, int, int]]:
    """One dispatcher round: ask `sched`, then apply its assignments as the GPU does
    (next CTA of the kernel, skipping SMs that no longer fit). Returns (sm, kid, CTA index)."""
    out = []
    views = [s.view() for s in states]
    for sm_id, kid in sched.assign(views, kernels, now):
        kv = next(k for k in kernels if k.kid == kid)
        st = states[sm_id]
        if kv.remaining <= 0 or not st.view().fits(kid):
            continue
        out.append((sm_id, kid, kv.next_cta))
        st.by_kernel[kid] = st.by_kernel.get(kid, 0) + 1
        kv.next_cta += 1
        kv.remaining -= 1
    return out

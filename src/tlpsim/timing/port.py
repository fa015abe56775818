"""The SM port: the one interface through which a plug-in observes an SM and acts
on it. A plug-in never holds the SM; it holds its port.

Every SM-level plug-in gets an `SMPort` for its SM; a GPU-level plug-in (CTA
scheduler, monitor) gets a `GPUPort`, whose `sm(k)` are SM ports. A port is bound
to its plug-in's extension point: holds it sets carry that point's bit, so two
plug-ins never release each other's holds.

A port exists before its SM: SM-level plug-ins are constructed first (the resource
allocator's `max_contexts()` sizes the SM), so in a plug-in's `__init__` the port
offers what does not need the SM (`sm_id`, `point`, `n_schedulers`, `n_warp_slots`
and `n_cta_slots` once the allocator is built, `capacity`, `rf_geometry`,
`backing_store`, `peer` of plug-ins built before it); anything else raises a
`PortError` naming the command, the point and this rule.

Commands take effect at once. Issued from inside the SM's own cycle (an event
handler, a memory-request callback, a timer of an SM-level plug-in) they act on
this very cycle's remaining work; issued from outside it (a GPU-level plug-in's
timer or window) the SM is woken and sees them from its next tick — identical in
dense and skip-ahead mode. Events and what they carry are listed in
`tlpsim.timing.plugin`; the contract and a tutorial are in docs/plugins.md.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from tlpsim.errors import TlpsimError
from tlpsim.timing.mem_types import READ, WRITE
from tlpsim.timing.plugin import HOLD_BITS, SM_POINTS
from tlpsim.timing.views import CTAView, DispatchGroup, KernelInfo, WarpView

if TYPE_CHECKING:
    from tlpsim.timing.sm import SM

STORAGES = ("rf", "smem", "l1")


class PortError(TlpsimError):
    """A plug-in used its port wrongly (unknown warp slot, storage, unit; a full
    request queue; a command outside the context it needs)."""


#: the order SM-level plug-ins are constructed in (`SMPort.peer` in `__init__` sees the earlier ones)
BUILD_ORDER = ("resource_allocator", "warp_scheduler", "operand_storage", "context_switcher", "execution_checker")


@dataclass(frozen=True)
class RFGeometry:
    """The register file of one SM, from the config (`sm.registers`, `sm.rf_banks`,
    `sm.rf_subarray_bytes`): what a mechanism that gates or places registers by
    bank and subarray needs."""

    banks: int
    bank_bytes: int
    subarrays_per_bank: int
    subarray_bytes: int

    @property
    def subarrays(self) -> int:
        """Subarrays in the whole register file."""
        return self.banks * self.subarrays_per_bank

    @property
    def total_bytes(self) -> int:
        return self.banks * self.bank_bytes


class SMPlugins:
    """The plug-ins of one SM by extension point, shared by that SM's ports
    (`SMPort.peer`); filled by the builder in `BUILD_ORDER`."""

    def __init__(self) -> None:
        self.by_point: dict[str, list[Any]] = {}
        self.chosen: set[str] = set(SM_POINTS)   # points with a plug-in (not "none")
        self.contexts: tuple[int, int] | None = None  # (CTA slots, warp slots) once the allocator is built


class _SMNotBuilt:
    """Stands in for the SM while its plug-ins are constructed: any use names the
    port command, the plug-in's point and the rule."""

    def __init__(self, sm_id: int, point: str) -> None:
        self._sm_id = sm_id
        self._point = point

    def __getattr__(self, name: str) -> Any:
        command = sys._getframe(1).f_code.co_name
        raise PortError(
            f"SM {self._sm_id}: port.{command}() of the {self._point} plug-in needs the SM, which is built after "
            "its plug-ins (the resource allocator's max_contexts() sizes it); in __init__ the port offers sm_id, "
            "point, n_schedulers, n_warp_slots/n_cta_slots (after the allocator), capacity(), rf_geometry(), "
            "backing_store() and peer() of plug-ins built earlier; call it from an event, a timer or an "
            "extension-point method instead (docs/plugins.md, 'When a plug-in gets what')")


class SMPort:
    """A plug-in's view of, and levers on, one SM."""

    def __init__(self, sm: SM | None, point: str, gpu: Any, sm_id: int | None = None,
                 plugins: SMPlugins | None = None) -> None:
        self._sm_id = sm.id if sm is not None else int(sm_id or 0)
        self._sm: Any = sm if sm is not None else _SMNotBuilt(self._sm_id, point)
        self._gpu = gpu
        self.point = point
        self._bit = HOLD_BITS[point]
        self.owner: Any = None           # the plug-in (set by the builder)
        self._plugins = plugins
        self._reserved = {s: 0 for s in STORAGES}
        self._energy_names: frozenset[str] | None = None  # structures the owner may count (first count_energy)

    def bind(self, sm: SM) -> None:
        """Attach the port to its SM once the SM exists (the builder's last step)."""
        self._sm = sm

    # ------------------------------------------------------------ identity and time

    @property
    def sm_id(self) -> int:
        return self._sm_id

    def now(self) -> int:
        """The current core cycle."""
        return self._sm.now()

    @property
    def n_warp_slots(self) -> int:
        ctx = self._plugins.contexts if self._plugins is not None else None
        return ctx[1] if ctx is not None else len(self._sm.slots.warps)

    @property
    def n_cta_slots(self) -> int:
        ctx = self._plugins.contexts if self._plugins is not None else None
        return ctx[0] if ctx is not None else len(self._sm.slots.ctas)

    @property
    def n_schedulers(self) -> int:
        return int(self._gpu.cfg.sm.n_schedulers)

    # ------------------------------------------------------------ the SM's other plug-ins

    def peer(self, point: str, index: int = 0) -> Any:
        """The plug-in at extension point `point` of this SM (the `index`-th warp
        scheduler): how two plug-ins of one SM share state, e.g. a context switcher
        reading the grants its resource allocator made. In `__init__` only plug-ins
        built earlier (`BUILD_ORDER`) are there."""
        if point not in SM_POINTS:
            raise PortError(f"peer({point!r}): not an SM-level extension point (points: {', '.join(SM_POINTS)}); "
                            "GPU-level plug-ins are not peers of an SM's plug-ins")
        reg = self._plugins
        if reg is None:
            raise PortError(f"peer({point!r}) from the {self.point} plug-in: peers are the plug-ins of one SM; a "
                            "GPU-level plug-in has no SM of its own")
        if point not in reg.chosen:
            raise PortError(f"SM {self._sm_id}: peer({point!r}): no plug-in is chosen at {point} (it is 'none')")
        built = reg.by_point.get(point, [])
        if not built:
            raise PortError(f"SM {self._sm_id}: peer({point!r}) from the {self.point} plug-in: {point} is not built "
                            f"yet; SM plug-ins are built in the order {', '.join(BUILD_ORDER)}, so ask for it from "
                            "an event or on first use rather than in __init__")
        if not 0 <= index < len(built):
            raise PortError(f"SM {self._sm_id}: peer({point!r}, {index}): this SM has {len(built)} {point} plug-in(s)")
        return built[index]

    # ------------------------------------------------------------ what is resident

    def _warp(self, slot: int) -> Any:
        warps = self._sm.slots.warps
        if not 0 <= slot < len(warps) or warps[slot] is None:
            raise PortError(f"SM {self._sm_id}: no resident warp in slot {slot}")
        return warps[slot]

    def warp(self, slot: int) -> WarpView | None:
        """The view of the warp in `slot` (None when the slot is free)."""
        warps = self._sm.slots.warps
        w = warps[slot] if 0 <= slot < len(warps) else None
        return w.view if w is not None else None

    def resident_warps(self) -> list[WarpView]:
        return [w.view for w in self._sm.slots.warps if w is not None and not w.done]

    def resident_ctas(self) -> list[CTAView]:
        out = []
        for c in self._sm.slots.ctas:
            if c is not None:
                c.view.insts = c.issued()
                out.append(c.view)
        return out

    def cta_insts(self, cta_slot: int) -> int:
        """Warp instructions the CTA in `cta_slot` has issued so far."""
        c = self._sm.slots.ctas[cta_slot]
        if c is None:
            raise PortError(f"SM {self._sm_id}: no resident CTA in slot {cta_slot}")
        return c.issued()

    def warp_pc(self, slot: int) -> int:
        """Static index of the warp's next instruction (-1 when it has finished)."""
        w = self._warp(slot)
        return -1 if w.done or w.pos >= w.n else w.pcs[w.pos]

    def blocked_on(self, slot: int) -> str:
        """Why the warp cannot issue now ("" when it can): memory, scoreboard, barrier, fetch, hold."""
        return self._sm.issue.block_reason(self._warp(slot))

    def live_registers(self, slot: int) -> int:
        """32-bit registers per thread live before the warp's next instruction (the
        analyses' GPU-aware liveness; a context switch needs only these), at most the
        registers the RF reserves: under sm.register_count = 'ptxas_exact' the PTX's
        allocation may hold more values live than ptxas's count, values the card's code
        does not keep in registers, so there is no more state to save than it reserves."""
        w = self._warp(slot)
        pc = -1 if w.pos >= w.n else w.pcs[w.pos]
        return min(w.run.static.live_regs(pc), w.run.kres.regs_per_thread)

    def kernel(self, kid: int) -> KernelInfo:
        return self._gpu.kernel_info(kid)

    def dispatch_group(self, kid: int, cta_index: int) -> DispatchGroup | None:
        """The group the CTA scheduler dispatched CTA `cta_index` of launch `kid` to this
        SM in (`GPUPort.group_ctas`, e.g. a BCS block); None when it dispatched the CTA
        alone, or to another SM."""
        g = self._gpu.dispatch_groups.get((kid, cta_index))
        return g if g is not None and g.sm == self._sm_id else None

    # ------------------------------------------------------------ warp holds

    def hold_warp(self, slot: int) -> None:
        """Keep the warp from issuing until `release_warp` (this extension point's bit)."""
        w = self._warp(slot)
        if not w.holds & self._bit:
            w.holds |= self._bit
            self._sm.issue.update_ready(w)

    def release_warp(self, slot: int) -> None:
        warps = self._sm.slots.warps
        w = warps[slot] if 0 <= slot < len(warps) else None
        if w is None or not w.holds & self._bit:
            return
        w.holds &= ~self._bit
        self._sm.issue.update_ready(w)
        self._sm.wake()

    def hold_warp_until(self, slot: int, cycle: int) -> None:
        """Hold the warp; it may issue again from `cycle`."""
        w = self._warp(slot)
        self.hold_warp(slot)
        self._sm.add_timer(max(cycle, self.now() + 1), self._release_if_same, w)

    def _release_if_same(self, w: Any, now: int) -> None:
        if self._sm.slots.warps[w.slot] is w:
            self.release_warp(w.slot)

    def held(self, slot: int) -> bool:
        """Whether this extension point holds the warp."""
        return bool(self._warp(slot).holds & self._bit)

    # ------------------------------------------------------------ CTA dispatch

    def hold_dispatch(self) -> None:
        """No further CTA is dispatched to this SM until `release_dispatch`."""
        self._sm.slots.dispatch_holds |= self._bit

    def release_dispatch(self) -> None:
        slots = self._sm.slots
        if slots.dispatch_holds & self._bit:
            slots.dispatch_holds &= ~self._bit
            self._gpu.redispatch()

    def set_cta_limit(self, kid: int, limit: int | None) -> None:
        """At most `limit` CTAs of kernel `kid` resident on this SM (None: no limit)."""
        limits = self._sm.slots.limits
        if limit is None:
            limits.pop(kid, None)
        else:
            if limit < 0:
                raise PortError(f"CTA limit must be >= 0, got {limit}")
            limits[kid] = int(limit)
        self._gpu.redispatch()

    def cta_limit(self, kid: int) -> int | None:
        return self._sm.slots.limits.get(kid)

    def resident_of(self, kid: int) -> int:
        """CTAs of kernel `kid` resident on (or arriving at) this SM."""
        return self._sm.slots.by_kernel.get(kid, 0)

    def resources_changed(self) -> None:
        """The allocator freed resources outside a CTA retirement (e.g. a finished
        warp's registers): admit waiting warps of partial CTAs, retry dispatch."""
        self._sm.slots.grant_waiting(self.now())
        self._sm.wake()
        self._gpu.redispatch()

    # ------------------------------------------------------------ time

    def wake_at(self, cycle: int, tag: Any = None) -> None:
        """Call the plug-in's `on_timer(tag, cycle)` at the start of this SM's tick at
        `cycle` (at the next cycle if `cycle` is not in the future)."""
        handler = getattr(self.owner, "on_timer", None)
        if handler is None:
            raise PortError(f"{type(self.owner).__name__} set a timer but defines no on_timer(tag, now)")
        self._sm.add_timer(max(cycle, self.now() + 1), handler, tag)

    # ------------------------------------------------------------ functional units

    def unit_free_at(self, unit: str, sched: int = 0) -> int:
        """Earliest cycle a pipeline of `unit`'s class accepts an instruction."""
        return self._sm.units.free_at(sched, unit)

    def occupy_unit(self, unit: str, cycles: int, sched: int = 0, lanes: int | None = None) -> int:
        """Occupy a pipeline of `unit`'s class for `cycles` cycles from when it is free
        (whole unit), or only `lanes` (a lane mask) from now; returns the start cycle.
        Instructions wait for a busy unit, or for reserved lanes their active lanes use."""
        if cycles <= 0:
            raise PortError(f"occupy_unit: cycles must be positive, got {cycles}")
        now = self.now()
        units = self._sm.units
        if lanes is None:
            return units.occupy(sched, unit, now, cycles)
        units.hold_lanes(sched, unit, lanes, now + cycles)
        return now

    def stall_issue(self, sched: int, cycles: int = 1) -> None:
        """Warp scheduler `sched` issues nothing in the next `cycles` cycles (after the
        current one): e.g. a checker whose replay queue is full. Overlapping stalls end
        at the latest end; they do not add up. The stalled cycles count as issue
        stalls (reason "issue_stalled")."""
        if not 0 <= sched < self._sm.p.n_schedulers:
            raise PortError(f"stall_issue: SM {self._sm.id} has warp schedulers 0..{self._sm.p.n_schedulers - 1}, "
                            f"not {sched}")
        if cycles <= 0:
            raise PortError(f"stall_issue: cycles must be positive, got {cycles}")
        self._sm.issue.stall(sched, int(cycles), self.now())

    def delay_writeback(self, cycles: int) -> None:
        """From `on_instr_issued`: write the issued ALU instruction's result `cycles`
        later (a dependent instruction waits, e.g. for a redundant check)."""
        if cycles < 0:
            raise PortError(f"delay_writeback: cycles must be >= 0, got {cycles}")
        self._sm.issue.wb_delay += cycles

    # ------------------------------------------------------------ memory

    def backing_store(self, name: str, nbytes: int) -> int:
        """Reserve `nbytes` of off-chip backing store (spills, saved contexts) for this
        SM; returns its base address (line-aligned, outside device memory)."""
        return self._gpu.backing_store(self._sm_id, name, nbytes)

    def can_request(self) -> bool:
        """Whether `mem_request` accepts another request now."""
        return self._sm.ldst.can_request()

    def mem_request(self, kind: str, address: int, nbytes: int, on_done: Callable[[int], Any] | None = None,
                    cached: bool = True) -> None:
        """Load ("read") or store ("write") `nbytes` at `address` through the SM's L1
        port, contending with the warps' own accesses; `on_done(cycle)` is called when
        the data is usable (loads) or the last line has been sent (stores)."""
        if kind not in (READ, WRITE):
            raise PortError(f"mem_request kind must be '{READ}' or '{WRITE}', not {kind!r}")
        ldst = self._sm.ldst
        if not ldst.can_request():
            raise PortError(f"SM {self._sm_id}: the L1 port's request queue is full "
                            f"({ldst.request_queue_entries} entries); check can_request() first")
        ldst.request(kind, address, nbytes, on_done, cached)
        self._sm.wake()

    def smem_access(self, cycles: int = 1) -> int:
        """Use the shared-memory banks for `cycles` cycles (scratchpad port contention
        with shared-memory instructions); returns the cycle the access completes."""
        if cycles <= 0:
            raise PortError(f"smem_access: cycles must be positive, got {cycles}")
        return self._sm.ldst.reserve_smem(self.now(), cycles)

    def bypass_l1(self, kid: int, on: bool = True) -> None:
        """Send kernel `kid`'s global loads past this SM's L1 data cache (or not). The
        L1 cannot serve data again while contexts are parked in it (`reserve("l1")`)."""
        if on:
            self._sm.ldst.bypass.add(kid)
        else:
            if self._reserved["l1"]:
                raise PortError(f"SM {self._sm_id}: bypass_l1({kid}, on=False) while {self._reserved['l1']} B of "
                                "the L1 hold contexts (reserve('l1')); unreserve them first")
            self._sm.ldst.bypass.discard(kid)

    # ------------------------------------------------------------ on-chip storage for contexts

    def rf_geometry(self) -> RFGeometry:
        """Banks, bytes per bank, subarrays per bank and subarray bytes of this SM's
        register file (`sm.registers`, `sm.rf_banks`, `sm.rf_subarray_bytes`)."""
        s = self._gpu.cfg.sm
        bank = s.register_file_bytes // s.rf_banks
        return RFGeometry(s.rf_banks, bank, bank // s.rf_subarray_bytes, s.rf_subarray_bytes)

    def capacity(self, storage: str) -> int:
        """Bytes of `storage` ("rf", "smem", "l1") in this SM; the L1's for the launches
        running now (a unified array's carveout sizes it per batch: l1d.shared_carveouts_kb)."""
        cfg = self._gpu.cfg
        if storage == "rf":
            return cfg.sm.registers * 4
        if storage == "smem":
            return cfg.sm.shared_bytes
        if storage == "l1":
            if not cfg.l1d.enabled:
                return 0
            if isinstance(self._sm, _SMNotBuilt):   # (asked while plug-ins are built: before any launch)
                return cfg.l1d.size_kb * 1024
            return self._sm.ldst.l1d.size_bytes   # what this batch's carveout leaves (timing/carveout.py)
        raise PortError(f"unknown storage {storage!r} (storages: {', '.join(STORAGES)})")

    def spare_bytes(self, storage: str) -> int:
        """Bytes of `storage` neither allocated to resident CTAs nor reserved by this plug-in."""
        used = self._sm.allocator.usage().get(storage, 0)
        return self.capacity(storage) - used - self._reserved[storage]

    def l1_bypassed(self) -> bool:
        """Whether this SM's L1 data cache holds no data: `l1d.bypass_global`, or every
        running launch's loads bypass it here (`bypass_l1`). Only then may plug-in
        state be parked in it (`reserve("l1")`, as GPUDuet §6.4 does)."""
        ldst = self._sm.ldst
        if ldst.bypass_global:
            return True
        running = self._gpu.running
        return bool(running) and all(r.kid in ldst.bypass for r in running)

    def reserve(self, storage: str, nbytes: int) -> None:
        """Account `nbytes` of spare `storage` as holding plug-in state (a saved context).
        The L1 only while it is bypassed for data (`l1_bypassed()`)."""
        if storage == "l1" and nbytes > 0 and not self.l1_bypassed():
            raise PortError(f"SM {self._sm_id}: reserve('l1', {nbytes}) from the {self.point} plug-in: the L1 data "
                            "cache holds contexts only while it is bypassed for data (GPUDuet §6.4): call "
                            "bypass_l1(kid) for every running launch first, or set l1d.bypass_global")
        if nbytes > self.spare_bytes(storage):
            raise PortError(f"SM {self._sm_id}: {nbytes} B do not fit in the spare {storage} "
                            f"({self.spare_bytes(storage)} B)")
        self._reserved[storage] += nbytes

    def unreserve(self, storage: str, nbytes: int) -> None:
        if nbytes > self._reserved.get(storage, 0):
            raise PortError(f"SM {self._sm_id}: unreserve of {nbytes} B of {storage}, "
                            f"only {self._reserved.get(storage, 0)} B reserved")
        self._reserved[storage] -= nbytes

    def reserved(self, storage: str) -> int:
        return self._reserved[storage]

    def transfer(self, storage: str, nbytes: int, bytes_per_cycle: int) -> int:
        """Move `nbytes` to or from `storage` through its port at `bytes_per_cycle`;
        the port is busy meanwhile (RF banks, shared-memory banks, or the L1 port).
        Returns the cycle the transfer completes."""
        if bytes_per_cycle <= 0:
            raise PortError(f"transfer: bytes_per_cycle must be positive, got {bytes_per_cycle}")
        cycles = max(1, -(-nbytes // bytes_per_cycle))
        now = self.now()
        sm = self._sm
        if storage == "smem":
            return sm.ldst.reserve_smem(now, cycles)
        if storage == "l1":
            return sm.ldst.reserve_port(now, cycles)
        if storage == "rf":
            return sm.operands.reserve_ports(now, cycles)
        raise PortError(f"unknown storage {storage!r} (storages: {', '.join(STORAGES)})")

    # ------------------------------------------------------------ energy

    def count_energy(self, structure: str, n: int = 1) -> None:
        """Count `n` accesses of an energy structure the plug-in declared: one of its
        own (`energy`) or one of the energy table's that it lists in `structures`."""
        names = self._energy_names
        if names is None:
            names = self._energy_names = declared_energy(self.owner)
        if structure not in names:
            raise PortError(undeclared_energy(self.owner, self.point, structure))
        ev = self._sm.energy_events
        ev[structure] = ev.get(structure, 0) + n

    # ------------------------------------------------------------ sampling

    def settled(self, kid: int) -> None:
        """The plug-in made its last decision for launch `kid`: from now on its behaviour
        is stationary (a plug-in declared `stationarity = "settles"`), so wave sampling
        may start counting stable waves (tlpsim.sampling). Harmless when sampling is off."""
        _settled(self._gpu, self.owner, self.point, kid)


def _settled(gpu: Any, owner: Any, point: str, kid: int) -> None:
    if getattr(type(owner), "stationarity", "non_stationary") != "settles":
        name = getattr(type(owner), "plugin_name", type(owner).__name__)
        raise PortError(f"port.settled({kid}) from the {point} plug-in '{name}': only a plug-in that declares "
                        f"stationarity = \"settles\" reports a last decision point (docs/plugins.md, 'Sampling')")
    gpu.settled.add((id(owner), kid))


def declared_energy(plugin: Any) -> frozenset[str]:
    """Energy structures `plugin` may count: its own (`energy`) and the table's it uses (`structures`)."""
    cls = type(plugin)
    return frozenset(getattr(cls, "energy", {}) or {}) | frozenset(getattr(cls, "structures", {}) or {})


def undeclared_energy(plugin: Any, point: str, structure: str) -> str:
    name = getattr(type(plugin), "plugin_name", type(plugin).__name__)
    have = sorted(declared_energy(plugin))
    return (f"count_energy({structure!r}) from the {point} plug-in '{name}': it declares no such structure "
            f"(declared: {', '.join(have) or 'none'}); add a new one to `energy`, or name the energy table's "
            f"structure in `structures = {{{structure!r}: instances per SM}}` (docs/plugins.md, 'Energy')")


class GPUPort:
    """A GPU-level plug-in's port: every SM's port, launches, GPU timers."""

    def __init__(self, gpu: Any, point: str) -> None:
        self._gpu = gpu
        self.point = point
        self._owner: Any = None
        self._energy_names: frozenset[str] | None = None
        self.sms: list[SMPort] = [SMPort(sm, point, gpu) for sm in gpu.sms]

    @property
    def owner(self) -> Any:
        return self._owner

    @owner.setter
    def owner(self, obj: Any) -> None:
        """The plug-in (set by the builder); its SM ports act for it too."""
        self._owner = obj
        for p in self.sms:
            p.owner = obj

    @property
    def n_sms(self) -> int:
        return len(self.sms)

    def sm(self, k: int) -> SMPort:
        return self.sms[k]

    def now(self) -> int:
        return self._gpu.core.cycle_at(self._gpu.engine.now)

    def kernel(self, kid: int) -> KernelInfo:
        return self._gpu.kernel_info(kid)

    def kernels(self) -> list[KernelInfo]:
        """The launches being simulated (running or waiting to start)."""
        return [self._gpu.kernel_info(r.kid) for r in self._gpu.running]

    def wake_at(self, cycle: int, tag: Any = None) -> None:
        """Call the plug-in's `on_timer(tag, cycle)` at `cycle` (GPU clock component,
        after the SMs' ticks of that cycle)."""
        handler = getattr(self.owner, "on_timer", None)
        if handler is None:
            raise PortError(f"{type(self.owner).__name__} set a timer but defines no on_timer(tag, now)")
        self._gpu.clock.add(max(cycle, self.now() + 1), handler, tag)

    def redispatch(self) -> None:
        """Ask the CTA scheduler for assignments again (after a change only the plug-in knows of)."""
        self._gpu.redispatch()

    def set_cta_limit(self, kid: int, limit: int | None) -> None:
        for p in self.sms:
            p.set_cta_limit(kid, limit)

    def settled(self, kid: int) -> None:
        """As `SMPort.settled`: the plug-in's last decision for launch `kid` is made."""
        _settled(self._gpu, self._owner, self.point, kid)

    # ------------------------------------------------------------ dispatch groups

    def group_ctas(self, sm: int, kid: int, ctas: Sequence[int]) -> DispatchGroup:
        """Declare that CTAs `ctas` of launch `kid` go to SM `sm` as one group (before
        they are dispatched: the SM's plug-ins see the group from `cta_admitted` on,
        through `SMPort.dispatch_group`). A CTA leaves a group it was planned in by
        being grouped again or by `ungroup`; a launch's groups go when it ends."""
        if not 0 <= sm < len(self.sms):
            raise PortError(f"group_ctas: SM {sm} does not exist (SMs 0..{len(self.sms) - 1})")
        if not ctas:
            raise PortError("group_ctas: a group needs at least one CTA")
        groups = self._gpu.dispatch_groups
        self._gpu.next_group = gid = self._gpu.next_group + 1
        g = DispatchGroup(kid, gid, sm, tuple(int(i) for i in ctas))
        for i in g.ctas:
            groups[(kid, i)] = g
        return g

    def ungroup(self, kid: int, cta_index: int) -> None:
        """CTA `cta_index` of launch `kid` is no longer dispatched in the group it was
        planned in (it went elsewhere, or will be planned again)."""
        self._gpu.dispatch_groups.pop((kid, cta_index), None)

    def bypass_l1(self, kid: int, on: bool = True) -> None:
        for p in self.sms:
            p.bypass_l1(kid, on)

    def count_energy(self, structure: str, n: int = 1) -> None:
        names = self._energy_names
        if names is None:
            names = self._energy_names = declared_energy(self._owner)
        if structure not in names:
            raise PortError(undeclared_energy(self._owner, self.point, structure))
        ev = self._gpu.energy_events
        ev[structure] = ev.get(structure, 0) + n

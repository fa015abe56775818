"""Single-ported register banks behind operand-collector units: the arithmetic of
the baseline OperandStorage plug-in (`policies/operands/banked_rf.py`), kept here so
it is compiled with the timing core. The plug-in owns the policy surface
(parameters, registration, statistics record); this class does the per-issue work.

An issued instruction first waits `read_delay` cycles in its class's ID_OC pipeline
register (GPGPU-Sim's issue -> ID_OC -> collector): it needs a collector unit of its
pipeline class free at that cycle, not at issue, and at most `issue_widths[class]`
instructions of a class enter that register per cycle (gpgpu_pipeline_widths ID_OC_*;
0: no limit). Its source registers are read from their banks from the cycle after
it takes the collector, one read per bank per cycle, so two sources in one bank
serialise (a bank conflict); the collector is released when its operands are read
(opndcoll_rfu_t::allocate_cu, allocate_reads, dispatch_ready_cu: a collector
dispatched in a cycle's step is allocated again in the same step). So with GTX480's
2 memory collectors a memory instruction can issue every cycle. Bank of a register: (warp slot +
register) mod banks, as GPGPU-Sim maps it (register mod banks without `use_warp_id`;
with `sub_core` each scheduler owns banks/n_schedulers consecutive banks).

Each bank serves `read_ports` reads and `write_ports` writes per cycle (1R1W banks by
default): a writeback whose bank's write ports are taken that cycle completes the
next cycle with a free port, and its registers stay pending until then.

With `writes_block_reads` (GPGPU-Sim's single-ported banks: `opndcoll_rfu_t::writeback`
allocates the bank for the cycle before `allocate_reads` grants reads, which skip the
banks a write holds) a write also takes one of its bank's read ports in its cycle, ahead
of operand reads. Reads are booked when an instruction issues, so the writes are booked
when they are scheduled (`book_write`: at issue for a pipeline's result, when the data
is due for the LD/ST unit's), and a read skips the cycles its bank's writes fill. A write
booked after a read took its bank's cycle leaves that read alone (GPGPU-Sim would delay
the read): it needs a write due fewer cycles ahead than a read is booked, e.g. a fill's
two writeback stages against a read already delayed by a conflict; an L1 hit, due the
cycle after it is scheduled, meets no read (GPGPU-Sim writes no bank for it either).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from librt.vecs import append, vec
from mypy_extensions import i64

from tlpsim.timing.static import UNIT_IDS


@dataclass
class OperandStats:
    """An operand storage's statistics (compiled with the timing core: the banks
    count into it on every access)."""

    reads: int = 0            # 32-lane register reads
    writes: int = 0
    bank_conflict_cycles: int = 0
    collector_full: int = 0   # issue attempts refused for lack of a collector unit
    subarray_on_cycles: int = 0   # sum over RF subarrays of powered core cycles (when gates_subarrays)
    subarray_wakeups: int = 0     # gated subarrays woken
    events: dict[str, int] = field(default_factory=dict)  # added structure -> accesses (energy-table names)


class Collectors:
    """The cycles one class's operand collectors are released (free: not after now),
    unboxed; one object, so a pool shared by several classes stays one."""

    def __init__(self, n: int) -> None:
        self.release = vec[i64]([0] * n)


class RegisterBanks:
    def __init__(self, n_banks: int, collectors: dict[str, int], stats: OperandStats | None = None, read_ports: int = 1,
                 write_ports: int = 1, use_warp_id: bool = True, n_schedulers: int = 1,
                 sub_core: bool = False, shared_collectors: bool = False, read_delay: int = 0,
                 issue_widths: dict[str, int] | None = None, writes_block_reads: bool = False) -> None:
        self.n_banks = n_banks
        # per bank, unboxed (set per operand read and write: docs/compiled-core.md)
        self.bank_free = vec[i64]([0] * n_banks)  # first cycle each bank has a free read port
        self.bank_reads = vec[i64]([0] * n_banks)  # reads booked in that cycle (read_ports > 1)
        self.read_ports = read_ports
        self.write_free = vec[i64]([0] * n_banks)  # first cycle each bank has a free write port
        self.bank_writes = vec[i64]([0] * n_banks)
        self.write_ports = write_ports
        self.shift = 1 if use_warp_id else 0
        self.first_read = 1 + read_delay  # first operand read, cycles after issue (collector allocation first)
        self.alloc_delay = read_delay     # issue -> the cycle the instruction takes its collector (ID_OC register)
        # sub-core: scheduler s owns banks [s*per, (s+1)*per)
        self.per_sched = n_banks // n_schedulers if sub_core else n_banks
        self.sched_base = [s * self.per_sched if sub_core else 0 for s in range(max(n_schedulers, 1))]
        self.cap: dict[str, int] = dict(collectors)
        for unit, n in self.cap.items():
            if n < 1:
                raise ValueError(f"operand collectors for '{unit}': {n} (at least 1)")
        # per class, the cycle each of its collectors is released (free: not after now);
        # generic collectors (not specialized) are one pool every class draws from
        pool = Collectors(max(self.cap.values(), default=0))
        self.busy: dict[str, Collectors] = {k: (pool if shared_collectors else Collectors(n))
                                            for k, n in self.cap.items()}
        # the same, indexed by StaticInstr.unit_id (None: a class without collectors)
        by_id = sorted(UNIT_IDS, key=lambda u: UNIT_IDS[u])
        self.busy_by_id: list[Collectors | None] = [self.busy.get(u) for u in by_id]
        self.cap_by_id: list[int] = [self.cap.get(u, 0) for u in by_id]
        self._collector_lists: list[Collectors] = list({id(t): t for t in self.busy.values()}.values())
        # per class: instructions entering its ID_OC register per cycle (0: unlimited), and
        # the cycle and count of the last entries
        widths = issue_widths or {}
        self.width_by_id: list[int] = [max(widths.get(u, 0), 0) for u in by_id]
        self.entry_cycle = vec[i64]([-1] * len(by_id))
        self.entry_count = vec[i64]([0] * len(by_id))
        self.stats = stats if stats is not None else OperandStats()  # the plug-in's
        # writes take a read port in their cycle: the banks written at each future cycle (a bit per bank)
        self.writes_block_reads = writes_block_reads
        self.write_booked: dict[int, int] = {}

    def bank_of(self, slot: int, sched: int, reg: int) -> int:
        return (slot * self.shift + reg) % self.per_sched + self.sched_base[sched]

    @staticmethod
    def _free_collector(taken: Collectors, cap: int, now: int) -> int:
        """Index of a free collector in `taken` if fewer than `cap` are busy, else -1."""
        k = -1
        n_busy = 0
        release = taken.release
        for i in range(len(release)):
            if release[i] > now:
                n_busy += 1
            elif k < 0:
                k = i
        return k if n_busy < cap else -1

    def can_issue(self, slot: int, sched: int, unit: str, src_regs: tuple[int, ...], now: int) -> bool:
        taken = self.busy.get(unit)
        if taken is not None and self._free_collector(taken, self.cap[unit], now + self.alloc_delay) < 0:
            self.stats.collector_full += 1
            return False
        uid = UNIT_IDS.get(unit, -1)
        if uid >= 0 and not self._entry_free(uid, now):
            self.stats.collector_full += 1
            return False
        return True

    def read(self, slot: int, sched: int, unit: str, src_regs: tuple[int, ...], now: int) -> int:
        """The operand reads, taking a collector (after can_issue said one is free)."""
        done = self._read_banks(slot, sched, src_regs, now)
        uid = UNIT_IDS.get(unit, -1)
        if uid >= 0:
            self._enter(uid, now)
        taken = self.busy.get(unit)
        if taken is not None:
            k = self._free_collector(taken, len(taken.release), now + self.alloc_delay)
            if k >= 0:
                taken.release[k] = done
            else:  # called without can_issue: one more collector
                taken.release = append(taken.release, done)
        return done

    def try_read(self, slot: int, sched: int, unit: str, src_regs: tuple[int, ...], now: int) -> int | None:
        """can_issue + read in one call (once per issued instruction)."""
        done = self._take(UNIT_IDS.get(unit, -1), self.busy.get(unit), self.cap.get(unit, 0), slot, sched,
                          src_regs, now)
        return done if done >= 0 else None

    def try_read_id(self, slot: int, sched: int, unit_id: int, src_regs: tuple[int, ...], now: int) -> int | None:
        """try_read() for the class with index `unit_id` (StaticInstr.unit_id)."""
        done = self.take_id(slot, sched, unit_id, src_regs, now)
        return done if done >= 0 else None

    def take_id(self, slot: int, sched: int, unit_id: int, src_regs: tuple[int, ...], now: int) -> int:
        """try_read_id() with -1 for a refusal (an unboxed result for the issue stage)."""
        return self._take(unit_id, self.busy_by_id[unit_id], self.cap_by_id[unit_id], slot, sched, src_regs, now)

    def _entry_free(self, uid: int, now: int) -> bool:
        """Whether class `uid`'s ID_OC register takes another instruction this cycle."""
        width = self.width_by_id[uid]
        return width == 0 or self.entry_cycle[uid] != now or self.entry_count[uid] < width

    def _enter(self, uid: int, now: int) -> None:
        if self.entry_cycle[uid] != now:
            self.entry_cycle[uid] = now
            self.entry_count[uid] = 1
        else:
            self.entry_count[uid] = int(self.entry_count[uid]) + 1

    def _take(self, uid: int, taken: Collectors | None, cap: int, slot: int, sched: int, src_regs: tuple[int, ...],
              now: int) -> int:
        """A collector from `taken` (its class's release cycles; None: no collectors) if
        fewer than `cap` are taken when the instruction leaves the ID_OC register, a slot
        in that register this cycle, and the operand reads: the cycle they are done, or
        -1 when refused."""
        k = -1
        if taken is not None:
            k = self._free_collector(taken, cap, now + self.alloc_delay)
            if k < 0:
                self.stats.collector_full += 1
                return -1
        if uid >= 0 and not self._entry_free(uid, now):
            self.stats.collector_full += 1
            return -1
        done = self._read_banks(slot, sched, src_regs, now)
        if uid >= 0:
            self._enter(uid, now)
        if taken is not None:
            taken.release[k] = done
        return done

    def _read_banks(self, slot: int, sched: int, src_regs: tuple[int, ...], now: int) -> int:
        if self.writes_block_reads:
            return self._read_banks_after_writes(slot, sched, src_regs, now)
        per = self.per_sched
        base = self.sched_base[sched]
        shift = slot * self.shift
        bank_free = self.bank_free
        ports = self.read_ports
        first_free = done = now + self.first_read
        conflicts = 0
        for r in src_regs:
            b = (shift + r) % per + base
            t = int(bank_free[b])
            if t > first_free:
                conflicts += t - first_free
            else:
                if ports > 1 and t < first_free:
                    self.bank_reads[b] = 0
                t = first_free
            if ports == 1:
                bank_free[b] = t + 1
            else:  # book one of the cycle's ports; the bank moves on once all are taken
                n = int(self.bank_reads[b]) + 1
                if n >= ports:
                    bank_free[b] = t + 1
                    self.bank_reads[b] = 0
                else:
                    bank_free[b] = t
                    self.bank_reads[b] = n
            if t + 1 > done:
                done = t + 1
        st = self.stats
        if conflicts:
            st.bank_conflict_cycles += conflicts
        st.reads += len(src_regs)
        return done

    def _read_banks_after_writes(self, slot: int, sched: int, src_regs: tuple[int, ...], now: int) -> int:
        """_read_banks() when writes take a read port: a read skips a cycle whose booked
        write leaves its bank no read port."""
        per = self.per_sched
        base = self.sched_base[sched]
        shift = slot * self.shift
        bank_free = self.bank_free
        bank_reads = self.bank_reads
        booked = self.write_booked
        ports = self.read_ports
        first_free = done = now + self.first_read
        conflicts = 0
        for r in src_regs:
            b = (shift + r) % per + base
            bit = 1 << b
            t = int(bank_free[b])
            n = int(bank_reads[b])  # reads booked in cycle t so far
            if t < first_free:
                t = first_free
                n = 0
            cap = ports - 1 if booked.get(t, 0) & bit else ports
            while n >= cap:
                t += 1
                n = 0
                cap = ports - 1 if booked.get(t, 0) & bit else ports
            n += 1
            if n >= cap:
                bank_free[b] = t + 1
                bank_reads[b] = 0
            else:
                bank_free[b] = t
                bank_reads[b] = n
            if t > first_free:
                conflicts += t - first_free
            if t + 1 > done:
                done = t + 1
        st = self.stats
        if conflicts:
            st.bank_conflict_cycles += conflicts
        st.reads += len(src_regs)
        return done

    def book_write(self, slot: int, sched: int, dst_regs: tuple[int, ...], cycle: int) -> None:
        """The destinations are due to be written at `cycle` (with writes_block_reads):
        operand reads booked from now on leave their banks' ports to them in that cycle."""
        if not self.writes_block_reads:
            return
        per = self.per_sched
        base = self.sched_base[sched]
        shift = slot * self.shift
        mask = 0
        for r in dst_regs:
            mask |= 1 << ((shift + r) % per + base)
        if mask:
            booked = self.write_booked
            booked[cycle] = booked.get(cycle, 0) | mask

    def write(self, slot: int, sched: int, dst_regs: tuple[int, ...], cycle: int) -> int:
        """Write the destinations at `cycle`; returns the cycle the last write happens
        (later than `cycle` when a bank's write ports are taken)."""
        per = self.per_sched
        base = self.sched_base[sched]
        shift = slot * self.shift
        free, count, ports = self.write_free, self.bank_writes, self.write_ports
        done = cycle
        if self.writes_block_reads:  # reads are booked for later cycles only: forget this one's writes
            booked = self.write_booked
            booked.pop(cycle, None)
            if len(booked) > 1024:  # (and any left by writebacks dropped with their warp)
                self.write_booked = {c: m for c, m in booked.items() if c > cycle}
        for r in dst_regs:
            b = (shift + r) % per + base
            t = int(free[b])
            if t < cycle:
                t = cycle
                count[b] = 0
            n = int(count[b]) + 1
            if n >= ports:
                free[b] = t + 1
                count[b] = 0
            else:
                free[b] = t
                count[b] = n
            if t > done:
                done = t
        self.stats.writes += len(dst_regs)
        return done

    def next_event(self, now: int) -> int | None:
        """The earliest cycle after `now` at which an issue may take a collector that is
        busy now (its release, less the ID_OC cycles an issue spends before taking it)."""
        d = self.alloc_delay
        best = -1
        for cycles in self._collector_lists:
            for t in cycles.release:
                t -= d
                if t > now and (best < 0 or t < best):
                    best = t
        return best if best >= 0 else None

    def reserve_ports(self, now: int, cycles: int) -> int:
        """Every bank's read and write ports are busy for `cycles` cycles from when each
        is free (not before now): bulk moves of register state; returns the last end."""
        end = now
        for b in range(self.n_banks):
            t = int(self.bank_free[b])
            t = t if t > now else now
            self.bank_free[b] = t + cycles
            self.bank_reads[b] = 0
            w = int(self.write_free[b])
            w = w if w > now else now
            self.write_free[b] = w + cycles
            self.bank_writes[b] = 0
            if t + cycles > end:
                end = t + cycles
        return end

"""A GDDR DRAM channel: address decoding, per-bank timing state and FR-FCFS scheduling.

The model follows GPGPU-Sim's `dram_t` (dram.cc, dram_sched.cc, gpu-sim.h):

* Timing parameters are in DRAM command-clock cycles and use GPGPU-Sim's names
  (`gpgpu_dram_timing_opt`: CCD RRD RCD RAS RP RC CL WL CDLR WR CCDL RTPL). Derived
  as in `memory_config::init`: tRCDWR = tRCD - (tWL + 1) (a write may follow ACT
  sooner than a read), tRTW = tCL + tBurst + 2 - tWL (read-to-write bus turnaround),
  tWTR = tWL + tBurst + tCDLR (write-to-read), tWTP = tWL + tBurst + tWR (write
  recovery before PRE), read-to-PRE = tBurst, tBurst = burst_length / data_rate.
* One command (ACT, PRE, RD or WR) per cycle on the command bus. A column command
  moves one *atom* of burst_length x bus_width_bytes x chips_per_channel bytes
  (GPGPU-Sim `dram_atom_size = BL * busW * gpu_n_mem_per_ctrlr`: 8 x 4 x 2 = 64 B
  for the GTX480, 32 B for a single x32 chip) and occupies the data bus tBurst
  cycles, starting tCL (read) or tWL (write) cycles after the command. A request
  takes one column command per atom-aligned chunk of its 128-byte line holding a
  requested 32-byte sector (GPGPU-Sim: ceil(request bytes / atom)), or with
  `sector_columns` a read takes one per requested sector: GPGPU-Sim's sectored L2
  splits a line request into 32-byte sector requests, each a full burst (its
  write-backs of dirty lines still move whole atoms).
* Bank groups (GDDR5): column commands to the same group are tCCDL apart, to any
  bank tCCD apart; a read blocks PRE in its whole group for tRTPL. The group of a
  bank is its low bits (GTX480 `dram_bnkgrp_indexing_policy 1`) or high bits.
* Each bank serves one request at a time until its last column command (GPGPU-Sim's
  per-bank `mrq`); rows stay open (open-row policy). FR-FCFS picks a bank's next
  request as the oldest hit to the open row, else the bank's oldest request, and
  on the command bus issues the oldest ready column command (row hits) before the
  oldest ready ACT/PRE (Rixner et al., ISCA 2000). FCFS hands requests to banks
  strictly in arrival order (head-of-line blocking) and issues the oldest ready
  command of any kind.
* A request completes when its last data beat has crossed the bus: a read issued
  at cycle t with one burst completes at t + tCL + tBurst. Reads then go back on
  `out_queue` as replies; writes complete silently; atomics (executed by the L2)
  are served as reads. The number of reads in flight or waiting for room in
  `out_queue` is capped by `return_queue_size` (GPGPU-Sim's DRAM return queue).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from tlpsim.timing.engine import ClockDomain, Component
from tlpsim.timing.mem_types import WRITE, MemRequest, popcount
from tlpsim.timing.queues import TimedQueue

SECTOR_BYTES: Final = 32
_INF: Final = 1 << 62
TIMING_KEYS = ("tCCD", "tCCDL", "tRRD", "tRCD", "tRAS", "tRP", "tRC", "tCL", "tWL", "tCDLR", "tWR", "tRTPL")

# GPGPU-Sim SM2_GTX480 `gpgpu_dram_timing_opt` (Hynix H5GQ1H24AFR GDDR5), 924 MHz command clock.
GTX480_TIMING_OPT = "nbk=16:CCD=2:RRD=6:RCD=12:RAS=28:RP=12:RC=40:CL=12:WL=4:CDLR=5:WR=12:nbkgrp=4:CCDL=3:RTPL=2"


def parse_timing_opt(opt: str) -> dict:
    """Parse a GPGPU-Sim `gpgpu_dram_timing_opt` string ("nbk=16:CCD=2:...") into a dict
    with keys tCCD ... tRTPL plus n_banks and n_bank_groups."""
    out: dict = {}
    for key, _, val in (it.strip().partition("=") for it in opt.replace(";", ":").split(":") if it.strip()):
        key = key.strip()
        name = {"nbk": "n_banks", "nbkgrp": "n_bank_groups"}.get(key, key if key.startswith("t") else "t" + key)
        out[name] = int(val)
    return out


def normalise_timing(timing: dict) -> dict[str, int]:
    """Accept tCCD or GPGPU-Sim CCD spellings; every key of TIMING_KEYS is required,
    tRCDWR optional (derived if absent); anything else is an error naming the key."""
    out: dict[str, int] = {}
    for k, v in timing.items():
        if k in ("n_banks", "n_bank_groups"):
            continue
        name = k if k.startswith("t") else "t" + k
        if name not in TIMING_KEYS and name != "tRCDWR":
            raise ValueError(f"unknown DRAM timing parameter {k!r}; expected {', '.join(TIMING_KEYS)}")
        if int(v) < 0:
            raise ValueError(f"DRAM timing parameter {k!r} must be >= 0, got {v}")
        out[name] = int(v)
    missing = [k for k in TIMING_KEYS if k not in out]
    if missing:
        raise ValueError(f"missing DRAM timing parameter(s): {', '.join(missing)}")
    return out


# address mapping lives in addrmap.py (re-exported here for existing imports)
from tlpsim.timing.addrmap import AddressMap, DramAddr  # noqa: E402,F401

# ------------------------------------------------------------------ channel

@dataclass
class DramStats:
    """Counters of one channel. Energy events: activates, precharges, read_bursts,
    write_bursts (column commands) and bytes moved over the data bus."""

    reads: int = 0                 # read requests whose data has been transferred
    writes: int = 0                # write requests completed
    read_bursts: int = 0           # RD commands
    write_bursts: int = 0          # WR commands
    activates: int = 0
    precharges: int = 0
    row_hits: int = 0              # requests finding their row open
    row_misses: int = 0            # requests finding the bank closed (ACT only)
    row_conflicts: int = 0         # requests finding another row open (PRE + ACT)
    bytes: int = 0                 # bytes transferred on the data bus (atoms)
    useful_bytes: int = 0          # bytes requested (32 per sector)
    busy_bus_cycles: int = 0       # data-bus cycles carrying data
    active_cycles: int = 0         # cycles with a request queued, in flight or awaiting its reply slot
    queue_occupancy_sum: int = 0   # sum over cycles of requests held (queued or being issued)
    max_queue_occupancy: int = 0
    reply_stall_cycles: int = 0    # cycles with a finished read waiting for room in out_queue
    read_latency_sum: int = 0      # cycles from acceptance to last data beat, over reads
    bank_activates: list[int] = field(default_factory=list)
    bank_precharges: list[int] = field(default_factory=list)
    bank_reads: list[int] = field(default_factory=list)
    bank_writes: list[int] = field(default_factory=list)
    bank_row_hits: list[int] = field(default_factory=list)

    def utilisation(self, total_cycles: int) -> float:
        """Data-bus utilisation over a run of total_cycles DRAM cycles."""
        return self.busy_bus_cycles / total_cycles if total_cycles else 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        req = self.row_hits + self.row_misses + self.row_conflicts
        d["avg_queue_occupancy"] = self.queue_occupancy_sum / self.active_cycles if self.active_cycles else 0.0
        d["bus_efficiency"] = self.busy_bus_cycles / self.active_cycles if self.active_cycles else 0.0
        d["row_hit_rate"] = self.row_hits / req if req else 0.0
        d["avg_read_latency"] = self.read_latency_sum / self.reads if self.reads else 0.0
        return d


class _Txn:
    __slots__ = ("req", "seq", "bank", "row", "is_write", "bursts", "done_bursts", "arrival")

    def __init__(self, req: Any, seq: int, bank: int, row: int, is_write: bool, bursts: int, arrival: int) -> None:
        self.req, self.seq, self.bank, self.row = req, seq, bank, row
        self.is_write, self.bursts, self.done_bursts, self.arrival = is_write, bursts, 0, arrival


_NO_TXN: Final = _Txn(None, -1, -1, -1, False, 0, -1)  # a bank's `cur` when it serves nothing


class _Bank:
    __slots__ = ("idx", "group", "open_row", "next_act", "next_pre", "next_rd", "next_wr", "cur",
                 "queue", "bins")

    def __init__(self, idx: int, group: int) -> None:
        self.idx, self.group = idx, group
        self.open_row = -1
        self.next_act = self.next_pre = self.next_rd = self.next_wr = 0
        self.cur: _Txn = _NO_TXN
        self.queue: dict[int, _Txn] = {}         # seq -> queued request of this bank, oldest first
        self.bins: dict[int, deque[_Txn]] = {}  # row -> queued requests to that row, oldest first


def _bursts_table(atom: int, per_sector: bool = False) -> list[int]:
    """Column bursts needed for each 4-bit sector mask: the atom-aligned chunks touched,
    or (`per_sector`) one per sector."""
    tab = []
    for mask in range(16):
        if per_sector:
            tab.append(max(1, bin(mask).count("1")))
            continue
        chunks: set[int] = set()
        for s in range(4):
            if (mask >> s) & 1:
                chunks.update(range(s * SECTOR_BYTES // atom, (s * SECTOR_BYTES + SECTOR_BYTES - 1) // atom + 1))
        tab.append(max(1, len(chunks)))
    return tab


class DramChannel(Component):
    """One GDDR channel controller: takes MemRequests from its L2 slice on `in_queue`,
    schedules ACT/PRE/RD/WR under the bank and bus timing constraints, and returns
    read replies on `out_queue` (see the module docstring for the model).

    domain is the DRAM command clock; timing is a dict of TIMING_KEYS in its cycles
    (GPGPU-Sim spellings accepted); bus_width_bytes x chips_per_channel is the data
    bus width (GPGPU-Sim busW x gpgpu_n_mem_per_ctrlr); data_rate is data beats per
    command clock (dram_data_command_freq_ratio); queue_size bounds the requests held
    (queued or being issued); address_map is an AddressMap or a callable returning a
    DramAddr (default: AddressMap.interleaved for one channel); return_queue_size
    defaults to out_queue.capacity; on_complete(req, cycle) is an observation hook
    called when a request's last data beat has crossed the bus. The channel becomes
    in_queue's consumer and out_queue's producer.
    """

    def __init__(self, domain: ClockDomain, channel_id: int, n_banks: int, n_bank_groups: int, row_bytes: int,
                 bus_width_bytes: int, burst_length: int, data_rate: int, timing: dict, scheduler: str,
                 queue_size: int, in_queue: TimedQueue, out_queue: TimedQueue,
                 address_map: AddressMap | Callable[[int], DramAddr] | None = None, chips_per_channel: int = 1,
                 return_queue_size: int | None = None, bank_group_bits: str = "low",
                 on_complete: Callable[[MemRequest, int], None] | None = None, sector_columns: bool = False) -> None:
        super().__init__(domain)
        self.name = f"dram[{channel_id}]"
        for what, ok in ((f"scheduler {scheduler!r}: choices are frfcfs, fcfs", scheduler in ("frfcfs", "fcfs")),
                         (f"bank_group_bits {bank_group_bits!r}: choices are low, high",
                          bank_group_bits in ("low", "high")),
                         (f"n_banks {n_banks} must be a multiple of n_bank_groups {n_bank_groups}",
                          n_bank_groups >= 1 and n_banks >= 1 and n_banks % n_bank_groups == 0),
                         ("queue_size, bus_width_bytes, burst_length, data_rate, chips_per_channel must be >= 1",
                          min(queue_size, bus_width_bytes, burst_length, data_rate, chips_per_channel) >= 1)):
            if not ok:
                raise ValueError(f"{self.name}: {what}")
        self.channel_id = channel_id
        self.n_banks, self.n_bank_groups, self.row_bytes = n_banks, n_bank_groups, row_bytes
        self.scheduler, self.queue_size = scheduler, queue_size
        self._frfcfs = scheduler == "frfcfs"
        self.in_queue, self.out_queue = in_queue, out_queue
        for q, attr in ((in_queue, "consumer"), (out_queue, "producer")):
            other = getattr(q, attr)
            if other is None:
                setattr(q, attr, self)
            elif other is not self:
                raise ValueError(f"queue {q.name}: its {attr} is already {other!r}")
        self.return_queue_size = out_queue.capacity if return_queue_size is None else return_queue_size
        if self.return_queue_size < 1:
            raise ValueError("return_queue_size must be >= 1")
        self.on_complete = on_complete

        self.timing = t = normalise_timing(timing)
        self.tCCD, self.tCCDL, self.tRRD, self.tRCD = t["tCCD"], t["tCCDL"], t["tRRD"], t["tRCD"]
        self.tRAS, self.tRP, self.tRC, self.tCL = t["tRAS"], t["tRP"], t["tRC"], t["tCL"]
        self.tWL, self.tCDLR, self.tWR, self.tRTPL = t["tWL"], t["tCDLR"], t["tWR"], t["tRTPL"]
        self.tBurst = tb = max(1, math.ceil(burst_length / data_rate))
        self.tRCDWR = t.get("tRCDWR", max(1, t["tRCD"] - (t["tWL"] + 1)))
        self.tRTW = t["tCL"] + tb + 2 - t["tWL"]
        self.tWTR = t["tWL"] + tb + t["tCDLR"]
        self.tWTP = t["tWL"] + tb + t["tWR"]
        self.atom_bytes = burst_length * bus_width_bytes * chips_per_channel
        self._bursts = _bursts_table(self.atom_bytes, sector_columns)  # reads
        self._wbursts = _bursts_table(self.atom_bytes)  # writes: the L2 writes back whole atoms

        if address_map is None:
            address_map = AddressMap.interleaved(1, n_banks, row_bytes)
        if isinstance(address_map, AddressMap):
            if address_map.n_banks != n_banks:
                raise ValueError(f"address map decodes {address_map.n_banks} banks, channel has {n_banks}")
            self._check_chip = address_map.n_channels > 1
            self._amap: AddressMap | None = address_map  # (asked natively: per request)
            self._decode: Callable[[int], DramAddr] = address_map.decode
        else:
            self._check_chip = False
            self._amap = None
            self._decode = address_map
        per_grp = n_banks // n_bank_groups
        self.banks = [_Bank(i, i % n_bank_groups if bank_group_bits == "low" else i // per_grp)
                      for i in range(n_banks)]
        self.stats = DramStats(bank_activates=[0] * n_banks, bank_precharges=[0] * n_banks,
                               bank_reads=[0] * n_banks, bank_writes=[0] * n_banks, bank_row_hits=[0] * n_banks)

        self._seq = 0
        self._held = 0                      # requests accepted and not fully issued
        self._serving: list[_Bank] = []     # banks with a current request, oldest request first
        self._idle_with_work: set = set()   # FR-FCFS: banks without a current request but with queued ones
        self._fifo: deque[_Txn] = deque()   # FCFS: requests not yet handed to a bank
        self._done: deque[tuple[int, _Txn]] = deque()  # (completion cycle, txn), increasing
        self._replies: deque[MemRequest] = deque()  # finished reads waiting for room in out_queue
        self._reads_owed = 0                # reads issued whose reply is not yet in out_queue
        self._act_ok = self._col_ok = self._rd_ok = self._wr_ok = self._bus_free = 0
        self._grp_col_ok = [0] * n_bank_groups
        self._grp_pre_ok = [0] * n_bank_groups
        self._timer = -1
        self._period = domain.period_fs

    # -- engine interface

    def busy(self) -> bool:
        return bool(self._held or self._done or self._replies or len(self.in_queue))

    def skipped(self, first: int, last: int) -> None:
        self._account(last - first + 1)

    def tick(self, cycle: int) -> bool:
        now_fs = cycle * self._period
        changed = False
        done = self._done
        if done and done[0][0] <= cycle:
            changed = True
            while done and done[0][0] <= cycle:
                self._complete(done.popleft()[1], cycle, now_fs)
        if self._replies and self._drain(now_fs):
            changed = True
        iq = self.in_queue
        if self._held < self.queue_size and iq.ready(now_fs):
            changed = True
            while self._held < self.queue_size and iq.ready(now_fs):
                self._accept(iq.pop(), cycle)
            self._assign()
        if self._serving:
            bank = self._choose(cycle)
            if bank is not None:
                changed = True
                if bank.open_row == bank.cur.row:
                    self._issue_col(bank, cycle)
                else:
                    self._issue_row(bank, cycle)
        if self._held or self._done or self._replies:  # _account(1), inlined
            s = self.stats
            s.queue_occupancy_sum += self._held
            s.active_cycles += 1
            if self._replies:
                s.reply_stall_cycles += 1
        if changed and (self._replies or (self._held < self.queue_size and iq.ready(now_fs))):
            return True
        # Idle, or no command, completion or acceptance possible before the next
        # event: sleep until it (a timer) or an arrival (its push wakes the channel).
        # Skipping the idle cycles after a command changes nothing: _account
        # back-fills them from the unchanged state.
        nxt = self._next_event()
        if changed and nxt <= cycle + 1:
            return True
        if nxt < _INF and (self._timer <= cycle or nxt < self._timer):
            self._timer = nxt
            if self.engine is not None:
                self.engine.wake_at_time(self, nxt * self._period)
        return False

    # -- bookkeeping

    def _account(self, n: int) -> None:
        s = self.stats
        if self._held:
            s.queue_occupancy_sum += self._held * n
        if self._held or self._done or self._replies:
            s.active_cycles += n
            if self._replies:
                s.reply_stall_cycles += n

    def _accept(self, req: MemRequest, cycle: int) -> None:
        amap = self._amap
        a = amap.decode(req.addr) if amap is not None else self._decode(req.addr)
        if self._check_chip and a.chip != self.channel_id:
            raise ValueError(f"{self.name}: address {req.addr:#x} belongs to channel {a.chip}")
        if not 0 <= a.bank < self.n_banks:
            raise ValueError(f"{self.name}: address {req.addr:#x} decodes to bank {a.bank} of {self.n_banks}")
        is_write = req.kind == WRITE
        bursts = (self._wbursts if is_write else self._bursts)[req.sector_mask & 15]
        txn = _Txn(req, self._seq, a.bank, a.row, is_write, bursts, cycle)
        self._seq += 1
        self._held += 1
        s = self.stats
        s.useful_bytes += SECTOR_BYTES * popcount(req.sector_mask & 15)
        s.max_queue_occupancy = max(s.max_queue_occupancy, self._held)
        if self.scheduler == "fcfs":
            self._fifo.append(txn)
            return
        b = self.banks[a.bank]
        b.queue[txn.seq] = txn
        rb = b.bins.get(a.row)
        if rb is None:
            b.bins[a.row] = rb = deque()
        rb.append(txn)
        if b.cur is _NO_TXN:
            self._idle_with_work.add(b.idx)

    def _assign(self) -> None:
        """Give idle banks their next request."""
        if self.scheduler == "fcfs":
            fifo, banks = self._fifo, self.banks
            while fifo and banks[fifo[0].bank].cur is _NO_TXN:
                txn = fifo.popleft()
                self._start(banks[txn.bank], txn)
            return
        for i in sorted(self._idle_with_work):
            self._start(self.banks[i], self._pick(self.banks[i]))
        self._idle_with_work.clear()

    @staticmethod
    def _pick(b: _Bank) -> _Txn:
        """FR-FCFS within a bank: oldest request to the open row, else the oldest."""
        rb = b.bins.get(b.open_row) if b.open_row >= 0 else None
        if not rb:
            rb = b.bins[b.queue[next(iter(b.queue))].row]
        txn = rb.popleft()
        if not rb:
            del b.bins[txn.row]
        del b.queue[txn.seq]
        return txn

    def _start(self, b: _Bank, txn: _Txn) -> None:
        s = self.stats
        if b.open_row == txn.row:
            s.row_hits += 1
            s.bank_row_hits[b.idx] = s.bank_row_hits[b.idx] + 1
        elif b.open_row < 0:
            s.row_misses += 1
        else:
            s.row_conflicts += 1
        b.cur = txn
        # insert in order of the requests' arrival (bisect.insort's place, after equal
        # keys; by hand, as a key function is a Python-level call in the compiled core)
        serving = self._serving
        seq = txn.seq
        lo, hi = 0, len(serving)
        while lo < hi:
            mid = (lo + hi) // 2
            if seq < serving[mid].cur.seq:
                hi = mid
            else:
                lo = mid + 1
        serving.insert(lo, b)

    # -- command scheduling

    def _col_time(self, b: _Bank, txn: _Txn) -> int:
        """Earliest cycle the current request of open bank b can issue its next RD/WR."""
        if txn.is_write:
            t = max(max(b.next_wr, self._wr_ok), self._bus_free - self.tWL)
        else:
            if txn.done_bursts == 0 and self._reads_owed >= self.return_queue_size:
                return _INF  # woken by a completion or by out_queue draining
            t = max(max(b.next_rd, self._rd_ok), self._bus_free - self.tCL)
        return max(max(t, self._col_ok), self._grp_col_ok[b.group])

    def _row_time(self, b: _Bank) -> int:
        """Earliest cycle bank b can take its ACT (closed) or PRE (wrong row open)."""
        if b.open_row < 0:
            return max(b.next_act, self._act_ok)
        return max(b.next_pre, self._grp_pre_ok[b.group])

    def _choose(self, cycle: int) -> _Bank | None:
        """The bank whose command issues this cycle. FR-FCFS: the oldest ready column
        command, else the oldest ready ACT/PRE; FCFS: the oldest ready command."""
        col_open = cycle >= self._col_ok  # tCCD bounds every column command
        if self._frfcfs:
            # _col_time(b, txn) <= cycle and _row_time(b) <= cycle, spelled out as
            # comparisons (this runs every busy DRAM cycle)
            if col_open:
                rd_ready = self._rd_ok <= cycle and self._bus_free - self.tCL <= cycle
                wr_ready = self._wr_ok <= cycle and self._bus_free - self.tWL <= cycle
                owed_full = self._reads_owed >= self.return_queue_size
                gcol = self._grp_col_ok
                for b in self._serving:
                    txn = b.cur
                    if b.open_row != txn.row or gcol[b.group] > cycle:
                        continue
                    if txn.is_write:
                        if wr_ready and b.next_wr <= cycle:
                            return b
                    elif rd_ready and b.next_rd <= cycle and not (owed_full and txn.done_bursts == 0):
                        return b
            act_ok = self._act_ok <= cycle
            gpre = self._grp_pre_ok
            for b in self._serving:
                if b.open_row != b.cur.row:
                    if b.open_row < 0:
                        if act_ok and b.next_act <= cycle:
                            return b
                    elif b.next_pre <= cycle and gpre[b.group] <= cycle:
                        return b
            return None
        if self.scheduler == "fcfs":
            for b in self._serving:
                if b.open_row == b.cur.row:
                    if col_open and self._col_time(b, b.cur) <= cycle:
                        return b
                elif self._row_time(b) <= cycle:
                    return b
            return None
        if col_open:
            for b in self._serving:
                if b.open_row == b.cur.row and self._col_time(b, b.cur) <= cycle:
                    return b
        for b in self._serving:
            if b.open_row != b.cur.row and self._row_time(b) <= cycle:
                return b
        return None

    def _next_event(self) -> int:
        """Earliest future cycle at which a command or a completion can happen."""
        nxt = self._done[0][0] if self._done else _INF
        # min over the serving banks of _col_time / _row_time, with the bank-independent
        # terms of their max() taken once (called on every DRAM tick)
        col_ok = self._col_ok
        bus = self._bus_free
        rd_base = max(max(self._rd_ok, bus - self.tCL), col_ok)
        wr_base = max(max(self._wr_ok, bus - self.tWL), col_ok)
        owed_full = self._reads_owed >= self.return_queue_size
        gcol, gpre, act_ok = self._grp_col_ok, self._grp_pre_ok, self._act_ok
        for b in self._serving:
            txn = b.cur
            if b.open_row == txn.row:
                if txn.is_write:
                    t = max(max(b.next_wr, wr_base), gcol[b.group])
                elif owed_full and txn.done_bursts == 0:
                    continue  # _INF: woken by a completion or by out_queue draining
                else:
                    t = max(max(b.next_rd, rd_base), gcol[b.group])
            elif b.open_row < 0:
                t = max(b.next_act, act_ok)
            else:
                t = max(b.next_pre, gpre[b.group])
            if t < nxt:
                nxt = t
        return nxt

    def _issue_row(self, b: _Bank, cycle: int) -> None:
        s = self.stats
        if b.open_row < 0:
            b.open_row = b.cur.row
            b.next_rd = cycle + self.tRCD
            b.next_wr = cycle + self.tRCDWR
            b.next_pre = max(b.next_pre, cycle + self.tRAS)
            b.next_act = cycle + self.tRC
            self._act_ok = cycle + self.tRRD
            s.activates += 1
            s.bank_activates[b.idx] = s.bank_activates[b.idx] + 1
        else:
            b.open_row = -1
            b.next_act = max(b.next_act, cycle + self.tRP)
            s.precharges += 1
            s.bank_precharges[b.idx] = s.bank_precharges[b.idx] + 1

    def _issue_col(self, b: _Bank, cycle: int) -> None:
        s, txn, g = self.stats, b.cur, b.group
        self._col_ok = cycle + self.tCCD
        self._grp_col_ok[g] = cycle + self.tCCDL
        if txn.is_write:
            self._rd_ok = max(self._rd_ok, cycle + self.tWTR)
            b.next_pre = max(b.next_pre, cycle + self.tWTP)
            start = cycle + self.tWL
            s.write_bursts += 1
            s.bank_writes[b.idx] = s.bank_writes[b.idx] + 1
        else:
            if txn.done_bursts == 0:
                self._reads_owed += 1
            self._wr_ok = max(self._wr_ok, cycle + self.tRTW)
            b.next_pre = max(b.next_pre, cycle + self.tBurst)
            self._grp_pre_ok[g] = max(self._grp_pre_ok[g], cycle + self.tRTPL)
            start = cycle + self.tCL
            s.read_bursts += 1
            s.bank_reads[b.idx] = s.bank_reads[b.idx] + 1
        self._bus_free = start + self.tBurst
        s.busy_bus_cycles += self.tBurst
        s.bytes += self.atom_bytes
        txn.done_bursts += 1
        if txn.done_bursts == txn.bursts:
            self._done.append((start + self.tBurst, txn))
            b.cur = _NO_TXN
            self._serving.remove(b)
            self._held -= 1
            if self.scheduler == "fcfs":
                self._assign()
            elif b.queue:
                self._start(b, self._pick(b))

    # -- completion

    def _complete(self, txn: _Txn, cycle: int, now_fs: int) -> None:
        req, s = txn.req, self.stats
        if txn.is_write:
            s.writes += 1
        else:
            s.reads += 1
            s.read_latency_sum += cycle - txn.arrival
            req.is_reply = True
            self._replies.append(req)
            self._drain(now_fs)
        if self.on_complete is not None:
            self.on_complete(req, cycle)

    def _drain(self, now_fs: int) -> bool:
        """Move finished reads into out_queue while it has room. Room is checked as
        can_push does but without counting a refusal, so the idle ticks of a blocked
        channel in dense mode leave the queue's statistics as in sparse mode."""
        oq, replies, moved = self.out_queue, self._replies, False
        while replies and oq.held_units() + oq.units_of(replies[0]) <= oq.capacity:
            oq.push(replies.popleft(), now_fs)
            self._reads_owed -= 1
            moved = True
        return moved

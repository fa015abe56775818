"""The trace: the contract between the functional and the timing model.

Columnar NumPy arrays, one row per executed warp instruction, sorted by warp and
then by execution order, with `warp_offsets` (CSR) giving each warp's rows:

* `pc` — static instruction index in the flattened kernel;
* `active` — the SIMT active mask; `executed` — active lanes whose guard held;
* `mem` — row into the memory table, or -1;
* `vclass` — value-pattern class of the written register (VALUE_CLASSES), or -1.

Memory table (one row per memory warp instruction, in trace order: the k-th row
with `mem` >= 0 has memory row k, so any range of warps owns a contiguous range of
memory rows and of sectors): `mem_space` (SPACE_CODES),
`mem_size` (bytes per lane), `mem_sector_offsets` (CSR into `sectors`, the
distinct 32-byte sectors touched, for global/local/const/generic accesses) and
`mem_bank_degree` (shared-memory bank-conflict degree: the most distinct 4-byte
words any one bank must deliver; 1 = conflict-free), one column per bank count of
SHARED_BANK_COUNTS, so the timing model can use the configured number of banks;
then, for shared-memory *atomics* only (0 in other rows), one column per bank count
with the most lanes any one bank serves (lanes on one word counted one by one: the
degree of an atomic whose same-word lanes are serialised), and a last column with the
most lanes updating one word (the rounds of a compare-and-swap loop).

A `Trace` may also be one *piece* of a launch's trace: the warps `first_warp` ..
`first_warp + n_warps - 1`, with warp-local `warp_offsets` and piece-local memory
rows. A large launch's trace is a sequence of pieces streamed through a file
(trace.spill); both kinds answer `piece_index(warp)` / `piece(k)`, so the timing
model reads either one piece at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

TRACE_FORMAT_VERSION = 6  # 6: local accesses in the CTA-relative layout of trace.localmem; 4: memory rows in trace order; files of pieces (trace.spill); 5: atomics' lane columns
SHARED_BANK_COUNTS = (8, 16, 32, 64)  # columns of mem_bank_degree (then the same for atomics' lanes, then one)
DEGREE_COLUMNS = 2 * len(SHARED_BANK_COUNTS) + 1  # columns of mem_bank_degree
SPACE_CODES = {"global": 0, "shared": 1, "local": 2, "const": 3, "param": 4, "kparam": 5, "generic": 6}
SPACE_NAMES = {v: k for k, v in SPACE_CODES.items()}
VALUE_CLASSES = ("uniform", "stride1", "stride4", "half_uniform", "half_stride1", "half_stride4", "other", "partial")

_ARRAYS = ("pc", "warp", "active", "executed", "mem", "vclass", "warp_offsets", "mem_space", "mem_size",
           "mem_sector_offsets", "sectors", "mem_bank_degree", "warp_cta", "deps")
# columns of `deps`: a reader warp read, at its trace position and pc, a value the writer
# warp (of another CTA, still running) wrote at its pc (functional.xcta)
DEP_COLUMNS = ("reader_warp", "reader_pos", "reader_pc", "writer_warp", "writer_pc")


@dataclass
class Trace:
    """A kernel launch's dynamic instruction stream, per warp."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    n_warps: int
    warps_per_cta: int
    pc: np.ndarray
    warp: np.ndarray
    active: np.ndarray
    executed: np.ndarray
    mem: np.ndarray
    vclass: np.ndarray
    warp_offsets: np.ndarray
    mem_space: np.ndarray
    mem_size: np.ndarray
    mem_sector_offsets: np.ndarray
    sectors: np.ndarray
    mem_bank_degree: np.ndarray
    warp_cta: np.ndarray
    opclasses: tuple[str, ...] = ()          # opclass of each static instruction
    meta: dict = field(default_factory=dict)
    # cross-CTA reads of a running CTA's writes, (n, len(DEP_COLUMNS)) int64, by reader warp and position
    deps: np.ndarray = field(default_factory=lambda: np.zeros((0, len(DEP_COLUMNS)), dtype=np.int64))
    first_warp: int = 0  # a piece: its first warp (warp_offsets, warp_rows are local to the piece)

    # ------------------------------------------------------------ totals

    @property
    def warp_instructions(self) -> int:
        return int(self.pc.size)

    @property
    def thread_instructions(self) -> int:
        """Lanes that executed each warp instruction (active and guard true), summed:
        GPGPU-Sim's gpu_tot_sim_insn, which drops predicated-off lanes."""
        return int(_popcount(self.executed).sum())

    @property
    def active_thread_instructions(self) -> int:
        """Active (SIMT-mask) lanes summed, predicated-off lanes included."""
        return int(_popcount(self.active).sum())

    def opclass_counts(self) -> dict[str, int]:
        if not self.opclasses:
            return {}
        per_static = np.bincount(self.pc, minlength=len(self.opclasses))
        out: dict[str, int] = {}
        for cls, n in zip(self.opclasses, per_static.tolist()):
            if n:
                out[cls] = out.get(cls, 0) + n
        return out

    def bank_degrees(self, banks: int) -> np.ndarray:
        """Shared-memory conflict degree of every memory row with `banks` banks."""
        if banks not in SHARED_BANK_COUNTS:
            raise ValueError(f"the trace records shared-memory bank conflicts for {SHARED_BANK_COUNTS} banks, "
                             f"not {banks}")
        return self.mem_bank_degree[:, SHARED_BANK_COUNTS.index(banks)]

    def lane_degrees(self, banks: int) -> np.ndarray:
        """Per memory row, the most lanes one of `banks` banks serves, each lane on a word
        counted (no broadcast): shared-memory atomics only, 0 in other rows."""
        self.bank_degrees(banks)  # (the check)
        return self.mem_bank_degree[:, len(SHARED_BANK_COUNTS) + SHARED_BANK_COUNTS.index(banks)]

    def word_lanes(self) -> np.ndarray:
        """Per memory row, the most lanes updating one 4-byte word: shared-memory atomics
        only, 0 in other rows."""
        return self.mem_bank_degree[:, 2 * len(SHARED_BANK_COUNTS)]

    def warp_rows(self, w: int) -> slice:
        return slice(int(self.warp_offsets[w]), int(self.warp_offsets[w + 1]))

    def sectors_of(self, mem_row: int) -> np.ndarray:
        return self.sectors[self.mem_sector_offsets[mem_row]: self.mem_sector_offsets[mem_row + 1]]

    def summary(self) -> dict:
        """Totals for reports: instruction mix, divergence, memory footprint and coalescing."""
        from tlpsim.trace.pieces import summarize

        return summarize(self)

    # ------------------------------------------------------------ pieces (see trace.spill)

    @property
    def n_pieces(self) -> int:
        return 1

    def piece_index(self, warp: int) -> int:
        return 0

    def piece(self, k: int) -> "Trace":
        if k != 0:
            raise IndexError(f"an in-memory trace is one piece; there is no piece {k}")
        return self

    def materialize(self) -> "Trace":
        """The whole trace in memory (this one)."""
        return self

    # ------------------------------------------------------------ (de)serialisation

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k) for k in _ARRAYS}

    @classmethod
    def from_arrays(cls, header: dict, arrays: dict[str, np.ndarray]) -> "Trace":
        return cls(kernel=header["kernel"], grid=tuple(header["grid"]), block=tuple(header["block"]),
                   n_warps=int(header["n_warps"]), warps_per_cta=int(header["warps_per_cta"]),
                   opclasses=tuple(header.get("opclasses", ())), meta=dict(header.get("meta", {})),
                   first_warp=int(header.get("first_warp", 0)), **{k: arrays[k] for k in _ARRAYS})

    def header(self) -> dict:
        return {"kernel": self.kernel, "grid": list(self.grid), "block": list(self.block), "n_warps": self.n_warps,
                "warps_per_cta": self.warps_per_cta, "opclasses": list(self.opclasses), "meta": self.meta,
                "first_warp": self.first_warp}


def _popcount(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint32)
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * np.uint32(0x01010101)) & 0xFFFFFFFF) >> 24

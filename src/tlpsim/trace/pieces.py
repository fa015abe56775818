"""Trace pieces: `Trace`s that cover a contiguous range of a launch's warps.

The functional pass records rows in execution order; `canonical` sorts a batch of
them into a piece (rows by warp, memory rows in trace order). A launch's trace is
the `concat` of its pieces in warp order; a chunk of CTAs recorded in several runs
(so the recorder never holds a chunk whole) becomes pieces by `merge`-ing the runs'
`window`s, warp range by warp range. Every operation gives exactly what sorting
all the rows at once would.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from tlpsim.trace.format import DEGREE_COLUMNS, SHARED_BANK_COUNTS, SPACE_CODES, VALUE_CLASSES, Trace, _popcount

__all__ = ["canonical", "concat", "cta_windows", "empty_piece", "merge", "skeleton", "summarize", "window"]

_ROW_COLUMNS = ("pc", "warp", "active", "executed", "mem", "vclass")
_MEM_COLUMNS = ("mem_space", "mem_size", "mem_bank_degree")


def _like(template: Trace, first_warp: int, n_warps: int, **arrays) -> Trace:
    return Trace(kernel=template.kernel, grid=template.grid, block=template.block, n_warps=n_warps,
                 warps_per_cta=template.warps_per_cta, opclasses=template.opclasses, meta=template.meta,
                 first_warp=first_warp,
                 warp_cta=(np.arange(first_warp, first_warp + n_warps) // max(template.warps_per_cta, 1)
                           ).astype(np.int32),
                 **arrays)


def _gather_segments(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Indices of the segments [starts[k], starts[k] + counts[k]) one after another."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    out_starts = np.zeros(counts.size, dtype=np.int64)
    np.cumsum(counts[:-1], out=out_starts[1:])
    return np.repeat(starts - out_starts, counts) + np.arange(total, dtype=np.int64)


def _stable_order(local_warp: np.ndarray, n_warps: int) -> np.ndarray:
    """Stable sort permutation by warp with 16-bit radix passes (O(rows))."""
    order = np.argsort((local_warp & 0xFFFF).astype(np.uint16), kind="stable")
    if n_warps > 0xFFFF:
        hi = (local_warp >> 16).astype(np.uint16)[order]
        order = order[np.argsort(hi, kind="stable")]
    return order


def canonical(template: Trace, first_warp: int, n_warps: int, rows: dict[str, np.ndarray],
              mem_table: dict[str, np.ndarray], sector_counts: np.ndarray, sectors: np.ndarray) -> Trace:
    """The piece of warps [first_warp, first_warp + n_warps) from rows in execution
    order (each warp's rows in its order) whose `mem` column points into `mem_table`
    (each memory row used once); `sector_counts[k]` sectors of memory row k follow
    each other in `sectors`."""
    warp = rows["warp"]
    order = _stable_order(warp.astype(np.int64) - first_warp, n_warps)
    out = {k: rows[k][order] for k in _ROW_COLUMNS}
    mem = out["mem"]
    has = mem >= 0
    perm = mem[has].astype(np.int64)  # old memory rows in trace order
    new_mem = np.full(mem.size, -1, dtype=np.int32)
    new_mem[has] = np.arange(perm.size, dtype=np.int32)
    out["mem"] = new_mem
    for k in _MEM_COLUMNS:
        out[k] = mem_table[k][perm]
    counts = sector_counts[perm]
    old_starts = np.zeros(sector_counts.size, dtype=np.int64)
    if sector_counts.size:
        np.cumsum(sector_counts[:-1], out=old_starts[1:])
    out["sectors"] = sectors[_gather_segments(old_starts[perm], counts)]
    offs = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offs[1:])
    out["mem_sector_offsets"] = offs
    out["warp_offsets"] = np.searchsorted(out["warp"], np.arange(first_warp, first_warp + n_warps + 1)).astype(np.int64)
    return _like(template, first_warp, n_warps, **out)


def skeleton(kernel: str, grid, block, warps_per_cta: int, opclasses: tuple[str, ...], meta: dict) -> Trace:
    """A launch's header as an empty trace: the template its pieces are made from."""
    return empty_piece(Trace(kernel=kernel, grid=tuple(grid), block=tuple(block), n_warps=0,
                             warps_per_cta=warps_per_cta, opclasses=opclasses, meta=meta,
                             **{k: np.zeros(0) for k in ("pc", "warp", "active", "executed", "mem", "vclass",
                                                        "warp_offsets", "mem_space", "mem_size",
                                                        "mem_sector_offsets", "sectors", "mem_bank_degree",
                                                        "warp_cta")}), 0, 0)


def empty_piece(template: Trace, first_warp: int, n_warps: int) -> Trace:
    rows = {"pc": np.zeros(0, np.int32), "warp": np.zeros(0, np.int32), "active": np.zeros(0, np.uint32),
            "executed": np.zeros(0, np.uint32), "mem": np.zeros(0, np.int32), "vclass": np.zeros(0, np.int8)}
    table = {"mem_space": np.zeros(0, np.int8), "mem_size": np.zeros(0, np.int16),
             "mem_bank_degree": np.zeros((0, DEGREE_COLUMNS), np.int16)}
    return canonical(template, first_warp, n_warps, rows, table, np.zeros(0, np.int64), np.zeros(0, np.uint64))


def window(piece: Trace, first_warp: int, n_warps: int) -> Trace:
    """The warps [first_warp, first_warp + n_warps) of a piece (views, no copies)."""
    lo, hi = first_warp - piece.first_warp, first_warp - piece.first_warp + n_warps
    if lo < 0 or hi > piece.n_warps:
        raise IndexError(f"warps {first_warp}..{first_warp + n_warps - 1} are not all in the piece of warps "
                         f"{piece.first_warp}..{piece.first_warp + piece.n_warps - 1}")
    r0, r1 = int(piece.warp_offsets[lo]), int(piece.warp_offsets[hi])
    m = piece.mem[r0:r1]
    has = np.flatnonzero(m >= 0)
    m0 = int(m[has[0]]) if has.size else _mem_after(piece, r1)
    m1 = m0 + has.size
    s0, s1 = int(piece.mem_sector_offsets[m0]), int(piece.mem_sector_offsets[m1])
    out = {k: getattr(piece, k)[r0:r1] for k in _ROW_COLUMNS}
    out["mem"] = np.where(m >= 0, m - m0, -1).astype(np.int32)
    for k in _MEM_COLUMNS:
        out[k] = getattr(piece, k)[m0:m1]
    out["mem_sector_offsets"] = piece.mem_sector_offsets[m0:m1 + 1] - s0
    out["sectors"] = piece.sectors[s0:s1]
    out["warp_offsets"] = piece.warp_offsets[lo:hi + 1] - r0
    return _like(piece, first_warp, n_warps, **out)


def _mem_after(piece: Trace, row: int) -> int:
    """The first memory row at or after trace row `row` (memory rows are in trace order)."""
    later = np.flatnonzero(piece.mem[row:] >= 0)
    return int(piece.mem[row + later[0]]) if later.size else int(piece.mem_space.size)


def concat(pieces: list[Trace], deps: np.ndarray | None = None) -> Trace:
    """Consecutive pieces (warp ranges adjoining, in order) as one trace."""
    if not pieces:
        raise ValueError("concat needs at least one piece")
    first = pieces[0]
    out: dict[str, np.ndarray] = {}
    for k in ("pc", "warp", "active", "executed", "vclass", "sectors") + _MEM_COLUMNS:
        out[k] = np.concatenate([getattr(p, k) for p in pieces]) if len(pieces) > 1 else getattr(first, k)
    mems, sec_offs, warp_offs = [], [np.zeros(1, np.int64)], [np.zeros(1, np.int64)]
    mem_base = sec_base = row_base = 0
    n_warps = 0
    for p in pieces:
        if p.first_warp != first.first_warp + n_warps:
            raise ValueError(f"pieces do not adjoin: warp {p.first_warp} follows warp {first.first_warp + n_warps - 1}")
        mems.append(np.where(p.mem >= 0, p.mem + mem_base, -1).astype(np.int32) if mem_base else p.mem)
        sec_offs.append(p.mem_sector_offsets[1:] + sec_base)
        warp_offs.append(p.warp_offsets[1:] + row_base)
        mem_base += p.mem_space.size
        sec_base += p.sectors.size
        row_base += p.pc.size
        n_warps += p.n_warps
    out["mem"] = np.concatenate(mems) if len(mems) > 1 else mems[0]
    out["mem_sector_offsets"] = np.concatenate(sec_offs)
    out["warp_offsets"] = np.concatenate(warp_offs)
    whole = _like(first, first.first_warp, n_warps, **out)
    if deps is not None:
        whole.deps = deps
    return whole


def merge(runs: list[Trace]) -> Trace:
    """One piece from pieces of the same warps recorded one after another (each warp's
    rows of an earlier run come first)."""
    if len(runs) == 1:
        return runs[0]
    first = runs[0]
    rows = {k: np.concatenate([getattr(r, k) for r in runs]) for k in _ROW_COLUMNS}
    mem_base, mems = 0, []
    for r in runs:
        mems.append(np.where(r.mem >= 0, r.mem.astype(np.int64) + mem_base, -1))
        mem_base += r.mem_space.size
    rows["mem"] = np.concatenate(mems)
    table = {k: np.concatenate([getattr(r, k) for r in runs]) for k in _MEM_COLUMNS}
    counts = np.concatenate([np.diff(r.mem_sector_offsets) for r in runs])
    sectors = np.concatenate([r.sectors for r in runs])
    return canonical(first, first.first_warp, first.n_warps, rows, table, counts, sectors)


def cta_windows(cta_rows: np.ndarray, first_cta: int, max_rows: int) -> list[tuple[int, int]]:
    """Consecutive CTA ranges [c0, c1) of at most `max_rows` rows each (a larger CTA
    alone), given each CTA's rows."""
    out: list[tuple[int, int]] = []
    c0, acc = 0, 0
    for k, n in enumerate(cta_rows.tolist()):
        if k > c0 and acc + n > max_rows:
            out.append((first_cta + c0, first_cta + k))
            c0, acc = k, 0
        acc += n
    if cta_rows.size:
        out.append((first_cta + c0, first_cta + cta_rows.size))
    return out


def summarize(trace, pieces: Iterable[Trace] | None = None) -> dict:
    """A trace's report totals (instruction mix, divergence, footprint, coalescing),
    piece by piece: only the distinct sectors are held whole."""
    n_static = len(trace.opclasses)
    per_static = np.zeros(max(n_static, 1), dtype=np.int64)
    mem_rows = shared = 0
    sectors = np.zeros(0, dtype=np.uint64)
    access_sum = access_n = 0
    degree_sum = 0
    vclasses = np.zeros(len(VALUE_CLASSES), dtype=np.int64)
    warp_insts = thread_insts = active_insts = 0
    global_codes = [SPACE_CODES["global"], SPACE_CODES["generic"], SPACE_CODES["local"], SPACE_CODES["const"]]
    for p in (pieces if pieces is not None else (trace.piece(k) for k in range(trace.n_pieces))):
        warp_insts += p.pc.size
        thread_insts += int(_popcount(p.executed).sum())
        active_insts += int(_popcount(p.active).sum())
        if n_static:
            per_static += np.bincount(p.pc, minlength=n_static)[:n_static]
        mem_rows += p.mem_space.size
        sectors = np.union1d(sectors, p.sectors)
        if p.mem_space.size:
            per_access = np.diff(p.mem_sector_offsets)[np.isin(p.mem_space, global_codes)]
            access_sum += int(per_access.sum())
            access_n += per_access.size
        is_shared = p.mem_space == SPACE_CODES["shared"]
        shared += int(is_shared.sum())
        degree_sum += int(p.bank_degrees(32)[is_shared].astype(np.int64).sum())
        vclasses += np.bincount(p.vclass[p.vclass >= 0], minlength=len(VALUE_CLASSES))
    mix: dict[str, int] = {}
    for cls, n in zip(trace.opclasses, per_static.tolist()):
        if n:
            mix[cls] = mix.get(cls, 0) + n
    return {
        "kernel": trace.kernel,
        "grid": list(trace.grid),
        "block": list(trace.block),
        "warps": trace.n_warps,
        "warp_instructions": warp_insts,
        "thread_instructions": thread_insts,
        "avg_active_lanes": active_insts / max(warp_insts, 1),
        "mix": mix,
        "memory_instructions": int(mem_rows),
        "unique_sectors": int(sectors.size),
        "footprint_bytes": int(sectors.size) * 32,
        "avg_sectors_per_global_access": access_sum / access_n if access_n else 0.0,
        "shared_accesses": shared,
        "avg_shared_bank_degree": degree_sum / shared if shared else 0.0,
        "value_classes": {VALUE_CLASSES[k]: int(v) for k, v in enumerate(vclasses) if v},
    }


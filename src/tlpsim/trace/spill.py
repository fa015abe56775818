"""Streaming a launch's trace through a file, so memory stays bounded at any size.

The functional pass hands its pieces (trace.pieces) to a `TraceWriter`, which
keeps a small trace in memory (a plain `Trace`, as before) and writes a large one
to a file piece by piece; the timing model then reads a `TraceFile`
(trace.tracefile, which describes the file's layout) one piece at a time. The same
file is the trace cache's entry (trace.cache). The knobs (`chunk_rows`,
`memory_rows`, `device_rows`, `spill_dir`) are read from the environment here.
"""

from __future__ import annotations

import json
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from tlpsim.trace.format import DEP_COLUMNS, TRACE_FORMAT_VERSION, Trace
from tlpsim.trace.pieces import concat, cta_windows, empty_piece, merge, window
from tlpsim.trace.tracefile import (MAGIC, PIECE_ARRAYS, TRAILER, BadTrace, StaleTrace, TraceFile, footer_checksum,
                                    pread, read_footer, read_footer_at)

__all__ = ["BadTrace", "StaleTrace", "TraceFile", "TraceWriter", "chunk_rows", "device_rows", "memory_rows",
           "spill_dir"]

DEFAULT_CHUNK_ROWS = 1 << 22   # rows (warp instructions) per piece and per recorder run
DEFAULT_MEMORY_ROWS = 1 << 22  # a launch's trace stays in memory up to this many rows ...
DEFAULT_DEVICE_ROWS = 1 << 24  # ... while a Device's in-memory traces stay under this many


def _env_rows(name: str, default: int, least: int = 1) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = least - 1
    if value < least:
        from tlpsim.errors import ConfigError

        raise ConfigError(f"environment variable {name}={raw!r}: expected a number of trace rows (warp "
                          f"instructions) >= {least}")
    return value


def chunk_rows() -> int:
    """Rows per trace piece and per recorder run (TLPSIM_TRACE_CHUNK_ROWS)."""
    return _env_rows("TLPSIM_TRACE_CHUNK_ROWS", DEFAULT_CHUNK_ROWS)


def memory_rows() -> int:
    """Largest trace kept whole in memory (TLPSIM_TRACE_MEMORY_ROWS); larger ones stream through a file."""
    return _env_rows("TLPSIM_TRACE_MEMORY_ROWS", DEFAULT_MEMORY_ROWS, least=0)


def device_rows() -> int:
    """Rows of in-memory traces one Device keeps (TLPSIM_TRACE_DEVICE_ROWS); later launches stream."""
    return _env_rows("TLPSIM_TRACE_DEVICE_ROWS", DEFAULT_DEVICE_ROWS, least=0)


def spill_dir() -> Path:
    """Where uncached traces spill (TLPSIM_SPILL_DIR, else beside the trace cache)."""
    root = os.environ.get("TLPSIM_SPILL_DIR", "").strip()
    if root:
        return Path(root).expanduser()
    from tlpsim.trace.cache import default_cache_dir

    return default_cache_dir().parent / "spill"


# ---------------------------------------------------------------- writing


class _File:
    """An output file being appended to, with byte accounting and per-part hashes."""

    def __init__(self, directory: Path, named: bool) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=directory, prefix="trace.", suffix=".tmp")
        self.path: Path | None = Path(name)
        if not named:  # a spill file: gone from the directory at once, freed when closed
            os.unlink(name)
            self.path = None
        self.fh = os.fdopen(fd, "w+b")
        self.fh.write(MAGIC)
        self.pos = len(MAGIC)

    def write_arrays(self, arrays: dict[str, np.ndarray]) -> dict:
        """Append arrays (8-byte aligned) as one part; its place, layout and CRC-32."""
        crc = 0
        start = self.pos
        layout = {}
        for name, a in arrays.items():
            a = np.ascontiguousarray(a)
            pad = -self.pos % 8
            if pad:
                self.fh.write(b"\0" * pad)
                crc = zlib.crc32(b"\0" * pad, crc)
                self.pos += pad
            layout[name] = [self.pos - start, a.dtype.str, list(a.shape)]
            data = memoryview(a).cast("B") if a.size else b""
            self.fh.write(data)
            crc = zlib.crc32(data, crc)
            self.pos += a.nbytes
        self.fh.flush()  # read back with pread (scratch runs)
        return {"offset": start, "nbytes": self.pos - start, "crc32": crc, "arrays": layout}

    def finish(self, footer: dict) -> None:
        footer = dict(footer)
        footer["checksum"] = footer_checksum(footer)
        text = json.dumps(footer, sort_keys=True).encode()
        self.fh.write(text)
        self.fh.write(TRAILER.pack(self.pos, len(text), MAGIC))
        self.fh.flush()


class _Stored:
    """A recorder run written to the scratch file: enough to read any warp window back."""

    def __init__(self, scratch: _File, piece: Trace) -> None:
        self.first_warp, self.n_warps = piece.first_warp, piece.n_warps
        self.warp_offsets = np.asarray(piece.warp_offsets, dtype=np.int64)
        has = (piece.mem >= 0).astype(np.int64)
        mem_before = np.zeros(piece.pc.size + 1, dtype=np.int64)
        np.cumsum(has, out=mem_before[1:])
        self.mem_offsets = mem_before[self.warp_offsets]       # first memory row of each warp
        self.sector_offsets = np.asarray(piece.mem_sector_offsets)[self.mem_offsets]
        self.template = empty_piece(piece, 0, 0)  # the header only: the rows live in the scratch file
        self.part = scratch.write_arrays({k: getattr(piece, k) for k in PIECE_ARRAYS})
        self.fh = scratch.fh

    def cta_rows(self, wpc: int) -> np.ndarray:
        return np.diff(self.warp_offsets[::wpc]) if self.n_warps else np.zeros(0, dtype=np.int64)

    def read_window(self, first_warp: int, n_warps: int) -> Trace:
        lo, hi = first_warp - self.first_warp, first_warp - self.first_warp + n_warps
        r0, r1 = int(self.warp_offsets[lo]), int(self.warp_offsets[hi])
        m0, m1 = int(self.mem_offsets[lo]), int(self.mem_offsets[hi])
        s0, s1 = int(self.sector_offsets[lo]), int(self.sector_offsets[hi])
        spans = {"pc": (r0, r1), "warp": (r0, r1), "active": (r0, r1), "executed": (r0, r1), "mem": (r0, r1),
                 "vclass": (r0, r1), "mem_space": (m0, m1), "mem_size": (m0, m1), "mem_bank_degree": (m0, m1),
                 "mem_sector_offsets": (m0, m1 + 1), "sectors": (s0, s1)}
        out = {}
        for name, (a, b) in spans.items():
            rel, dtype, shape = self.part["arrays"][name]
            dt = np.dtype(dtype)
            row_bytes = dt.itemsize * int(np.prod(shape[1:], dtype=np.int64))
            buf = pread(self.fh.fileno(), self.part["offset"] + rel + a * row_bytes, (b - a) * row_bytes)
            out[name] = np.frombuffer(buf, dtype=dt).reshape([b - a] + shape[1:])
        out["mem"] = np.where(out["mem"] >= 0, out["mem"] - m0, -1).astype(np.int32)
        out["mem_sector_offsets"] = out["mem_sector_offsets"] - s0
        out["warp_offsets"] = self.warp_offsets[lo:hi + 1] - r0
        return Trace(kernel=self.template.kernel, grid=self.template.grid, block=self.template.block,
                     n_warps=n_warps, warps_per_cta=self.template.warps_per_cta,
                     opclasses=self.template.opclasses, meta=self.template.meta, first_warp=first_warp,
                     warp_cta=(np.arange(first_warp, first_warp + n_warps)
                               // max(self.template.warps_per_cta, 1)).astype(np.int32), **out)


class TraceWriter:
    """Receives a launch's pieces from the recorder (`add_run`, `end_chunk`) and
    keeps them in memory (up to `memory_rows` rows) or streams them to a file;
    `close()` gives the trace: a `Trace` if it stayed in memory, else a `TraceFile`.

    A chunk recorded in one run is cut into pieces of at most `chunk_rows` rows at CTA
    boundaries; a chunk recorded in several runs has them written to a scratch file
    and merged window by window, so no step holds more than about `chunk_rows` rows.

    With `path` (a trace cache entry) the trace is also written there, atomically, by
    `close()`; without, a spilled trace lives in an unlinked file in `directory`
    (default `spill_dir()`), freed when its `TraceFile` is closed."""

    def __init__(self, *, chunk_rows: int = DEFAULT_CHUNK_ROWS, memory_rows: int = DEFAULT_MEMORY_ROWS,
                 directory: str | os.PathLike | None = None, path: str | os.PathLike | None = None) -> None:
        self.chunk_rows = max(int(chunk_rows), 1)
        self.memory_rows = max(int(memory_rows), 0)
        self.path = Path(path) if path is not None else None
        self.directory = self.path.parent if self.path is not None else (
            Path(directory) if directory is not None else None)
        self.held: list[Trace] = []
        self.held_rows = 0
        self.out: _File | None = None
        self.parts: list[dict] = []
        self.runs: list[Any] = []      # this chunk's runs: one Trace in memory, or _Stored in scratch
        self.scratch: _File | None = None
        self.template: Trace | None = None
        self.row_base = 0
        self.warp_offsets = [np.zeros(1, dtype=np.int64)]
        self.totals = {"warp_instructions": 0, "thread_instructions": 0, "active_thread_instructions": 0}
        self.deps = np.zeros((0, len(DEP_COLUMNS)), dtype=np.int64)
        self.n_warps = 0
        # what was made, for tests of the memory bound: rows of every run and every piece
        self.run_sizes: list[int] = []
        self.piece_sizes: list[int] = []

    # ------------------------------------------------------------ from the recorder

    def has_runs(self) -> bool:
        return bool(self.runs)

    def add_run(self, piece: Trace) -> None:
        if self.template is None:
            self.template = empty_piece(piece, 0, 0)  # the launch's header (no rows held)
        self.run_sizes.append(int(piece.pc.size))
        if self.runs:
            if self.scratch is None:
                self.scratch = _File(self._dir(), named=False)
            if isinstance(self.runs[0], Trace):
                self.runs[0] = _Stored(self.scratch, self.runs[0])
            self.runs.append(_Stored(self.scratch, piece))
        else:
            self.runs.append(piece)

    def end_chunk(self, first_warp: int, n_warps: int) -> None:
        runs, self.runs = self.runs, []
        wpc = max(self.template.warps_per_cta, 1) if self.template is not None else 1
        first_cta = first_warp // wpc
        if len(runs) == 1 and isinstance(runs[0], Trace):
            run = runs[0]
            cta_rows = np.diff(np.asarray(run.warp_offsets)[::wpc]) if n_warps else np.zeros(0, np.int64)
            spans = cta_windows(cta_rows, first_cta, self.chunk_rows)
            if len(spans) == 1:
                self._emit(run)
            for c0, c1 in spans if len(spans) > 1 else ():
                self._emit(window(run, c0 * wpc, (c1 - c0) * wpc))
            return
        cta_rows = sum(r.cta_rows(wpc) for r in runs)
        for c0, c1 in cta_windows(cta_rows, first_cta, self.chunk_rows):
            self._emit(merge([r.read_window(c0 * wpc, (c1 - c0) * wpc) for r in runs]))
        if self.scratch is not None:  # reuse the scratch file for the next chunk
            self.scratch.fh.seek(len(MAGIC))
            self.scratch.fh.truncate()
            self.scratch.pos = len(MAGIC)

    def _emit(self, piece: Trace) -> None:
        rows = int(piece.pc.size)
        self.piece_sizes.append(rows)
        t = self.totals
        t["warp_instructions"] += rows
        t["thread_instructions"] += piece.thread_instructions
        t["active_thread_instructions"] += piece.active_thread_instructions
        self.warp_offsets.append(np.asarray(piece.warp_offsets[1:], dtype=np.int64) + self.row_base)
        self.row_base += rows
        self.n_warps += piece.n_warps
        if self.out is None and self.held_rows + rows <= self.memory_rows:
            self.held.append(piece)
            self.held_rows += rows
            return
        if self.out is None:
            self.out = _File(self._dir(), named=self.path is not None)
        self._write_held()
        self._write(piece)

    def _write(self, piece: Trace) -> None:
        assert self.out is not None
        part = self.out.write_arrays({k: getattr(piece, k) for k in PIECE_ARRAYS})
        part.update(first_warp=piece.first_warp, n_warps=piece.n_warps, rows=int(piece.pc.size))
        self.parts.append(part)

    def _write_held(self) -> None:
        for p in self.held:
            self._write(p)
        self.held, self.held_rows = [], 0

    def _dir(self) -> Path:
        d = self.directory if self.directory is not None else spill_dir()
        from tlpsim.paths import writable_dir

        if writable_dir(d) is not None:
            d = Path(tempfile.gettempdir())
        return d

    # ------------------------------------------------------------ the result

    @property
    def spilled(self) -> bool:
        return self.out is not None

    def close(self, deps: np.ndarray | None = None, key: str | None = None,
              extra: dict[str, np.ndarray] | None = None):
        """The trace (a `Trace` if it stayed in memory, else a `TraceFile`). With the
        writer's `path`, the file is finished there as a cache entry with `key` and
        the `extra` arrays."""
        if deps is not None:
            self.deps = deps
        if self.scratch is not None:
            self.scratch.fh.close()
            self.scratch = None
        if self.template is None:
            raise ValueError("TraceWriter.close(): no piece was recorded")
        in_memory = None
        if self.out is None:
            in_memory = concat(self.held, self.deps)
            if self.path is None:
                return in_memory
            try:
                self.out = _File(self.path.parent, named=True)
                for p in self.held:
                    self._write(p)
            except OSError as exc:
                return self._uncached(in_memory, exc)
        out, self.out = self.out, None
        try:
            blobs = {"warp_offsets": out.write_arrays({"a": np.concatenate(self.warp_offsets)}),
                     "deps": out.write_arrays({"a": np.asarray(self.deps, dtype=np.int64)})}
            for name, arr in (extra or {}).items():
                blobs["extra_" + name] = out.write_arrays({"a": np.asarray(arr)})
            t = self.template
            header = {"kernel": t.kernel, "grid": list(t.grid), "block": list(t.block), "n_warps": self.n_warps,
                      "warps_per_cta": t.warps_per_cta, "opclasses": list(t.opclasses), "meta": t.meta,
                      **self.totals}
            footer = {"format": TRACE_FORMAT_VERSION, "key": key, "trace": header, "pieces": self.parts,
                      "blobs": blobs}
            out.finish(footer)
            if self.path is None:
                return TraceFile(read_footer(out.fh.fileno(), "spill file"), fh=out.fh)
            out.fh.close()
            assert out.path is not None
            os.replace(out.path, self.path)
        except BaseException as exc:
            if out.path is not None:
                out.fh.close()
                try:
                    os.unlink(out.path)
                except OSError:
                    pass
            if in_memory is not None and isinstance(exc, OSError):
                return self._uncached(in_memory, exc)
            raise
        if in_memory is not None:
            return in_memory
        return TraceFile(read_footer_at(self.path), path=self.path)

    def _uncached(self, trace: Trace, exc: OSError) -> Trace:
        """A failed cache write (disk full, directory removed) costs only the cache entry."""
        import warnings

        from tlpsim.cachefile import CacheWarning

        warnings.warn(f"could not write trace cache entry {self.path} ({exc.strerror or exc}); the launch's results "
                      "are unaffected", CacheWarning, stacklevel=4)
        return trace

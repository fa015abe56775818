"""A launch's trace in a file (written by trace.spill.TraceWriter), read one piece
at a time: the file layout, its checks, and `TraceFile`.

File layout: MAGIC, the pieces' arrays (each piece contiguous, arrays 8-byte
aligned), the launch's own arrays (`warp_offsets`, `deps`, and a cache entry's
`extra_*` arrays), a JSON footer, and a trailer (footer offset and length as two
little-endian u64, MAGIC). The footer holds the format version, the cache key, the
trace header and totals, and per piece and per array its place, dtype, shape and
CRC-32 (cheap enough to check on every read of a multi-GB trace; the footer's own
checksum is a sha256). A piece is checked every time it is read;
`TraceFile.verify()` checks every byte (the cache does, on load).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from tlpsim.trace.format import DEP_COLUMNS, TRACE_FORMAT_VERSION, Trace
from tlpsim.trace.pieces import concat, summarize

__all__ = ["BadTrace", "MAGIC", "PIECE_ARRAYS", "StaleTrace", "TRAILER", "TraceFile", "footer_checksum",
           "open_trace_file", "pread", "read_footer", "read_footer_at", "release_freed_memory"]

MAGIC = b"TLPTRACE"
TRAILER = struct.Struct("<QQ8s")
PIECE_ARRAYS = ("pc", "warp", "active", "executed", "mem", "vclass", "warp_offsets", "mem_space", "mem_size",
                "mem_sector_offsets", "sectors", "mem_bank_degree")
_READ_BLOCK = 1 << 24


class BadTrace(ValueError):
    """A trace file that must not be used; the message says why ("is corrupt ...")."""


class StaleTrace(BadTrace):
    """A trace file of another format version."""


def footer_checksum(footer: dict) -> str:
    body = {k: v for k, v in footer.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def read_footer_at(path: Path) -> dict:
    fd = os.open(path, os.O_RDONLY)
    try:
        return read_footer(fd, str(path))
    finally:
        os.close(fd)


def pread(fd: int, offset: int, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = os.preadv(fd, [view[got:]], offset + got)
        if k <= 0:
            raise BadTrace(f"is truncated (wanted {n} bytes at offset {offset}, the file ends after {got})")
        got += k
    return buf


def read_footer(fd: int, what: str) -> dict:
    size = os.fstat(fd).st_size
    if size < len(MAGIC) + TRAILER.size:
        raise BadTrace(f"is truncated or not a trace file ({size} bytes)")
    if bytes(pread(fd, 0, len(MAGIC))) != MAGIC:
        raise BadTrace("is not a tlpsim trace file (bad magic number)")
    off, length, magic = TRAILER.unpack(bytes(pread(fd, size - TRAILER.size, TRAILER.size)))
    if magic != MAGIC or off + length + TRAILER.size != size:
        raise BadTrace("is truncated or was not completely written (no valid trailer)")
    try:
        footer = json.loads(bytes(pread(fd, off, length)).decode())
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadTrace(f"is corrupt (unreadable footer: {exc})") from None
    if not isinstance(footer, dict):
        raise BadTrace("is corrupt (footer is not a JSON object)")
    if footer.get("format") != TRACE_FORMAT_VERSION:
        raise StaleTrace(f"is of trace format version {footer.get('format')}, not {TRACE_FORMAT_VERSION}")
    if footer.get("checksum") != footer_checksum(footer):
        raise BadTrace("is corrupt (footer checksum mismatch)")
    return footer


class TraceFile:
    """A launch's trace in a file, read one piece at a time (`piece(k)`,
    `piece_index(warp)`); the header, totals, `warp_offsets` and `deps` are in
    memory. `materialize()` reads it whole (for small traces and tools)."""

    def __init__(self, footer: dict, *, path: Path | None = None, fh=None) -> None:
        self.path = path
        self._fh = fh
        h = footer["trace"]
        self.key = footer.get("key")
        self.kernel: str = h["kernel"]
        self.grid = tuple(h["grid"])
        self.block = tuple(h["block"])
        self.n_warps = int(h["n_warps"])
        self.warps_per_cta = int(h["warps_per_cta"])
        self.opclasses = tuple(h.get("opclasses", ()))
        self.meta = dict(h.get("meta", {}))
        self.first_warp = 0
        self.warp_instructions = int(h["warp_instructions"])
        self.thread_instructions = int(h["thread_instructions"])
        self.active_thread_instructions = int(h["active_thread_instructions"])
        self._parts: list[dict] = footer["pieces"]
        self._blobs: dict[str, dict] = footer["blobs"]
        self._starts = [int(p["first_warp"]) for p in self._parts]
        self.piece_sizes = [int(p["rows"]) for p in self._parts]
        self._summary: dict | None = None
        self.warp_offsets = self._blob("warp_offsets")
        self.deps = self._blob("deps").reshape(-1, len(DEP_COLUMNS))

    @classmethod
    def open(cls, path: Path, key: str | None = None, verify: bool = True) -> tuple["TraceFile", dict]:
        """The trace file at `path` and its extra arrays, checked (footer, key and, with
        `verify`, every byte). Raises StaleTrace or BadTrace saying what is wrong."""
        try:
            footer = read_footer_at(path)
        except OSError as exc:
            raise BadTrace(f"is unreadable ({exc.strerror or exc})") from None
        if key is not None and footer.get("key") != key:
            raise BadTrace(f"holds the trace of another launch (key {str(footer.get('key'))[:16]}...)")
        try:
            tf = cls(footer, path=Path(path))
            if verify:
                tf.verify()
            extra = {name[6:]: tf._blob(name) for name in tf._blobs if name.startswith("extra_")}
        except BadTrace:
            raise
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise BadTrace(f"is corrupt ({type(exc).__name__}: {exc})") from None
        return tf, extra

    # ------------------------------------------------------------ pieces

    @property
    def n_pieces(self) -> int:
        return len(self._parts)

    def piece_index(self, warp: int) -> int:
        return bisect.bisect_right(self._starts, warp) - 1

    def piece(self, k: int) -> Trace:
        release_freed_memory()  # the pieces read before this one: give their pages back
        part = self._parts[k]
        arrays = self._read_part(part, f"piece {k}")
        # the timing model keeps slices of `pc` until it has counted them (SM pc histograms):
        # its own array, so they pin 4 bytes a row, not the whole piece's buffer
        arrays["pc"] = arrays["pc"].copy()
        n = int(part["n_warps"])
        w0 = int(part["first_warp"])
        return Trace(kernel=self.kernel, grid=self.grid, block=self.block, n_warps=n,
                     warps_per_cta=self.warps_per_cta, opclasses=self.opclasses, meta=self.meta, first_warp=w0,
                     warp_cta=(np.arange(w0, w0 + n) // max(self.warps_per_cta, 1)).astype(np.int32), **arrays)

    def materialize(self) -> Trace:
        if not self._parts:
            raise BadTrace("holds no pieces")
        return concat([self.piece(k) for k in range(self.n_pieces)], self.deps)

    def summary(self) -> dict:
        """Report totals, read piece by piece (computed once)."""
        if self._summary is None:
            self._summary = summarize(self)
        return dict(self._summary)

    def __reduce__(self):
        if self.path is None:
            raise TypeError("a spilled trace (an unlinked file) cannot be pickled: pickle trace.materialize(), or "
                            "record it with the trace cache on so it has a path")
        return (_reopen, (str(self.path), self.key))

    def verify(self) -> None:
        """Check every piece's and array's CRC-32, reading in blocks (bounded memory)."""
        with self._open() as fd:
            for k, part in enumerate(self._parts):
                self._check(fd, part, f"piece {k}")
            for name, part in self._blobs.items():
                self._check(fd, part, name)

    # ------------------------------------------------------------ bytes

    def _open(self):
        return _Fd(self.path, self._fh)

    def _check(self, fd: int, part: dict, what: str) -> None:
        crc = 0
        off, n = int(part["offset"]), int(part["nbytes"])
        for s in range(0, n, _READ_BLOCK):
            crc = zlib.crc32(pread(fd, off + s, min(_READ_BLOCK, n - s)), crc)
        if crc != part["crc32"]:
            raise BadTrace(f"is corrupt ({what}: checksum mismatch)")

    def _read_part(self, part: dict, what: str) -> dict[str, np.ndarray]:
        with self._open() as fd:
            buf = pread(fd, int(part["offset"]), int(part["nbytes"]))
        if zlib.crc32(buf) != part["crc32"]:
            where = self.path if self.path is not None else "(spill file)"
            raise BadTrace(f"trace file {where} is corrupt ({what}: checksum mismatch); it changed after it was "
                           "written: delete it and rerun")
        out = {}
        for name, (rel, dtype, shape) in part["arrays"].items():
            dt = np.dtype(dtype)
            count = int(np.prod(shape, dtype=np.int64))
            out[name] = np.frombuffer(buf, dtype=dt, count=count, offset=rel).reshape(shape)
        return out

    def _blob(self, name: str) -> np.ndarray:
        return self._read_part(self._blobs[name], name)["a"]

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


_LIBC: Any = None


def release_freed_memory() -> None:
    """Return freed heap pages to the system (glibc's malloc_trim), and have arrays of
    4 MB and more mapped on their own: piece after piece, the heap would otherwise keep
    the high-water mark of every piece read (fragmentation), and RSS would grow with the
    trace. A no-op where glibc is not the allocator."""
    global _LIBC
    if _LIBC is None:
        _LIBC = False
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6")
            libc.mallopt(-3, 4 << 20)  # M_MMAP_THRESHOLD: fixed, so large arrays are unmapped when freed
            _LIBC = libc
        except (OSError, AttributeError):
            pass
    if _LIBC:
        _LIBC.malloc_trim(0)


def _reopen(path: str, key: str | None) -> TraceFile:
    return TraceFile(read_footer_at(Path(path)), path=Path(path))


class _Fd:
    """A file descriptor for one read: the spill file's own, or the named file opened for it."""

    def __init__(self, path: Path | None, fh) -> None:
        self.path, self.fh, self.fd = path, fh, -1

    def __enter__(self) -> int:
        if self.fh is not None:
            return self.fh.fileno()
        try:
            self.fd = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            raise BadTrace(f"trace file {self.path} is unreadable ({exc.strerror or exc})") from None
        return self.fd

    def __exit__(self, *exc) -> None:
        if self.fd >= 0:
            os.close(self.fd)


def open_trace_file(path: Path, key: str | None = None) -> tuple[TraceFile, dict]:
    return TraceFile.open(path, key)


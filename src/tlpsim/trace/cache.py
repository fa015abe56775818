"""On-disk trace cache keyed by a hash of (PTX, kernel, launch shape, argument
contents). Each entry is a trace file (trace.spill) carrying the format version,
its own key and checksums of its pieces and footer, so a stale file is ignored and
a corrupt or swapped one is reported and rebuilt, never used. Entries are checked
and read a block or a piece at a time: a large launch's entry is never loaded whole.

The cache is bounded on disk: before an entry is written, the least recently used
entries are removed until the cache is under TLPSIM_TRACE_CACHE_MAX bytes and the
disk keeps TLPSIM_TRACE_CACHE_RESERVE bytes free (a `paper` run of hundreds of
launches writes about 100 GB of traces and would otherwise fill the disk)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

import numpy as np

from tlpsim.cachefile import warn_rebuilt
from tlpsim.trace.format import TRACE_FORMAT_VERSION, Trace
from tlpsim.trace.spill import BadTrace, StaleTrace, TraceFile, TraceWriter
from tlpsim.trace.spill import memory_rows as spill_memory_rows

__all__ = ["BadTrace", "StaleTrace", "TraceCache", "cache_limits", "default_cache_dir", "read_trace_file",
           "trace_key"]

DEFAULT_MAX_BYTES = 16 << 30      # the cache's size on disk, at most (plus the entry being written)
DEFAULT_RESERVE_BYTES = 2 << 30   # free space the cache leaves on its disk
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _env_bytes(name: str, default: int | None) -> int | None:
    """A size from the environment: bytes, or with K/M/G/T (binary); 'none' = unbounded."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if raw.lower() in ("none", "unlimited"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?", raw, re.IGNORECASE)
    if m is None:
        from tlpsim.errors import ConfigError

        raise ConfigError(f"environment variable {name}={raw!r}: expected a size in bytes, e.g. 20G, 500M, "
                          "1073741824, or 'none'")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def cache_limits() -> tuple[int | None, int]:
    """(largest size of the cache in bytes or None, free bytes to leave on its disk), from
    TLPSIM_TRACE_CACHE_MAX and TLPSIM_TRACE_CACHE_RESERVE."""
    return (_env_bytes("TLPSIM_TRACE_CACHE_MAX", DEFAULT_MAX_BYTES),
            _env_bytes("TLPSIM_TRACE_CACHE_RESERVE", DEFAULT_RESERVE_BYTES) or 0)


def default_cache_dir() -> Path:
    root = os.environ.get("TLPSIM_CACHE_DIR", "").strip()
    base = Path(root).expanduser() if root else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tlpsim"
    return base / "traces"


def trace_key(ptx: str, kernel: str, grid, block, shared_mem: int, arg_blobs: list[bytes]) -> str:
    """Hash of everything that determines a launch's trace."""
    h = hashlib.sha256()
    h.update(f"v{TRACE_FORMAT_VERSION}\0{kernel}\0{tuple(grid)}\0{tuple(block)}\0{shared_mem}\0".encode())
    h.update(hashlib.sha256(ptx.encode()).digest())
    for blob in arg_blobs:
        h.update(hashlib.sha256(blob).digest())
    return h.hexdigest()


class TraceCache:
    """A directory of `<key>.trace` files (trace.spill's format)."""

    def __init__(self, directory: str | os.PathLike | None = None, max_bytes: int | None | str = "env",
                 reserve_bytes: int | str = "env") -> None:
        self.dir = Path(directory) if directory is not None else default_cache_dir()
        env_max, env_reserve = cache_limits() if "env" in (max_bytes, reserve_bytes) else (None, 0)
        self.max_bytes = env_max if max_bytes == "env" else max_bytes
        self.reserve_bytes = env_reserve if reserve_bytes == "env" else int(reserve_bytes)

    def make_room(self) -> list[Path]:
        """Remove the least recently used entries (oldest modification time: a hit
        refreshes it) until the cache is under `max_bytes` and its disk has
        `reserve_bytes` free; returns the removed paths. An entry another process is
        reading stays readable through its open file (POSIX) until that reader closes it."""
        entries = []
        for p in self.dir.glob("*.trace"):
            try:
                st = p.stat()
            except OSError:  # removed meanwhile by another process
                continue
            entries.append((st.st_mtime_ns, p.name, st.st_size, p))
        entries.sort()
        total = sum(e[2] for e in entries)
        try:
            free = shutil.disk_usage(self.dir).free
        except OSError:
            free = self.reserve_bytes
        removed = []
        for _, _, size, p in entries:
            if (self.max_bytes is None or total <= self.max_bytes) and free >= self.reserve_bytes:
                break
            try:
                p.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                continue
            total -= size
            free += size
            removed.append(p)
        return removed

    def path(self, key: str) -> Path:
        return self.dir / f"{key}.trace"

    def load(self, key: str) -> Trace | TraceFile | None:
        hit = self.load_with_extra(key)
        return None if hit is None else hit[0]

    def load_with_extra(self, key: str, memory_rows: int | None = None
                        ) -> tuple[Trace | TraceFile, dict[str, np.ndarray]] | None:
        """The cached trace and its extra arrays, or None when absent or of another
        format version (silently), or corrupt or another key's (with a CacheWarning
        naming the file). Every byte is checked first, a block at a time; a trace of
        at most `memory_rows` rows (default: trace.spill.memory_rows()) is read into
        memory, a larger one is read piece by piece when used."""
        p = self.path(key)
        if not p.exists():
            return None
        try:
            hit = read_trace_file(p, key, memory_rows)
            try:
                os.utime(p)  # recently used: the last to be evicted
            except OSError:
                pass
            return hit
        except StaleTrace:
            return None
        except BadTrace as exc:
            warn_rebuilt("trace", p, str(exc))
            return None

    def writer(self, key: str, **kwargs) -> TraceWriter:
        """A TraceWriter whose `close(key=key, extra=...)` stores the launch's entry
        (room is made first: see `make_room`)."""
        self.make_room()
        return TraceWriter(path=self.path(key), **kwargs)

    def store(self, key: str, trace: Trace | TraceFile, extra: dict[str, np.ndarray] | None = None) -> Path:
        """Write atomically (temp file + rename); `extra` arrays travel with the trace."""
        w = self.writer(key, chunk_rows=max(trace.warp_instructions, 1), memory_rows=0)
        for k in range(trace.n_pieces):
            piece = trace.piece(k)
            w.add_run(piece)
            w.end_chunk(piece.first_warp, piece.n_warps)
        w.close(deps=trace.deps, key=key, extra=extra)
        return self.path(key)


def read_trace_file(path: Path, key: str | None = None, memory_rows: int | None = None
                    ) -> tuple[Trace | TraceFile, dict[str, np.ndarray]]:
    """The trace and extra arrays of one file, checked against its checksums and, when
    `key` is given, its key: in memory if it has at most `memory_rows` rows, else as
    a TraceFile. Raises StaleTrace or BadTrace saying what is wrong."""
    tf, extra = TraceFile.open(Path(path), key)
    limit = spill_memory_rows() if memory_rows is None else memory_rows
    if tf.warp_instructions <= limit and tf.n_pieces:
        return tf.materialize(), extra
    return tf, extra

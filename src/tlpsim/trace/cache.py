"""On-disk trace cache keyed by a hash of (PTX, kernel, launch shape, argument
contents). Each file carries the format version, its own key and a checksum of its
arrays and header (tlpsim.cachefile), so a stale file is ignored and a corrupt or
swapped one is reported and rebuilt, never used."""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np

from tlpsim.cachefile import checksum, warn_rebuilt, write_atomic
from tlpsim.trace.format import TRACE_FORMAT_VERSION, Trace


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


def _checksum(key: str, trace_header: dict, arrays: dict[str, np.ndarray]) -> str:
    return checksum({**arrays, "__key__": key, "__trace__": json.dumps(trace_header, sort_keys=True)})


class TraceCache:
    """A directory of `<key>.npz` trace files."""

    def __init__(self, directory: str | os.PathLike | None = None) -> None:
        self.dir = Path(directory) if directory is not None else default_cache_dir()

    def path(self, key: str) -> Path:
        return self.dir / f"{key}.npz"

    def load(self, key: str) -> Trace | None:
        hit = self.load_with_extra(key)
        return None if hit is None else hit[0]

    def load_with_extra(self, key: str) -> tuple[Trace, dict[str, np.ndarray]] | None:
        """The cached trace and its extra arrays, or None when absent or of another
        format version (silently), or corrupt or another key's (with a CacheWarning
        naming the file)."""
        p = self.path(key)
        if not p.exists():
            return None
        try:
            return read_trace_file(p, key)
        except StaleTrace:
            return None
        except BadTrace as exc:
            warn_rebuilt("trace", p, str(exc))
            return None

    def store(self, key: str, trace: Trace, extra: dict[str, np.ndarray] | None = None) -> Path:
        """Write atomically (temp file + rename); `extra` arrays travel with the trace."""
        self.dir.mkdir(parents=True, exist_ok=True)
        arrays = trace.arrays()
        arrays.update({f"extra_{k}": v for k, v in (extra or {}).items()})
        th = trace.header()
        header = {"version": TRACE_FORMAT_VERSION, "key": key, "checksum": _checksum(key, th, arrays), "trace": th}
        buf = io.BytesIO()
        np.savez(buf, __header__=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
        write_atomic(self.path(key), buf.getvalue())
        return self.path(key)


class BadTrace(ValueError):
    """A trace file that must not be used; the message says why ("is corrupt ...")."""


class StaleTrace(BadTrace):
    """A trace file of another format version."""


def read_trace_file(path: Path, key: str | None = None) -> tuple[Trace, dict[str, np.ndarray]]:
    """The trace and extra arrays of one file, checked against its checksum and, when
    `key` is given, its key. Raises StaleTrace or BadTrace saying what is wrong."""
    try:
        with np.load(path, allow_pickle=False) as z:
            header = json.loads(bytes(z["__header__"]).decode())
            if header.get("version") != TRACE_FORMAT_VERSION:
                raise StaleTrace(f"is of trace format version {header.get('version')}, not {TRACE_FORMAT_VERSION}")
            arrays = {k: z[k] for k in z.files if k != "__header__"}
        stored = header.get("key")
        if key is not None and stored != key:
            raise BadTrace(f"holds the trace of another launch (key {str(stored)[:16]}...)")
        if _checksum(str(stored), header["trace"], arrays) != header.get("checksum"):
            raise BadTrace("is corrupt (checksum mismatch)")
        extra = {k[6:]: v for k, v in arrays.items() if k.startswith("extra_")}
        return Trace.from_arrays(header["trace"], arrays), extra
    except BadTrace:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError, zipfile.BadZipFile, EOFError) as exc:
        raise BadTrace(f"is unreadable ({type(exc).__name__}: {exc})") from None

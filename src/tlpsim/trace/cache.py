"""On-disk trace cache keyed by a hash of (PTX, kernel, launch shape, argument
contents). Each file carries the format version and a checksum of its arrays, so
a stale or corrupt file is detected and rebuilt, never used."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

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


def _checksum(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode() + str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


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
        """The cached trace and its extra arrays, or None when absent, of another
        format version, or corrupt."""
        p = self.path(key)
        if not p.exists():
            return None
        try:
            with np.load(p, allow_pickle=False) as z:
                header = json.loads(bytes(z["__header__"]).decode())
                if header.get("version") != TRACE_FORMAT_VERSION:
                    return None
                arrays = {k: z[k] for k in z.files if k != "__header__"}
            if _checksum(arrays) != header.get("checksum"):
                return None
            extra = {k[6:]: v for k, v in arrays.items() if k.startswith("extra_")}
            return Trace.from_arrays(header["trace"], arrays), extra
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError, EOFError):
            return None

    def store(self, key: str, trace: Trace, extra: dict[str, np.ndarray] | None = None) -> Path:
        """Write atomically (temp file + rename); `extra` arrays travel with the trace."""
        self.dir.mkdir(parents=True, exist_ok=True)
        arrays = trace.arrays()
        arrays.update({f"extra_{k}": v for k, v in (extra or {}).items()})
        header = {"version": TRACE_FORMAT_VERSION, "checksum": _checksum(arrays), "trace": trace.header()}
        buf = io.BytesIO()
        np.savez(buf, __header__=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
        fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(buf.getvalue())
        os.replace(tmp, self.path(key))
        return self.path(key)

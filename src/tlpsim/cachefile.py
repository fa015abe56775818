"""Integrity of on-disk cache entries, shared by the PTX cache (frontend.nvcc) and
the trace cache (trace.cache): every entry stores its own key and a checksum over
its contents, and is written atomically. An entry that fails either check was
corrupted (a flipped bit, a truncated write) or swapped for another entry's file;
it is reported with a warning naming the file and rebuilt, never used."""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np

__all__ = ["CacheWarning", "checksum", "warn_rebuilt", "write_atomic"]


class CacheWarning(UserWarning):
    """A cache cannot be used (unwritable directory, failed write) or one of its
    entries is corrupt; runs go on without it or rebuild the entry."""


def checksum(parts: Mapping[str, np.ndarray | bytes | str]) -> str:
    """sha256 over named parts in name order: an array contributes its dtype, shape
    and bytes, text and bytes their bytes (so no part can stand in for another)."""
    h = hashlib.sha256()
    for name in sorted(parts):
        v = parts[name]
        if isinstance(v, str):
            h.update(name.encode() + b"\0str\0" + v.encode("utf-8", "surrogateescape"))
        elif isinstance(v, (bytes, bytearray)):
            h.update(name.encode() + b"\0bytes\0" + bytes(v))
        else:
            a = np.ascontiguousarray(v)
            h.update(name.encode() + str(a.dtype).encode() + str(a.shape).encode())
            h.update(a.tobytes())
    return h.hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file next to `path`, then rename it over `path`,
    so readers see the old entry or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def warn_rebuilt(what: str, path: Path, why: str, stacklevel: int = 3) -> None:
    """Tell the user a cache entry was not used and is being rebuilt."""
    warnings.warn(f"{what} cache entry {path} {why}; ignoring it and rebuilding it", CacheWarning,
                  stacklevel=stacklevel)

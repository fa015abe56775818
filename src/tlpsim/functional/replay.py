"""Launch memoisation through the trace cache.

A launch is a pure function of (PTX, kernel, shape, parameters, device memory),
so its trace and the bytes it wrote can be replayed from disk instead of being
re-executed: a sweep that re-runs a workload under many timing configurations
executes it functionally once.
"""

from __future__ import annotations

import hashlib
import os
import warnings

import numpy as np

from tlpsim.cachefile import CacheWarning
from tlpsim.functional.memory import DeviceMemory
from tlpsim.paths import writable_dir
from tlpsim.trace.cache import TraceCache, trace_key


def launch_key(ptx: str, kernel: str, grid, block, shared_mem: int, params: np.ndarray,
               memory: DeviceMemory) -> str:
    """Hash of everything a launch's behaviour depends on, including all device memory."""
    alloc = hashlib.sha256(np.asarray(memory._starts_np).tobytes() + np.asarray(memory._ends_np).tobytes()).digest()
    return trace_key(ptx, kernel, grid, block, shared_mem,
                     [params.tobytes(), alloc, memory.data[: memory.top].tobytes()])


def memory_diff(before: np.ndarray, after: np.ndarray, block: int = 1 << 24) -> dict[str, np.ndarray]:
    """Runs of changed bytes: starts, lengths and the new bytes. Compared a `block` of
    bytes at a time, so a launch that rewrites large arrays needs about the changed
    bytes, not 8-byte indices of each of them, on top of the two copies."""
    starts, ends, new = [], [], []
    for b0 in range(0, before.size, block):
        b1 = min(b0 + block, before.size)
        changed = np.flatnonzero(before[b0:b1] != after[b0:b1])
        if changed.size == 0:
            continue
        brk = np.flatnonzero(np.diff(changed) != 1) + 1
        starts.append(changed[np.concatenate(([0], brk))] + b0)
        ends.append(changed[np.concatenate((brk - 1, [changed.size - 1]))] + b0 + 1)
        new.append(after[b0:b1][changed].astype(np.uint8))
    if not starts:
        return {"starts": np.zeros(0, np.int64), "lengths": np.zeros(0, np.int64), "bytes": np.zeros(0, np.uint8)}
    s_all, e_all = np.concatenate(starts), np.concatenate(ends)
    joined = np.flatnonzero(s_all[1:] == e_all[:-1])  # a run across a block boundary is one run
    if joined.size:
        keep = np.ones(s_all.size, dtype=bool)
        keep[joined + 1] = False
        e_all = np.delete(e_all, joined)
        s_all = s_all[keep]
    return {"starts": s_all.astype(np.int64), "lengths": (e_all - s_all).astype(np.int64),
            "bytes": np.concatenate(new)}


def apply_diff(memory: DeviceMemory, diff: dict[str, np.ndarray]) -> None:
    pos = 0
    data = memory.data
    for s, n in zip(diff["starts"].tolist(), diff["lengths"].tolist()):
        data[s: s + n] = diff["bytes"][pos: pos + n]
        pos += n


def open_trace_cache(setting: bool | str | os.PathLike | None) -> TraceCache | None:
    """The trace cache a Device asked for (True: the default directory, a path: that
    one), or None. An unwritable directory is found here, before anything runs: a
    warning names it and launches run uncached."""
    if not setting:
        return None
    cache = TraceCache(None if setting is True else setting)
    why = writable_dir(cache.dir)
    if why is not None:
        warnings.warn(f"trace cache directory {cache.dir} is not usable ({why}); launches are not cached "
                      "(set TLPSIM_CACHE_DIR to a writable directory)", CacheWarning, stacklevel=3)
        return None
    return cache


def store_quietly(cache: TraceCache, key: str, trace, extra: dict) -> None:
    """Store a trace; a failure (disk full, directory removed) costs only the cache entry."""
    try:
        cache.store(key, trace, extra)
    except OSError as exc:
        warnings.warn(f"could not write trace cache entry {cache.path(key)} ({exc.strerror or exc}); "
                      "the launch's results are unaffected", CacheWarning, stacklevel=3)


__all__ = ["CacheWarning", "TraceCache", "apply_diff", "launch_key", "memory_diff", "open_trace_cache",
           "store_quietly"]

"""`cupy.cuda._compiler_cache`: CuPy's on-disk kernel cache store (one file per
entry: the SHA-1 hex digest of the payload, then the payload).

tlpsim compiles through its own PTX cache (docs/cupy.md), keyed by source, options,
toolchain and target, so RawModule does not write here; the class exists so scripts
and tests that install a cache backend (`cupy.cuda.compiler._kernel_cache_backend`)
run, and it stores and loads entries as CuPy's does for code that calls it."""

from __future__ import annotations

import hashlib
import os

_hash_length = 40  # hex digits of SHA-1


def _hash_hexdigest(value: bytes) -> str:
    return hashlib.sha1(value, usedforsecurity=False).hexdigest()


class DiskKernelCacheBackend:
    def __init__(self, cache_dir: str) -> None:
        self._cache_dir = str(cache_dir)

    def save(self, name: str, cubin: bytes, source: str | None = None) -> None:
        os.makedirs(self._cache_dir, exist_ok=True)
        path = os.path.join(self._cache_dir, name)
        tmp = path + f".tmp{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(_hash_hexdigest(cubin).encode("ascii") + cubin)
        os.replace(tmp, path)
        if source is not None and os.environ.get("CUPY_CACHE_SAVE_CUDA_SOURCE", "0") == "1":
            with open(path + ".cu", "w") as f:
                f.write(source)

    def load(self, name: str) -> bytes | None:
        """The entry's payload, or None when it is missing or its digest does not match."""
        try:
            with open(os.path.join(self._cache_dir, name), "rb") as f:
                data = f.read()
        except OSError:
            return None
        digest, payload = data[:_hash_length], data[_hash_length:]
        return payload if digest == _hash_hexdigest(payload).encode("ascii") else None

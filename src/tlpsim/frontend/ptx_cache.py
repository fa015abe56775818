"""The compiled-PTX record (`CompileResult`) and its on-disk cache: one JSON file
per compilation in ``cache_dir()``, keyed by everything the PTX depends on
(tlpsim.frontend.nvcc describes the key), stored with its key and a checksum of
its contents (tlpsim.cachefile), written atomically."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tlpsim.cachefile import checksum, warn_rebuilt, write_atomic

from .resources import ModuleResources, ResourceUsage
from .toolchains import DEFAULT_TOOLCHAIN

__all__ = ["CACHE_FORMAT_VERSION", "CompileResult", "cache_dir", "included_files", "load_cache", "sha256",
           "store_cache"]

log = logging.getLogger(__name__)

#: Bump when the cache file layout or the compile command changes (2: checksummed).
CACHE_FORMAT_VERSION = 2

_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)

@dataclass(frozen=True)
class CompileResult:
    """PTX produced by nvcc plus the ptxas resource report for it."""

    ptx: str
    #: mangled function name -> resources (entry kernels and .func functions)
    resources: dict[str, ResourceUsage]
    arch: str
    #: the nvcc command (run in a temporary directory; output ``out.ptx``)
    command: list[str]
    toolkit_version: str
    #: the absolute source path, or ``"<string>"`` for source text
    source_name: str
    from_cache: bool = False
    maxrregcount: int | None = None
    #: the ptxas command used for ``resources`` (input ``input.ptx``)
    ptxas_command: list[str] = field(default_factory=list)
    #: module-wide ptxas items (gmem, user ``__constant__`` bank)
    module_resources: ModuleResources = field(default_factory=ModuleResources)
    #: diagnostics nvcc printed on success (warnings), if any
    nvcc_output: str = ""
    #: the raw ``ptxas -v`` report
    ptxas_output: str = ""
    cache_key: str = ""
    #: "cuda13" (nvcc 13.5) or "cuda11" (NVRTC 11.8; ``command`` is then ``nvrtc OPTIONS SOURCE``)
    toolchain: str = DEFAULT_TOOLCHAIN

    @property
    def flags(self) -> list[str]:
        """The compiler flags (the command without the compiler, the source file and ``-o out.ptx``)."""
        return list(self.command[1:-1] if self.toolchain == "cuda11" else self.command[1:-3])

    @property
    def kernels(self) -> list[str]:
        """Mangled names of the entry kernels (ptxas report order)."""
        return [name for name, r in self.resources.items() if r.is_entry]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ptx": self.ptx,
            "resources": {k: v.to_dict() for k, v in self.resources.items()},
            "arch": self.arch,
            "command": list(self.command),
            "toolkit_version": self.toolkit_version,
            "source_name": self.source_name,
            "maxrregcount": self.maxrregcount,
            "ptxas_command": list(self.ptxas_command),
            "module_resources": self.module_resources.to_dict(),
            "nvcc_output": self.nvcc_output,
            "ptxas_output": self.ptxas_output,
            "cache_key": self.cache_key,
            "toolchain": self.toolchain,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, from_cache: bool = False) -> CompileResult:
        return cls(
            ptx=str(data["ptx"]),
            resources={str(k): ResourceUsage.from_dict(v) for k, v in dict(data["resources"]).items()},
            arch=str(data["arch"]),
            command=[str(c) for c in data["command"]],
            toolkit_version=str(data["toolkit_version"]),
            source_name=str(data["source_name"]),
            from_cache=from_cache,
            maxrregcount=data.get("maxrregcount"),
            ptxas_command=[str(c) for c in data.get("ptxas_command", [])],
            module_resources=ModuleResources.from_dict(data.get("module_resources") or {}),
            nvcc_output=str(data.get("nvcc_output", "")),
            ptxas_output=str(data.get("ptxas_output", "")),
            cache_key=str(data.get("cache_key", "")),
            toolchain=str(data.get("toolchain", DEFAULT_TOOLCHAIN)),
        )


# --------------------------------------------------------------------------- cache


def cache_dir() -> Path:
    """Directory of the PTX cache: ``$TLPSIM_CACHE_DIR/ptx`` or
    ``$XDG_CACHE_HOME/tlpsim/ptx`` or ``~/.cache/tlpsim/ptx`` (read on every call)."""
    root = os.environ.get("TLPSIM_CACHE_DIR", "").strip()
    if root:
        return Path(root).expanduser() / "ptx"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "tlpsim" / "ptx"


def sha256(text: str | bytes) -> str:
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def included_files(source_text: str, source_dir: Path | None, include_dirs: Sequence[Path]) -> dict[str, str]:
    """``{absolute path: sha256}`` of files reachable through ``#include "..."``
    (recursively), resolved like the preprocessor does for quoted includes."""
    found: dict[str, str] = {}
    pending: list[tuple[str, Path | None]] = [(source_text, source_dir)]
    while pending and len(found) < 500:
        text, here = pending.pop()
        for rel in _QUOTED_INCLUDE.findall(text):
            search = ([here] if here is not None else []) + list(include_dirs)
            for base in search:
                candidate = (base / rel).resolve()
                if candidate.is_file():
                    key = str(candidate)
                    if key not in found:
                        try:
                            data = candidate.read_bytes()
                        except OSError:
                            break
                        found[key] = sha256(data)
                        pending.append((data.decode("utf-8", "replace"), candidate.parent))
                    break
    return dict(sorted(found.items()))


def _payload_checksum(data: Mapping[str, Any]) -> str:
    """Checksum of a cache file's contents (everything but the checksum itself)."""
    body = {k: v for k, v in data.items() if k != "checksum"}
    body = json.loads(json.dumps(body))  # as read back: integer keys (cmem banks) become strings
    return checksum({"entry": json.dumps(body, sort_keys=True)})


def load_cache(path: Path, key: str) -> CompileResult | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if data.get("format") != CACHE_FORMAT_VERSION:
            log.debug("ignoring PTX cache file %s of another format version", path)
            return None
        if data.get("checksum") != _payload_checksum(data):
            warn_rebuilt("PTX", path, "is corrupt (checksum mismatch)", stacklevel=5)
            return None
        if data.get("cache_key") != key:
            warn_rebuilt("PTX", path, f"holds another compilation (key {str(data.get('cache_key'))[:16]}...)",
                         stacklevel=5)
            return None
        return CompileResult.from_dict(data, from_cache=True)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        warn_rebuilt("PTX", path, f"is unreadable ({type(exc).__name__}: {exc})", stacklevel=5)
        return None


def store_cache(path: Path, result: CompileResult) -> None:
    data = result.to_dict()
    data["format"] = CACHE_FORMAT_VERSION
    data["checksum"] = _payload_checksum(data)
    try:
        write_atomic(path, json.dumps(data).encode("utf-8"))
    except OSError as exc:
        log.warning("cannot write PTX cache file %s: %s", path, exc)

"""The device code a program registered: one `FatModule` per fat binary (one per
translation unit), its kernels by host stub and its variables by host shadow.

The PTX is parsed on first use, and written out to `<dir>/<digest>.ptx` so that a
kernel fault's "PTX line N" names a file the user can open. ptxas's resource
usage (registers, shared memory), which the timing model and
cudaFuncGetAttributes need, is computed once per PTX text and arch and cached
in the compile cache directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from tlpsim.cudart.fatbin import FatBinary
from tlpsim.cudart.ptxlink import PtxLinkError, link_ptx
from tlpsim.frontend.loader import Program
from tlpsim.frontend.names import qualified_name
from tlpsim.frontend.ptx_parser import parse_ptx
from tlpsim.frontend.resources import ResourceUsage, ptxas_resources


def exec_cache() -> Path:
    """tlpsim exec's cache (built programs, PTX files, ptxas resources), next to the
    PTX compile cache: $TLPSIM_CACHE_DIR/exec or ~/.cache/tlpsim/exec."""
    from tlpsim.frontend.nvcc import cache_dir

    return cache_dir().parent / "exec"


_NV_STATIC = re.compile(r"^__nv_static_\d+__\w*?_(_Z\w+)$")


class ModuleError(Exception):
    """The module's device code cannot be executed (no PTX, compressed PTX, parse error)."""


@dataclass
class FatModule:
    index: int
    fatbin: FatBinary | None
    error: str | None = None          # why the fat binary could not be read
    arch: int = 80                    # the PTX arch to prefer (the preset's)
    _program: Program | None = field(default=None, repr=False)
    _linked: str | None = field(default=None, repr=False)

    @property
    def ptx(self) -> str | None:
        """The module's PTX: the fat binary's own, or (a device-linked -rdc program,
        whose linked binary holds SASS only) its units' PTX linked into one module."""
        if self.fatbin is None:
            return None
        entry = self.fatbin.best_ptx(self.arch)
        if entry is not None:
            return entry.ptx  # DWARF sections (-lineinfo, -G) are skipped by the PTX parser
        if not self.fatbin.prelinked:
            return None
        if self._linked is None:
            units = [u.best_ptx(self.arch) for u in self.fatbin.prelinked]
            if any(u is None for u in units):
                return None
            try:
                self._linked = link_ptx([u.ptx for u in units])
            except PtxLinkError as exc:
                raise ModuleError(f"the program's device code (-rdc) cannot be linked: {exc}") from None
        return self._linked

    def no_ptx_reason(self) -> str:
        if self.error:
            return self.error
        return (f"the program's fat binary holds {self.fatbin.describe() if self.fatbin else 'no device code'} "
                "but no uncompressed PTX; build the program with `tlpsim nvcc` (it embeds uncompressed PTX), or "
                "pass nvcc `--no-compress` and an -arch/-gencode that keeps PTX (code=compute_XX)")

    def program(self, ptx_dir: Path, maxrregcount: int | None, with_resources: bool) -> Program:
        if self._program is None:
            text = self.ptx
            if text is None:
                raise ModuleError(self.no_ptx_reason())
            ptx_dir.mkdir(parents=True, exist_ok=True)
            path = ptx_dir / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.ptx"
            if not path.is_file():
                write_atomically(path, text)
            self._program = Program(parse_ptx(text, str(path)), {})
        if with_resources and not self._program.resources:
            self._program.resources = _resources(self._program.module.filename, self.ptx or "", maxrregcount)
        return self._program


def _resources(filename: str, text: str, maxrregcount: int | None) -> dict[str, ResourceUsage]:
    """ptxas -v for the PTX's own target (cached on disk by PTX digest)."""
    module = parse_ptx(text, filename)
    arch = module.arch or "sm_80"
    key = hashlib.sha256(f"{arch}\0{maxrregcount}\0".encode() + text.encode()).hexdigest()
    path = exec_cache() / "resources" / f"{key}.json"
    try:
        return {k: ResourceUsage.from_dict(v) for k, v in json.loads(path.read_text()).items()}
    except (OSError, ValueError, TypeError, KeyError):
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ptxas_resources(text, arch, maxrregcount)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps({k: v.to_dict() for k, v in res.items()}))
    return res


def write_atomically(path: Path, text: str) -> None:
    """Write `path` through a temporary file of its own and a rename, so concurrent writers
    (host threads of one program, or several programs) never see or remove a partial file.
    The temporary name is unique per call: the process id alone collides between threads."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@dataclass
class KernelEntry:
    module: FatModule
    name: str                          # mangled, as registered
    max_dynamic_smem: int | None = None  # cudaFuncAttributeMaxDynamicSharedMemorySize
    carveout: int = -1                   # cudaFuncAttributePreferredSharedMemoryCarveout (-1: none)

    @property
    def display(self) -> str:
        # -rdc gives file-local kernels a unit prefix: __nv_static_25__6bc06778_8_clock_cu_main__Z14timedReduction...
        m = _NV_STATIC.match(self.name)
        return qualified_name(m.group(1) if m else self.name)


@dataclass
class VarEntry:
    module: FatModule
    name: str
    size: int
    constant: bool
    managed: bool

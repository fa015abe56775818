"""Per-function resource usage reported by ``ptxas -v``.

``nvcc -ptx`` never runs ptxas, so tlpsim assembles the produced PTX a second
time with ``ptxas -arch=sm_XX -v [-maxrregcount=N]`` and parses its report.
The report of ptxas 13.5 looks like this (everything goes to stderr)::

    ptxas info    : Overriding maximum register limit 256 for '_Z5heavyPKfPf' with  24 of maxrregcount option
    ptxas info    : 272 bytes gmem, 64 bytes cmem[3], 16 bytes cmem[4]
    ptxas info    : Compiling entry function '_Z6callitPfi' for 'sm_80'
    ptxas info    : Function properties for _Z6callitPfi
        64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 23 registers, used 0 barriers, 64 bytes cumulative stack size, 364 bytes cmem[0]
    ptxas info    : Compile time = 2.042 ms
    ptxas info    : Function properties for _Z6helperPfi
        0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas warning : For profile sm_80 adjusting per thread register count of 16 to lower bound of 24

Observations (ptxas 13.5.37) the parser is built around:

* Entry kernels get ``Compiling entry function 'NAME' for 'sm_XX'``, then
  ``Function properties``, the stack/spill line and a ``Used ...`` line.
* ``.func`` device functions get only ``Function properties for NAME`` and
  the stack/spill line -- no ``Used`` line, so their ``registers`` is 0.  In a
  whole-program (non ``-c``) compile their frame is folded into the calling
  kernel (the kernel's stack frame / cumulative stack size includes it).
  Older ptxas versions print ``Compiling function 'NAME'`` (plus a ``Used``
  line) for them; that form is accepted too.
* ``used N barriers`` is printed even for 0 barriers by ptxas 13.5, but may
  be missing (older releases); missing means 0.
* ``N bytes smem`` is the *static* shared memory only; it is omitted when a
  kernel has no static ``__shared__`` data (dynamic ``extern __shared__``
  memory never appears).
* ``N bytes cumulative stack size`` (the stack needed including callees)
  appears only when it is non-zero.
* ``cmem[N]`` items appear only for sm_75..sm_89; sm_90 and newer print no
  constant-bank usage at all.  Per function, bank 0 holds the kernel
  parameters plus a driver-reserved area (352 bytes on sm_75..sm_89, so a
  kernel without parameters shows ``352 bytes cmem[0]``) and bank 2 holds
  compiler-generated constants (literals, jump tables).  Module-wide banks
  appear on the ``gmem`` line: bank 3 holds user ``__constant__`` data, bank 4
  compiler/runtime data (e.g. addresses of ``__device__`` variables).

**const decision**: :attr:`ResourceUsage.cmem_banks` keeps every per-function
``cmem[N]`` item exactly as printed; :attr:`ResourceUsage.const_bytes` is the
sum of the per-function banks *other than bank 0* (i.e. the compiler-generated
constants of that function; bank 0 is the parameter/driver area, available as
:attr:`ResourceUsage.param_cmem_bytes`).  User ``__constant__`` data is
module-wide and is reported by :func:`parse_ptxas_module`
(:attr:`ModuleResources.cmem_banks`, bank 3); on sm_90+ ptxas reports none of
these, so the PTX ``.const`` declarations are the portable source for the
size of user constant data.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tlpsim.errors import CompileError, TlpsimError

from .toolkit import find_toolkit

__all__ = [
    "ModuleResources",
    "ResourceUsage",
    "check_arch",
    "parse_ptxas_module",
    "parse_ptxas_verbose",
    "ptxas_resources",
    "run_ptxas_verbose",
]

_ARCH_RE = re.compile(r"^sm_(\d+)[a-z]?$")


def check_arch(arch: str) -> int:
    """Validate an ``sm_XX`` architecture name; return its number (80 for ``sm_80``, ``sm_90a``)."""
    match = _ARCH_RE.match(arch) if isinstance(arch, str) else None
    if match is None:
        raise TlpsimError(f"invalid GPU architecture {arch!r}: expected a name like 'sm_80' or 'sm_90a'")
    return int(match.group(1))


@dataclass(frozen=True)
class ResourceUsage:
    """Resources of one function as reported by ``ptxas -v``.

    Sizes are bytes; ``registers`` is per thread.  Fields ptxas does not print
    for a function are 0 (e.g. ``registers`` of a ``.func`` device function).
    """

    name: str
    is_entry: bool
    arch: str
    registers: int = 0
    #: Static shared memory (``N bytes smem``); dynamic shared memory is not included.
    shared_bytes: int = 0
    #: Per-thread stack frame (local memory: local arrays and spills).
    local_bytes: int = 0
    #: Stack including callees (``N bytes cumulative stack size``); equals
    #: ``local_bytes`` when ptxas does not print it.
    cumulative_stack_bytes: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    barriers: int = 0
    #: Sum of per-function constant banks other than bank 0 (compiler constants).
    const_bytes: int = 0
    #: Every per-function ``N bytes cmem[B]`` item: bank -> bytes (empty on sm_90+).
    cmem_banks: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cmem_banks", {int(k): int(v) for k, v in dict(self.cmem_banks).items()})

    def __hash__(self) -> int:  # the dict field would make the generated hash fail
        items = tuple((k, v) for k, v in asdict(self).items() if k != "cmem_banks")
        return hash((items, tuple(sorted(self.cmem_banks.items()))))

    @property
    def param_cmem_bytes(self) -> int:
        """Constant bank 0 (kernel parameters + driver-reserved area; 0 on sm_90+)."""
        return self.cmem_banks.get(0, 0)

    @property
    def has_spills(self) -> bool:
        return self.spill_stores > 0 or self.spill_loads > 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly dict (``cmem_banks`` keys become strings)."""
        data = asdict(self)
        data["cmem_banks"] = {str(k): v for k, v in sorted(self.cmem_banks.items())}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResourceUsage:
        data = dict(data)
        data["cmem_banks"] = {int(k): int(v) for k, v in dict(data.get("cmem_banks") or {}).items()}
        return cls(**data)


@dataclass(frozen=True)
class ModuleResources:
    """Module-wide items of the ``ptxas -v`` report (the ``N bytes gmem`` line)."""

    #: Global memory of ``__device__`` variables (and library tables).
    gmem_bytes: int = 0
    #: Module constant banks: bank 3 = user ``__constant__`` data (sm_75..sm_89 only).
    cmem_banks: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cmem_banks", {int(k): int(v) for k, v in dict(self.cmem_banks).items()})

    def __hash__(self) -> int:
        return hash((self.gmem_bytes, tuple(sorted(self.cmem_banks.items()))))

    def to_dict(self) -> dict[str, Any]:
        return {"gmem_bytes": self.gmem_bytes, "cmem_banks": {str(k): v for k, v in sorted(self.cmem_banks.items())}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModuleResources:
        return cls(
            gmem_bytes=int(data.get("gmem_bytes", 0)),
            cmem_banks={int(k): int(v) for k, v in dict(data.get("cmem_banks") or {}).items()},
        )


# --------------------------------------------------------------------------- parsing

_PREFIX = r"^\s*ptxas\s+info\s*:\s*"
_COMPILING_RE = re.compile(_PREFIX + r"Compiling\s+(entry\s+)?function\s+'([^']+)'(?:\s+for\s+'([^']+)')?")
_PROPERTIES_RE = re.compile(_PREFIX + r"Function\s+properties\s+for\s+(\S+)")
_STACK_RE = re.compile(
    r"^\s*(\d+)\s+bytes\s+stack\s+frame,\s*(\d+)\s+bytes\s+spill\s+stores,\s*(\d+)\s+bytes\s+spill\s+loads"
)
_USED_RE = re.compile(_PREFIX + r"Used\s+(\d+)\s+registers(.*)$")
_GMEM_RE = re.compile(_PREFIX + r"(\d+\s+bytes\s+gmem.*)$")
_ITEM_RE = re.compile(r"(\d+)\s+bytes\s+(smem|lmem|gmem|cumulative\s+stack\s+size|cmem\[(\d+)\])")
_BARRIERS_RE = re.compile(r"used\s+(\d+)\s+barriers?")


class _Record:
    def __init__(self, name: str, is_entry: bool, arch: str) -> None:
        self.name = name
        self.is_entry = is_entry
        self.arch = arch
        self.registers = 0
        self.shared = 0
        self.local = 0
        self.cumulative: int | None = None
        self.spill_stores = 0
        self.spill_loads = 0
        self.barriers = 0
        self.cmem: dict[int, int] = {}

    def freeze(self) -> ResourceUsage:
        return ResourceUsage(
            name=self.name,
            is_entry=self.is_entry,
            arch=self.arch,
            registers=self.registers,
            shared_bytes=self.shared,
            local_bytes=self.local,
            cumulative_stack_bytes=self.local if self.cumulative is None else self.cumulative,
            spill_stores=self.spill_stores,
            spill_loads=self.spill_loads,
            barriers=self.barriers,
            const_bytes=sum(v for k, v in self.cmem.items() if k != 0),
            cmem_banks=dict(self.cmem),
        )


def parse_ptxas_verbose(text: str, arch: str = "") -> dict[str, ResourceUsage]:
    """Parse a ``ptxas -v`` report into ``{mangled function name: ResourceUsage}``.

    Covers entry kernels (``is_entry=True``) and ``.func`` device functions
    (``is_entry=False``), in report order.  ``arch`` is used for functions
    whose arch the report does not name (``.func`` functions take the arch of
    the last ``Compiling ... for 'sm_XX'`` line seen, else this argument).
    Warnings, ``Compile time`` and ``Overriding maximum register limit``
    lines are ignored; unknown lines are skipped.
    """
    records: dict[str, _Record] = {}
    current: _Record | None = None
    last_arch = arch

    def get(name: str, is_entry: bool, rec_arch: str) -> _Record:
        rec = records.get(name)
        if rec is None:
            rec = records[name] = _Record(name, is_entry, rec_arch)
        else:
            rec.is_entry = rec.is_entry or is_entry
            if rec_arch and not rec.arch:
                rec.arch = rec_arch
        return rec

    for line in text.splitlines():
        m = _COMPILING_RE.match(line)
        if m:
            is_entry = m.group(1) is not None
            if m.group(3):
                last_arch = m.group(3)
            current = get(m.group(2), is_entry, m.group(3) or last_arch)
            continue
        m = _PROPERTIES_RE.match(line)
        if m:
            name = m.group(1)
            if current is None or current.name != name:
                # A function with no "Compiling ..." line: a .func device function.
                current = get(name, False, last_arch)
            continue
        m = _STACK_RE.match(line)
        if m and current is not None:
            current.local, current.spill_stores, current.spill_loads = (int(g) for g in m.groups())
            continue
        m = _USED_RE.match(line)
        if m and current is not None:
            current.registers = int(m.group(1))
            rest = m.group(2)
            b = _BARRIERS_RE.search(rest)
            current.barriers = int(b.group(1)) if b else 0
            for item in _ITEM_RE.finditer(rest):
                size, kind, bank = int(item.group(1)), item.group(2), item.group(3)
                if kind == "smem":
                    current.shared = size
                elif kind.startswith("cumulative"):
                    current.cumulative = size
                elif bank is not None:
                    current.cmem[int(bank)] = size
            continue
    return {name: rec.freeze() for name, rec in records.items()}


def parse_ptxas_module(text: str) -> ModuleResources:
    """Parse the module-wide ``N bytes gmem[, N bytes cmem[B]...]`` line (the
    values are summed if the line appears more than once)."""
    gmem = 0
    banks: dict[int, int] = {}
    for line in text.splitlines():
        m = _GMEM_RE.match(line)
        if not m:
            continue
        for item in _ITEM_RE.finditer(m.group(1)):
            size, kind, bank = int(item.group(1)), item.group(2), item.group(3)
            if kind == "gmem":
                gmem += size
            elif bank is not None:
                banks[int(bank)] = banks.get(int(bank), 0) + size
    return ModuleResources(gmem_bytes=gmem, cmem_banks=banks)


# --------------------------------------------------------------------------- running ptxas


def ptxas_command(arch: str, maxrregcount: int | None = None, options: tuple[str, ...] | list[str] = (),
                  ptxas: str | None = None) -> list[str]:
    """The ptxas command line (without input/output files) tlpsim runs; `ptxas` is
    another toolchain's ptxas (default: CUDA 13.5's)."""
    check_arch(arch)
    cmd = [ptxas or str(find_toolkit().ptxas), f"-arch={arch}", "-v"]
    if maxrregcount is not None:
        if not isinstance(maxrregcount, int) or isinstance(maxrregcount, bool) or maxrregcount <= 0:
            raise TlpsimError(f"maxrregcount must be a positive integer, got {maxrregcount!r}")
        cmd.append(f"-maxrregcount={maxrregcount}")
    cmd.extend(options)
    return cmd


def run_ptxas_verbose(
    ptx_text: str,
    arch: str,
    maxrregcount: int | None = None,
    *,
    options: tuple[str, ...] | list[str] = (),
    name: str = "<ptx>",
    ptxas: str | None = None,
) -> tuple[str, list[str]]:
    """Assemble ``ptx_text`` with ``ptxas -v`` in a temporary directory (``ptxas``:
    another toolchain's ptxas; default CUDA 13.5's).

    Returns ``(report text, command)``; raises :class:`CompileError` with
    ptxas's output when ptxas fails.  The cubin is discarded.
    """
    env = None if ptxas else find_toolkit().env()
    base = ptxas_command(arch, maxrregcount, options, ptxas)
    with tempfile.TemporaryDirectory(prefix="tlpsim-ptxas-") as tmp:
        ptx_file = Path(tmp) / "input.ptx"
        ptx_file.write_text(ptx_text, encoding="utf-8")
        cmd = [*base, "input.ptx", "-o", "output.cubin"]
        try:
            proc = subprocess.run(cmd, check=False, cwd=tmp, env=env, capture_output=True, text=True, errors="replace")
        except OSError as exc:
            raise CompileError(f"cannot run ptxas for {name}: {exc}", cmd) from exc
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise CompileError(f"ptxas failed to assemble {name} for {arch}", cmd, output)
    return output, cmd


def ptxas_resources(ptx_text: str, arch: str, maxrregcount: int | None = None) -> dict[str, ResourceUsage]:
    """Run ``ptxas -arch=<arch> -v [-maxrregcount=N]`` on PTX text and return
    the per-function resources (see :func:`parse_ptxas_verbose`).

    The PTX ``.target`` must not be newer than ``arch`` (ptxas: "SM version
    specified by .target is higher than default SM version assumed").
    """
    text, _ = run_ptxas_verbose(ptx_text, arch, maxrregcount)
    return parse_ptxas_verbose(text, arch)


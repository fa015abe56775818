"""Reading the fat binaries nvcc embeds in a program: the PTX tlpsim executes.

nvcc's host code registers each translation unit's device code at start-up with
`__cudaRegisterFatBinary(&wrapper)`. The wrapper (fatbinary_section.h) is

    { u32 magic 0x466243b1; u32 version; u64 *data; void *filename_or_fatbins }

and `data` points at the fat binary: a 16-byte header (u32 magic 0xBA55ED50,
u16 version, u16 header size, u64 size of the entries) followed by entries, each
with its own header:

    offset  0 u16 kind (1 PTX, 2 ELF/SASS)     24 u16 minor, u16 major version
            4 u32 header size                  28 u32 arch (80 for sm_80)
            8 u64 payload size                 40 u64 flags (0x2000 / 0x8000: compressed)
           16 u32 compressed size              56 u64 uncompressed size (compressed entries)

nvcc compresses PTX entries unless given `--no-compress` (tlpsim nvcc passes it);
a compressed entry is reported, not guessed at.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

WRAPPER_MAGIC = 0x466243B1
FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2
_COMPRESSED = 0x2000 | 0x8000


class FatbinError(Exception):
    pass


@dataclass
class Entry:
    kind: int
    arch: int
    version: tuple[int, int]
    compressed: bool
    payload: bytes = field(repr=False)

    @property
    def ptx(self) -> str:
        return self.payload.split(b"\0", 1)[0].decode("utf-8", "replace")


@dataclass
class FatBinary:
    entries: list[Entry]
    # -rdc=true: the translation units' own fat binaries (wrapper version 2), whose PTX is linked
    prelinked: list["FatBinary"] = field(default_factory=list)

    @property
    def ptx_entries(self) -> list[Entry]:
        return [e for e in self.entries if e.kind == KIND_PTX]

    def best_ptx(self, arch: int | None = None) -> Entry | None:
        """The uncompressed PTX entry for `arch` if there is one, else the newest."""
        ptx = [e for e in self.ptx_entries if not e.compressed]
        if not ptx:
            return None
        exact = [e for e in ptx if e.arch == arch]
        return exact[0] if exact else max(ptx, key=lambda e: e.arch)

    def describe(self) -> str:
        """What the binary holds, e.g. 'SASS for sm_80, compressed PTX for compute_80'."""
        parts = []
        for e in self.entries:
            what = "PTX" if e.kind == KIND_PTX else "SASS" if e.kind == KIND_ELF else f"kind-{e.kind} code"
            target = f"compute_{e.arch}" if e.kind == KIND_PTX else f"sm_{e.arch}"
            parts.append(("compressed " if e.compressed else "") + f"{what} for {target}")
        if self.prelinked:
            units = "; ".join(u.describe() for u in self.prelinked)
            return (", ".join(parts) or "no device code") + f" (device-linked; its units hold: {units})"
        return ", ".join(parts) or "no device code"


def parse_fatbin(blob: bytes) -> FatBinary:
    """Parse a fat binary (header + entries)."""
    if len(blob) < 16:
        raise FatbinError("truncated fat binary header")
    magic, _version, hsize, size = struct.unpack_from("<IHHQ", blob, 0)
    if magic != FATBIN_MAGIC:
        raise FatbinError(f"not a fat binary (magic {magic:#x})")
    end = hsize + size
    if end > len(blob):
        raise FatbinError("fat binary is shorter than its header says")
    entries = []
    off = hsize
    while off + 16 <= end:
        kind, _, ehsize, payload = struct.unpack_from("<HHIQ", blob, off)
        if ehsize < 64 or off + ehsize + payload > end:
            raise FatbinError(f"corrupt fat binary entry at offset {off}")
        minor, major, arch = struct.unpack_from("<HHI", blob, off + 24)
        (flags,) = struct.unpack_from("<Q", blob, off + 40)
        uncompressed = struct.unpack_from("<Q", blob, off + 56)[0] if ehsize >= 64 else 0
        compressed = bool(flags & _COMPRESSED) or uncompressed != 0
        entries.append(Entry(kind, arch, (major, minor), compressed,
                             blob[off + ehsize: off + ehsize + payload]))
        off += ehsize + payload
    return FatBinary(entries)


def _read_at(data: int, read) -> FatBinary:
    _m, _v, hsize, size = struct.unpack("<IHHQ", read(data, 16))
    return parse_fatbin(read(data, hsize + size))


def read_registered(address: int, read) -> FatBinary:
    """The fat binary a program registered: `address` is the wrapper's address and
    `read(address, n)` returns n bytes of the program's memory.

    A version-2 wrapper (the device link of a program built with -rdc=true) also
    points at a NULL-terminated array of the translation units' fat binaries; they
    become `prelinked`."""
    magic, version, data, extra = struct.unpack("<IIQQ", read(address, 24))
    if magic != WRAPPER_MAGIC:
        raise FatbinError(f"__cudaRegisterFatBinary was given no fat binary wrapper (magic {magic:#x})")
    if data == 0:
        raise FatbinError("the fat binary wrapper points at no device code")
    fatbin = _read_at(data, read)
    if version == 2 and extra:
        for k in range(4096):
            (unit,) = struct.unpack("<Q", read(extra + 8 * k, 8))
            if unit == 0:
                break
            fatbin.prelinked.append(_read_at(unit, read))
    return fatbin

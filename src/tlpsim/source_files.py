"""Source files given by path (`tlpsim analyze`, `ptx`, `compile`;
`RawModule(path=...)`) are checked to be text before the frontend reads them: an
object file, an executable or random bytes named .ptx or .cu then gets one error
naming the file, instead of a decoding traceback from the PTX reader or pages of
nvcc complaints about the bytes."""

from __future__ import annotations

from pathlib import Path

from tlpsim.errors import TlpsimError

__all__ = ["check_source_file"]

# git's rule: text never holds a NUL byte, and looking at the head is enough
_SNIFF_BYTES = 8000


def check_source_file(path: str | Path) -> Path:
    """`path` if it is a readable text file; else a TlpsimError naming it. PTX must
    be UTF-8 (the parser reads it as such); CUDA C++ may use another 8-bit encoding
    (nvcc passes the bytes of comments and strings through), so for .cu only NUL
    bytes mark a binary file."""
    p = Path(path)
    if not p.is_file():
        raise TlpsimError(f"no such file: {p}" if not p.exists() else f"{p} is not a regular file")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise TlpsimError(f"cannot read {p}: {exc.strerror or exc}") from None
    kind = "PTX" if p.suffix == ".ptx" else "CUDA C++"
    if data.startswith(b"\x7fELF"):
        raise TlpsimError(f"{p} is an ELF binary (an object file or executable), not {kind} source; "
                          "to simulate a CUDA program use `tlpsim exec`")
    nul = data.find(b"\0", 0, _SNIFF_BYTES)
    if nul >= 0:
        raise TlpsimError(f"{p} is not a text file (a NUL byte at offset {nul}); expected {kind} source")
    if p.suffix == ".ptx":
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise TlpsimError(f"{p}:{line}: byte 0x{data[exc.start]:02x} at offset {exc.start} is not UTF-8 text; "
                              "expected PTX source") from None
    return p

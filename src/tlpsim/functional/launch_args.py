"""A launch's arguments checked before anything runs: grid and block against
CUDA's limits, dynamic shared memory against the per-block limit, and every
kernel argument against its PTX parameter.

Argument conversion follows CuPy where CuPy's conversion gives the value the
caller meant, and is an error naming the parameter where it would silently
reinterpret bits:

=========================  =================================================================
argument                   accepted for
=========================  =================================================================
device array               a 64-bit parameter (the pointer); it must live on the launching Device
None                       a 64-bit parameter (a null pointer, as in CuPy)
Python bool / int          an integer (.u/.s/.b) parameter whose width holds the value (signed
                           or unsigned: nvcc declares `int` as .u32); a float parameter (converted)
Python float               a .f16/.f32/.f64 parameter (converted to its precision)
Python complex             an 8-byte (complex<float>) or 16-byte (complex<double>) parameter
NumPy integer / bool       an integer or bit parameter of the same width
NumPy float                a float or bit parameter of the same width (np.float64 for a .f32
                           parameter, or np.int32 for a .f32 one, is an error)
NumPy complex              a parameter of the same size (8 or 16 bytes)
structured NumPy scalar,   a parameter of exactly its size (a struct passed by value; CuPy also
one-element structured     takes a one-element structured array)
array, bytes
=========================  =================================================================
"""

from __future__ import annotations

import struct

import numpy as np

from tlpsim.errors import TlpsimError

# CUDA's limits (CUDA C Programming Guide, "Technical Specifications per Compute Capability")
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BLOCK = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024
DEFAULT_SHARED_PER_BLOCK = 48 * 1024  # without cudaFuncSetAttribute(MaxDynamicSharedMemorySize)
# the opt-in maximum of shared memory per block, by architecture (Kepler to Pascal and
# sm_72 have no opt-in: 48 KiB; the cuda11 toolchain reaches them)
OPTIN_SHARED_PER_BLOCK = {35: 48 * 1024, 70: 96 * 1024, 72: 48 * 1024, 75: 64 * 1024, 80: 163 * 1024, 86: 99 * 1024, 87: 163 * 1024, 89: 99 * 1024,
                          90: 227 * 1024, 100: 227 * 1024, 103: 227 * 1024, 110: 227 * 1024, 120: 99 * 1024,
                          121: 99 * 1024}

_INT_FMT = {1: "B", 2: "H", 4: "I", 8: "Q"}
_FLOAT_FMT = {2: "e", 4: "f", 8: "d"}


class LaunchArgumentError(TlpsimError):
    """A launch's grid, block, shared memory or kernel argument is not valid."""


def as_dim3(v, what: str) -> tuple[int, int, int]:
    """A grid or block as three positive ints. Only ints (Python or NumPy) are
    accepted: `1.5` or `"12"` is an error, not 1 or (1, 2)."""
    items = (v,) if _is_int(v) else v
    if isinstance(v, (str, bytes)) or not isinstance(items, (tuple, list)):
        raise LaunchArgumentError(f"{what} must be an int or a tuple of 1-3 ints, got {v!r}")
    if not 1 <= len(items) <= 3 or not all(_is_int(x) for x in items):
        raise LaunchArgumentError(f"{what} must be an int or a tuple of 1-3 ints, got {v!r}")
    dims = tuple(int(x) for x in items)
    if any(d < 1 for d in dims):
        raise LaunchArgumentError(f"{what} dimensions must be positive, got {v!r}")
    return (dims + (1, 1))[:3]  # type: ignore[return-value]


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def check_shape(grid, block, kernel: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """`grid` and `block` as dim3s within CUDA's limits (named in the error)."""
    g, b = as_dim3(grid, "grid"), as_dim3(block, "block")
    for k, axis in enumerate("xyz"):
        if g[k] > MAX_GRID[k]:
            raise LaunchArgumentError(f"kernel {kernel}: grid {axis} = {g[k]} exceeds CUDA's limit of "
                                      f"{MAX_GRID[k]} (maximum grid: {MAX_GRID[0]} x {MAX_GRID[1]} x {MAX_GRID[2]})")
        if b[k] > MAX_BLOCK[k]:
            raise LaunchArgumentError(f"kernel {kernel}: block {axis} = {b[k]} exceeds CUDA's limit of "
                                      f"{MAX_BLOCK[k]} (maximum block: {MAX_BLOCK[0]} x {MAX_BLOCK[1]} x "
                                      f"{MAX_BLOCK[2]})")
    threads = b[0] * b[1] * b[2]
    if threads > MAX_THREADS_PER_BLOCK:
        raise LaunchArgumentError(f"kernel {kernel}: a block of {b[0]} x {b[1]} x {b[2]} = {threads} threads "
                                  f"exceeds CUDA's limit of {MAX_THREADS_PER_BLOCK} threads per block")
    return g, b


def optin_limit(arch: str) -> int:
    """The most shared memory a block may opt in to on `arch` (sm_XX)."""
    try:
        number = int(str(arch).removeprefix("sm_").rstrip("af"))
    except ValueError:
        return OPTIN_SHARED_PER_BLOCK[80]
    known = [a for a in OPTIN_SHARED_PER_BLOCK if a <= number]
    return OPTIN_SHARED_PER_BLOCK[max(known)] if known else OPTIN_SHARED_PER_BLOCK[75]


def check_shared(dynamic, static: int, kernel: str, arch: str, max_dynamic: int | None = None) -> int:
    """Dynamic shared memory bytes, checked: a non-negative int, and static + dynamic
    within CUDA's 48 KiB per-block default, or the kernel's opt-in
    (`max_dynamic_shared_size_bytes`, as CuPy's attribute) up to the architecture's maximum."""
    if not _is_int(dynamic):
        raise LaunchArgumentError(f"kernel {kernel}: shared_mem must be an int number of bytes, got {dynamic!r}")
    dyn = int(dynamic)
    if dyn < 0:
        raise LaunchArgumentError(f"kernel {kernel}: shared_mem must be >= 0 bytes, got {dyn}")
    top = optin_limit(arch)
    if max_dynamic is None:
        limit = DEFAULT_SHARED_PER_BLOCK
        how = (f"CUDA's default per-block limit of {DEFAULT_SHARED_PER_BLOCK} bytes (48 KiB); set "
               f"kernel.max_dynamic_shared_size_bytes to opt in to more, up to {top} on {arch}")
    else:
        limit = min(static + int(max_dynamic), top)
        how = (f"the kernel's max_dynamic_shared_size_bytes ({max_dynamic}) plus its static shared memory"
               if static + int(max_dynamic) <= top else f"the {top}-byte per-block maximum of {arch}")
    if static + dyn > limit:
        raise LaunchArgumentError(f"kernel {kernel}: {dyn} bytes of dynamic shared memory plus {static} static "
                                  f"exceed {how}")
    return dyn


def check_max_dynamic(value, arch: str) -> int:
    """A value for `RawKernel.max_dynamic_shared_size_bytes`."""
    top = optin_limit(arch)
    if not _is_int(value) or not 0 <= int(value) <= top:
        raise LaunchArgumentError(f"max_dynamic_shared_size_bytes must be an int from 0 to {top} on {arch}, "
                                  f"got {value!r}")
    return int(value)


# ---------------------------------------------------------------- arguments


def _kind(ptype: str) -> str:
    """'f' float, 'i' integer, 'b' bits (any scalar of the width), 'p' predicate."""
    if ptype.startswith("f"):
        return "f"
    if ptype.startswith(("u", "s")):
        return "i"
    if ptype == "pred":
        return "i"
    return "b"


def _describe(p) -> str:
    return f".{p.type}" + (f"[{p.count}]" if p.count > 1 else "") + f" ({p.size} bytes)"


def convert_argument(p, a, k: int, kernel: str, address_of) -> bytes:
    """The bytes of argument `k` (`a`) for parameter `p`, or a LaunchArgumentError
    naming the argument, the parameter and what to pass instead."""
    where = f"argument {k} of kernel {kernel} (parameter '{p.name}', {_describe(p)})"
    try:
        addr = address_of(a)
    except LaunchArgumentError as exc:
        raise LaunchArgumentError(f"{where}: {exc}") from None
    if addr is not None:
        if p.size != 8 or p.count > 1 and p.type != "b8":
            raise LaunchArgumentError(f"{where}: a device array (a 64-bit pointer) cannot be passed here")
        return struct.pack("<Q", addr)
    if a is None:
        if p.size != 8:
            raise LaunchArgumentError(f"{where}: None (a null pointer) needs a 64-bit parameter")
        return bytes(8)
    kind = _kind(p.type) if p.count == 1 else "raw"
    if isinstance(a, (bytes, bytearray, memoryview)):
        raw = bytes(a)
    elif isinstance(a, np.void) or (isinstance(a, np.ndarray) and a.dtype.kind == "V"):
        if isinstance(a, np.ndarray) and a.size != 1:
            raise LaunchArgumentError(f"{where}: a structured NumPy array passes a struct by value only with one "
                                      f"element, this one has {a.size}")
        raw = np.ascontiguousarray(a).tobytes()
    elif isinstance(a, np.generic):  # before the Python types: np.float64 is a float, np.complex128 a complex
        raw = _from_numpy(a, p, kind, where)
    elif isinstance(a, bool):
        raw = _from_int(int(a), p, kind, where, "bool")
    elif isinstance(a, int):
        raw = _from_int(a, p, kind, where, "int")
    elif isinstance(a, float):
        raw = _from_float(a, p, kind, where)
    elif isinstance(a, complex):
        raw = _from_complex(a, p, where)
    elif isinstance(a, np.ndarray) and a.ndim == 0:
        return convert_argument(p, a[()], k, kernel, address_of)
    else:
        raise LaunchArgumentError(f"{where}: cannot pass a {type(a).__name__} (pass a device array, a NumPy "
                                  "scalar, a Python number, or a structured NumPy scalar for a struct)")
    if len(raw) != p.size:
        raise LaunchArgumentError(f"{where}: the value has {len(raw)} bytes, the parameter takes {p.size}")
    return raw


def _from_int(v: int, p, kind: str, where: str, what: str) -> bytes:
    if kind == "f":
        return struct.pack("<" + _FLOAT_FMT[p.size], float(v))
    if kind == "raw":
        raise LaunchArgumentError(f"{where}: a Python {what} cannot fill a struct or array parameter; pass a "
                                  "structured NumPy scalar or bytes")
    bits = 8 * p.size
    if not -(1 << (bits - 1)) <= v < (1 << bits):
        raise LaunchArgumentError(f"{where}: {v} does not fit in {bits} bits")
    return struct.pack("<" + _INT_FMT[p.size], v & ((1 << bits) - 1))


def _from_float(v: float, p, kind: str, where: str) -> bytes:
    if kind == "i":
        raise LaunchArgumentError(f"{where}: a Python float ({v!r}) for an integer parameter; pass an int "
                                  "(converting would truncate)")
    if p.size not in _FLOAT_FMT or kind == "raw":
        raise LaunchArgumentError(f"{where}: a Python float cannot fill a {p.size}-byte parameter")
    try:
        return struct.pack("<" + _FLOAT_FMT[p.size], v)
    except OverflowError:
        raise LaunchArgumentError(f"{where}: {v!r} is out of range for a {8 * p.size}-bit float") from None


def _from_complex(v: complex, p, where: str) -> bytes:
    if p.size == 16:
        return np.complex128(v).tobytes()
    if p.size == 8:
        return np.complex64(v).tobytes()
    raise LaunchArgumentError(f"{where}: a complex number needs an 8-byte (complex<float>) or 16-byte "
                              "(complex<double>) parameter")


def _from_numpy(a: np.generic, p, kind: str, where: str) -> bytes:
    dt = a.dtype
    name = f"np.{dt.name}"
    if dt.itemsize != p.size:
        raise LaunchArgumentError(f"{where}: {name} has {dt.itemsize} bytes; pass a {p.size}-byte value "
                                  f"{_suggest(p)}")
    if kind == "f" and dt.kind not in "f":
        raise LaunchArgumentError(f"{where}: {name} for a float parameter would reinterpret its bits; pass "
                                  f"{_suggest(p)}")
    if kind == "i" and dt.kind not in "iub":
        raise LaunchArgumentError(f"{where}: {name} for an integer parameter would reinterpret its bits; pass "
                                  f"{_suggest(p)}")
    return a.tobytes()


def _suggest(p) -> str:
    if p.count > 1:
        return "(bytes or a structured NumPy scalar)"
    t = p.type
    if t.startswith("f"):
        return f"(e.g. np.float{8 * p.size}(x))"
    if t.startswith("s"):
        return f"(e.g. np.int{8 * p.size}(x))"
    if t.startswith("u"):
        return f"(e.g. np.int{8 * p.size}(x) or np.uint{8 * p.size}(x))"
    return f"(a {8 * p.size}-bit NumPy scalar)"


def pack_params(params: list, args: tuple, kernel: str, address_of) -> np.ndarray:
    """Lay kernel arguments out as the `.param` space expects. `address_of(arg)`
    returns a device address for array-like arguments, or None."""
    if len(args) != len(params):
        sig = ", ".join(f"{p.name}: {_describe(p)}" for p in params)
        raise LaunchArgumentError(f"kernel {kernel} takes {len(params)} argument(s), {len(args)} given "
                                  f"(parameters: {sig or 'none'})")
    buf = bytearray()
    for k, (p, a) in enumerate(zip(params, args)):
        start = -(-len(buf) // p.align) * p.align
        buf.extend(bytes(start - len(buf)))
        buf.extend(convert_argument(p, a, k, kernel, address_of))
    out = np.zeros(max(16, -(-len(buf) // 16) * 16), dtype=np.uint8)
    out[: len(buf)] = np.frombuffer(bytes(buf), dtype=np.uint8)
    return out


__all__ = ["LaunchArgumentError", "as_dim3", "check_max_dynamic", "check_shape", "check_shared",
           "convert_argument", "optin_limit", "pack_params"]

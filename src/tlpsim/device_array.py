"""Device arrays: `ndarray`, a C-contiguous array in simulated device memory, and
CuPy's constructors (`asarray`, `zeros`, `empty`, ...). Operators, reductions and
indexing run on the host with NumPy (tlpsim.array_ops); kernels are what is
simulated (tlpsim.host)."""

from __future__ import annotations

import numpy as np

from tlpsim.array_ops import HOST_OPS, ArrayOps
from tlpsim.cuda_errors import ArgumentTypeError, ArgumentValueError
from tlpsim.device_pointer import MemoryPointer
from tlpsim.errors import ArgumentError, TlpsimError
from tlpsim.host import Device


def _shape(shape) -> tuple[int, ...]:
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    if any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) for d in dims):
        raise ArgumentError(f"shape {shape!r}: dimensions must be whole numbers")
    if any(d < 0 for d in dims):  # NumPy's words
        raise ArgumentError(f"shape {shape!r}: negative dimensions are not allowed")
    return tuple(int(d) for d in dims)


def _dtype(dtype) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise ArgumentError(f"dtype {dtype!r} is not a NumPy data type") from None
    if dt.kind in "OU":  # device memory holds numbers or raw records: an object array's bytes are Python pointers
        raise ArgumentError(f"dtype {dt} is not supported on the device: arrays hold booleans, integers, floats, "
                            "complex numbers or fixed-size records")
    return dt


class ndarray(ArrayOps):
    """A C-contiguous array in simulated device memory: `ndarray(shape, dtype, memptr)`
    as in CuPy (`memptr`, a MemoryPointer or array, puts it over existing memory).
    Operators, reductions and indexing run on the host with NumPy (tlpsim.array_ops);
    kernels are what is simulated."""

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C", *, device: Device | None = None,
                 _ptr: int | None = None) -> None:
        if order not in ("C", None):
            raise ArgumentValueError(f"ndarray(order={order!r}): tlpsim's arrays are C-contiguous (order='C')")
        if memptr is not None:
            if not hasattr(memptr, "ptr") or not hasattr(memptr, "device"):
                raise ArgumentTypeError(f"ndarray(memptr=...): expected a MemoryPointer (cupy.cuda.memory.alloc) "
                                        f"or a device array, not {type(memptr).__name__}")
            device, _ptr = memptr.device, int(memptr.ptr)
        self.device = device or Device.current()
        self.shape = _shape(shape)
        self.dtype = _dtype(dtype)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * self.dtype.itemsize
        if strides is not None and tuple(strides) != _c_strides(self.shape, self.dtype.itemsize):
            raise ArgumentValueError(f"ndarray strides {tuple(strides)}: tlpsim's arrays are C-contiguous "
                                     f"(strides {_c_strides(self.shape, self.dtype.itemsize)})")
        self.ptr = _ptr if _ptr is not None else self.device.memory.alloc(self.nbytes, f"ndarray{self.shape}")
        avail = None if memptr is None else (memptr.nbytes if isinstance(memptr, ndarray) else memptr.size)
        if avail is not None and self.nbytes > avail:
            raise ArgumentValueError(f"ndarray{self.shape} of {self.dtype} needs {self.nbytes} bytes; the memory "
                                     f"at {self.ptr:#x} has {avail}")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        return _c_strides(self.shape, self.dtype.itemsize)

    @property
    def data(self) -> MemoryPointer:
        """The array's memory, as CuPy's `a.data`."""
        return MemoryPointer(self.device, self.ptr, self.nbytes)

    def get(self, stream=None, out=None) -> np.ndarray:
        raw = self.device.memory.read(self.ptr, self.nbytes)
        host = raw.view(self.dtype).reshape(self.shape).copy()
        if out is not None:
            out[...] = host
            return out
        return host

    def set(self, arr, stream=None) -> None:
        a = np.asarray(arr, dtype=self.dtype)
        if a.shape != self.shape:
            raise TlpsimError(f"set: shape {a.shape} does not match {self.shape}")
        self.device.memory.write(self.ptr, np.ascontiguousarray(a).reshape(-1))

    def _from_host(self, host: np.ndarray) -> "ndarray":
        out = ndarray(host.shape, host.dtype, device=self.device)
        out.set(host)
        return out

    def _view(self, offset: int, shape: tuple, dtype) -> "ndarray":
        return ndarray(shape, dtype, device=self.device, _ptr=self.ptr + int(offset))

    def copy(self, order="C") -> "ndarray":
        HOST_OPS["copy"] += 1
        out = ndarray(self.shape, self.dtype, device=self.device)
        out.set(self.get())
        return out

    def fill(self, value) -> None:
        self.set(np.full(self.shape, value, dtype=self.dtype))

    def reshape(self, *shape, order="C") -> "ndarray":
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        shape = tuple(int(s) for s in shape)
        if shape.count(-1) > 1:
            raise ArgumentValueError(f"reshape{shape}: only one dimension can be -1")
        if -1 in shape:
            known = int(np.prod([s for s in shape if s != -1]))
            if known == 0 or self.size % known:
                raise ArgumentValueError(f"cannot reshape array of size {self.size} into shape {shape}")
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        if int(np.prod(shape)) != self.size:
            raise ArgumentValueError(f"cannot reshape array of size {self.size} into shape {shape}")
        return ndarray(shape, self.dtype, device=self.device, _ptr=self.ptr)

    def ravel(self, order="C") -> "ndarray":
        return self.reshape(self.size)

    def view(self, dtype=None) -> "ndarray":
        """The same memory read as `dtype` (the last axis rescaled, as NumPy does)."""
        if dtype is None:
            return ndarray(self.shape, self.dtype, device=self.device, _ptr=self.ptr)
        dt = np.dtype(dtype)
        shape = self.shape or (1,)
        last = shape[-1] * self.dtype.itemsize
        if last % dt.itemsize:
            raise ArgumentValueError(f"view({dt}): the last axis ({last} bytes) is not a multiple of {dt.itemsize}")
        return ndarray(shape[:-1] + (last // dt.itemsize,), dt, device=self.device, _ptr=self.ptr)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"tlpsim.ndarray(shape={self.shape}, dtype={self.dtype}, ptr={self.ptr:#x})"

    def __str__(self) -> str:
        return str(self.get())

    def __array__(self, dtype=None, copy=None):
        out = self.get()
        return out.astype(dtype) if dtype is not None else out

    def __reduce__(self):
        return (asarray, (self.get(),))


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    out, step = [], itemsize
    for s in reversed(shape):
        out.append(step)
        step *= max(s, 1)
    return tuple(reversed(out))


def asarray(a, dtype=None, order=None) -> ndarray:
    if isinstance(a, ndarray) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    host = np.asarray(a.get() if isinstance(a, ndarray) else a, dtype=dtype)
    if host.dtype.kind in "OU":
        raise ArgumentError(f"asarray: argument a has dtype {host.dtype} ({type(a).__name__}); a device array holds "
                            "booleans, integers, floats, complex numbers or fixed-size records (convert it first, "
                            "e.g. np.asarray(a, dtype=np.float32))")
    out = ndarray(host.shape, host.dtype)
    out.set(host)
    return out


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0) -> ndarray:
    host = np.array(obj.get() if isinstance(obj, ndarray) else obj, dtype=dtype, ndmin=ndmin)
    if isinstance(obj, ndarray) and not copy and host.dtype == obj.dtype and host.shape == obj.shape:
        return obj
    out = ndarray(host.shape, host.dtype)
    out.set(host)
    return out


def asnumpy(a, stream=None, out=None) -> np.ndarray:
    host = a.get() if isinstance(a, ndarray) else np.asarray(a)
    if out is not None:
        out[...] = host
        return out
    return host


def empty(shape, dtype=float, order="C") -> ndarray:
    return ndarray(shape, dtype)


def zeros(shape, dtype=float, order="C") -> ndarray:
    return ndarray(shape, dtype)  # fresh device memory is zeroed


def ones(shape, dtype=float, order="C") -> ndarray:
    out = ndarray(shape, dtype)
    out.fill(1)
    return out


def full(shape, fill_value, dtype=None, order="C") -> ndarray:
    dtype = dtype or np.asarray(fill_value).dtype
    out = ndarray(shape, dtype)
    out.fill(fill_value)
    return out


def empty_like(a, dtype=None, order="K", subok=None, shape=None) -> ndarray:
    return ndarray(a.shape if shape is None else shape, dtype or a.dtype)


def zeros_like(a, dtype=None, order="K", subok=None, shape=None) -> ndarray:
    return ndarray(a.shape if shape is None else shape, dtype or a.dtype)


def ones_like(a, dtype=None, order="K", subok=None, shape=None) -> ndarray:
    return ones(a.shape if shape is None else shape, dtype or a.dtype)


def full_like(a, fill_value, dtype=None, order="K", subok=None, shape=None) -> ndarray:
    return full(a.shape if shape is None else shape, fill_value, dtype or a.dtype)


def arange(*args, dtype=None) -> ndarray:
    return asarray(np.arange(*args, dtype=dtype))


"""The element-wise, comparison, reduction and indexing operations of the host API's
arrays, as CuPy scripts use them (`c = a + b`, `(x == 1).all()`, `a[2:5] = 0`,
`a.astype(np.float64)`). They are not simulated: each one copies its operands out of
the simulated device memory, computes with NumPy on the host and writes the result
into a new device array (or, for in-place operators and slice assignment, back into
the operand). Only kernel launches are simulated; `HOST_OPS` counts these
operations by name so a launch summary can say how much of a script ran on the host.

`ArrayOps` is a mixin: the array class provides `get()`, `set()`, `_from_host()`
(a new device array holding a NumPy array) and `_view()` (an array over part of its
own memory)."""

from __future__ import annotations

import operator
import warnings
from collections import Counter

import numpy as np

#: host-executed array operations by name (reset with HOST_OPS.clear())
HOST_OPS: Counter = Counter()


class StridedCopyWarning(UserWarning):
    """A slice that is not contiguous in memory was returned as a copy (CuPy returns a view)."""


def host_value(x):
    """NumPy's view of an operand: device arrays are copied to the host, everything else passes."""
    return x.get() if isinstance(x, ArrayOps) else x


def _binary(name: str, fn):
    def op(self, other):
        if not _is_operand(other):
            return NotImplemented
        HOST_OPS[name] += 1
        return self._from_host(np.asarray(fn(self.get(), host_value(other))))

    def rop(self, other):
        if not _is_operand(other):
            return NotImplemented
        HOST_OPS[name] += 1
        return self._from_host(np.asarray(fn(host_value(other), self.get())))

    def iop(self, other):
        if not _is_operand(other):
            return NotImplemented
        HOST_OPS[name] += 1
        h = self.get()
        h[...] = fn(h, host_value(other))  # NumPy's same-kind casting rule, as CuPy's in-place operators
        self.set(h)
        return self

    return op, rop, iop


def _is_operand(x) -> bool:
    return isinstance(x, (ArrayOps, np.ndarray, np.generic, int, float, complex, bool))


def _unary(name: str, fn):
    def op(self):
        HOST_OPS[name] += 1
        return self._from_host(np.asarray(fn(self.get())))

    return op


def _reduction(name: str):
    def op(self, axis=None, dtype=None, out=None, keepdims=False):
        HOST_OPS[name] += 1
        kw = {"axis": axis, "keepdims": keepdims}
        if dtype is not None:
            kw["dtype"] = dtype
        return _into(self, np.asarray(getattr(np, name)(self.get(), **kw)), out)

    op.__name__ = name
    return op


def _index_reduction(name: str):
    def op(self, axis=None, out=None, keepdims=False):
        HOST_OPS[name] += 1
        return _into(self, np.asarray(getattr(np, name)(self.get(), axis=axis, keepdims=keepdims)), out)

    op.__name__ = name
    return op


def _into(self, result: np.ndarray, out):
    if out is None:
        return self._from_host(result)
    out.set(result.astype(out.dtype, copy=False).reshape(out.shape))
    return out


def _device_index(key):
    """An index with device arrays (boolean masks, index arrays) copied to the host."""
    if isinstance(key, tuple):
        return tuple(host_value(k) for k in key)
    return host_value(key)


class ArrayOps:
    """Operators and methods of a device array, executed with NumPy on the host."""

    __hash__ = None  # element-wise __eq__: unhashable, as CuPy's and NumPy's arrays
    __array_priority__ = 100.0

    # -- supplied by the array class
    def get(self, stream=None) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def set(self, arr, stream=None) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _from_host(self, host: np.ndarray):  # pragma: no cover - abstract
        raise NotImplementedError

    def _view(self, offset: int, shape: tuple, dtype):  # pragma: no cover - abstract
        raise NotImplementedError

    # -- arithmetic and comparisons
    __add__, __radd__, __iadd__ = _binary("add", operator.add)
    __sub__, __rsub__, __isub__ = _binary("subtract", operator.sub)
    __mul__, __rmul__, __imul__ = _binary("multiply", operator.mul)
    __truediv__, __rtruediv__, __itruediv__ = _binary("true_divide", operator.truediv)
    __floordiv__, __rfloordiv__, __ifloordiv__ = _binary("floor_divide", operator.floordiv)
    __mod__, __rmod__, __imod__ = _binary("remainder", operator.mod)
    __pow__, __rpow__, __ipow__ = _binary("power", operator.pow)
    __matmul__, __rmatmul__, __imatmul__ = _binary("matmul", operator.matmul)
    __and__, __rand__, __iand__ = _binary("bitwise_and", operator.and_)
    __or__, __ror__, __ior__ = _binary("bitwise_or", operator.or_)
    __xor__, __rxor__, __ixor__ = _binary("bitwise_xor", operator.xor)
    __lshift__, __rlshift__, __ilshift__ = _binary("left_shift", operator.lshift)
    __rshift__, __rrshift__, __irshift__ = _binary("right_shift", operator.rshift)
    __eq__ = _binary("equal", operator.eq)[0]
    __ne__ = _binary("not_equal", operator.ne)[0]
    __lt__ = _binary("less", operator.lt)[0]
    __le__ = _binary("less_equal", operator.le)[0]
    __gt__ = _binary("greater", operator.gt)[0]
    __ge__ = _binary("greater_equal", operator.ge)[0]
    __neg__ = _unary("negative", operator.neg)
    __pos__ = _unary("positive", operator.pos)
    __abs__ = _unary("absolute", np.abs)
    __invert__ = _unary("invert", operator.invert)

    # -- reductions (results are device arrays, 0-d for a whole-array reduction, as in CuPy)
    sum = _reduction("sum")
    prod = _reduction("prod")
    mean = _reduction("mean")
    max = _reduction("max")
    min = _reduction("min")
    all = _reduction("all")
    any = _reduction("any")
    argmax = _index_reduction("argmax")
    argmin = _index_reduction("argmin")

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        HOST_OPS["var"] += 1
        return _into(self, np.asarray(np.var(self.get(), axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)), out)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        HOST_OPS["std"] += 1
        return _into(self, np.asarray(np.std(self.get(), axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)), out)

    # -- conversions
    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        HOST_OPS["astype"] += 1
        return self._from_host(self.get().astype(dtype))

    def conj(self):
        HOST_OPS["conj"] += 1
        return self._from_host(np.conj(self.get()))

    conjugate = conj

    @property
    def real(self):
        HOST_OPS["real"] += 1
        return self._from_host(np.ascontiguousarray(self.get().real))

    @property
    def imag(self):
        HOST_OPS["imag"] += 1
        return self._from_host(np.ascontiguousarray(self.get().imag))

    @property
    def T(self):  # noqa: N802 - NumPy's name
        return self.transpose()

    def transpose(self, *axes):
        HOST_OPS["transpose"] += 1
        return self._from_host(np.ascontiguousarray(self.get().transpose(*axes)))

    def flatten(self):
        HOST_OPS["copy"] += 1
        return self._from_host(self.get().ravel())

    def item(self, *args):
        return self.get().item(*args)

    def tolist(self):
        return self.get().tolist()

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(f"the truth value of an array with {self.size} elements is ambiguous; "
                             "use a.any() or a.all()")
        return bool(self.get().reshape(()))

    def __float__(self) -> float:
        return float(self.get().reshape(()))

    def __int__(self) -> int:
        return int(self.get().reshape(()))

    def __complex__(self) -> complex:
        return complex(self.get().reshape(()))

    def __index__(self) -> int:
        if self.dtype.kind not in "iub" or self.size != 1:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self)

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        row = self.nbytes // self.shape[0] if self.shape[0] else 0
        for i in range(self.shape[0]):  # rows of a C-contiguous array are views, as a[i] is
            yield self._view(i * row, self.shape[1:], self.dtype)

    # -- indexing: a basic index that selects contiguous memory is a view, as in CuPy
    def __getitem__(self, key):
        HOST_OPS["getitem"] += 1
        key = _device_index(key)
        whole = self.get()
        part = whole[key]
        if isinstance(part, np.ndarray) and np.shares_memory(part, whole) and part.flags.c_contiguous:
            offset = part.__array_interface__["data"][0] - whole.__array_interface__["data"][0]
            return self._view(offset, part.shape, part.dtype)
        if isinstance(part, np.ndarray) and np.shares_memory(part, whole):
            warnings.warn(f"index {key!r} selects memory that is not contiguous: tlpsim returns a copy (CuPy "
                          "returns a view), so writing to the result does not change this array; assign "
                          "through the original (a[idx] = ...) instead", StridedCopyWarning, stacklevel=2)
        return self._from_host(np.ascontiguousarray(part))

    def __setitem__(self, key, value) -> None:
        HOST_OPS["setitem"] += 1
        h = self.get()
        h[_device_index(key)] = host_value(value)
        self.set(h)

    # -- NumPy interoperation: ufuncs on device arrays run on the host and return device arrays
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        HOST_OPS[getattr(ufunc, "__name__", "ufunc")] += 1
        out = kwargs.pop("out", None)
        result = getattr(ufunc, method)(*(host_value(x) for x in inputs), **kwargs)
        if out is not None:
            outs = out if isinstance(out, tuple) else (out,)
            results = result if isinstance(result, tuple) else (result,)
            for o, r in zip(outs, results):
                if isinstance(o, ArrayOps):
                    o.set(np.asarray(r).astype(o.dtype, copy=False))
                else:
                    o[...] = r
            return out if isinstance(out, tuple) or len(outs) > 1 else outs[0]
        if isinstance(result, tuple):
            return tuple(self._from_host(np.asarray(r)) for r in result)
        return self._from_host(np.asarray(result))


__all__ = ["ArrayOps", "HOST_OPS", "StridedCopyWarning", "host_value"]

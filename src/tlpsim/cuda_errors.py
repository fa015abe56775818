"""CUDA's error classes as CuPy raises them (`cupy.cuda.driver.CUDADriverError`,
`cupy.cuda.compiler.CompileException`), and
argument errors that are also Python's `TypeError`/`ValueError` where CuPy raises
those. Every class is a TlpsimError too, so the CLI and existing callers that catch
TlpsimError keep working; the text starts with CUDA's error name, as CuPy's does."""

from __future__ import annotations

from tlpsim.errors import ArgumentError, CompileError, KernelNotFound, TlpsimError

# CUresult: code -> (name, text), as cuGetErrorName/cuGetErrorString give them
DRIVER_ERRORS: dict[int, tuple[str, str]] = {
    1: ("CUDA_ERROR_INVALID_VALUE", "invalid argument"),
    2: ("CUDA_ERROR_OUT_OF_MEMORY", "out of memory"),
    101: ("CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"),
    200: ("CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"),
    209: ("CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"),
    218: ("CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"),
    301: ("CUDA_ERROR_FILE_NOT_FOUND", "file not found"),
    500: ("CUDA_ERROR_NOT_FOUND", "named symbol not found"),
    700: ("CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"),
    701: ("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"),
    719: ("CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"),
}
DRIVER_CODES = {name: code for code, (name, _) in DRIVER_ERRORS.items()}


class CUDADriverError(TlpsimError):
    """`cupy.cuda.driver.CUDADriverError`: `status` is the CUresult code; the text is
    'NAME: description' followed by what tlpsim knows about the cause."""

    def __init__(self, status: int | str, detail: str = "") -> None:
        self.status = DRIVER_CODES[status] if isinstance(status, str) else int(status)
        name, text = DRIVER_ERRORS.get(self.status, (f"CUDA_ERROR_{self.status}", "unknown error"))
        super().__init__(f"{name}: {text}" + (f" ({detail})" if detail else ""))


class SymbolNotFound(CUDADriverError, KernelNotFound):
    """CUDA_ERROR_NOT_FOUND for a kernel or global a module does not have."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(500, detail)


class CompileException(CompileError):
    """`cupy.cuda.compiler.CompileException`: a compile that failed, with the
    compiler's log in the text; `source`, `name`, `options` and `backend` as in CuPy."""

    def __init__(self, msg: str, source: str = "", name: str = "", options=(), backend: str = "nvrtc",
                 command: list[str] | None = None, output: str = "") -> None:
        self._msg = msg
        self.source = source
        self.name = name
        self.options = tuple(options)
        self.backend = backend
        super().__init__(msg, command, output)

    def get_message(self) -> str:
        return str(self)

    def dump(self, f) -> None:
        """Write the source with line numbers, as CuPy's CompileException.dump does."""
        lines = self.source.split("\n")
        digits = len(str(len(lines)))
        f.write(f"{self.backend.upper()} compilation error: {self._msg}\n")
        f.write("-----\n")
        f.write(f"Name: {self.name}\nOptions: {' '.join(self.options)}\nCUDA source:\n")
        for i, line in enumerate(lines, 1):
            f.write(f"{i:>{digits}} {line}\n")
        f.write("-----\n")
        f.flush()


class JitifyException(CompileException):
    """`cupy.cuda.compiler.JitifyException`: a compile failure of a module built with jitify=True."""


class ArgumentTypeError(ArgumentError):
    """A call with arguments of the wrong kind: a TypeError, as CuPy raises it (an
    ArgumentError, so also a ValueError, as every tlpsim argument error is)."""


class ArgumentValueError(ArgumentError):
    """A call with a value CuPy rejects with ValueError (an ArgumentError)."""


__all__ = ["ArgumentTypeError", "ArgumentValueError", "CUDADriverError", "CompileException",
           "DRIVER_ERRORS", "JitifyException", "SymbolNotFound"]

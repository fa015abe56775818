"""Exception hierarchy: every error a user can cause is a TlpsimError with a
message that names the file, line, kernel, thread or key involved."""

from __future__ import annotations


class TlpsimError(Exception):
    """Base class of the errors tlpsim reports to users (the CLI prints them
    without a traceback)."""


class ToolkitNotFound(TlpsimError):
    """The CUDA compiler wheels or the host gcc are missing."""


class CompileError(TlpsimError):
    """nvcc or ptxas rejected the input; carries the command and its output."""

    def __init__(self, message: str, command: list[str] | None = None, output: str = ""):
        self.command = command or []
        self.output = output
        text = message
        if command:
            text += "\n  command: " + " ".join(command)
        if output:
            text += "\n" + "\n".join("  | " + line for line in output.rstrip().splitlines())
        super().__init__(text)


class PTXSyntaxError(TlpsimError):
    """Malformed PTX; names file:line:column and shows the offending line."""

    def __init__(self, message: str, filename: str, line: int, column: int = 1, source_line: str = ""):
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line
        text = f"{filename}:{line}:{column}: {message}"
        if source_line:
            text += "\n  " + source_line.rstrip("\n").expandtabs(4)
            caret_col = len(source_line[: max(column - 1, 0)].expandtabs(4))
            text += "\n  " + " " * caret_col + "^"
        super().__init__(text)


class UnsupportedPTX(PTXSyntaxError):
    """Valid-looking PTX that tlpsim does not implement (unknown opcode or directive)."""


class KernelNotFound(TlpsimError):
    """A kernel name matched nothing, or matched several kernels."""


class ArgumentError(TlpsimError, TypeError, ValueError):
    """A Python API call (array creation, RawModule/RawKernel, a launch) got an
    argument of the wrong type or value; names the argument and what it must be.
    Also a TypeError and a ValueError, so code written for CuPy or NumPy that
    catches those still does."""


class ArgumentWarning(UserWarning):
    """A launch argument that is accepted but probably not meant: an array whose
    element type differs from its pointer parameter's (its bytes are reinterpreted,
    as on a GPU and in CuPy). Given once per kernel, parameter and element type."""


class ConfigError(TlpsimError):
    """An unknown configuration key or an out-of-range value."""


class KernelError(TlpsimError):
    """A fault while executing a kernel: illegal address, misaligned access,
    deadlocked barrier, trap, or an exceeded instruction budget. Names the kernel,
    CTA, thread, PTX line and (for memory faults) the address."""

    def __init__(self, message: str, *, kernel: str = "", cta: tuple | None = None, thread: tuple | None = None,
                 line: int | None = None, address: int | None = None, filename: str = "", hint: str = "") -> None:
        self.kernel = kernel
        self.cta = cta
        self.thread = thread
        self.line = line
        self.address = address
        parts = [message]
        where = []
        if kernel:
            where.append(f"kernel {kernel}")
        if cta is not None:
            where.append(f"CTA ({', '.join(map(str, cta))})")
        if thread is not None:
            where.append(f"thread ({', '.join(map(str, thread))})")
        if line:
            where.append(f"{filename or 'PTX'} line {line}")
        if where:
            parts.append(" in " + ", ".join(where))
        if hint:
            parts.append("; " + hint)
        super().__init__("".join(parts))


class DeviceAssertError(KernelError):
    """A failed device-side `assert` (CUDA's cudaErrorAssert)."""


class PluginError(TlpsimError):
    """A plug-in broke its contract while the timing model ran: one of its methods
    raised, returned something its extension point does not accept, or did not return
    within the time limit. Names the plug-in (`point.name`), its class and file, the
    method and the rule broken."""

    def __init__(self, message: str, *, plugin: str = "", path: str = "", method: str = "", rule: str = "") -> None:
        self.plugin = plugin
        self.path = path
        self.method = method
        self.rule = rule
        super().__init__(message)

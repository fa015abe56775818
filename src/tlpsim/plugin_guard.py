"""Bad plug-ins get clear errors, never "internal error" or a hang.

A plug-in is user code run inside the simulator. When one of its methods raises,
calls `sys.exit`, or runs past the time limit, the failure becomes a `PluginError`
naming the plug-in (`point.name`), its class and file, the method the simulator
called and the rule broken. The checks cost nothing while plug-ins behave: one
`try` around the whole timing run (free in CPython until it raises), the plug-in
found afterwards from the traceback's frames, and a wall-clock limit by SIGALRM
(main thread only; elsewhere runs are not limited).

- `guarded(time_limit, what)`: around a timing run (tlpsim.session).
- `bad_return(obj, method, rule)`: the error for a method that returned what its
  extension point does not accept (raised by the timing model's checks).
- `wall_clock_limit(seconds, on_expire)`: SIGALRM timer that nests inside another
  one (the validator's), calling `on_expire(frame)` in the interrupted code.
"""

from __future__ import annotations

import contextlib
import inspect
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType
from typing import Any

from tlpsim.errors import KernelError, PluginError, TlpsimError

__all__ = ["bad_return", "describe", "guarded", "plugin_frame", "wall_clock_limit"]


def _plugin_class(frame: FrameType) -> type | None:
    """The registered plug-in class whose method `frame` runs (None when it is not one)."""
    obj = frame.f_locals.get("self")
    if obj is None:
        return None
    cls = type(obj)
    return cls if getattr(cls, "plugin_point", None) is not None else None


def plugin_frame(frames: list[FrameType]) -> tuple[type, FrameType] | None:
    """The outermost frame (in call order) running a plug-in's method: the call the
    simulator made into the plug-in."""
    for f in frames:
        cls = _plugin_class(f)
        if cls is not None:
            return cls, f
    return None


def _tb_frames(tb: TracebackType | None) -> list[FrameType]:
    out = []
    while tb is not None:
        out.append(tb.tb_frame)
        tb = tb.tb_next
    return out


def _stack_frames(frame: FrameType | None) -> list[FrameType]:
    out = []
    while frame is not None:
        out.append(frame)
        frame = frame.f_back
    return out[::-1]   # outermost first, as in a traceback


def _source_file(cls: type) -> str:
    try:
        return inspect.getsourcefile(cls) or "?"
    except (TypeError, OSError):
        return str(getattr(sys.modules.get(cls.__module__), "__file__", "") or "?")


def describe(cls: type) -> tuple[str, str]:
    """(`point.name`, "Class in file") of a registered plug-in class."""
    key = f"{getattr(cls, 'plugin_point', 'plugin')}.{getattr(cls, 'plugin_name', cls.__name__)}"
    return key, f"{cls.__name__} in {_source_file(cls)}"


def _error(cls: type, method: str, rule: str) -> PluginError:
    key, where = describe(cls)
    return PluginError(f"plug-in {key} ({where}), {method}(): {rule}", plugin=key, path=_source_file(cls),
                       method=method, rule=rule)


def bad_return(obj: Any, method: str, rule: str) -> PluginError:
    """The error for a plug-in method that returned what its extension point does not accept."""
    return _error(type(obj), method, rule)


def _where(frames: list[FrameType], tb_lines: list[traceback.FrameSummary] | None = None) -> str:
    """`file, line N` of the innermost frame that is not tlpsim's own code."""
    summaries = tb_lines if tb_lines is not None else [
        traceback.FrameSummary(f.f_code.co_filename, f.f_lineno, f.f_code.co_name) for f in frames]
    for s in reversed(summaries):
        if "/tlpsim/" not in s.filename.replace("\\", "/") or "/policies/" in s.filename.replace("\\", "/"):
            return f"{s.filename}, line {s.lineno}"
    s = summaries[-1]
    return f"{s.filename}, line {s.lineno}"


def _from_exception(exc: BaseException) -> PluginError | None:
    frames = _tb_frames(exc.__traceback__)
    found = plugin_frame(frames)
    if found is None:
        return None
    cls, f = found
    at = _where(frames[frames.index(f):], traceback.extract_tb(exc.__traceback__)[frames.index(f):])
    if isinstance(exc, SystemExit):
        rule = f"a plug-in must not exit the simulator; it called sys.exit({exc.code!r}) at {at}"
    else:
        rule = (f"a plug-in method must return normally; it raised {type(exc).__name__}: {exc} at {at}")
    return _error(cls, f.f_code.co_name, rule)


REFIRE_S = 0.1   # after the limit: seconds between further raises while the body has not stopped


@contextlib.contextmanager
def wall_clock_limit(seconds: float | None, on_expire: Callable[[FrameType | None], Any]) -> Iterator[None]:
    """Call `on_expire(frame)` (which raises) if the body runs longer than `seconds`.
    An outer SIGALRM timer (e.g. the validator's) keeps working: ours fires no later
    than it, hands it over when its time is the one that came, and it is re-armed
    with what is left afterwards. No limit outside the main thread or without SIGALRM."""
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    t0 = time.monotonic()
    outer_handler = signal.getsignal(signal.SIGALRM)
    outer_delay, outer_interval = signal.setitimer(signal.ITIMER_REAL, 0)
    outer_due = t0 + outer_delay if outer_delay else None

    expired = False

    def handler(signum: int, frame: FrameType | None) -> None:
        nonlocal expired
        if outer_due is not None and time.monotonic() >= outer_due - 1e-3 and callable(outer_handler):
            outer_handler(signum, frame)
            return
        expired = True
        # fire again while the body runs on: the raise can land where Python swallows it
        # (a __del__, a weakref or GC callback), and a body that never returns would
        # otherwise never be stopped
        signal.setitimer(signal.ITIMER_REAL, REFIRE_S)
        on_expire(frame)

    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer_delay) if outer_delay else seconds)
    try:
        yield
        # a swallowed raise in a body that then returned: the limit still holds
        if expired:
            on_expire(None)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_due is not None:
            signal.setitimer(signal.ITIMER_REAL, max(outer_due - time.monotonic(), 1e-3), outer_interval)


class _TimeUp(BaseException):
    """Raised by the timer inside whatever code was running (not an Exception, so a
    plug-in's `except Exception` does not swallow it)."""

    def __init__(self, error: TlpsimError) -> None:
        super().__init__(str(error))
        self.error = error


@contextlib.contextmanager
def guarded(time_limit: float | None = None, what: str = "the timing simulation") -> Iterator[None]:
    """Run a timing simulation so that a plug-in's failure is a `PluginError` and the
    run takes at most `time_limit` wall-clock seconds (None: no limit)."""

    def expire(frame: FrameType | None) -> None:
        frames = _stack_frames(frame)
        found = plugin_frame(frames)
        if found is not None:
            cls, f = found
            at = _where(frames[frames.index(f):])
            raise _TimeUp(_error(cls, f.f_code.co_name, f"did not return within the time limit of {time_limit:g} s "
                                 f"(--time-limit, Device(time_limit=...), TLPSIM_TIME_LIMIT); it was at {at}"))
        raise _TimeUp(KernelError(f"{what} exceeded its time limit of {time_limit:g} s "
                                  "(--time-limit, Device(time_limit=...), TLPSIM_TIME_LIMIT)"))

    try:
        with wall_clock_limit(time_limit, expire):
            yield
    except _TimeUp as up:
        raise up.error from None
    except TlpsimError:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a plug-in's failure becomes a clear message
        err = _from_exception(exc)
        if err is None:
            raise
        raise err from exc

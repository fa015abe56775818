"""A progress line for long runs: simulated cycles and instructions, shown on the
terminal once a run has lasted `delay` seconds (short runs print nothing extra).

It observes the timing model through the timeline sampler's optional
`on_sample` callback, so it costs nothing when not installed."""

from __future__ import annotations

import threading
import time

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn


class RunProgress:
    """Context manager around one run on `device` (a tlpsim Device)."""

    def __init__(self, device, label: str, *, delay: float = 2.0, console: Console | None = None) -> None:
        self.device = device
        self.label = label
        self.delay = delay
        self.console = console or Console(stderr=True)
        self.cycle = 0
        self.warp_insts = 0
        self.thread_insts = 0
        self._t0 = 0.0
        self._progress: Progress | None = None
        self._task = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._timeline = None

    @property
    def enabled(self) -> bool:
        return self.console.is_terminal

    def __enter__(self) -> RunProgress:
        if not self.enabled:
            return self
        self._t0 = time.perf_counter()
        timing = getattr(self.device, "_timing", None)
        if timing is not None:
            self._timeline = timing.gpu.timeline
            self._timeline.on_sample = self._sample
        if self.delay <= 0:
            self._show()
        else:
            self._timer = threading.Timer(self.delay, self._show)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._timeline is not None:
            self._timeline.on_sample = None
        with self._lock:
            if self._progress is not None:
                self._update()
                self._progress.stop()
                self._progress = None

    def _show(self) -> None:
        with self._lock:
            if self._progress is not None:
                return
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                                      console=self.console, transient=True)
            self._task = self._progress.add_task(self._text(), total=None)
            self._progress.start()

    def _sample(self, cycle: int, warp_insts: int, thread_insts: int) -> None:
        self.cycle, self.warp_insts, self.thread_insts = cycle, warp_insts, thread_insts
        if self._progress is not None:
            self._update()

    def _text(self) -> str:
        launches = len(self.device.launches)
        rate = self.cycle / max(time.perf_counter() - self._t0, 1e-9)
        if self._timeline is None:
            return f"{self.label}: {launches} launches executed"
        return (f"{self.label}: cycle {self.cycle:,} | {self.warp_insts:,} warp insts, {self.thread_insts:,} "
                f"thread insts | {launches} launches | {rate:,.0f} cycles/s")

    def _update(self) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=self._text())

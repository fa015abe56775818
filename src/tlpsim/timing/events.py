"""Event subscriptions of one SM: a handler list per event, filled from the
plug-ins' `events` declarations when the GPU is built. The SM tests a list before
building an event's arguments, so an event nobody subscribed to costs one test.

`instr_issued` is filtered per static instruction: for each kernel the SM asks
every subscriber's `watches(instr)` once and keeps, per pc, the handlers that want
it (`watch_list`); a warp carries its kernel's list, and an instruction nobody
watches costs one index.
"""

from __future__ import annotations

from typing import Any, Callable

from tlpsim.timing.plugin import EVENTS

Handler = Callable[..., Any]


class SMEvents:
    def __init__(self) -> None:
        self.kernel_start: list[Handler] = []
        self.kernel_end: list[Handler] = []
        self.cta_admitted: list[Handler] = []
        self.cta_retired: list[Handler] = []
        self.warp_started: list[Handler] = []
        self.warp_finished: list[Handler] = []
        self.warp_blocked: list[Handler] = []
        self.warp_unblocked: list[Handler] = []
        self.instr_issued: list[Handler] = []
        self.writeback: list[Handler] = []
        self.l1d_access: list[Handler] = []
        self.window: list[Handler] = []
        self.timer: list[Handler] = []
        self._watchers: list[Any] = []          # plug-ins subscribed to instr_issued
        self._watch: dict[int, list[Any]] = {}  # id(static kernel) -> per-pc handler tuples (or None)

    def subscribe(self, plugin: Any, exclude: tuple[str, ...] = ()) -> None:
        for ev in sorted(getattr(plugin, "events", ()) or ()):
            if ev in exclude or ev == "timer":  # timers call on_timer directly
                continue
            getattr(self, ev).append(getattr(plugin, EVENTS[ev]))
            if ev == "instr_issued":
                self._watchers.append(plugin)

    @property
    def block_events(self) -> bool:
        return bool(self.warp_blocked or self.warp_unblocked)

    def watch_list(self, static: Any) -> list[Any] | None:
        """Per pc of `static` (a StaticKernel), the instr_issued handlers watching it
        (a tuple, empty when none); None when nobody subscribed."""
        if not self._watchers:
            return None
        key = id(static)
        wl = self._watch.get(key)
        if wl is None:
            wl = []
            for si in static.instrs:
                wl.append(tuple(p.on_instr_issued for p in self._watchers if p.watches(si)))
            self._watch[key] = wl
        return wl

    def names(self) -> list[str]:
        """The events somebody subscribed to (for listings and tests)."""
        return [ev for ev in EVENTS if getattr(self, ev)]

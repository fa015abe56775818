"""Which plug-ins allow wave sampling: their declared stationarity.

A plug-in class declares `stationarity` (`tlpsim.timing.plugin.STATIONARITY`):

- "stationary": its behaviour after warm-up does not depend on how far the launch
  has run (a warp scheduler, round-robin dispatch): waves may be projected once
  stable;
- "settles": it changes behaviour until a last decision point it reports through
  its port (`port.settled(kid)`, e.g. LCS once Eq. 1 has set every SM's limit):
  waves before every such plug-in has settled never count toward stability;
- "non_stationary" (the default of an undeclared plug-in): it may change behaviour
  at any time (DYNCTA's window-by-window limits): the launch runs in full detail.

`sampling_tracked` names counters (declared, "sum") whose rate per warp
instruction must be stable too before waves are projected."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tlpsim.timing.plugin import STATIONARITY, stationarity_of


def blockers(plugins: Iterable[tuple[str, Any]]) -> list[str]:
    """Keys of the plug-ins ("point.name") that forbid wave sampling outright."""
    return sorted({key for key, obj in plugins if stationarity_of(obj) == "non_stationary"})


def settling(plugins: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The plug-in instances that must report their last decision point first."""
    return [(key, obj) for key, obj in plugins if stationarity_of(obj) == "settles"]


def tracked(plugins: Iterable[tuple[str, Any]]) -> list[tuple[str, str]]:
    """(plug-in key, counter) pairs whose per-instruction rate the stability rule checks."""
    out = []
    for key, obj in plugins:
        for name in getattr(type(obj), "sampling_tracked", ()) or ():
            if (key, name) not in out:
                out.append((key, name))
    return out


__all__ = ["STATIONARITY", "blockers", "settling", "tracked"]

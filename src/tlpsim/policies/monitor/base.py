"""The Monitor extension point: a GPU-level component that observes counters over
sampling windows and may act on them (GPUDuet's throughput monitor, DYNCTA).

At the end of every window of `window_cycles` core cycles (the plug-in's parameter
`window_cycles` when it declares one, else `monitor.window_cycles`) it receives the
window's counters — per SM cycle classes, instructions, stalls, L1 accesses and
misses, resident CTAs and warps, memory-blocked warps; GPU-wide L2, DRAM and
interconnect activity and GPUDuet-style utilisations (`WindowCounters`) — by
subscribing to the `window` event. It acts through its `GPUPort`: per-SM CTA limits
(`port.sm(k).set_cta_limit(kid, n)`), dispatch holds, L1 bypass
(`port.bypass_l1(kid)`).

Context keywords: `port` (`GPUPort`), `config`.
"""

from __future__ import annotations

from typing import Any

from tlpsim.policies.registry import interface
from tlpsim.timing.plugin import Plugin

__all__ = ["Monitor"]


@interface("monitor")
class Monitor(Plugin):
    """Base: observes nothing."""

    def __init__(self, params: Any = None, **context: Any) -> None:
        super().__init__(params, **context)

    @property
    def window_cycles(self) -> int | None:
        """The plug-in's own window length, when its parameters declare one."""
        w = getattr(self.params, "window_cycles", None)
        return int(w) if w is not None else None

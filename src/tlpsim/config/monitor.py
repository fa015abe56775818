"""`[monitor]`: observation over time — timeline sampling, the deadlock watchdog,
and the GPU-level monitor plug-in (extension point 'monitor', e.g. GPUDuet's
throughput monitor)."""

from __future__ import annotations

from tlpsim.config.base import Section
from tlpsim.config.policy import PolicyChoice
from tlpsim.config.types import field

__all__ = ["MonitorConfig"]


class MonitorConfig(Section):
    """Sampling, watchdog and the monitor plug-in."""

    KEY = "monitor"

    timeline_interval_cycles: int = field(1000, "sample occupancy/utilisation counters every this many cycles "
                                                "for the timeline", unit="core cycles", ge=1)
    watchdog_cycles: int = field(100_000, "report a deadlock (with a state dump) when no SM issues or retires "
                                          "anything for this many cycles; 0 disables", unit="core cycles", ge=0)
    window_cycles: int = field(1000, "sampling window of the `window` event (monitor plug-ins, DYNCTA-style CTA "
                                     "schedulers) when the subscribing plug-in declares no `window_cycles` "
                                     "parameter of its own", unit="core cycles", ge=1)
    policy: PolicyChoice = field("none", "monitor plug-in observing counters over time (extension point "
                                         "'monitor'); 'none' = statistics and timeline only")

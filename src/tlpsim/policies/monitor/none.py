"""The baseline: statistics and timeline only, no adaptive monitor."""

from tlpsim.policies.monitor.base import Monitor
from tlpsim.policies.registry import register


@register("monitor", "none")
class NoMonitor(Monitor):
    """Statistics and timeline only; nothing adapts."""
    stationarity = "stationary"

"""The baseline: no context switching (warps keep their slots until they exit)."""

from tlpsim.policies.ctxswitch.base import ContextSwitcher
from tlpsim.policies.registry import register


@register("context_switcher", "none")
class NoContextSwitch(ContextSwitcher):
    """No context switching: every resident warp keeps its slot until it exits."""
    stationarity = "stationary"

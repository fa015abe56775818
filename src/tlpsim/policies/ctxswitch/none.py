"""The baseline: no context switching (warps keep their slots until they exit)."""

from tlpsim.policies.registry import register


@register("context_switcher", "none")
class NoContextSwitch:
    Params = None

    def __init__(self, params=None, **_sm) -> None:
        self.params = params

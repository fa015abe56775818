"""The baseline: statistics and timeline only, no adaptive monitor."""

from tlpsim.policies.registry import register


@register("monitor", "none")
class NoMonitor:
    Params = None

    def __init__(self, params=None, **_gpu) -> None:
        self.params = params

"""The baseline: no redundant execution."""

from tlpsim.policies.registry import register


@register("execution_checker", "none")
class NoChecker:
    Params = None

    def __init__(self, params=None, **_sm) -> None:
        self.params = params

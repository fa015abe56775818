"""The baseline: no redundant execution."""

from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.registry import register


@register("execution_checker", "none")
class NoChecker(ExecutionChecker):
    """No redundant execution."""
    stationarity = "stationary"

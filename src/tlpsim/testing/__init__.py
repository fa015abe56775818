"""Tools for plug-in authors: `tlpsim.testing.check_plugin` runs a plug-in through
the conformance harness (see `tlpsim.testing.conformance` and docs/plugins.md)."""

from tlpsim.testing.conformance import (
    CAPACITY_WORKLOADS,
    CHECKS,
    WORKLOADS,
    ConformanceError,
    Report,
    Target,
    check_config,
    check_plugin,
    check_targets,
)

__all__ = ["CAPACITY_WORKLOADS", "CHECKS", "ConformanceError", "Report", "Target", "WORKLOADS", "check_config", "check_plugin",
           "check_targets"]

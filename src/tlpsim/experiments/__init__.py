"""Paper reproductions: one experiment per paper (`tlpsim experiment list`).

An experiment declares its runs, figures, tables and claims
(`tlpsim.experiments.base`); `tlpsim.experiments.runner` runs it through the sweep
store and writes its outputs."""

from __future__ import annotations

import importlib

from tlpsim.errors import TlpsimError

__all__ = ["EXPERIMENTS", "get_experiment"]

#: name -> (module, class)
EXPERIMENTS: dict[str, tuple[str, str]] = {
    "lcs_bcs": ("tlpsim.experiments.lcs_bcs", "LcsBcs"),
}


def get_experiment(name: str) -> type:
    """The experiment class registered under `name`."""
    if name not in EXPERIMENTS:
        raise TlpsimError(f"unknown experiment {name!r}; experiments: {', '.join(sorted(EXPERIMENTS))}")
    module, cls = EXPERIMENTS[name]
    return getattr(importlib.import_module(module), cls)

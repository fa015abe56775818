"""In-process plug-in tests register classes and load files: each test's
registrations and load records are dropped after it."""

from __future__ import annotations

import copy

import pytest

from tlpsim.policies import external, registry


@pytest.fixture(autouse=True)
def clean_registry():
    """Registrations and load records made by a test are dropped after it."""
    registry.load_plugins()
    saved = (copy.deepcopy(registry._REGISTRY), dict(registry._ORIGINS), dict(external._LOADED),
             dict(external._SOURCES), dict(external._DIGESTS))
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved[0])
    external._STALE.clear()
    for table, old in zip((registry._ORIGINS, external._LOADED, external._SOURCES, external._DIGESTS), saved[1:]):
        table.clear()
        table.update(old)

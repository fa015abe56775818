"""Fixtures shared across the test folders."""

from __future__ import annotations

import uuid

import pytest

from tlpsim.policies.registry import register, unregister


@pytest.fixture
def plugin():
    """Register a class under a fresh name at `point`; unregistered afterwards."""
    made = []

    def reg(point: str, cls: type) -> str:
        name = f"t_{uuid.uuid4().hex[:8]}"
        register(point, name)(cls)
        made.append((point, name))
        return name

    yield reg
    for point, name in made:
        unregister(point, name)

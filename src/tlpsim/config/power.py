"""`[power]`: energy-model settings — technology node, and a free-form `table` of
overrides for the per-node energy table (per-access energies, leakage, Vdd,
structure sizes: whatever the power model reads, keyed the way it documents)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import field_validator

from tlpsim.config.base import Section
from tlpsim.config.types import field

__all__ = ["PowerConfig"]


class PowerConfig(Section):
    """Activity-based energy model settings."""

    KEY = "power"

    enabled: bool = field(True, "compute energy from the activity counters after a run")
    technology_node: str = field("40nm", "process node whose energy table is used (e.g. '40nm', '28nm')")
    table: dict[str, Any] = field({}, "overrides of the node's energy table, e.g. "
                                      "{ rf_bank = { access_energy_pj = 4.68, leakage_mw = 2.8 } }; the keys "
                                      "are the power model's, nested tables allowed")

    @field_validator("technology_node")
    @classmethod
    def _node(cls, v: str) -> str:
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)?nm", v):
            raise ValueError(f"technology node must look like '40nm', got {v!r}")
        return v

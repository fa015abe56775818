"""`[power]`: energy-model settings — technology node, ideal power gating of unused
RF/scratchpad capacity, and a `table` of overrides for the node's energy table
(`src/tlpsim/power/tables/<node>.toml`: per-event energies, leakage per bank,
structure sizes). Override keys are checked against the node's table, so an unknown
structure or key is an error naming it."""

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
                                      "{ rf_bank = { access_energy_pj = 4.68, leakage_mw_per_bank = 2.8 } }; "
                                      "structures and keys must exist in power/tables/<node>.toml")
    gate_unused: bool = field(False, "ideal power gating (no overhead) of register-file and shared-memory capacity "
                                     "not allocated to resident CTAs, as Lee et al. (HPCA 2014) assume (Fermi itself "
                                     "does not gate); an operand-storage plug-in that reports subarray on-cycles "
                                     "overrides it for the RF")

    gate_idle_sms: bool = field(False, "ideal power gating of whole SMs while no warp is resident: SM structures "
                                       "leak only in cycles with resident warps (GPUWattch instead charges idle "
                                       "SMs their idle power, which is the default here)")

    @field_validator("technology_node")
    @classmethod
    def _node(cls, v: str) -> str:
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)?nm", v):
            raise ValueError(f"technology node must look like '40nm', got {v!r}")
        return v

    def problems(self) -> list[str]:
        from tlpsim.errors import ConfigError
        from tlpsim.power.table import override_problems

        try:
            return override_problems(self.technology_node, self.table)
        except ConfigError as exc:  # no table file for the node
            return [str(exc)]

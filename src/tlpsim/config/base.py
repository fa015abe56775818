"""`Section`: the base class of every config section (frozen, unknown keys rejected).

A section declares its fields with `tlpsim.config.types.field` and may override
`problems()` to return cross-field violations; each message names the offending
keys in full (`sm.max_threads`, `l1d.size_kb`), using the section's dotted path
`KEY`. Range checks on single fields are pydantic constraints (`ge`, `le`, ...).
"""

from __future__ import annotations

import json
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["Section", "is_pow2"]


def is_pow2(n: int) -> bool:
    """True for 1, 2, 4, 8, ..."""
    return n > 0 and (n & (n - 1)) == 0


class Section(BaseModel):
    """A frozen group of config fields mirroring one hardware component."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True,
                              use_attribute_docstrings=False)

    KEY: ClassVar[str] = ""
    """Dotted path of this section in the config tree (used in error messages)."""

    def problems(self) -> list[str]:
        """Cross-field violations of this section (empty when consistent)."""
        return []

    def k(self, name: str) -> str:
        """Full dotted key of field `name` of this section, for messages."""
        return f"{self.KEY}.{name}" if self.KEY else name

    @model_validator(mode="after")
    def _cross_check(self) -> "Section":
        found = self.problems()
        if found:
            raise ValueError("; ".join(found))
        return self

    def __hash__(self) -> int:
        return hash((type(self).__name__, json.dumps(self.model_dump(mode="json"), sort_keys=True)))

"""`PolicyChoice`: which plug-in implements an extension point, and its parameters.

In TOML a choice is either a bare name or a table with an `impl` key (the
Ramulator convention); every other key of the table is a parameter of that
implementation::

    warp_scheduler = "gto"
    warp_scheduler = { impl = "two_level", active_warps = 8 }

Both parse to `PolicyChoice(impl=..., params={...})`. The explicit form
`{ impl = "two_level", params = { active_warps = 8 } }` is accepted too.

The impl name and the parameters are *not* checked here: plug-ins register
themselves when their modules are imported, so the check happens when the
simulator is built, through `tlpsim.policies.registry.resolve`, which raises a
`ConfigError` that names the config key and lists the registered choices.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

__all__ = ["PolicyChoice"]

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


class PolicyChoice(BaseModel):
    """A plug-in selection: implementation name plus its (unvalidated) parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    impl: str = Field(description="registered name of the implementation (e.g. 'gto', 'two_level')")
    params: dict[str, Any] = Field(default_factory=dict,
                                   description="parameters of the implementation, checked against its "
                                               "`Params` declaration when the simulator is built")

    @model_validator(mode="before")
    @classmethod
    def _from_toml(cls, value: Any) -> Any:
        if isinstance(value, PolicyChoice):
            return value
        if isinstance(value, str):
            return {"impl": value.strip(), "params": {}}
        if isinstance(value, dict):
            if "impl" not in value:
                raise ValueError("a policy table needs an 'impl' key naming the implementation, "
                                 "e.g. { impl = \"two_level\", active_warps = 8 }")
            rest = {k: v for k, v in value.items() if k != "impl"}
            if set(rest) == {"params"} and isinstance(rest["params"], dict):
                rest = dict(rest["params"])
            for k in rest:
                if not isinstance(k, str):
                    raise ValueError(f"policy parameter names must be strings, got {k!r}")
            return {"impl": value["impl"], "params": rest}
        raise ValueError(f"a policy choice is a name or a table with 'impl', got {type(value).__name__}")

    @model_validator(mode="after")
    def _check_name(self) -> "PolicyChoice":
        if not isinstance(self.impl, str) or not _NAME_RE.fullmatch(self.impl):
            raise ValueError(f"bad implementation name {self.impl!r} (letters, digits, '_' or '-')")
        return self

    @model_serializer(mode="plain")
    def _flat(self) -> dict[str, Any]:
        # flat form, as written in TOML: {"impl": ..., **params}
        out: dict[str, Any] = {"impl": self.impl}
        out.update(self.params)
        return out

    def get(self, name: str, default: Any = None) -> Any:
        """A parameter value, or `default` when the choice does not set it."""
        return self.params.get(name, default)

    def __str__(self) -> str:
        if not self.params:
            return self.impl
        inner = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{self.impl}({inner})"

    def __hash__(self) -> int:
        return hash((self.impl, json.dumps(self.params, sort_keys=True, default=str)))

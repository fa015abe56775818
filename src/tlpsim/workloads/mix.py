"""Concurrent mixes of built-in workloads: "a+b" runs workload a and workload b at
once, each on its own stream, so their kernels execute concurrently on the timing
model (how Lee et al., HPCA 2014 §5.3, build their concurrent-kernel mixes: "we
merge different workloads such that we can execute CKE"). Each part gets the
inputs it gets alone with the same seed; the mix verifies when every part does."""

from __future__ import annotations

import numpy as np

from tlpsim.errors import TlpsimError
from tlpsim.workloads.registry import Workload

__all__ = ["MIX_SEPARATOR", "MixWorkload", "mix_workload"]

MIX_SEPARATOR = "+"


class MixWorkload(Workload):
    """A mix of registered workloads, run concurrently on separate streams."""

    def __init__(self, parts: list[Workload]) -> None:
        name = MIX_SEPARATOR.join(p.name for p in parts)
        super().__init__(name, "concurrent mix: " + ", ".join(p.description for p in parts), parts[0].source,
                         self._unused, tuple(s for p in parts for s in p.stands_for),
                         tuple(sorted({t for p in parts for t in p.traits} | {"concurrent-mix"})))
        self.parts = parts

    @staticmethod
    def _unused(size: str, rng: np.random.Generator) -> list:
        raise TlpsimError("a workload mix runs through execute()")

    def _checks(self, size: str, seed: int) -> list:
        from tlpsim.host import Device, Stream

        checks = []
        for part in self.parts:
            with Stream():  # launches on non-default streams are simulated together at synchronisation
                for c in part.run(size, np.random.default_rng(seed)):
                    c.name = f"{part.name}: {c.name}"
                    checks.append(c)
        Device.current().synchronize()
        return checks

def mix_workload(name: str, table: dict[str, Workload]) -> MixWorkload:
    """The mix named "a+b[+c...]" of registered workloads; TlpsimError naming the unknown part."""
    names = name.split(MIX_SEPARATOR)
    if len(names) < 2 or any(not n for n in names):
        raise TlpsimError(f"bad workload mix {name!r}: write registered workloads joined by '{MIX_SEPARATOR}', "
                          f"e.g. cutcp+stencil2d")
    bad = [n for n in names if n not in table]
    if bad:
        raise TlpsimError(f"unknown workload {bad[0]!r} in mix {name!r}; available: {', '.join(sorted(table))}")
    return MixWorkload([table[n] for n in names])

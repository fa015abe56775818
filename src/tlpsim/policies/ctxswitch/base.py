"""The ContextSwitcher extension point: switching stalled warps or CTAs out of the
scheduler's slots into spare on-chip storage and others in (GPUDuet, Virtual
Thread).

The resource allocator sizes the SM's slot tables (`max_contexts()`), so more
warps can be resident than the schedulers should run at once; the switcher decides
which are switched in. A switched-out warp is held (`port.hold_warp`), its live
state saved with `port.transfer(storage, nbytes, bytes_per_cycle)` into spare
storage accounted with `port.reserve(storage, nbytes)` ("rf", "smem" or "l1":
`port.spare_bytes`), and restored the same way before it is released. The live
state at the switch point comes from the analyses: `port.live_registers(slot)`
(32-bit registers per thread live before the warp's next instruction).

Typical events: `warp_blocked` / `warp_unblocked` (reason "memory"),
`cta_admitted`, `warp_finished`. Context keywords: `port` (`SMPort`), `config`.
"""

from __future__ import annotations

from typing import Any

from tlpsim.policies.registry import interface
from tlpsim.timing.plugin import Plugin

__all__ = ["ContextSwitcher"]


@interface("context_switcher")
class ContextSwitcher(Plugin):
    """Base: switches nothing."""

    def __init__(self, params: Any = None, **context: Any) -> None:
        super().__init__(params, **context)

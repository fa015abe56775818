"""Messages of the memory system: requests from SMs to L2 slices and replies back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

READ: Final = "read"
WRITE: Final = "write"
ATOMIC: Final = "atomic"
HEADER_BYTES: Final = 8  # address/command bytes every packet carries


@dataclass(slots=True, eq=False)
class MemRequest:
    """A memory transaction for one 128-byte line (or part of it).

    `sector_mask` has bit i set for each 32-byte sector i of the line the request
    needs (reads) or writes. `token` is opaque to the memory system and comes back
    on the reply so the requester can find its MSHR entry."""

    kind: str
    addr: int                   # line-aligned byte address
    sector_mask: int
    src_sm: int
    partition: int = -1         # L2 slice (memory sub-partition) serving this address
    token: Any = None
    t_created: int = 0          # femtoseconds
    is_reply: bool = False

    @property
    def n_sectors(self) -> int:
        return self.sector_mask.bit_count()

    def payload_bytes(self) -> int:
        """Bytes of data the packet carries: writes carry data to L2, read and atomic
        replies carry it back."""
        if (self.kind == WRITE and not self.is_reply) or (self.kind != WRITE and self.is_reply):
            return 32 * self.n_sectors
        return 0

    def packet_bytes(self) -> int:
        return HEADER_BYTES + self.payload_bytes()

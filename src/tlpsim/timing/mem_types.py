"""Messages of the memory system: requests from SMs to L2 slices and replies back."""

from __future__ import annotations

from typing import Any, Final

READ: Final = "read"
WRITE: Final = "write"
ATOMIC: Final = "atomic"
HEADER_BYTES: Final = 8  # address/command bytes every packet carries

_POP8: Final = [bin(i).count("1") for i in range(256)]


def popcount(x: int) -> int:
    """Set bits of a non-negative mask: `x.bit_count()`, which the compiled core would
    call as a Python method; sector masks are a byte or less."""
    if x < 256:
        if x >= 0:
            return _POP8[x]
        return x.bit_count()
    n = 0
    while x:
        n += _POP8[x & 255]
        x >>= 8
    return n


def sector_requests(mask: int) -> int:
    """The sector requests GPGPU-Sim's sectored L2 splits a 128-byte line's write
    into (memory_sub_partition::breakdown_request_to_sector_requests): a warp's
    coalesced segment is 128 bytes when it touches both halves of the line (all 4
    sectors, written or not), else the 64- or 32-byte half or sector it touches."""
    if mask & 3 and mask & 12:
        return 4
    return popcount(mask) or 1


class MemRequest:
    """A memory transaction for one 128-byte line (or part of it).

    `sector_mask` has bit i set for each 32-byte sector i of the line the request
    needs (reads) or writes. `token` is opaque to the memory system and comes back
    on the reply so the requester can find its MSHR entry. (A plain class, not a
    dataclass: one is created per request, and the compiled core builds it natively.)"""

    __slots__ = ("kind", "addr", "sector_mask", "src_sm", "partition", "token", "t_created", "is_reply", "t_l2",
                 "ack", "parts", "group", "got", "got_mask")

    def __init__(self, kind: str, addr: int, sector_mask: int, src_sm: int, partition: int = -1,
                 token: Any = None, t_created: int = 0, is_reply: bool = False) -> None:
        self.kind = kind
        self.addr = addr                # line-aligned byte address
        self.sector_mask = sector_mask
        self.src_sm = src_sm
        self.partition = partition      # L2 slice (memory sub-partition) serving this address
        self.token = token
        self.t_created = t_created      # femtoseconds
        self.is_reply = is_reply
        self.t_l2 = -1                  # fs when an L2 slice accepted it (-1: not yet)
        self.ack = True                 # a write the L2 acknowledges (an L1's dirty-line writeback is not)
        self.parts = 1                  # replies this request's reply is split into (one per sector request)
        # a split reply's pieces name the first reply (`group`: None on it), which counts
        # the pieces the requester has gathered and their sectors
        self.group: MemRequest | None = None
        self.got = 0
        self.got_mask = 0

    def __repr__(self) -> str:
        return (f"MemRequest(kind={self.kind!r}, addr={self.addr:#x}, sector_mask={self.sector_mask:#x}, "
                f"src_sm={self.src_sm}, partition={self.partition}, token={self.token!r}, "
                f"t_created={self.t_created}, is_reply={self.is_reply})")

    @property
    def n_sectors(self) -> int:
        return popcount(self.sector_mask)

    def payload_bytes(self) -> int:
        """Bytes of data the packet carries: writes carry data to L2, read and atomic
        replies carry it back."""
        if (self.kind == WRITE and not self.is_reply) or (self.kind != WRITE and self.is_reply):
            return 32 * self.n_sectors
        return 0

    def packet_bytes(self) -> int:
        return HEADER_BYTES + self.payload_bytes()

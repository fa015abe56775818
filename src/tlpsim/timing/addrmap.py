"""DRAM address decoding: byte address -> (channel, bank, row, column, burst,
sub-partition), following GPGPU-Sim's `gpgpu_mem_addr_mapping` (addrdec.cc)."""

from __future__ import annotations

from typing import Any


class DramAddr:
    """A decoded address: channel (chip), bank, row, column (byte in row), burst
    offset, and memory sub-partition (L2 slice) = chip * n_sub + low bank bits. A plain
    class (one per DRAM request; the compiled core builds a NamedTuple through its
    Python-level `__new__`); indexing and `as_tuple()` give the fields in that order."""

    __slots__ = ("chip", "bank", "row", "col", "burst", "sub_partition")

    def __init__(self, chip: int, bank: int, row: int, col: int, burst: int, sub_partition: int) -> None:
        self.chip = chip
        self.bank = bank
        self.row = row
        self.col = col
        self.burst = burst
        self.sub_partition = sub_partition

    def as_tuple(self) -> tuple[int, int, int, int, int, int]:
        return (self.chip, self.bank, self.row, self.col, self.burst, self.sub_partition)

    def __getitem__(self, k: Any) -> Any:
        fields: Any = self.as_tuple()  # (Any: an index or a slice)
        return fields[k]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DramAddr) and self.as_tuple() == other.as_tuple()

    def __hash__(self) -> int:
        return hash(self.as_tuple())

    def __repr__(self) -> str:
        return ("DramAddr(chip={}, bank={}, row={}, col={}, burst={}, sub_partition={})"
                .format(*self.as_tuple()))


def _runs(mask: int) -> tuple[tuple[int, int, int], ...]:
    """Contiguous runs of set bits of mask as (source shift, width mask, dest shift)."""
    runs: list[tuple[int, int, int]] = []
    dst = i = 0
    while mask >> i:
        if (mask >> i) & 1:
            j = i
            while (mask >> j) & 1:
                j += 1
            runs.append((i, (1 << (j - i)) - 1, dst))
            dst += j - i
            i = j
        else:
            i += 1
    return tuple(runs)


def _pack(runs: tuple[tuple[int, int, int], ...], x: int) -> int:
    v = 0
    for s, m, d in runs:
        v |= ((x >> s) & m) << d
    return v


class AddressMap:
    """Decomposes a byte address into (channel, bank, row, column) the way GPGPU-Sim's
    `linear_to_raw_address_translation` does.

    Mask format (`gpgpu_mem_addr_mapping`), e.g. GTX480:
    ``dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.BBBCCCCB.CCSSSSSS``.
    The mask names 64 address bits, most significant first; '.', '|' and ' ' are
    separators. D = channel bit, B = bank, R = row, C = column, S = burst offset
    (also a column bit), 0 = unused. Each field is the concatenation of its bits in
    ascending order. ``dramid@N`` gives the channel id its own bits at bit N instead
    of D letters, and the mask describes the channel-local address with those bits
    removed: if the channel count is a power of two, log2(n) channel bits are inserted
    at N (mask bits >= N move up); otherwise the channel is (addr >> N) % n and the
    local address is ((addr >> N) // n) << N | (addr mod 2^N) (GPGPU-Sim's "gap" case).
    Without ``dramid@`` the D bits must number exactly log2(n_channels).
    """

    def __init__(self, n_channels: int, masks: dict, chip_start: int, n_sub_partitions: int = 1) -> None:
        if n_channels < 1 or n_sub_partitions < 1 or n_sub_partitions & (n_sub_partitions - 1):
            raise ValueError("n_channels must be >= 1 and n_sub_partitions a power of two")
        self.n_channels = n_channels
        self.n_sub_partitions = n_sub_partitions
        self.chip_start = chip_start
        masks = dict(masks)
        nbits = max(0, (n_channels - 1).bit_length())
        self._gap = n_channels & (n_channels - 1) != 0
        if chip_start < 0:
            if self._gap or masks.get("D", 0).bit_count() != nbits:
                raise ValueError(f"with D bits the channel count must be a power of two equal to 2^(D bits): "
                                 f"{n_channels} channels")
        elif not self._gap and nbits:
            low = (1 << chip_start) - 1
            full = (1 << 64) - 1
            for k in "BRCS":
                m = masks.get(k, 0)
                masks[k] = (((m & ~low) << nbits) | (m & low)) & full
            masks["D"] = ((1 << nbits) - 1) << chip_start
        self.masks = masks
        self.n_banks = 1 << masks.get("B", 0).bit_count()
        self._chip, self._bank, self._row = (_runs(masks.get(k, 0)) for k in "DBR")
        self._col = _runs(masks.get("C", 0) | masks.get("S", 0))
        self._burst = _runs(masks.get("S", 0))
        self._low = (1 << max(chip_start, 0)) - 1
        # the lowest log2(n_sub) bank bits select the sub-partition (GPGPU-Sim's sub_partition_id_mask)
        sub_mask = 0
        bank_mask = masks.get("B", 0)
        for _ in range(n_sub_partitions.bit_length() - 1):
            low_bit = bank_mask & -bank_mask
            sub_mask |= low_bit
            bank_mask &= ~low_bit
        self._in_partition = _runs(((1 << 64) - 1) & ~(masks.get("D", 0) | sub_mask))

    @classmethod
    def from_gpgpusim(cls, spec: str, n_channels: int, n_sub_partitions: int = 1) -> AddressMap:
        """Build from a `gpgpu_mem_addr_mapping` string (see the class docstring)."""
        chip_start = -1
        body = spec.strip()
        if body.startswith("dramid@"):
            head, sep, body = body.partition(";")
            if not sep:
                raise ValueError(f"address mapping {spec!r}: expected 'dramid@<bit>;<mask>'")
            chip_start = int(head[len("dramid@"):])
        masks = {k: 0 for k in "DBRCS"}
        bit = 63
        for ch in body:
            if ch in ".| ":
                continue
            u = ch.upper()
            if u in "DBRCS":
                if u == "D" and chip_start >= 0:
                    raise ValueError(f"address mapping {spec!r}: D bits and dramid@ are exclusive")
                if bit >= 0:
                    masks[u] |= 1 << bit
            elif ch != "0":
                raise ValueError(f"address mapping {spec!r}: invalid character {ch!r}")
            bit -= 1
        if bit != -1:
            raise ValueError(f"address mapping {spec!r}: names {63 - bit} bits, expected 64")
        return cls(n_channels, masks, chip_start, n_sub_partitions)

    @classmethod
    def interleaved(cls, n_channels: int, n_banks: int, row_bytes: int, chunk_bytes: int = 256,
                    n_sub_partitions: int = 1) -> AddressMap:
        """Simple default: consecutive `chunk_bytes` chunks rotate over channels; within a
        channel, chunks rotate over banks, then fill the rest of each bank's row, then
        the next row. Local address = [chunk offset | bank | upper column | row]."""
        for name, v in (("n_banks", n_banks), ("row_bytes", row_bytes), ("chunk_bytes", chunk_bytes)):
            if v < 1 or v & (v - 1):
                raise ValueError(f"{name} must be a power of two, got {v}")
        if chunk_bytes > row_bytes:
            raise ValueError("chunk_bytes must not exceed row_bytes")
        cb, bb, colb = chunk_bytes.bit_length() - 1, n_banks.bit_length() - 1, row_bytes.bit_length() - 1
        col = ((1 << cb) - 1) | (((1 << (colb - cb)) - 1) << (cb + bb))
        bank = ((1 << bb) - 1) << cb
        row = ((1 << 64) - 1) & ~((1 << (colb + bb)) - 1)
        return cls(n_channels, {"B": bank, "R": row, "C": col}, cb, n_sub_partitions)

    def _chip_and_rest(self, addr: int) -> tuple[int, int]:
        """The channel of addr and the address with the channel bits taken out."""
        if self._gap:
            hi = addr >> self.chip_start
            return hi % self.n_channels, ((hi // self.n_channels) << self.chip_start) | (addr & self._low)
        return _pack(self._chip, addr), addr

    def decode(self, addr: int) -> DramAddr:
        chip, rest = self._chip_and_rest(addr)
        bank = _pack(self._bank, rest)
        sub = chip * self.n_sub_partitions + (bank & (self.n_sub_partitions - 1))
        return DramAddr(chip, bank, _pack(self._row, rest), _pack(self._col, rest), _pack(self._burst, rest), sub)

    def partition_address(self, addr: int) -> int:
        """addr without its channel and sub-partition bits: the address an L2 slice
        indexes its sets by (GPGPU-Sim's partition_address), so the bits that chose
        the slice do not leave some of its sets unused."""
        if self._gap:
            addr = self._chip_and_rest(addr)[1]
        return _pack(self._in_partition, addr)

    def partition_of(self, addr: int) -> int:
        """The memory sub-partition (L2 slice) serving addr: `decode(addr).sub_partition`
        without decoding row, column and burst (asked once per memory request)."""
        chip, rest = self._chip_and_rest(addr)
        nsub = self.n_sub_partitions
        if nsub == 1:
            return chip
        return chip * nsub + (_pack(self._bank, rest) & (nsub - 1))



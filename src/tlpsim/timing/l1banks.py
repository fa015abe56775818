"""Which L1 data-cache banks an access occupies (l1d.banks, GPGPU-Sim's
gpgpu_l1_banks): a sectored L1 interleaves its banks by 32-byte sector, so a line's
sectors fall in different banks (GPGPU-Sim's Volta model, whose coalescer makes 32-byte
requests and whose set_bank works by sector); a line-filled one interleaves by line."""

from __future__ import annotations

SECTOR_SHIFT = 5   # 32-byte sectors


def bank_mask(line: int, sectors: int, banks: int, line_bytes: int, by_sector: bool) -> int:
    """The banks (a bit each) the access to `line` (its address) and `sectors` (a mask
    of its 32-byte sectors) needs."""
    if not by_sector:
        return 1 << ((line // line_bytes) % banks)
    first = line >> SECTOR_SHIFT
    out = 0
    s = 0
    while sectors:
        if sectors & 1:
            out |= 1 << ((first + s) % banks)
        sectors >>= 1
        s += 1
    return out

"""Cache set-index functions (GPGPU-Sim's cache_config::hash_function): which set a
line address falls in.

`SetIndex` is one callable object per cache, its function chosen by a kind code: the
tag array asks it on every miss, probe and fill, and a compiled method call is far
cheaper than a call through a `Callable` attribute (a closure or lambda), which the
compiled core makes through the generic object protocol. An optional address map
first takes the address to its slice-local form (an L2 slice indexes by
`AddressMap.partition_address`, so the bits that chose the slice do not leave some of
its sets unused).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from tlpsim.timing.addrmap import AddressMap
from tlpsim.timing.mem_types import popcount

# IPOLY hashing (Rau, ISCA 1991), the equations GPGPU-Sim's hashing.cc uses for
# 16 (IPOLY(5)), 32 (IPOLY(37)) and 64 (IPOLY(67)) sets: index bit i is flipped by
# the parity of these bits of addr >> (line bits + set bits).
_IPOLY_BITS = {
    16: ((11, 10, 9, 8, 6, 4, 3, 0), (12, 8, 7, 6, 5, 3, 1, 0), (9, 8, 7, 6, 4, 2, 1),
         (10, 9, 8, 7, 5, 3, 2)),
    32: ((13, 12, 11, 10, 9, 6, 5, 3, 0), (14, 13, 12, 11, 10, 7, 6, 4, 1), (14, 10, 9, 8, 7, 6, 3, 2, 0),
         (11, 10, 9, 8, 7, 4, 3, 1), (12, 11, 10, 9, 8, 5, 4, 2)),
    64: ((18, 17, 16, 15, 12, 10, 6, 5, 0), (15, 13, 12, 11, 10, 7, 5, 1, 0), (16, 14, 13, 12, 11, 8, 6, 2, 1),
         (17, 15, 14, 13, 12, 9, 7, 3, 2), (18, 16, 15, 14, 13, 10, 8, 4, 3), (17, 16, 15, 14, 11, 9, 5, 4)),
}
# irreducible polynomials over GF(2) by degree (bit i = coefficient of x^i)
_IRREDUCIBLE = {1: 0x3, 2: 0x7, 3: 0xB, 4: 0x13, 5: 0x25, 6: 0x43, 7: 0x83, 8: 0x11B, 9: 0x211, 10: 0x409,
                11: 0x805, 12: 0x1053}
SET_INDEX_FUNCTIONS = ("linear", "xor", "xor_hash", "hash", "fermi_hash", "ipoly")

_LINEAR: Final = 0       # line number & (sets - 1)
_LINEAR_MOD: Final = 1   # line number % sets (a set count not a power of two)
_XOR: Final = 2
_FERMI: Final = 3
_IPOLY_TABLE: Final = 4  # GPGPU-Sim's tabulated IPOLY equations
_IPOLY_MOD: Final = 5    # IPOLY by its definition (other powers of two)


class SetIndex:
    """`addr -> set` (call it, or `index`): linear = line number mod sets; xor = that
    XOR the next set-index-width bits; hash = Fermi L1 hash (Nugteren et al., HPCA
    2014; 32/64 sets of 128 B); ipoly = IPOLY (any power of two from 2 to 4096 sets:
    GPGPU-Sim's equations for 16/32/64, the polynomial modulus otherwise). `local`:
    the address map whose `partition_address` is applied first, or any function of
    the address (None: the address itself)."""

    def __init__(self, name: str, n_sets: int, line_bytes: int,
                 local: AddressMap | Callable[[int], int] | None = None) -> None:
        ls = line_bytes.bit_length() - 1
        pow2 = n_sets & (n_sets - 1) == 0
        self.name = name
        self.n_sets = n_sets
        self._ls = ls
        self._m = n_sets - 1
        self._hs = ls + (n_sets - 1).bit_length()
        self._sixty_four = n_sets == 64
        self._k = 0
        self._poly = 0
        self._masks: list[tuple[int, int]] = []
        self._amap: AddressMap | None = local if isinstance(local, AddressMap) else None
        self._local: Callable[[int], int] | None = None if isinstance(local, AddressMap) else local
        if name == "linear":
            self._kind = _LINEAR if pow2 else _LINEAR_MOD
            return
        if name not in SET_INDEX_FUNCTIONS:
            raise ValueError(f"unknown set index function {name!r}; choose one of {list(SET_INDEX_FUNCTIONS)}")
        if not pow2:
            raise ValueError(f"set index {name!r} needs a power-of-two set count, not {n_sets}")
        if name in ("xor", "xor_hash"):
            self._kind = _XOR
        elif name in ("hash", "fermi_hash"):
            if n_sets not in (32, 64) or line_bytes != 128:
                raise ValueError(f"the Fermi hash set index needs 32 or 64 sets of 128-byte lines, "
                                 f"not {n_sets} x {line_bytes}")
            self._kind = _FERMI
        elif n_sets in _IPOLY_BITS:
            self._kind = _IPOLY_TABLE
            self._masks = [(i, sum(1 << b for b in bits)) for i, bits in enumerate(_IPOLY_BITS[n_sets])]
        else:
            k = n_sets.bit_length() - 1
            poly = _IRREDUCIBLE.get(k)
            if poly is None:
                raise ValueError(f"the ipoly set index supports 2..4096 sets (powers of two), not {n_sets}")
            self._kind = _IPOLY_MOD
            self._k, self._poly = k, poly

    def __call__(self, addr: int) -> int:
        return self.index(addr)

    def index(self, a: int) -> int:
        amap = self._amap
        if amap is not None:
            a = amap.partition_address(a)
        elif self._local is not None:
            a = self._local(a)
        kind = self._kind
        ls = self._ls
        if kind == _LINEAR:
            return (a >> ls) & self._m
        if kind == _LINEAR_MOD:
            return (a >> ls) % self.n_sets
        if kind == _XOR:
            return ((a >> ls) ^ (a >> self._hs)) & self._m
        if kind == _FERMI:
            upper = ((a & 0xE000) >> 13) | ((a & 0x20000) >> 14) | ((a & 0x80000) >> 15)
            s = ((a >> 7) & 0x1F) ^ upper
            return s | ((a & 0x1000) >> 7) if self._sixty_four else s
        if kind == _IPOLY_TABLE:
            h = a >> self._hs
            idx = (a >> ls) & self._m
            for i, mk in self._masks:
                if popcount(h & mk) & 1:
                    idx ^= 1 << i
            return idx
        # _IPOLY_MOD: the line number modulo an irreducible polynomial of degree log2(sets)
        # over GF(2) (Rau, ISCA 1991)
        x = a >> ls
        k, poly = self._k, self._poly
        n = x.bit_length()
        while n > k:
            x ^= poly << (n - 1 - k)
            n = x.bit_length()
        return x


def make_set_index(name: str, n_sets: int, line_bytes: int) -> SetIndex:
    """The set-index function `name` for `n_sets` sets of `line_bytes` lines."""
    return SetIndex(name, n_sets, line_bytes)

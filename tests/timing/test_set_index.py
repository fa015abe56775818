"""IPOLY for set counts GPGPU-Sim has no table for: the line number modulo an
irreducible polynomial spreads both consecutive lines and power-of-two strides
evenly over the sets."""

from collections import Counter

import pytest

from tlpsim.timing.cache import make_set_index


@pytest.mark.parametrize("sets", [128, 256, 1024])
def test_generic_ipoly_is_uniform(sets):
    f = make_set_index("ipoly", sets, 128)
    seq = Counter(f(a * 128) for a in range(sets * 8))
    assert len(seq) == sets and set(seq.values()) == {8}
    stride = Counter(f(a * 128 * sets) for a in range(sets * 4))
    assert len(stride) == sets and set(stride.values()) == {4}


def test_ipoly_rejects_non_power_of_two():
    with pytest.raises(ValueError, match="power-of-two"):
        make_set_index("ipoly", 96, 128)

"""The TOML writer round-trips through tomllib."""

from __future__ import annotations

import tomllib

from hypothesis import given, settings
from hypothesis import strategies as st

from tlpsim.config.toml_writer import dumps

keys = st.text(min_size=0, max_size=8).filter(lambda k: k != "impl")
scalars = (st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1)
           | st.floats(allow_nan=False) | st.text(max_size=12))
values = st.recursive(scalars | st.lists(scalars, max_size=4),
                      lambda inner: st.dictionaries(keys, inner, max_size=4), max_leaves=20)
documents = st.dictionaries(keys, values, max_size=6)


@settings(max_examples=100, deadline=None)
@given(documents)
def test_round_trip(doc):
    assert tomllib.loads(dumps(doc)) == doc


def test_policy_choice_without_params_is_a_bare_name():
    text = dumps({"sm": {"warp_scheduler": {"impl": "gto"}, "x": {"impl": "two_level", "n": 6}}})
    assert 'warp_scheduler = "gto"' in text
    assert 'x = { impl = "two_level", n = 6 }' in text


def test_header_comment():
    assert dumps({"a": 1}, "line one\nline two").startswith("# line one\n# line two\n")

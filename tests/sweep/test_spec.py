"""Sweep specs: the cross product, explicit runs, policies, the baseline, and
errors that name the spec file and the offending key."""

from __future__ import annotations

import pytest

from tlpsim.errors import ConfigError
from tlpsim.sweep.job import RunParams
from tlpsim.sweep.spec import parse_spec

ISSUE_FORM = """
workloads = ["vecadd", "reduction"]
sizes = ["tiny"]
presets = ["gtx480"]
[overrides]
"sm.warp_scheduler" = ["lrr", "gto"]   # each list is one axis of the product
"""


def test_issue_form_is_the_cross_product():
    spec = parse_spec(ISSUE_FORM, "s.toml")
    got = {(r.workload, r.size, r.preset, r.seed, r.overrides["sm.warp_scheduler"]) for r in spec.runs}
    assert got == {(w, "tiny", "gtx480", 1, s) for w in ("vecadd", "reduction") for s in ("lrr", "gto")}
    assert len(spec.runs) == 4 and spec.name == "s" and spec.baseline == {}
    # runs of one workload input are adjacent, so they reuse its cached traces
    assert [r.workload for r in spec.runs] == ["reduction", "reduction", "vecadd", "vecadd"]


def test_axes_multiply_scalars_fix_and_bare_dotted_keys_work():
    spec = parse_spec('workloads = ["vecadd"]\nsizes = ["tiny"]\nseeds = [1, 2, 3]\n'
                      "[overrides]\nsm.warp_scheduler = [\"lrr\", \"gto\"]\n\"gpu.max_ctas_per_sm\" = 4\n", "s.toml")
    assert len(spec.runs) == 6
    assert {r.overrides["gpu.max_ctas_per_sm"] for r in spec.runs} == {4}
    assert {r.seed for r in spec.runs} == {1, 2, 3}


def test_policies_explicit_runs_and_baseline():
    spec = parse_spec(
        'name = "x"\nworkloads = ["vecadd"]\nsizes = ["tiny"]\n[policies]\nwarp_scheduler = ["gto"]\n'
        '[[runs]]\nworkload = "reduction"\nsize = "tiny"\npreset = "gtx980"\n'
        'overrides = { "sm.warp_scheduler" = "lrr" }\n'
        '[baseline]\n"sm.warp_scheduler" = "lrr"\npreset = "gtx480"\n', "s.toml")
    keys = {(r.workload, r.preset, r.overrides["sm.warp_scheduler"]) for r in spec.runs}
    # the baselines of vecadd/gto and of the explicit gtx980 run are added
    assert keys == {("vecadd", "gtx480", "gto"), ("vecadd", "gtx480", "lrr"), ("reduction", "gtx980", "lrr"),
                    ("reduction", "gtx480", "lrr")}
    run = RunParams("vecadd", "tiny", "gtx480", {"sm.warp_scheduler": "gto"})
    assert spec.baseline_of(run) == RunParams("vecadd", "tiny", "gtx480", {"sm.warp_scheduler": "lrr"})
    assert spec.name == "x"


def test_run_key_ignores_override_order_but_not_values():
    a = RunParams("vecadd", "tiny", "gtx480", {"a.b": 1, "c.d": "x"})
    b = RunParams("vecadd", "tiny", "gtx480", {"c.d": "x", "a.b": 1})
    assert a.key() == b.key()
    assert a.key() != RunParams("vecadd", "tiny", "gtx480", {"a.b": 2, "c.d": "x"}).key()
    assert RunParams.from_dict(a.to_dict()) == a


@pytest.mark.parametrize("text, message", [
    ('workloads = ["vecadd"]\ncolour = 1\n', "s.toml: unknown key(s) colour"),
    ('workloads = ["nosuch"]\n', "s.toml: unknown workload 'nosuch'"),
    ('workloads = ["vecadd"]\nsizes = ["huge"]\n', "s.toml: unknown size 'huge'"),
    ('workloads = ["vecadd"]\n[overrides]\n"sm.warp_schedular" = ["lrr"]\n', "sm.warp_schedular"),
    ('workloads = ["vecadd"]\n[policies]\nwarp = ["lrr"]\n', "s.toml: [policies] 'warp' is not an extension point"),
    ('workloads = ["vecadd"]\n[baseline]\nworkload = "reduction"\n', "may not fix 'workload'"),
    ('[overrides]\n"sm.warp_scheduler" = ["lrr"]\n', "no 'workloads' list"),
    ('workloads = [\n', "s.toml: TOML syntax error"),
])
def test_spec_errors_name_file_and_key(text, message):
    with pytest.raises(ConfigError) as exc:
        parse_spec(text, "s.toml")
    assert message in str(exc.value)


def test_bad_override_names_the_run():
    with pytest.raises(ConfigError) as exc:
        parse_spec('workloads = ["vecadd"]\nsizes = ["tiny"]\n[overrides]\n"sm.warp_scheduler" = ["lrr", "nosuch"]\n',
                   "s.toml")
    assert "s.toml: run 'vecadd tiny gtx480 sm.warp_scheduler=nosuch'" in str(exc.value)

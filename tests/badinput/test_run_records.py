"""A run directory whose stats.json is not a tlpsim statistics record (edited by
hand, another program's JSON, truncated to a fragment): `tlpsim report` refuses it
naming the file and what it lacks, instead of an AttributeError or an empty report."""

from __future__ import annotations

import json

import pytest
from badinput_helpers import assert_user_error, cli

from tlpsim.report.rundir import check_record

RUN = {"workload": "vecadd", "size": "tiny", "mode": "functional", "seed": 1, "verified": True,
       "launches": [{"launch": 0, "kernel": "vecadd", "grid": [1, 1, 1], "block": [256, 1, 1]}], "stats": []}


@pytest.mark.parametrize("record, what", [
    ([1, 2, 3], "a JSON object was expected, got list"),
    ("x", "a JSON object was expected, got str"),
    ({"launches": [{"foo": 1}]}, "no 'workload', 'mode' (it has: 'launches')"),
    ({**RUN, "launches": [{"foo": 1}]}, "launches[0] has no 'kernel'"),
    ({**RUN, "launches": {"kernel": "k"}}, "'launches' is dict, not a list"),
    ({**RUN, "launches": [3]}, "launches[0] is int, not an object"),
    ({**RUN, "mode": "fast"}, "'mode' is 'fast', not 'functional' or 'timing'"),
    ({**RUN, "mode": "timing", "stats": [{"kernel": "k", "cycles": 1}]}, "stats[0] has no 'warp_insts'"),
])
def test_report_refuses_a_record_that_is_not_one(tmp_path, record, what):
    run = tmp_path / "run"
    run.mkdir()
    (run / "stats.json").write_text(json.dumps(record))
    assert_user_error(cli("report", run), f"{run / 'stats.json'} is not a tlpsim statistics record: {what}")
    assert not (run / "report.html").exists()


def test_a_functional_record_is_one(tmp_path):
    check_record(RUN, "stats.json")
    run = tmp_path / "run"
    run.mkdir()
    (run / "stats.json").write_text(json.dumps(RUN))
    res = cli("report", run)
    assert res.exit_code == 0 and (run / "report.html").stat().st_size > 0, res.output

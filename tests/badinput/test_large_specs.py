"""A sweep spec that expands to hundreds of thousands of runs: its run count is
reported before anything is expanded, every distinct configuration is checked
before the runs are (a bad value is found at once, not after minutes of
expansion), and `--dry-run` shows progress instead of minutes of silence."""

from __future__ import annotations

import time

import pytest
from badinput_helpers import assert_user_error, cli

from tlpsim.sweep.spec import parse_spec

SEEDS = ", ".join(str(s) for s in range(1, 201))
# 2 workloads x 200 seeds x 8 x 2 x 12 x 8 = 614,400 runs of 1,536 configurations
HUGE = f"""workloads = ["vecadd", "sgemm"]
sizes = ["tiny"]
seeds = [{SEEDS}]
[overrides]
"sm.max_ctas" = [1, 2, 3, 4, 5, 6, 7, 8]
"sm.warp_scheduler" = ["lrr", "gto"]
"gpu.n_sms" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
"sm.shared_latency" = [20, 22, 24, 26, 28, 30, 32, BAD]
"""


class _Told(Exception):
    pass


def test_the_run_count_is_reported_before_any_work():
    told: list[str] = []

    def progress(msg: str) -> None:
        told.append(msg)
        raise _Told  # stop at the first report: nothing may come before it

    start = time.monotonic()
    with pytest.raises(_Told):
        parse_spec(HUGE.replace("BAD", "4"), "huge.toml", progress=progress)
    assert time.monotonic() - start < 10
    assert told == ["huge.toml: 614,400 runs (1,536 configurations); checking them before expanding the runs"]


def test_a_bad_value_of_a_huge_spec_is_found_at_once(tmp_path):
    spec = tmp_path / "huge.toml"
    spec.write_text(HUGE.replace("BAD", '"x"'))
    start = time.monotonic()
    out = assert_user_error(cli("sweep", spec, "--dry-run"), "614,400 runs",
                            "run 'vecadd tiny gtx480 gpu.n_sms=1 sm.max_ctas=1 sm.shared_latency=x "
                            "sm.warp_scheduler=lrr'",
                            "sm.shared_latency: Input should be a valid integer")
    assert time.monotonic() - start < 20, "the error came after expanding the runs"
    assert out.index("614,400 runs") < out.index("error:")


def test_a_dry_run_of_a_large_spec_reports_its_count_then_lists_it(tmp_path):
    spec = tmp_path / "s.toml"
    seeds = ", ".join(str(s) for s in range(1, 1001))
    spec.write_text(f'workloads = ["vecadd"]\nsizes = ["tiny"]\nseeds = [{seeds}]\n')
    res = cli("sweep", spec, "--dry-run")
    assert res.exit_code == 0, res.output
    assert res.stderr.startswith(f"{spec}: 1,000 runs (1 configurations); checking them")
    assert len(res.stdout.splitlines()) >= 1000

"""One timing run written to a run directory by `tlpsim run`, shared by the
report tests (a fine timeline interval so the time series has samples)."""

from __future__ import annotations

import pytest
from report_helpers import run_cli


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("rundir") / "reduction-run"
    res = run_cli("run", "reduction", "--size", "tiny", "--mode", "timing", "--set",
                  "monitor.timeline_interval_cycles=100", "--run-dir", str(d))
    assert res.exit_code == 0, res.output
    return d

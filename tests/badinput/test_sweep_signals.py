"""A sweep ended by SIGTERM (a batch system's time limit, `kill`) or Ctrl-C says
how many of its runs the database keeps and how to resume, as one line, with exit
status 143 or 130; the runs that finished are there. The sweep has many short runs,
so it is still running when the signal comes however late this test reads the
first progress line on a loaded machine; its stopped workers print nothing."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time

import pytest


def _default_sigint() -> None:
    # a suite started in the background by a non-interactive shell (CI) runs with SIGINT
    # ignored, and the CLI would inherit that: Python then never raises KeyboardInterrupt
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig, status, how", [(signal.SIGTERM, 143, "interrupted by SIGTERM"),
                                              (signal.SIGINT, 130, "interrupted")])
def test_an_ended_sweep_says_what_it_kept(tmp_path, sig, status, how):
    spec = tmp_path / "s.toml"
    n = 400
    spec.write_text(f'workloads = ["vecadd"]\nsizes = ["tiny"]\nseeds = {list(range(1, n + 1))}\n')
    db = tmp_path / "r.db"
    proc = subprocess.Popen([sys.executable, "-m", "tlpsim.cli", "sweep", str(spec), "--db", str(db), "--workers",
                             "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            preexec_fn=_default_sigint)
    deadline = time.monotonic() + 300
    for line in proc.stdout:  # wait for the first stored run
        if line.startswith(f"[1/{n}] done") or time.monotonic() > deadline:
            break
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == status, (out, err)
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as conn:
        kept = conn.execute("SELECT COUNT(*) FROM runs WHERE status='done'").fetchone()[0]
    assert 1 <= kept < n
    assert f"{how}: {kept} of {n} runs of sweep s are kept in {db}; resume with: tlpsim sweep {spec} --db {db}" \
        in err, err
    assert "Traceback" not in err and "_Terminated" not in err, err

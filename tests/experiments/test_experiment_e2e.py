"""`tlpsim experiment` end to end at --size tiny (the CI integration test of the
lcs_bcs study: claims are reported, not asserted, at this size): a part of the
experiment killed with kill -9 and resumed without re-simulating a finished run,
then the whole experiment on the same database (the part's runs reused), every
figure, table and summary written, and `check` re-evaluating the claims from the
database alone."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))
from sweep_helpers import cli, cli_popen  # noqa: E402

from tlpsim.experiments.lcs_bcs import LcsBcs  # noqa: E402


def _rows(db: Path) -> dict[str, tuple]:
    if not db.exists():
        return {}
    with sqlite3.connect(db) as c:
        try:
            return {r[0]: r[1:] for r in c.execute("SELECT key, started, finished, status FROM runs")}
        except sqlite3.OperationalError:
            return {}


def _counts(stdout: str) -> tuple[int, int]:
    """(simulated, reused) from the run's last line."""
    m = re.search(r"(\d+) runs simulated, (\d+) reused", stdout)
    assert m, stdout
    return int(m.group(1)), int(m.group(2))


def _claim_ids() -> list[str]:
    from tlpsim.experiments.lcs_bcs.analysis import StudyData
    from tlpsim.experiments.lcs_bcs.claims import build_claims

    return [c.id for c in build_claims(StudyData())]


def test_bad_arguments_are_named(tmp_path):
    r = cli("experiment", "run", "nope", cwd=tmp_path, check=False)
    assert r.returncode == 2 and "unknown experiment 'nope'" in r.stderr and "lcs_bcs" in r.stderr
    r = cli("experiment", "run", "lcs_bcs", "--only", "fig99", cwd=tmp_path, check=False)
    assert r.returncode == 2 and "fig99" in r.stderr and "fig12" in r.stderr
    r = cli("experiment", "check", "lcs_bcs", "--db", "none.sqlite", cwd=tmp_path, check=False)
    assert r.returncode == 2 and "no results database" in r.stderr
    (tmp_path / "afile").write_text("x")
    r = cli("experiment", "run", "lcs_bcs", "--size", "tiny", "--out", "afile/out", "--db", "r.sqlite", cwd=tmp_path,
            check=False)
    assert r.returncode == 2 and "cannot write the output folder afile/out" in r.stderr and "nothing was run" in r.stderr
    assert not (tmp_path / "r.sqlite").exists()
    r = cli("experiment", "run", "lcs_bcs", "--size", "tiny", "--doc", "afile/x.md", "--db", "r.sqlite", cwd=tmp_path,
            check=False)
    assert r.returncode == 2 and "cannot write the Markdown page afile/x.md" in r.stderr
    listing = cli("experiment", "list", cwd=tmp_path).stdout
    assert "lcs_bcs" in listing and "fig19" in listing


def test_tiny_experiment_resumes_after_kill_and_writes_every_output(tmp_path):
    db = tmp_path / "r.sqlite"
    part = ["experiment", "run", "lcs_bcs", "--size", "tiny", "--only", "fig16", "--workers", "2",
            "--db", db.name, "--out", "fig16"]
    proc = cli_popen(*part, cwd=tmp_path)
    deadline = time.time() + 600
    while len([r for r in _rows(db).values() if r[2] == "done"]) < 4:
        assert proc.poll() is None, proc.communicate()
        assert time.time() < deadline, "the experiment made no progress"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    killed = _rows(db)

    again = cli(*part, "--export", "kept", cwd=tmp_path)   # the resumed run keeps its runs as files too
    resumed = _rows(db)
    assert all(resumed[k] == v for k, v in killed.items()), "a run finished before kill -9 was simulated again"
    assert sorted(p.name for p in (tmp_path / "kept").glob("*.json.gz")) == sorted(k + ".json.gz" for k in resumed)
    ran, reused = _counts(again.stdout)
    assert reused == len(killed) and ran == len(resumed) - len(killed)
    assert (tmp_path / "fig16" / "fig16.png").exists()
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM runs").fetchone()[0] == len(resumed)
        assert c.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    full = cli("experiment", "run", "lcs_bcs", "--size", "tiny", "--workers", "2", "--db", db.name, "--out", "out",
               "--doc", "docs/lcs.md", cwd=tmp_path, timeout=1500)
    assert _counts(full.stdout)[1] == len(resumed)               # the part's runs are reused
    final = _rows(db)
    assert all(final[k] == v for k, v in resumed.items())
    out = tmp_path / "out"
    for a in LcsBcs("tiny").artefacts:
        if a.kind == "figure":
            assert (out / f"{a.name}.png").stat().st_size > 0 and (out / f"{a.name}.svg").exists(), a.name
        assert (out / f"{a.name}.csv").exists() and (out / f"{a.name}.md").exists(), a.name
    summary = json.loads((out / "summary.json").read_text())
    ids = _claim_ids()
    assert [c["id"] for c in summary["claims"]] == ids
    assert all(c["verdict"] in ("PASS", "FAIL", "n/a") for c in summary["claims"])
    assert summary["runs"]["failed"] == 0 and summary["size"] == "tiny"
    page = (out / "index.html").read_text()
    assert "paper says" in page and "fig19.svg" in page

    check = cli("experiment", "check", "lcs_bcs", "--size", "tiny", "--db", db.name, cwd=tmp_path)
    assert "holds?" in check.stdout and all(i in check.stdout for i in ids)
    assert "not in the database" not in check.stdout
    assert _rows(db) == final                                    # check simulates nothing
    as_json = json.loads(cli("experiment", "check", "lcs_bcs", "--size", "tiny", "--db", db.name, "--json",
                             cwd=tmp_path).stdout)
    assert [c["verdict"] for c in as_json["claims"]] == [c["verdict"] for c in summary["claims"]]

    # the Markdown page: how it was made, the claim table, every figure; text around the generated part survives
    page = tmp_path / "docs" / "lcs.md"
    text = page.read_text()
    assert "runs simulated" in text and "wall time" in text and "2 worker(s)" in text
    assert all(f"| `{i}` |" in text for i in ids)
    for a in LcsBcs("tiny").artefacts:
        assert f"### {a.name}:" in text, a.name
        if a.kind == "figure":
            assert f"![{a.name}](lcs/{a.name}.png)" in text and (tmp_path / "docs" / "lcs" / f"{a.name}.png").exists()
    page.write_text(text.replace("(Why each failing claim fails", "Hand-written: kmeans is a stand-in. (Why"))
    cli("experiment", "check", "lcs_bcs", "--size", "tiny", "--db", db.name, "--doc", "docs/lcs.md", cwd=tmp_path)
    again_text = page.read_text()
    assert "Hand-written: kmeans is a stand-in." in again_text and again_text.count("## Claims") == 1
    assert "wall time" in again_text        # the run's record is kept in the database for the page


def test_plugin_option_reaches_every_run_of_an_experiment(tmp_path):
    plug = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "youngest_first.py"
    proc = cli("experiment", "run", "lcs_bcs", "--size", "tiny", "--only", "fig8", "--workers", "1",
               "--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out"), "--plugin", str(plug), cwd=tmp_path)
    assert "runs simulated" in proc.stdout
    with sqlite3.connect(tmp_path / "r.db") as c:
        params = [json.loads(s)["params"] for (s,) in c.execute("SELECT stats FROM runs")]
    assert params and all(p["plugins"] == [str(plug)] for p in params)

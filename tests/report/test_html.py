"""The HTML run report: its content, self-containment, the energy section, and
rendering in a real headless Chromium (driven through chromedriver's W3C
WebDriver HTTP API with the standard library: no new dependency)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from report_helpers import run_cli

from tlpsim.report.html import render_report
from tlpsim.report.rundir import load_run_dir

SECTIONS = ["Summary", "IPC and resident warps/CTAs over time", "Cycle breakdown per SM", "Component utilisation",
            "Caches and DRAM", "Energy", "Configuration"]


def test_report_command_writes_a_self_contained_page(run_dir):
    res = run_cli("report", str(run_dir))
    assert res.exit_code == 0, res.output
    page = (run_dir / "report.html").read_text()
    (run_dir / "report.html").unlink()  # keep the run directory as written by `run`
    assert re.findall(r"<h2>(.*?)</h2>", page) == SECTIONS
    assert page.count("<svg") == 4  # timeline, per-SM breakdown, utilisation, energy
    assert "energy model not enabled" not in page
    rec = load_run_dir(run_dir)
    total_uj = sum(s["energy"]["total_j"] for s in rec["stats"]) * 1e6
    dyn_uj = sum(s["energy"]["total_dynamic_j"] for s in rec["stats"]) * 1e6
    assert f"<td>total</td><td>{dyn_uj:.3f}</td>" in page
    assert abs(total_uj - dyn_uj - sum(s["energy"]["total_static_j"] for s in rec["stats"]) * 1e6) < 1e-6
    # nothing to fetch: no scripts, stylesheets, images or URLs other than SVG namespaces
    assert not re.search(r"<script|<link|<img|<iframe|src=|url\((?!#)", page)  # url(#id): in-page clip paths
    assert set(re.findall(r"https?://[^\"' )<]+", page)) <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    rec = load_run_dir(run_dir)
    for s in rec["stats"]:
        assert f"<td>{s['kernel']}</td><td>{s['cycles']:,}</td>" in page
    for unit in ("scheduler", "register file", "scratchpad (SPM)", "L1D", "L2", "crossbar SM→L2", "crossbar L2→SM",
                 "DRAM"):
        assert f">{unit}<" in page


def test_report_renders_energy_when_the_record_has_it(run_dir):
    rec = load_run_dir(run_dir)
    for k, s in enumerate(rec["stats"]):  # hand-made EnergyStats records
        s["energy"] = {"technology_node": "40nm", "seconds": 1e-6, "dynamic_j": {"rf": 1e-6, "l1d": (2.0 + k) * 1e-6},
                       "static_j": {"rf": 0.5e-6}, "total_j": (3.5 + k) * 1e-6}
    page = render_report(rec)
    assert "energy model not enabled" not in page
    assert page.count("<svg") == 4
    n = len(rec["stats"])
    l1d = sum(2.0 + k for k in range(n))
    assert f"<td>l1d</td><td>{l1d:.3f}</td><td>0.000</td>" in page
    assert f"<td>rf</td><td>{n:.3f}</td><td>{0.5 * n:.3f}</td>" in page
    assert f"average power {(l1d + 1.5 * n) / n:.2f} W" in page


def test_report_says_when_the_energy_model_is_off(run_dir):
    rec = load_run_dir(run_dir)
    for s in rec["stats"]:
        s["energy"] = None
    assert "energy model not enabled" in render_report(rec)


def test_report_of_a_missing_run_directory_is_a_clear_error(tmp_path):
    res = run_cli("report", str(tmp_path))
    assert res.exit_code == 2
    assert f"{tmp_path} is not a run directory (no stats.json" in res.output


# ------------------------------------------------------------ real browser

def _browser():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        why = "headless Chromium not installed: run `make browser-test-deps` (apt-get install chromium chromium-driver)"
        if os.environ.get("TLPSIM_REQUIRE_BROWSER"):  # set by .ci/run: there a missing browser is a failure
            pytest.fail(why)
        pytest.skip(why)
    return chromium, driver


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriver:
    """The few W3C WebDriver commands the test needs, over HTTP."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.session = None

    def call(self, method: str, path: str, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())["value"]

    def start(self, chromium: str, profile: Path) -> None:
        # no network here: nothing may start that phones home (first-run, sync,
        # component updates); a fresh profile so no earlier run's state leaks in
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
                "--disable-dev-shm-usage", "--window-size=1200,900"]
        caps = {"browserName": "chrome", "goog:loggingPrefs": {"browser": "ALL"},
                "goog:chromeOptions": {"binary": chromium, "args": args}}
        self.session = self.call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})["sessionId"]

    def s(self, method: str, path: str, body=None):
        return self.call(method, f"/session/{self.session}{path}", body)

    def run(self, script: str):
        return self.s("POST", "/execute/sync", {"script": script, "args": []})

    def console(self) -> list[dict]:
        return self.s("POST", "/se/log", {"type": "browser"})


def test_report_renders_in_headless_chromium_without_console_errors(run_dir, tmp_path):
    chromium, driver = _browser()
    page = tmp_path / "report.html"
    assert run_cli("report", str(run_dir), "-o", str(page)).exit_code == 0
    port = _free_port()
    proc = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wd = WebDriver(f"http://127.0.0.1:{port}")
    try:
        deadline = time.time() + 30
        while True:
            try:
                if wd.call("GET", "/status").get("ready"):
                    break
            except OSError:
                pass
            assert time.time() < deadline, "chromedriver did not start"
            time.sleep(0.1)
        wd.start(chromium, tmp_path / "chromium-profile")
        wd.s("POST", "/url", {"url": page.as_uri()})
        info = wd.run("""
            const figs = [...document.querySelectorAll('figure svg')].map(s => {
                const r = s.getBoundingClientRect(); return [r.width, r.height, s.querySelectorAll('path').length]; });
            return {ready: document.readyState, title: document.title,
                    h2: [...document.querySelectorAll('h2')].map(h => h.textContent),
                    figs: figs, fetched: performance.getEntriesByType('resource').length,
                    energy: document.getElementById('energy-disabled') === null,
                    rows: document.querySelectorAll('table tr').length};""")
        errors = [e for e in wd.console() if e.get("level") == "SEVERE"]
        assert errors == []
        assert info["ready"] == "complete" and info["title"] == "tlpsim report: reduction (tiny)"
        assert info["h2"] == SECTIONS
        assert len(info["figs"]) == 4  # timeline, per-SM cycles, utilisation, energy
        assert all(w > 200 and h > 100 and paths > 10 for w, h, paths in info["figs"]), info["figs"]
        assert info["fetched"] == 0
        assert info["energy"]  # the energy section is drawn, not the "not enabled" note
        assert info["rows"] > 15
        # the console check can fail: an error logged now is seen
        wd.run("console.error('tlpsim-probe')")
        assert any("tlpsim-probe" in e["message"] for e in wd.console() if e.get("level") == "SEVERE")
    finally:
        if wd.session:
            try:
                wd.s("DELETE", "")
            except OSError:
                pass
        proc.terminate()
        proc.wait(timeout=10)

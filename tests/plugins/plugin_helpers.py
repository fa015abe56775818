"""Helpers of the plug-in tests: plug-in sources written to files, the CLI in a
subprocess (this tree's sources), and a registry snapshot restored after a test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import tlpsim

SRC = str(Path(tlpsim.__file__).resolve().parents[1])

# oldest-first scheduling (the base's order) that counts what it issues, the CTAs its
# SM admits (scheduler 0 only, so each CTA once) and one access of its table per issue
COUNTING = '''"""Test plug-in: oldest-first scheduling that counts (VERSION)."""
from tlpsim.policies.registry import register
from tlpsim.policies.warp.base import WarpScheduler
from tlpsim.timing.plugin import Counter, EnergyStructure


@register("warp_scheduler", "NAME")
class Counting(WarpScheduler):
    """Oldest-first; counts issued instructions and admitted CTAs.

    Second paragraph."""

    events = frozenset({"cta_admitted"})
    counters = {"issued": Counter("warp instructions", "instructions issued"),
                "ctas": Counter("CTAs", "CTAs admitted")}
    energy = {"pick_table": EnergyStructure(access_pj=1.5, leakage_mw=0.25, source="test: 1.5 pJ per pick")}

    def on_issue(self, warp, now, long_latency):
        self.counts.issued += 1
        self.port.count_energy("pick_table")

    def on_cta_admitted(self, cta, now):
        if self.index == 0:
            self.counts.ctas += 1
'''


def counting_source(name: str, version: str = "v1") -> str:
    return COUNTING.replace("NAME", name).replace("VERSION", version)


def write_plugin(path: Path, name: str, version: str = "v1") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(counting_source(name, version))
    return path


def cli_env(**extra: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for k in ("TLPSIM_DEBUG", "TLPSIM_PLUGINS"):
        env.pop(k, None)
    env.update(extra)
    return env


def cli(*args: str, cwd: Path, check: bool = True, env: dict | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "tlpsim.cli", *args], cwd=cwd, env=env or cli_env(),
                          capture_output=True, text=True, timeout=timeout, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"tlpsim {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc

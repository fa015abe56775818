"""benchmarks/gpgpusim/cta_spread.py's measure on hand-made CTA events and a hand-made
GPGPU-Sim LIVENESS trace: which CTAs count as the first wave, and their spread."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tlpsim.policies.registry import unregister

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "gpgpusim" / "cta_spread.py"
_spec = importlib.util.spec_from_file_location("cta_spread", _PATH)
cta_spread = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cta_spread)
unregister("monitor", "cta_lifetimes")   # these tests need only its functions; keep the registry as it was


def test_the_first_wave_spread_is_per_sm_and_ignores_later_ctas():
    ev = [("A", 0, 0, 1), ("A", 0, 1, 1), ("A", 1, 2, 2), ("A", 1, 3, 2),
          ("R", 0, 0, 100), ("A", 0, 4, 100), ("R", 0, 1, 160), ("R", 1, 2, 130), ("R", 1, 3, 150),
          ("R", 0, 4, 400)]   # CTA 4 starts when 0 ends: a second-wave CTA, not counted
    got = cta_spread.first_wave_spread(ev, 10)
    assert got == {"ctas": 4, "first_finish": 100, "last_finish": 160, "mean_spread": (60 + 20) / 2}


def test_a_slot_reused_in_the_cycle_it_frees_is_a_new_cta():
    # GPGPU-Sim keys CTAs by the core's slot: slot 0 ends and restarts at cycle 50
    ev = [("A", 3, 0, 1), ("A", 3, 1, 1), ("A", 3, 0, 50), ("R", 3, 0, 50), ("R", 3, 1, 70), ("R", 3, 0, 90)]
    assert cta_spread.first_wave_spread(ev, 10) == {"ctas": 2, "first_finish": 50, "last_finish": 70,
                                                    "mean_spread": 20}


def test_gpgpusim_liveness_lines_are_read(tmp_path):
    log = tmp_path / "gpgpusim.log"
    log.write_text(
        "GPGPU-Sim Cycle 1: LIVENESS - Core 4 - GPGPU-Sim uArch: cta: 0, start_tid:   0, end_tid: 256, "
        "initialized @(1,0)\n"
        "GPGPU-Sim uArch: inst.: 1234 (ipc= 1.0) sim_rate=1 (inst/sec) elapsed = 0:0:00:01\n"
        "GPGPU-Sim Cycle 2: LIVENESS - Core 4 - GPGPU-Sim uArch: cta: 1, start_tid: 256, end_tid: 512, "
        "initialized @(2,0)\n"
        "GPGPU-Sim Cycle 900: LIVENESS - Core 4 - GPGPU-Sim uArch: Finished CTA #1 (900,0), 1 CTAs running\n")
    assert cta_spread.gpgpusim_events(str(log)) == [("A", 4, 0, 1), ("A", 4, 1, 2), ("R", 4, 1, 900)]
    (tmp_path / "plain.log").write_text("gpu_sim_cycle = 5\n")
    with pytest.raises(SystemExit, match="no LIVENESS CTA lines"):
        cta_spread.gpgpusim_events(str(tmp_path / "plain.log"))

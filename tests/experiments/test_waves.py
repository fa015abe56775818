"""An experiment's pages show the CTA waves of its stand-ins at its size, and every
experiment takes `--size study`."""

from click.testing import CliRunner

from tlpsim.experiments.base import Experiment
from tlpsim.experiments.doc import _waves
from tlpsim.experiments.runner import make
from tlpsim.experiments.waves import WAVES_HEADS, fewest_waves, waves_rows, write_waves


class TwoStandIns(Experiment):
    name = "two"
    preset = "gtx480"

    def stand_ins(self):
        return ["vecadd", "reduction"]


def test_waves_rows_per_kernel_with_exemptions():
    rows = waves_rows(TwoStandIns("tiny"))
    # vecadd tiny: 4096 / 256 = 16 CTAs; 6 CTAs of 256 threads per SM x 15 SMs = 90 slots
    assert rows[0] == ["vecadd", "vecadd", 16, 6, "threads", round(16 / 90, 2), "below 4 waves"]
    assert [r[1] for r in rows[1:]] == ["reduce_partial", "reduce_final"]
    assert rows[2][6].startswith("single-CTA finaliser")
    assert fewest_waves(rows) == {"vecadd": round(16 / 90, 2), "reduction": rows[1][5]}


def test_pages_carry_the_waves_table(tmp_path):
    exp = TwoStandIns("tiny")
    files = write_waves(exp, tmp_path / "waves")
    md = (tmp_path / "waves.md").read_text()
    assert "| " + " | ".join(WAVES_HEADS) + " |" in md and "| vecadd | vecadd | 16 | 6 |" in md
    section = _waves(exp, files)
    assert section[0] == "## CTA waves of the stand-ins" and any("| reduction | reduce_final |" in ln for ln in section)
    assert write_waves(Experiment("tiny"), tmp_path / "none") == []


def test_experiments_take_the_study_size():
    from tlpsim.cli import main

    assert make("lcs_bcs", "study").size == "study"
    help_text = CliRunner().invoke(main, ["experiment", "run", "--help"]).output
    assert "study" in help_text

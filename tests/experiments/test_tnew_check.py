"""lcs_bcs's T_new check (issue 27): the kernel it picks, the counts it keeps and the
sentence it writes, on hand-made sweeps and Phase-1 records."""

from types import SimpleNamespace

from tlpsim.experiments.lcs_bcs.tnew_check import pick, record, verdict


def curve(kernel, cycles, l1):
    return SimpleNamespace(kernel_cycles=[{kernel: c} for c in cycles], l1_miss=l1)


def row(w, k, opt, top, typ="IV"):
    return {"workload": w, "kernel": k, "t_max": top, "top": top, "opt": opt, "type": typ, "t_new": 3.5}


def test_pick_wants_opt_two_a_loss_past_it_and_rising_l1_misses():
    curves = {"a": curve("ka", [100, 60, 70, 80], [0.1, 0.2, 0.3, 0.4]),      # loses 33 % at 4
              "b": curve("kb", [100, 60, 61, 62], [0.1, 0.2, 0.3, 0.4]),      # loses 3 %, a stand-in
              "c": curve("kc", [100, 60, 70, 80], [0.4, 0.3, 0.2, 0.1]),      # loses, L1 misses fall: not thrashing
              "d": curve("kd", [100, 60, 70, 80], [0.1, 0.2, 0.3, 0.4]),      # OPT 1
              "e": curve("ke", [100, 60], [0.1, 0.2])}                        # sweep stops at 2
    rows = [row("a", "ka", 2, 4), row("b", "kb", 2, 4), row("c", "kc", 2, 4), row("d", "kd", 1, 4, "III"),
            row("e", "ke", 2, 2)]
    assert pick(rows, curves, study=["b"])["kernel"] == "kb"        # the paper's stand-ins first
    got = pick(rows, curves, study=[])
    assert got["kernel"] == "ka" and got["cycles"] == [100, 60, 70, 80] and abs(got["loss"] - 80 / 60) < 1e-12
    assert pick(rows[2:], curves, study=[]) is None


def test_record_keeps_sm0s_last_sample_of_the_first_launch_and_every_decision():
    r = row("a", "ka", 2, 4)
    samples = [(100, 1, {0: 50, 1: 40}), (200, 1, {0: 90, 1: 80, 2: 70}), (300, 2, {0: 5})]
    history = [(1, 0, 3, 2), (1, 1, 3, 3), (0, 0, 2, 1), (2, 0, 3, 3)]
    rec = record(r, samples, history, launches=[(0, "other"), (1, "ka"), (2, "ka")])
    assert rec["counts"] == {0: 90, 1: 80, 2: 70}
    assert rec["resident"] == 3 and rec["t_new_sm0"] == 2 and rec["launches"] == 2
    assert rec["decisions"] == [[0, 3, 2], [1, 3, 3], [0, 3, 3]]
    assert rec["t_new_mean_lcs_run"] == 3.5


def test_verdict_explains_from_the_counts():
    above = {"counts": {"0": 100, "1": 90, "2": 80}, "opt": 2, "top": 4, "loss": 1.25,
             "decisions": [[0, 3, 2], [1, 3, 3]]}
    text = verdict(above)
    assert "Eq. 1 = floor(270 / 100) = floor(2.70) = 2" in text and "lands on OPT 2" in text
    above["counts"] = {"0": 100, "1": 95, "2": 90}
    text = verdict(above)
    assert "floor(285 / 100) = floor(2.85) = 2" in text
    above["counts"] = {"0": 100, "1": 100, "2": 100}
    text = verdict(above)
    assert "= 3;" in text and "lands above OPT 2" in text and "100% of the leader's" in text and "25.0% more" in text
    assert "T_new over 2 decisions (SMs x launches): 2..3, mean 2.50" in text
    below = {"counts": {"0": 100, "1": 10, "2": 10}, "opt": 2, "decisions": []}
    assert "= 1;" in verdict(below) and "lands below OPT 2" in verdict(below)
    assert verdict({"counts": {}}) == "no Phase-1 record of SM 0 for this kernel"

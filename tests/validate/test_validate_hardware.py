"""`tlpsim validate --hardware h200`: the measurements' loader, the selection of what is
simulated, and the command end to end on one microbenchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tlpsim.cli import main
from tlpsim.validate.hardware import ReferenceDataError, load_hardware, micro_figures
from tlpsim.validate.hw_runner import PAPER_SUBSET, HwOptions, _plan

HW = Path(__file__).resolve().parents[3] / "shared" / "reference" / "hardware" / "h200"
REF = Path(__file__).resolve().parents[3] / "shared" / "reference" / "kernels"
needs_hw = pytest.mark.skipif(not (HW / "facts.json").exists() or not (REF / "gpgpusim-gtx480.json").exists(),
                              reason=f"H200 measurements or reference kernels not present ({HW}, {REF})")


@needs_hw
def test_loader_reads_launches_and_micro_figures():
    hw = load_hardware("h200", HW)
    assert hw.clock_mhz == 1980.0
    assert len(hw.workloads["small"]) == 37 and len(hw.workloads["paper"]) == 30
    assert "fdtd2d" in hw.skipped["paper"] and "vecadd" in hw.skipped["paper"]
    (la,) = hw.launches("small", "sgemm")
    assert (la.ordinal, la.kernel, la.grid, la.block) == (0, "sgemm_tiled", (8, 8, 1), (16, 16, 1))
    figs = micro_figures(hw)
    assert figs["dep_chain.fma.32"].value == 4.504 and figs["dep_chain.mad.512"].value == 8.449
    assert figs["pointer_chase.32MB"].value == 357.53 and figs["smem_stride.tput.32"].value == 64.844
    assert len(figs) == 25   # 10 dep_chain, 3 pointer_chase, 12 smem_stride (stream_copy prints no figure)


@needs_hw
def test_plan_caps_launches_and_names_what_it_leaves_out():
    hw = load_hardware("h200", HW)
    jobs, left = _plan(HwOptions(hardware_dir=str(HW), only=["lud", "sgemm"], cap=2, paper_cap=1), hw)
    by = {(j["name"], j["size"]): j for j in jobs}
    # lud at small has 14 launches of 10.4-10.8 µs: the two longest are simulated, 12 left out
    lud = by[("lud", "small")]
    longest = sorted((la for la in hw.launches("small", "lud") if la.us >= 10), key=lambda la: -la.us)[:2]
    assert lud["compare"] == sorted(la.ordinal for la in longest)
    assert sum(1 for x in left if x["workload"] == "lud" and x["size"] == "small") == 12
    # and its shortest one-CTA launch (lud_internal, 3.2 µs) for the launch-bound check, apart from the targets
    (floor,) = lud["floor"]
    la = hw.launches("small", "lud")[floor]
    assert (floor, la.kernel, la.grid, la.us) == (44, "lud_internal", (1, 1, 1), 3.184)
    assert lud["simulate"] == sorted(lud["compare"] + [44])
    assert by[("sgemm", "small")]["floor"] == []          # its one launch is 64 CTAs
    assert ("sgemm", "small") in by and "sgemm" not in PAPER_SUBSET and ("sgemm", "paper") not in by
    assert any(x["workload"] == "sgemm" and x["size"] == "paper" and "paper subset" in x["why"] for x in left)


def test_unknown_hardware_and_bad_options(tmp_path):
    with pytest.raises(ReferenceDataError, match="no hardware measurements of 'nosuch'"):
        load_hardware("nosuch", tmp_path)
    r = CliRunner().invoke(main, ["validate", "--hardware", "h200", "--time-limit", "5"])
    assert r.exit_code != 0 and "--time-limit does not apply with --hardware" in r.output
    r = CliRunner().invoke(main, ["validate", "--cache-dir", str(tmp_path)])
    assert r.exit_code != 0 and "--cache-dir applies only with --hardware" in r.output


@needs_hw
def test_unknown_only_name_lists_the_choices(tmp_path):
    r = CliRunner().invoke(main, ["validate", "--hardware", "h200", "--hardware-dir", str(HW), "--only", "nosuch",
                                  "--out", str(tmp_path / "o"), "--cache-dir", str(tmp_path / "c")])
    assert r.exit_code != 0 and "--only: unknown nosuch" in r.output and "sgemm" in r.output


@needs_hw
def test_dep_chain_end_to_end_and_resumed_from_the_cache(tmp_path):
    args = ["validate", "--hardware", "h200", "--hardware-dir", str(HW), "--ref-dir", str(REF), "--only",
            "dep_chain", "--out", str(tmp_path / "o"), "--cache-dir", str(tmp_path / "c"),
            "--doc", str(tmp_path / "page.md")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    v = json.loads((tmp_path / "o" / "validation.json").read_text())
    figs = {f["id"]: f for f in v["figures"]}
    assert len(figs) == 10 and figs["dep_chain.fma.32"]["gpu"] == 4.504
    # the calibrated dependent-issue distance is 4 cycles plus the loop's share: within 15% at 1-4 warps
    assert all(abs(figs[f"dep_chain.fma.{t}"]["rel_err"]) <= 0.15 for t in (32, 64, 128))
    page = (tmp_path / "page.md").read_text()
    assert "# Validation against a real NVIDIA H200" in page and "dep_chain.mad.512" in page
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and "dep_chain: cached" in again.output


@needs_hw
def test_two_workers_run_the_jobs_on_forked_processes(tmp_path):
    def figures(workers: int, tag: str) -> dict:
        r = CliRunner().invoke(main, ["validate", "--hardware", "h200", "--hardware-dir", str(HW), "--ref-dir",
                                      str(REF), "--only", "dep_chain,smem_stride", "--workers", str(workers),
                                      "--out", str(tmp_path / tag), "--cache-dir", str(tmp_path / f"c{tag}")])
        assert r.exit_code == 0, r.output
        v = json.loads((tmp_path / tag / "validation.json").read_text())
        return {f["id"]: f["tlpsim"] for f in v["figures"]}

    pooled = figures(2, "two")
    assert len([k for k in pooled if k.startswith("dep_chain.")]) == 10 and any(k.startswith("smem_stride.")
                                                                                 for k in pooled)
    assert pooled == figures(1, "one")          # the same simulations, whichever process ran them


def test_cached_jobs_are_keyed_by_the_simulator_code(monkeypatch):
    import tlpsim.sweep.fingerprint as fp
    from tlpsim.validate.hw_jobs import job_key

    job = {"kind": "micro", "name": "dep_chain", "cost": 1.0}
    monkeypatch.setattr(fp, "simulator_fingerprint", lambda: "a" * 16)
    old = job_key(job, "{}")
    assert job_key({**job, "cost": 9.0}, "{}") == old            # the cost only orders the queue
    monkeypatch.setattr(fp, "simulator_fingerprint", lambda: "b" * 16)
    assert job_key(job, "{}") != old                              # a changed model re-simulates


@needs_hw
def test_a_workload_whose_source_changed_since_the_measurement_is_left_out(tmp_path):
    from tlpsim.validate.hw_sources import KERNELS, MEASURED_SOURCES, stale_source

    # the sources the H200 ran: every workload but mergesort (its tile sort changed afterwards)
    assert set(MEASURED_SOURCES["h200"]) == {f"{n}.cu" for n in load_hardware("h200", HW).workloads["small"]}
    assert stale_source("h200", "sgemm.cu") is None
    assert "changed since the h200 measurement" in stale_source("h200", "mergesort.cu")
    assert "no record" in stale_source("h200", "fd3d.cu") and "no record" in stale_source("h100", "sgemm.cu")
    copy = tmp_path / "sgemm.cu"
    copy.write_bytes((KERNELS / "sgemm.cu").read_bytes() + b"\n")   # one byte more is other code
    assert "changed" in stale_source("h200", "sgemm.cu", kernels=tmp_path)
    jobs, left = _plan(HwOptions(hardware_dir=str(HW), only=["mergesort", "sgemm"]), load_hardware("h200", HW))
    assert {j["name"] for j in jobs} == {"sgemm"}
    gone = [x for x in left if x["workload"] == "mergesort"]
    assert gone and all("re-measure it on the GPU" in x["why"] for x in gone)


@needs_hw
def test_pointer_chase_sees_the_l2_halves(tmp_path):
    """The 32 MB chase (first touches, about half in the far half of the L2) is what
    l2.far_latency is calibrated on; the 256 KB chase's second lap hits the copies the
    first left in SM 0's half, so it reads lower (docs/validation-h200.md)."""
    args = ["validate", "--hardware", "h200", "--hardware-dir", str(HW), "--ref-dir", str(REF), "--only",
            "pointer_chase", "--out", str(tmp_path / "o"), "--cache-dir",
            str(tmp_path / "c"), "--doc", str(tmp_path / "page.md")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    figs = {f["id"]: f for f in json.loads((tmp_path / "o" / "validation.json").read_text())["figures"]}
    assert abs(figs["pointer_chase.32MB"]["rel_err"]) < 0.01
    assert 300 < figs["pointer_chase.256KB"]["tlpsim"] < figs["pointer_chase.32MB"]["tlpsim"] - 40
    assert "Calibrated on pointer_chase.32MB (GPU 357.5, tlpsim 357.2 cycles" in (tmp_path / "page.md").read_text()


@needs_hw
def test_sweep_points_compare_like_carveouts(tmp_path):
    """The GPU's padded points (largest carveout) meet tlpsim's capped runs at carveout 100;
    the natural point (the driver's carveout) meets tlpsim's default run, beside them."""
    from tlpsim.validate.hw_runner import SWEEP_CARVEOUT, _sweep_jobs, _sweep_rows

    hw = load_hardware("h200", HW)
    jobs, _ = _sweep_jobs(HwOptions(hardware_dir=str(HW), only=["sweeps"]), hw, {"spmv_csr"})
    jobs = [j for j in jobs if j["sweep"] == "reference:spmv_csr"]
    assert [(j["cap"], j["carveout"]) for j in jobs] == [(1, 100), (2, 100), (4, 100), (None, 100), (None, None)]
    assert SWEEP_CARVEOUT == 100
    clock = 1980.0
    results = {}
    for k, j in enumerate(jobs):
        j["key"] = str(k)
        cycles = 19800 if j["carveout"] is not None else 9900       # 10 µs padded, 5 µs natural
        results[str(k)] = {"launches": [{"kernel": "spmv_csr_scalar", "cycles": cycles}]}
    (row,) = _sweep_rows(jobs, results, hw, clock)
    assert row["n"] == [1, 2, 4, 8] and row["gpu_us"] == [10.528] * 4   # N=8: padded 0 B, carveout 100
    assert row["tlpsim_us"] == [10.0] * 4 and row["match"] is True
    assert row["natural"] == {"gpu_us": 6.976, "tlpsim_us": 5.0}


@needs_hw
def test_workload_sweeps_at_small_run_every_launch_and_the_rest_are_named():
    from tlpsim.validate.hw_runner import SWEEP_CARVEOUT, _sweep_jobs

    hw = load_hardware("h200", HW)
    jobs, left = _sweep_jobs(HwOptions(hardware_dir=str(HW)), hw, {"spmv_csr"})
    kmeans = [j for j in jobs if j["sweep"] == "workload:kmeans"]
    # N = 1, 2, 4 and the natural 8 at the largest carveout, then the natural point with the driver's
    assert [(j["cap"], j["carveout"]) for j in kmeans] == [(1, SWEEP_CARVEOUT), (2, SWEEP_CARVEOUT),
                                                             (4, SWEEP_CARVEOUT), (None, SWEEP_CARVEOUT),
                                                             (None, None)]
    assert all(j["kind"] == "workload" and j["size"] == "small" and j["simulate"] == list(range(10))
               for j in kmeans)
    assert {j["sweep"] for j in jobs} == {"reference:spmv_csr", "workload:kmeans", "workload:srad"}
    why = {x["sweep"]: x["why"] for x in left}
    assert "re-measure it on the GPU" in why["workload:mergesort"]          # its source changed since
    assert "measured at `paper`" in why["workload:sgemm"] and "measured at `paper`" in why["workload:transpose"]
    assert why["reference:mm_naive"] == "no such reference program here"

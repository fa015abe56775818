"""`tlpsim validate --toolchain`: cuda11 (gtx480's default) runs the reference's own
CUDA 11.8 PTX with GPGPU-Sim's ptxas counts; cuda13 compiles the reference sources
with CUDA 13.5 and uses its ptxas's counts; the output says which ran and which is
the preset's default."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tlpsim.cli import main

REF_DIR = Path(os.environ.get("TLPSIM_REFERENCE_DIR",
                              Path(__file__).resolve().parents[3] / "shared" / "reference" / "kernels"))
needs_ref = pytest.mark.skipif(not (REF_DIR / "gpgpusim-gtx480.json").exists(),
                               reason=f"GPGPU-Sim reference data not present ({REF_DIR})")


def _validate(tmp_path, *args):
    res = CliRunner().invoke(main, ["validate", "--only", "histogram_atomic", "--no-sweeps", "--ref-dir",
                                    str(REF_DIR), "--out", str(tmp_path / "-".join(args or ("default",))), *args])
    assert res.exit_code == 0, res.output
    v = json.loads((tmp_path / "-".join(args or ("default",)) / "validation.json").read_text(encoding="utf-8"))
    return res.output, v


@needs_ref
def test_validate_under_both_toolchains(tmp_path, monkeypatch):
    monkeypatch.setenv("TLPSIM_CACHE_DIR", str(tmp_path / "cache"))
    ref = next(k for k in json.loads((REF_DIR / "gpgpusim-gtx480.json").read_text())["kernels"]
               if k["name"] == "histogram_atomic")
    out11, v11 = _validate(tmp_path)
    assert v11["options"]["toolchain"] == v11["options"]["preset_toolchain"] == "cuda11"
    assert ("toolchain cuda11 (the reference's CUDA 11.8 compute_35 PTX with GPGPU-Sim's ptxas counts); the "
            "preset's default") in out11
    (row11,) = v11["launches"]
    assert row11["ours"]["warp_insn"] == ref["warp_insn"]  # GPGPU-Sim's own code

    out13, v13 = _validate(tmp_path, "--toolchain", "cuda13")
    assert v13["options"]["toolchain"] == "cuda13" and v13["options"]["preset_toolchain"] == "cuda11"
    assert v13["options"]["overrides"] == {"gpu.toolchain": "cuda13"}
    assert ("toolchain cuda13 (the reference sources compiled by CUDA 13.5 for sm_80 with ptxas 13.5's counts); "
            "the preset's default is cuda11") in out13
    (row13,) = v13["launches"]
    assert row13["verified"] and row13["ours"]["warp_insn"] != ref["warp_insn"]  # nvcc 13.5's code for sm_80
    assert "Code: toolchain cuda13" in (tmp_path / "--toolchain-cuda13" / "validation.md").read_text(encoding="utf-8")


def test_toolchain_option_and_set_must_agree(tmp_path):
    r = CliRunner().invoke(main, ["validate", "--toolchain", "cuda13", "--set", "gpu.toolchain=cuda11", "--out",
                                  str(tmp_path / "x")])
    assert r.exit_code == 2 and "--toolchain cuda13 contradicts --set gpu.toolchain=cuda11" in r.output


@needs_ref
def test_validate_toolchain_both(tmp_path, monkeypatch):
    """`--toolchain both`: the preset's default (cuda11) is the record the criteria judge,
    cuda13's runs beside it, both on the page and the console."""
    monkeypatch.setenv("TLPSIM_CACHE_DIR", str(tmp_path / "cache"))
    out, v = _validate(tmp_path, "--toolchain", "both")
    assert v["options"]["toolchain"] == v["options"]["preset_toolchain"] == "cuda11"
    assert "--toolchain both" in v["command"]
    (other,) = v["other_toolchains"]
    assert other["options"]["toolchain"] == "cuda13"
    (row11,), (row13,) = v["launches"], other["launches"]
    assert row11["launch"] == row13["launch"] == "histogram_atomic"
    assert row11["ours"]["warp_insn"] != row13["ours"]["warp_insn"]
    assert v["wall_s"] > other["wall_s"] > 0  # the whole: both runs
    md = (tmp_path / "--toolchain-both" / "validation.md").read_text(encoding="utf-8")
    assert "## Under both toolchains" in md and "| `cuda11` (default) |" in md and "| `cuda13` |" in md
    assert f"| histogram_atomic | {row11['gpgpusim']['cycles']:,} | {row11['ours']['cycles']:,} (" in md
    assert "toolchain cuda13 (the reference sources compiled by CUDA 13.5 for sm_80 with ptxas 13.5's counts); " \
           "the preset's default is cuda11 (not judged):" in out


def test_toolchain_both_and_set_must_agree(tmp_path):
    r = CliRunner().invoke(main, ["validate", "--toolchain", "both", "--set", "gpu.toolchain=cuda11", "--out",
                                  str(tmp_path / "x")])
    assert r.exit_code == 2 and "--toolchain both contradicts --set gpu.toolchain=cuda11" in r.output

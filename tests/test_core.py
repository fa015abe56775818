"""The compiled timing core (mypyc) against its Python sources: which one runs, and
that both give the same statistics."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import tlpsim
from tlpsim import _core

PKG = Path(tlpsim.__file__).resolve().parent
PURE = os.environ.get(_core.PURE_ENV, "").strip() not in ("", "0")


def _copy_core(dst_root: Path, *, with_extensions: bool = True) -> Path:
    """The compiled modules' sources (and extensions) and the build record under dst_root/tlpsim."""
    pkg = dst_root / "tlpsim"
    for m in _core.COMPILED_MODULES:
        src = _core.source_path(m, PKG.parent)
        dst = _core.source_path(m, dst_root)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        if with_extensions:
            for ext in src.parent.glob(src.stem + ".*.so"):
                shutil.copy2(ext, dst.parent / ext.name)
    if (PKG / _core.BUILD_RECORD).exists():
        shutil.copy2(PKG / _core.BUILD_RECORD, pkg / _core.BUILD_RECORD)
    return pkg


@pytest.mark.skipif(PURE, reason="TLPSIM_PURE_PYTHON is set")
def test_the_installed_core_is_compiled_and_current():
    st = _core.status()
    assert st.compiled, f"{st.reason}: rebuild with `make setup` (or `pip install -e .`)"
    import tlpsim.timing.sm as sm

    assert sm.__file__.endswith(".so")


def test_pure_python_env_runs_the_sources():
    code = ("import tlpsim, tlpsim.timing.sm as m, tlpsim.timing.engine as e; "
            "print(m.__file__); print(e.__file__); print(tlpsim._core.status().compiled)")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, _core.PURE_ENV: "1"},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[0].endswith("sm.py") and out[1].endswith("engine.py")
    assert out[2] == "False"


def test_no_extensions_means_the_sources_without_a_warning(tmp_path, monkeypatch):
    monkeypatch.delenv(_core.PURE_ENV, raising=False)
    pkg = _copy_core(tmp_path, with_extensions=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        st = _core.decide(pkg)
    assert not st.compiled and st.reason.startswith("not built")


@pytest.mark.skipif(PURE, reason="TLPSIM_PURE_PYTHON is set")
def test_an_edited_source_is_never_shadowed_by_its_stale_extension(tmp_path, monkeypatch):
    monkeypatch.delenv(_core.PURE_ENV, raising=False)
    pkg = _copy_core(tmp_path)
    assert _core.decide(pkg).compiled  # an unchanged copy of the build is usable
    sm = pkg / "timing" / "sm.py"
    sm.write_text(sm.read_text() + "\n# a researcher's edit\n")
    with pytest.warns(RuntimeWarning, match=r"tlpsim/timing/sm\.py changed since the compiled core was built"):
        st = _core.decide(pkg)
    assert not st.compiled and "tlpsim/timing/sm.py" in st.reason


@pytest.mark.skipif(PURE, reason="TLPSIM_PURE_PYTHON is set")
def test_a_missing_build_record_or_extension_is_not_used(tmp_path, monkeypatch):
    monkeypatch.delenv(_core.PURE_ENV, raising=False)
    pkg = _copy_core(tmp_path)
    (pkg / _core.BUILD_RECORD).unlink()
    st = _core.decide(pkg)
    assert not st.compiled and "build record" in st.reason
    pkg = _copy_core(tmp_path / "b")
    next((pkg / "timing").glob("dram.*.so")).unlink()
    st = _core.decide(pkg)
    assert not st.compiled and "tlpsim.timing.dram" in st.reason


def _run_stats(tmp_path: Path, name: str, env: dict, *args: str) -> list[dict]:
    out = tmp_path / f"{name}.json"
    subprocess.run([sys.executable, "-m", "tlpsim.cli", "run", *args, "--mode", "timing",
                    "--run-dir", str(tmp_path / f"run-{name}"), "--stats-out", str(out)],
                   env=env, check=True, capture_output=True, text=True)
    stats = json.loads(out.read_text())["stats"]
    for s in stats:
        s.pop("wall_seconds", None)
    return stats


@pytest.mark.skipif(PURE, reason="TLPSIM_PURE_PYTHON is set")
@pytest.mark.parametrize("args", [("histogram", "--size", "tiny"),
                                  ("bfs", "--size", "tiny", "--set", "sm.warp_scheduler=two_level"),
                                  # the Hopper preset: sub-cores, near/far L2, the instruction prefetcher
                                  ("sgemm", "--size", "tiny", "--config", "h200", "--set", "gpu.n_sms=4"),
                                  # a wave-sampled run: the skip and the L2's functional warming
                                  ("matadd", "--size", "tiny", "--set", "gpu.n_sms=2", "--set",
                                   "gpu.max_ctas_per_sm=1", "--sample", "waves", "--sample-tolerance", "0.1")])
def test_compiled_and_python_sources_give_identical_statistics(tmp_path, args):
    env = {k: v for k, v in os.environ.items() if k != _core.PURE_ENV}
    compiled = _run_stats(tmp_path, "compiled", env, *args)
    pure = _run_stats(tmp_path, "pure", {**env, _core.PURE_ENV: "1"}, *args)
    assert compiled == pure
    assert sum(s["cycles"] for s in compiled) > 0

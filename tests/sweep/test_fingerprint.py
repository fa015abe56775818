"""The simulator fingerprint covers every part of the package a run's figures depend on:
each part is either hashed (SIMULATION_PARTS, or SAMPLER_PARTS for sampled runs) or listed
as outside with its reason."""

from __future__ import annotations

from pathlib import Path

import tlpsim
from tlpsim.sweep import fingerprint as fp


def _parts() -> set[str]:
    root = Path(tlpsim.__file__).resolve().parent
    return {p.name for p in root.iterdir()
            if p.name != "__pycache__" and (p.is_dir() or p.suffix in (".py", ".json"))}


def test_every_part_of_the_package_is_hashed_or_said_to_be_outside():
    parts = _parts()
    hashed, outside = set(fp.SIMULATION_PARTS) | set(fp.SAMPLER_PARTS), set(fp.OUTSIDE_PARTS)
    assert not hashed & outside and not set(fp.SIMULATION_PARTS) & set(fp.SAMPLER_PARTS)
    assert parts - hashed - outside == set(), "classify the new part in tlpsim.sweep.fingerprint"
    assert hashed <= parts and outside <= parts


def _copy_and_digest(tmp_path):
    """A copy of the sampler, one timing module and the fingerprint's module (enough to
    hash), and a function returning the copy's (simulator, sampler) fingerprints."""
    import shutil

    root = Path(tlpsim.__file__).resolve().parent
    copy = tmp_path / "tlpsim"
    shutil.copytree(root / "sampling", copy / "sampling", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    (copy / "timing").mkdir()
    shutil.copy(root / "timing" / "engine.py", copy / "timing" / "engine.py")
    (copy / "sweep").mkdir()
    shutil.copy(root / "sweep" / "fingerprint.py", copy / "sweep" / "fingerprint.py")

    def digest() -> tuple[str, str]:   # the copy's module, loaded afresh: it hashes the files beside it
        import importlib.util

        spec = importlib.util.spec_from_file_location("fp_copy", copy / "sweep" / "fingerprint.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.simulator_fingerprint(), mod.sampler_fingerprint()

    return copy, digest


def test_a_changed_sampler_changes_the_sampler_fingerprint_alone(tmp_path):
    """A sampled run's figures depend on the sampler; a full-detail run's do not."""
    copy, digest = _copy_and_digest(tmp_path)
    before = digest()
    assert before == digest()
    rule = copy / "sampling" / "rule.py"
    rule.write_text(rule.read_text() + "\n# a change\n")
    after = digest()
    assert after[0] == before[0] and after[1] != before[1]


def test_a_changed_model_changes_the_simulator_fingerprint_alone(tmp_path):
    copy, digest = _copy_and_digest(tmp_path)
    before = digest()
    engine = copy / "timing" / "engine.py"
    engine.write_text(engine.read_text() + "\n# a change\n")
    after = digest()
    assert after[0] != before[0] and after[1] == before[1]


def test_the_sampler_keys_sampled_runs_and_not_full_detail_ones():
    from tlpsim.sweep.job import RunParams

    spec = {"mode": "waves", "tolerance": 0.02}

    def run(sampling, sampler=""):
        return RunParams("vecadd", "tiny", "gtx480", {}, 1, "timing", code={}, simulator="abc",
                         sampling=sampling, sampler=sampler)

    assert run(None).key() == run(None, sampler="other").key()        # not part of a full run's key
    assert run(spec, sampler="s1").key() != run(spec, sampler="s2").key()
    assert run(spec).sampler_code() == fp.sampler_fingerprint()       # the running code's, by default
    assert run(spec).to_dict()["sampler"] == fp.sampler_fingerprint()
    assert "sampler" not in run(None).to_dict()
    back = RunParams.from_dict(run(spec, sampler="s1").to_dict())
    assert back.key() == run(spec, sampler="s1").key()                # a stored run keeps its key


def test_files_generated_inside_the_package_are_not_hashed(tmp_path):
    """The CUDA runtime's build (cudart/lib, made on the first `tlpsim exec`) is not a
    source: a checkout keeps its keys once it has run a CUDA program."""
    copy, digest = _copy_and_digest(tmp_path)
    before = digest()
    lib = copy / "cudart" / "lib" / "toolkit" / "include"
    lib.mkdir(parents=True)
    (lib / "cuda_runtime_api.h").write_text("/* generated */\n")
    assert digest() == before
    (copy / "cudart" / "shim.h").write_text("/* a source */\n")
    assert digest()[0] != before[0]

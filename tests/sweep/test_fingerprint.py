"""The simulator fingerprint covers every part of the package a run's figures depend on:
each part is either hashed (SIMULATION_PARTS) or listed as outside with its reason."""

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
    hashed, outside = set(fp.SIMULATION_PARTS), set(fp.OUTSIDE_PARTS)
    assert not hashed & outside
    assert parts - hashed - outside == set(), "classify the new part in tlpsim.sweep.fingerprint"
    assert hashed <= parts and outside <= parts


def test_the_sampler_is_part_of_the_fingerprint(tmp_path):
    """A sampled run's figures depend on the sampler: changing it changes the fingerprint."""
    import shutil

    root = Path(tlpsim.__file__).resolve().parent
    copy = tmp_path / "tlpsim"          # the sampler and the fingerprint's module alone: enough to hash
    shutil.copytree(root / "sampling", copy / "sampling", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    (copy / "sweep").mkdir()
    shutil.copy(root / "sweep" / "fingerprint.py", copy / "sweep" / "fingerprint.py")

    def digest() -> str:   # the copy's module, loaded afresh: it hashes the files beside it
        import importlib.util

        spec = importlib.util.spec_from_file_location("fp_copy", copy / "sweep" / "fingerprint.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.simulator_fingerprint()

    before = digest()
    assert before == digest()
    rule = copy / "sampling" / "rule.py"
    rule.write_text(rule.read_text() + "\n# a change\n")
    assert digest() != before

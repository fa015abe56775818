"""`tlpsim exec --save-copies DIR`: every host<->device copy's bytes, indexed in copies.tsv,
so that a program's results can be checked against a reference of the inputs it sent."""

from __future__ import annotations

import numpy as np

from tlpsim.cudart.saved_copies import read_index

from .conftest import run_exec


def test_vector_add_copies_are_saved_in_call_order(binaries, tmp_path):
    out = tmp_path / "copies"
    r = run_exec("--save-copies", out, binaries["vector_add"], "100")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = read_index(out)
    assert [(row["copy"], row["direction"], row["bytes"], row["offset"], row["file"]) for row in rows] == [
        (0, "H2D", 400, 0, "000000.bin"), (1, "H2D", 400, 0, "000001.bin"), (2, "D2H", 400, 0, "000002.bin")]
    assert len({row["allocation"] for row in rows}) == 3  # a, b and c: three allocations
    a, b, c = (np.fromfile(out / row["file"], dtype=np.float32) for row in rows)
    assert a.size == 100 and np.array_equal(c, a + b)  # the kernel's c = a + b, from the inputs it was sent
    assert sorted(p.name for p in out.iterdir()) == ["000000.bin", "000001.bin", "000002.bin", "copies.tsv"]


def test_save_copies_refuses_a_folder_in_use(binaries, tmp_path):
    (tmp_path / "old.bin").write_bytes(b"x")
    r = run_exec("--save-copies", tmp_path, binaries["vector_add"], "100")
    assert r.returncode == 2
    assert f"--save-copies {tmp_path}: exists and is not an empty folder; name a new one" in r.stderr
    assert "CUDA kernel launch" not in r.stdout  # refused before the program ran

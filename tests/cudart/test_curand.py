"""cuRAND's device API (issue 28 §2): curand_kernel.h from the pinned nvidia-curand
wheel compiles and runs, and the sequences equal cuRAND's: every curand() and
curand_uniform() draw bit for bit, curand_normal() to float32 rounding (it uses
the approximate __sincosf), against the independent generators of
curand_reference.py (XORWOW, Philox4x32-10 with Random123's known answer,
MRG32k3a), one subsequence per thread."""

from __future__ import annotations

import pytest

from .conftest import run_exec
from .curand_reference import GENERATORS


@pytest.fixture(scope="module")
def draws(binaries):
    r = run_exec(binaries["curand_device"])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == "done"
    return [line.split() for line in lines[:-1]]


def test_every_generator_and_subsequence_is_printed(draws):
    assert [(d[0], d[1]) for d in draws[::6]] == [("xorwow", "1234"), ("philox", "1234"), ("philox", "0"),
                                                   ("mrg32k3a", "1234")]
    assert [int(d[2]) for d in draws] == list(range(6)) * 4


@pytest.mark.parametrize("generator", ["xorwow", "philox", "mrg32k3a"])
def test_device_api_sequences_equal_curands(draws, generator):
    rows = [d for d in draws if d[0] == generator]
    assert rows
    for name, seed, sub, *vals in rows:
        ref = GENERATORS[name](int(seed), int(sub))
        assert [int(v, 16) for v in vals[:4]] == [ref.next() for _ in range(4)], (name, seed, sub)
        assert [float.fromhex(v) for v in vals[4:6]] == [ref.uniform() for _ in range(2)], (name, seed, sub)
        assert [float.fromhex(v) for v in vals[6:8]] == pytest.approx([ref.normal() for _ in range(2)], rel=2e-6,
                                                                     abs=1e-6)


def test_philox_known_answer(draws):
    """Random123's known-answer vector: Philox4x32-10 of counter 0 under key 0 (seed 0, subsequence 0)."""
    row = next(d for d in draws if d[:3] == ["philox", "0", "0"])
    assert row[3:7] == ["6627e8d5", "e169c58d", "bc57ac4c", "9b00dbd8"]

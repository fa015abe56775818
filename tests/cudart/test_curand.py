"""cuRAND's device API (issue 28 §2): curand_kernel.h from the pinned nvidia-curand
wheel compiles and runs, and the sequences equal cuRAND's: every curand() and
curand_uniform() draw bit for bit, curand_normal() to float32 rounding (it uses
the approximate __sincosf), against the independent generators of
curand_reference.py (XORWOW, Philox4x32-10 with Random123's known answer,
MRG32k3a), one subsequence per thread."""

from __future__ import annotations

import pytest

from .conftest import run_exec
from .curand_reference import GENERATORS, host_draw, host_normals


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


# ------------------------------------------------------------------ the host API (tlpsim's libcurand)

AT = [0, 1, 2, 4095, 4096, 4097, 8191, 8192, 8199]
N = 8200


@pytest.fixture(scope="module")
def host_api(binaries):
    r = run_exec(binaries["curand_host"])
    assert r.returncode == 0, r.stdout + r.stderr
    return {tuple(line.split()[:2]): line.split()[2:] for line in r.stdout.splitlines()[:-2]}, r.stdout


@pytest.mark.parametrize("name", ["xorwow", "mrg32k3a", "philox"])
def test_host_api_generates_the_generators_sequences(host_api, name):
    """The host API's output order (curand_reference.host_draw): XORWOW and MRG32k3a
    interleave their generator threads' subsequences, Philox takes four values per counter
    from each thread's subsequence."""
    rows, _ = host_api
    got = dict(item.split(":") for item in rows[(name, "uniform")])
    assert list(map(int, got)) == AT
    for pos in AT:
        assert float.fromhex(got[str(pos)]) == host_draw(name, 1234, pos).uniform(), (name, pos)
    # a second call continues where the first stopped (positions N .. N+3)
    bits = [host_draw(name, 1234, N + k).next() for k in range(4)]
    assert [int(b, 16) for b in rows[(name, "bits")]] == bits
    # re-seeding keeps the offset (N + 4), as NVIDIA's library does; normals are Box-Muller
    # pairs made by one generator thread (XORWOW, MRG32k3a) or of consecutive positions (Philox)
    normals = host_normals(name, 1234, N + 4, 8)
    assert [float.fromhex(v) for v in rows[(name, "normal")]] == pytest.approx(normals, rel=1e-6, abs=1e-7)
    assert rows[(name, "host")] == ["generator", "same"]


def test_host_api_refuses_generators_it_lacks(host_api):
    _, out = host_api
    assert "mtgp32: status 103" in out  # CURAND_STATUS_TYPE_ERROR


def test_host_api_thread_counts_past_the_h200_bounds(binaries):
    """curand_host_order.cu: 2^21 uniforms of MRG32k3a and Philox, the values around powers
    of two and at multiples of 2^14, in the order of curand_reference.HOST_THREADS."""
    r = run_exec(binaries["curand_host_order"])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["mrg32k3a", "philox", "done"]
    for line in lines[:2]:
        name, *items = line.split()
        values = dict(item.split(":") for item in items)
        assert len(values) == 150  # 30 around powers of two, 125 multiples of 2^14, 5 of them both
        for pos, v in values.items():
            assert float.fromhex(v) == host_draw(name, 1234, int(pos)).uniform(), (name, pos)

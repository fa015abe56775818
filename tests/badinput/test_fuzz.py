"""Fuzzing the two doors user input comes through — kernel launch arguments and
`--set key=value` config overrides — with one property: the input either works,
or raises a TlpsimError whose message names the argument or key; never another
exception. Derandomised and bounded (a few seconds), so CI sees the same cases;
TLPSIM_FUZZ_EXAMPLES=5000 searches longer, with fresh random cases."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import tlpsim
from tlpsim.errors import TlpsimError

_EXAMPLES = os.environ.get("TLPSIM_FUZZ_EXAMPLES")
FUZZ = settings(max_examples=int(_EXAMPLES or 80), deadline=None, derandomize=not _EXAMPLES, database=None,
                suppress_health_check=[HealthCheck.too_slow])

AXPY = r'''
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}'''

# ------------------------------------------------------------------ launch arguments

# dimensions: small valid ones (a launch stays tiny), or ones no limit allows
_BAD_DIM = st.one_of(st.integers(-3, 0), st.sampled_from([2**31, 2**40]), st.floats(allow_nan=True),
                     st.booleans(), st.text(max_size=3), st.none())
_DIM = st.one_of(st.integers(1, 3), _BAD_DIM)
_SHAPE = st.one_of(_DIM, st.lists(_DIM, min_size=0, max_size=4).map(tuple))

_NP_SCALARS = st.sampled_from([np.float32, np.float64, np.float16, np.int32, np.int64, np.uint32, np.int8,
                               np.uint64, np.bool_, np.complex64])


@st.composite
def _scalar(draw):
    kind = draw(st.sampled_from(["np", "int", "float", "complex", "other"]))
    if kind == "np":
        t = draw(_NP_SCALARS)
        return np.array(draw(st.integers(-100, 100))).astype(t)[()]  # wraps, as C casts do
    if kind == "int":
        return draw(st.integers(-2**70, 2**70))
    if kind == "float":
        return draw(st.floats(allow_nan=True, allow_infinity=True))
    if kind == "complex":
        return complex(draw(st.integers(-5, 5)), draw(st.integers(-5, 5)))
    return draw(st.sampled_from([None, "x", b"\x00\x01", [1, 2], {"a": 1}, object()]))


@pytest.fixture(scope="module")
def launch():
    """A functional-mode device with the kernel and a few arrays (of another
    dtype, shorter, a host NumPy array) to pass in."""
    with tlpsim.Device(mode="functional", trace_cache=False):
        k = tlpsim.RawKernel(AXPY, "axpy")
        arrays = [tlpsim.zeros(64, np.float32), tlpsim.zeros(64, np.float32), tlpsim.zeros(8, np.int32),
                  tlpsim.zeros(1, np.float64), np.zeros(64, np.float32)]
        yield k, arrays


@st.composite
def _launch_args(draw, arrays):
    good = [np.float32(2), arrays[0], arrays[1], np.int32(64)]
    n = draw(st.sampled_from([4, 4, 4, 3, 5, 0]))
    args = []
    for i in range(n):
        pick = draw(st.sampled_from(["good", "scalar", "array"]))
        if pick == "good" and i < 4:
            args.append(good[i])
        elif pick == "array":
            args.append(draw(st.sampled_from(arrays)))
        else:
            args.append(draw(_scalar()))
    return tuple(args) if draw(st.integers(0, 9)) else args  # a list, now and then


_NAMES_IT = ("argument", "grid", "block", "shared_mem", "kernel axpy", "arguments must be a tuple")


@FUZZ
@given(data=st.data())
def test_launch_arguments_run_or_name_what_is_wrong(launch, data):
    k, arrays = launch
    grid, block = data.draw(_SHAPE, "grid"), data.draw(_SHAPE, "block")
    args = data.draw(_launch_args(arrays), "args")
    kw = {}
    if data.draw(st.booleans(), "with shared_mem"):
        kw["shared_mem"] = data.draw(st.one_of(st.integers(-10, 1 << 20), st.floats(), st.text(max_size=2)),
                                     "shared_mem")
    try:
        k(grid, block, args, **kw)
    except TlpsimError as exc:
        assert any(n in str(exc) for n in _NAMES_IT), f"message names no argument: {exc}"


# ------------------------------------------------------------------ config overrides

def _schema_keys() -> list[str]:
    from tlpsim.config.model import GPUConfig
    from tlpsim.config.overrides import all_keys

    return all_keys(GPUConfig)


_KEYS = _schema_keys()
_WORDS = ["lrr", "gto", "two_level", "linear", "hash", "ipoly", "xor", "fifo", "lru", "islip", "random", "ideal",
          "crossbar", "none", "true", "false", "64KiB", "1.4GHz", "[1, 2]", "{}", '""', "nan", "inf", "-inf",
          "dramid@8;0", "{impl = \"gto\"}", "0x10", "1e9", ""]


@st.composite
def _key(draw):
    key = draw(st.sampled_from(_KEYS))
    how = draw(st.sampled_from(["as is", "as is", "as is", "typo", "deeper", "section"]))
    if how == "typo":
        i = draw(st.integers(0, len(key) - 1))
        return key[:i] + draw(st.sampled_from("xz_")) + key[i + 1:]
    if how == "deeper":
        return key + ".x"
    if how == "section":
        return key.split(".")[0]
    return key


_VALUE = st.one_of(st.integers(-10, 10), st.integers(-2**40, 2**40), st.sampled_from([1, 2, 4, 32, 64, 128, 1024]),
                   st.floats(allow_nan=True, allow_infinity=True).map(repr), st.sampled_from(_WORDS),
                   st.text(alphabet="abc01.=-", max_size=6))


@FUZZ
@given(items=st.lists(st.tuples(_key(), _VALUE), min_size=1, max_size=3))
# what longer runs of this test found (each was a ValueError from the GPU builder)
@example([("icnt.input_buffer_flits", 1)])
@example([("icnt.flit_bytes", 4)])
@example([("l1d.size_kb", 1)])
@example([("l2.hit_latency", 0)])
@example([("dram.address_mapping", "0")])
@example([("dram.banks", 4)])
@example([("l2.sector_bytes", 4)])
def test_set_overrides_build_or_name_the_key(items):
    from tlpsim.config.loader import load_config
    from tlpsim.config.overrides import parse_override
    from tlpsim.session import build_gpu

    texts = [f"{k}={v}" for k, v in items]
    try:
        cfg = load_config("gtx480", dict(parse_override(t) for t in texts))
        build_gpu(cfg)  # the timing model accepts what the config accepted
    except TlpsimError as exc:
        msg = str(exc)
        assert any(k in msg or k.split(".")[0] + "." in msg for k, _ in items), f"no key named: {msg}"


def test_the_fuzz_keys_cover_the_schema():
    assert len(_KEYS) > 150 and "icnt.input_buffer_flits" in _KEYS and "sm.warp_scheduler" in _KEYS

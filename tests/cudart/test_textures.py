"""Texture objects and CUDA arrays (issue 28 §2): tests/cudart/programs/textures.cu
fetches through every filter, address mode, coordinate mode and read mode, and
prints the values; they must equal a reference written here, lane by lane in
plain Python, from the CUDA Programming Guide's "Texture Fetching" formulas
(texel indices after the address mode, linear weights of x - 0.5 in 1/256
steps, normalized coordinates scaled by the size, 8-bit channels / 255).
Point fetches must match exactly; filtered values to float32 rounding."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tlpsim.functional import textures as T

from .conftest import run_exec

N = 16
W, H = 5, 4
WRAP, CLAMP, MIRROR, BORDER = range(4)


def f32(x: float) -> float:
    return float(np.float32(x))


XS = [f32(-1.5 + 0.546875 * k) for k in range(N)]
YS = [f32(4.25 - 0.359375 * k) for k in range(N)]
US = [f32(-0.75 + 0.171875 * k) for k in range(N)]
VS = [f32(1.5 - 0.140625 * k) for k in range(N)]
IS = [k - 3 for k in range(N)]
IMG = [[r * 10.0 + c * c + 0.25 for c in range(W)] for r in range(H)]


def index(i: int, n: int, mode: int, normalized: bool) -> int | None:
    """The texel index CUDA reads for index i; None: the border colour."""
    if not normalized and mode in (WRAP, MIRROR):  # wrap/mirror need normalized coordinates
        mode = CLAMP
    if mode == CLAMP:
        return min(max(i, 0), n - 1)
    if mode == BORDER:
        return i if 0 <= i < n else None
    if mode == WRAP:
        return i % n
    m = i % (2 * n)
    return m if m < n else 2 * n - 1 - m


def texel(table, i, j, dims, mode, normalized, border):
    ii = index(i, dims[0], mode, normalized)
    jj = index(j, dims[1], mode, normalized) if len(dims) > 1 else 0
    if ii is None or jj is None:
        return border
    return table[jj][ii] if len(dims) > 1 else table[ii]


def fetch(table, dims, coords, mode, linear, normalized, border=0.0):
    xs = [c * n if normalized else c for c, n in zip(coords, dims)]
    if not linear:
        idx = [math.floor(x) for x in xs]
        return texel(table, idx[0], idx[1] if len(dims) > 1 else 0, dims, mode, normalized, border)
    lo, w = [], []
    for x in xs:
        b = x - 0.5
        lo.append(math.floor(b))
        w.append(round((b - math.floor(b)) * 256) / 256)
    if len(dims) == 1:
        t0 = texel(table, lo[0], 0, dims, mode, normalized, border)
        t1 = texel(table, lo[0] + 1, 0, dims, mode, normalized, border)
        return (1 - w[0]) * t0 + w[0] * t1
    (i, j), (a, b) = lo, w
    return sum(wt * texel(table, i + di, j + dj, dims, mode, normalized, border)
               for (di, dj, wt) in ((0, 0, (1 - a) * (1 - b)), (1, 0, a * (1 - b)), (0, 1, (1 - a) * b), (1, 1, a * b)))


@pytest.fixture(scope="module")
def printed(binaries):
    r = run_exec(binaries["textures"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "done"
    lines = {}
    for line in r.stdout.splitlines():
        name, *vals = line.split()
        lines[name] = vals
    return lines


def _floats(vals):
    return [float.fromhex(v) for v in vals]


def test_arrays_round_trip_and_report_their_format(printed):
    assert printed["roundtrip"] == ["ok"]
    assert printed["array"] == ["32", "0", "0", "0", "kind", "2", "extent", "5", "4", "0"]


@pytest.mark.parametrize("name, mode, linear, normalized", [
    ("point_clamp", CLAMP, False, False), ("linear_clamp", CLAMP, True, False),
    ("linear_border", BORDER, True, False), ("point_wrap_norm", WRAP, False, True),
    ("linear_wrap_norm", WRAP, True, True), ("linear_mirror_norm", MIRROR, True, True),
    ("point_border_norm", BORDER, False, True)])
def test_tex2d_on_a_float_array(printed, name, mode, linear, normalized):
    xs, ys = (US, VS) if normalized else (XS, YS)
    want = [fetch(IMG, (W, H), (x, y), mode, linear, normalized, border=-7.5) for x, y in zip(xs, ys)]
    got = _floats(printed[name])
    if linear:
        assert got == pytest.approx(want, rel=1e-6, abs=1e-6)
    else:
        assert got == want
    assert len(set(got)) > 4  # the coordinates cover several texels


def test_tex2d_uchar4_normalized_float_bilinear(printed):
    rgba = [[[((r * 100 + c * 60 + ch * 17) % 256) / 255 for c in range(3)] for r in range(2)] for ch in range(4)]
    want = [fetch(rgba[ch], (3, 2), (x, y), CLAMP, True, False) for x, y in zip(XS, YS) for ch in range(4)]
    assert _floats(printed["uchar4_linear_normalized"]) == pytest.approx(want, rel=1e-6)


def test_tex1d_linear_wrap_on_a_1d_array(printed):
    line = [1.0, 4.0, -2.0, 8.5, 0.0, 3.0]
    want = [fetch(line, (6,), (u,), WRAP, True, True) for u in US]
    assert _floats(printed["tex1D_linear_wrap_norm"]) == pytest.approx(want, rel=1e-6, abs=1e-6)


def test_tex1dfetch_outside_linear_memory_reads_zero_in_every_mode(printed):
    """A real H200 returns 0 for an integer fetch outside the texture, in clamp and in
    border mode (border colour 2.5) alike (tests/cudart/h200/textures.stdout)."""
    lv = [0.5 * k * k - 3.0 for k in range(8)]
    assert _floats(printed["fetch_clamp"]) == [lv[i] if 0 <= i < 8 else 0.0 for i in IS]
    assert _floats(printed["fetch_border"]) == [lv[i] if 0 <= i < 8 else 0.0 for i in IS]
    iv = [-1000 + 333 * k for k in range(10)]
    assert [int(v) for v in printed["fetch_int"]] == [iv[i] if 0 <= i < 10 else 0 for i in IS]


# ------------------------------------------------------------------ the sampler itself


def _texture(values: np.ndarray, **kw):
    """A Texture over a fresh buffer holding `values` (float32, rows x width)."""
    data = np.zeros(4096, dtype=np.uint8)
    raw = values.astype(np.float32).tobytes()
    data[256:256 + len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    h, w = values.shape if values.ndim == 2 else (1, values.size)
    fmt = T.ChannelFormat((32, 0, 0, 0), T.FLOAT)
    return T.Texture(T.GLOBAL_BASE + 256, fmt, w, h, **kw), data


def test_linear_weights_have_eight_fractional_bits():
    tex, data = _texture(np.array([0.0, 256.0], dtype=np.float32), filter_mode=T.LINEAR)
    # x = 0.5 + 1/1024: the weight 1/1024 rounds to 0 in 1/256 steps; 3/1024 rounds to 1/256
    vals, _ = T.sample(tex, data, [np.array([0.5 + 1 / 1024, 0.5 + 3 / 1024], dtype=np.float32)], False, "f32")
    assert vals[:, 0].tolist() == [0.0, 1.0]


def test_sampler_returns_the_first_texels_address_for_the_timing_model():
    tex, data = _texture(np.arange(12, dtype=np.float32).reshape(3, 4))
    vals, addrs = T.sample(tex, data, [np.array([1.5, 3.2]), np.array([2.9, 0.0])], False, "f32")
    assert vals[:, 0].tolist() == [9.0, 3.0]
    assert addrs.tolist() == [T.GLOBAL_BASE + 256 + (2 * 4 + 1) * 4, T.GLOBAL_BASE + 256 + 3 * 4]


@pytest.mark.parametrize("kw, message", [
    (dict(filter_mode=T.LINEAR), "linear filtering needs float results"),
    (dict(normalized_float=True), None)])
def test_texture_descriptions_cuda_refuses(kw, message):
    fmt = T.ChannelFormat((32, 0, 0, 0), T.SIGNED)
    if message is None:
        with pytest.raises(T.TextureError, match="8- and 16-bit integer channels only"):
            T.Texture(T.GLOBAL_BASE, fmt, 4, **kw)
        return
    with pytest.raises(T.TextureError, match=message):
        T.Texture(T.GLOBAL_BASE, fmt, 4, **kw)
    with pytest.raises(T.TextureError, match="1, 2 or 4 channels"):
        T.ChannelFormat((32, 32, 32, 0), T.FLOAT)


def test_timing_mode_models_a_fetch_as_a_global_load_through_l1(binaries, tmp_path):
    """docs/exec.md: the timing model treats each `tex` as a 4-byte global load of the
    lane's first texel, issued to the LD/ST unit and looked up in L1."""
    import json

    r = run_exec("--mode", "timing", "--run-dir", tmp_path / "run", "--", binaries["textures"])
    assert r.returncode == 0, r.stderr
    first = json.loads((tmp_path / "run" / "launches.jsonl").read_text().splitlines()[0])
    sm0 = first["stats"]["per_sm"][0]
    assert sm0["opclass_insts"]["tex"] == 1 and sm0["opclass_insts"]["mem"] == 8
    # sample2d_scalar: x[i] and y[i] loads plus the fetch (the store goes around L1)
    assert sm0["l1d_accesses"] == 3
    assert first["stats"]["cycles"] > 0

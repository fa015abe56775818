"""References for the Rodinia programs that print nothing comparable (backprop, gaussian,
pathfinder, srad_v2), checked against the bytes they copy between host and device under
`tlpsim exec --save-copies` (docs/exec.md). Each reference is the program's algorithm,
written here in NumPy from its source, applied to the inputs the program itself sent to
the device (its H2D copies), and compared with what it copied back (its D2H copies).
Used by run_rodinia.py; each check returns the table's "correct" cell."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tlpsim.cudart.saved_copies import read_index

f32, f64 = np.float32, np.float64


class Copies:
    """The saved copies in call order, per direction."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        rows = read_index(folder)
        self.h2d = [r for r in rows if r["direction"] == "H2D"]
        self.d2h = [r for r in rows if r["direction"] == "D2H"]

    def array(self, row: dict, dtype) -> np.ndarray:
        return np.fromfile(self.folder / row["file"], dtype=dtype)

    def expect(self, h2d: int, d2h: int) -> None:
        if (len(self.h2d), len(self.d2h)) != (h2d, d2h):
            raise ValueError(f"{len(self.h2d)} H2D and {len(self.d2h)} D2H copies, not {h2d} and {d2h}")


def _worst(got: np.ndarray, want: np.ndarray) -> str:
    err = np.abs(got.astype(f64) - want.astype(f64))
    i = int(np.argmax(err))
    return f"element {i}: {got.ravel()[i]:.9g} vs {want.ravel()[i]:.9g}"


def check_pathfinder(folder: Path, cols: int, rows: int) -> str:
    """Its dynamic programming: row r's cost is the wall's value plus the least of the three
    costs above (left, up, right; at the edges the two that exist), from row 0 to the last."""
    c = Copies(folder)
    c.expect(2, 1)
    first, wall = c.array(c.h2d[0], np.int32), c.array(c.h2d[1], np.int32).reshape(rows - 1, cols)
    cost = first.astype(np.int64)
    for r in range(rows - 1):
        left = np.concatenate([cost[:1], cost[:-1]])
        right = np.concatenate([cost[1:], cost[-1:]])
        cost = wall[r] + np.minimum(np.minimum(left, cost), right)
    got = c.array(c.d2h[0], np.int32)
    if np.array_equal(got, cost):
        return "yes (result = the DP in NumPy)"
    return f"NO: result differs from the DP at {int(np.argmax(got != cost))}"


def check_gaussian(folder: Path, size: int) -> str:
    """Forward elimination without pivoting (Fan1: m[i][t] = a[i][t] / a[t][t]; Fan2:
    a[i][j] -= m[i][t] a[t][j] for j >= t, b[i] -= m[i][t] b[t], rows i > t), in float32
    from the matrix and right-hand side the program sent; the copied-back m, a and b must
    match it, and back substitution of triu(a) x = b must give numpy.linalg.solve(A, b)
    for its matrix A (10 exp(-0.01 |i - j|)) and b = 1."""
    c = Copies(folder)
    c.expect(3, 3)
    m0 = c.array(c.h2d[0], f32).reshape(size, size)
    a0 = c.array(c.h2d[1], f32).reshape(size, size)
    b0 = c.array(c.h2d[2], f32)
    i = np.arange(size)
    want_a = (10 * np.exp(f32(-0.01) * np.abs(i[:, None] - i[None, :]).astype(f32))).astype(f32)
    if not np.allclose(a0, want_a, rtol=1e-6) or not np.array_equal(b0, np.ones(size, f32)) or m0.any():
        return "NO: the program sent another matrix than its create_matrix"
    m, a, b = m0.copy(), a0.copy(), b0.copy()
    for t in range(size - 1):
        m[t + 1:, t] = a[t + 1:, t] / a[t, t]
        b[t + 1:] = b[t + 1:] - m[t + 1:, t] * b[t]
        a[t + 1:, t:] = a[t + 1:, t:] - m[t + 1:, t:t + 1] * a[t, t:]
    scale = float(np.abs(a0).max())
    for what, want, row in (("m", m, c.d2h[0]), ("a", a, c.d2h[1]), ("b", b, c.d2h[2])):
        got = c.array(row, f32).reshape(want.shape)
        if not np.allclose(got, want, rtol=1e-5, atol=1e-6 * scale):  # room for a fused multiply-add
            return f"NO: {what}, {_worst(got, want)}"
    got_a, got_b = c.array(c.d2h[1], f32).reshape(size, size), c.array(c.d2h[2], f32)
    x = np.linalg.solve(np.triu(got_a).astype(f64), got_b.astype(f64))
    want_x = np.linalg.solve(a0.astype(f64), b0.astype(f64))
    if not np.allclose(x, want_x, rtol=1e-3):  # A's condition number is 3e3
        return f"NO: solution {_worst(x, want_x)}"
    return "yes (m, a, b = its elimination in NumPy; solution = numpy.linalg.solve)"


def _tree_sum16(v: np.ndarray) -> np.ndarray:
    """bpnn_layerforward_CUDA's reduction over 16 rows (axis -2): row ty += row ty + 2^(i-1)
    where ty is a multiple of 2^i, i = 1 .. 4, in float32."""
    v = v.copy()
    for i in range(1, 5):
        p = 1 << i
        for ty in range(0, 16, p):
            v[..., ty, :] = (v[..., ty, :] + v[..., ty + p // 2, :]).astype(f32)
    return v[..., 0, :]


def check_backprop(folder: Path, n_in: int, hid: int = 16) -> str:
    """The two kernels: per block of 16 inputs, the column sums of weight x input (its
    tree reduction, in float32) and the weight adjustment w += 0.3 delta_j y_i + 0.3 oldw
    (in double, as the kernel's double constants make it; row 0 with y = 1)."""
    c = Copies(folder)
    c.expect(5, 3)
    y = c.array(c.h2d[0], f32)
    w = c.array(c.h2d[1], f32).reshape(n_in + 1, hid + 1)
    delta = c.array(c.h2d[2], f32)
    oldw = c.array(c.h2d[3], f32).reshape(n_in + 1, hid + 1)
    w_again = c.array(c.h2d[4], f32).reshape(n_in + 1, hid + 1)
    blocks = n_in // 16
    prod = (w[1:, 1:] * y[1:, None]).astype(f32).reshape(blocks, 16, hid)
    partial = _tree_sum16(prod).reshape(-1)
    got_partial = c.array(c.d2h[0], f32)
    if not np.array_equal(got_partial, partial):
        return f"NO: partial sums, {_worst(got_partial, partial)}"
    want = w_again.astype(f64)
    want[1:, 1:] += 0.3 * delta[None, 1:].astype(f64) * y[1:, None].astype(f64) + 0.3 * oldw[1:, 1:].astype(f64)
    want[0, 1:] += 0.3 * delta[1:].astype(f64) + 0.3 * oldw[0, 1:].astype(f64)
    want = want.astype(f32)
    got_w = c.array(c.d2h[2], f32).reshape(n_in + 1, hid + 1)
    if not np.array_equal(c.array(c.d2h[1], f32), y):
        return "NO: the input units changed"
    if np.allclose(got_w, want, rtol=1e-6, atol=1e-7):
        return "yes (partial sums and adjusted weights = its kernels in NumPy)"
    return f"NO: adjusted weights, {_worst(got_w, want)}"


def _srad_step(j: np.ndarray, q0sqr: float, lam: float) -> np.ndarray:
    """srad_cuda_1 and srad_cuda_2 on the whole image: differences to the four neighbours
    with the image's edge repeated (the kernels' border cases replace what they load past
    the image's edges), the diffusion coefficient, clamped to [0, 1], and the update with
    the coefficient of the cell, its south and its east neighbour; double where the
    kernels' double constants promote, float32 at each float variable."""
    jc = j.astype(f32)
    up = np.vstack([jc[:1], jc[:-1]])
    down = np.vstack([jc[1:], jc[-1:]])
    left = np.hstack([jc[:, :1], jc[:, :-1]])
    right = np.hstack([jc[:, 1:], jc[:, -1:]])
    n, s, w, e = (up - jc).astype(f32), (down - jc).astype(f32), (left - jc).astype(f32), (right - jc).astype(f32)
    g2 = ((n * n + s * s + w * w + e * e) / (jc * jc)).astype(f32)
    lap = ((n + s + w + e) / jc).astype(f32)
    num = (0.5 * g2.astype(f64) - (1.0 / 16.0) * (lap * lap).astype(f64)).astype(f32)
    den = (1 + 0.25 * lap.astype(f64)).astype(f32)
    qsqr = (num / (den * den)).astype(f32)
    q0 = f32(q0sqr)
    den = ((qsqr - q0) / (q0 * (f32(1) + q0))).astype(f32)
    cc = (1.0 / (1.0 + den.astype(f64))).astype(f32)
    cc = np.clip(cc, f32(0), f32(1))
    cs = np.vstack([cc[1:], cc[-1:]])
    ce = np.hstack([cc[:, 1:], cc[:, -1:]])
    d = (cc * n + cs * s + cc * w + ce * e).astype(f32)
    return (jc.astype(f64) + 0.25 * float(f32(lam)) * d.astype(f64)).astype(f32)


def _q0sqr(j: np.ndarray, r1: int, r2: int, c1: int, c2: int) -> float:
    """The host's ROI statistics, summed in float32 in its loop order."""
    total, total2 = f32(0), f32(0)
    for v in j[r1:r2 + 1, c1:c2 + 1].ravel():
        total = f32(total + v)
        total2 = f32(total2 + f32(v * v))
    size = f32((r2 - r1 + 1) * (c2 - c1 + 1))
    mean = f32(total / size)
    var = f32(f32(total2 / size) - f32(mean * mean))
    return float(f32(var / f32(mean * mean)))


def check_srad_v2(folder: Path, rows: int, cols: int, roi: tuple, lam: float, niter: int) -> str:
    """Each iteration's image copied back against one step of the kernels in NumPy from the
    image the host sent (the host computes q0sqr from it first)."""
    c = Copies(folder)
    c.expect(niter, niter)
    worst = 0.0
    for it in range(niter):
        j = c.array(c.h2d[it], f32).reshape(rows, cols)
        want = _srad_step(j, _q0sqr(j, *roi), lam)
        got = c.array(c.d2h[it], f32).reshape(rows, cols)
        if not np.allclose(got, want, rtol=1e-6, atol=1e-7):
            return f"NO: iteration {it}, {_worst(got, want)}"
        worst = max(worst, float(np.max(np.abs(got.astype(f64) - want) / np.abs(want))))
    return f"yes (each iteration's image = the kernels in NumPy, rel. err. <= {worst:.1e})"


# box_str of lavaMD's main.h: home box (x, y, z, number, offset), nn, 26 neighbours (x, y, z, number, offset)
_NEI = np.dtype([("x", "i4"), ("y", "i4"), ("z", "i4"), ("number", "i4"), ("offset", "i8")], align=True)
_BOX = np.dtype([("x", "i4"), ("y", "i4"), ("z", "i4"), ("number", "i4"), ("offset", "i8"), ("nn", "i4"),
                 ("nei", _NEI, (26,))], align=True)


def check_lavamd(folder: Path, alpha: float = 0.5, per_box: int = 100) -> str:
    """kernel_gpu_cuda in NumPy (double, as the program's fp): every particle of a box
    against every particle of the box and its neighbours, r2 = vA + vB - rA.rB,
    vij = exp(-2 alpha^2 r2), fA.v += qB vij, fA.xyz += qB 2 vij (rA - rB), from the boxes,
    positions and charges the program sent (it seeds them from the clock)."""
    c = Copies(folder)
    c.expect(4, 1)
    boxes = np.frombuffer((folder / c.h2d[0]["file"]).read_bytes(), dtype=_BOX)
    rv = c.array(c.h2d[1], f64).reshape(-1, 4)
    qv = c.array(c.h2d[2], f64)
    fv = c.array(c.h2d[3], f64).reshape(-1, 4).copy()
    a2 = 2.0 * alpha * alpha
    for box in boxes:
        home = slice(box["offset"], box["offset"] + per_box)
        ra = rv[home]
        for other in [box["offset"]] + [int(n["offset"]) for n in box["nei"][:box["nn"]]]:
            rb, qb = rv[other:other + per_box], qv[other:other + per_box]
            r2 = ra[:, None, 0] + rb[None, :, 0] - ra[:, 1:] @ rb[:, 1:].T
            vij = np.exp(-a2 * r2)
            fv[home, 0] += (qb[None, :] * vij).sum(axis=1)
            for k in (1, 2, 3):
                fv[home, k] += (qb[None, :] * 2 * vij * (ra[:, None, k] - rb[None, :, k])).sum(axis=1)
    got = c.array(c.d2h[0], f64).reshape(-1, 4)
    if np.allclose(got, fv, rtol=1e-10, atol=1e-12 * np.abs(fv).max()):
        return "yes (forces = its kernel in NumPy, from the inputs it sent)"
    return f"NO: forces, {_worst(got, fv)}"


def check_particlefilter(folder: Path, particles: int) -> str | None:
    """Its kernel, every frame: particle i takes the position of the first particle x whose
    CDF[x] >= u[i] (the last one if none), from the positions, CDF and u the host sent.
    None when every frame's xj and yj match, else what differs."""
    c = Copies(folder)
    frames = len(c.d2h) // 2
    if frames == 0 or len(c.h2d) != 6 * frames or len(c.d2h) != 2 * frames:
        return f"NO: {len(c.h2d)} H2D and {len(c.d2h)} D2H copies, not 6 and 2 per frame"
    for f in range(frames):
        x, y, _, _, cdf, u = (c.array(r, f64) for r in c.h2d[6 * f:6 * f + 6])
        hit = cdf[None, :] >= u[:, None]
        index = np.where(hit.any(axis=1), hit.argmax(axis=1), particles - 1)
        got_y, got_x = c.array(c.d2h[2 * f], f64), c.array(c.d2h[2 * f + 1], f64)
        if not (np.array_equal(got_x, x[index]) and np.array_equal(got_y, y[index])):
            return f"NO: frame {f + 1}: the resampled particles differ from the kernel in NumPy"
    return None

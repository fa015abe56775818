"""convsep: separable convolution, a rows pass and a columns pass (SDK convolutionSeparable).

Stands in for: CONV (Lee et al. HPCA 2014, Table 2: SDK convolutionSeparable, 16x8 CTAs, Type I;
ours 32x8); CONV (EXPARS Table 3: convolutionRowsKernel).
Trait that matters: two passes: conv_rows register-limited, conv_cols shared-memory-limited."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

R, BX, BY, ROW_STEPS, COL_STEPS = 8, 32, 8, 4, 12   # matches convsep.cu
TAPS = 2 * R + 1
# rows, cols
SIZES = {"tiny": (50, 150), "small": (384, 512), "study": (1152, 1536), "paper": (3072, 3072)}


def conv1d(a, taps, axis):
    """Correlate along `axis` with zero padding: out[i] = sum_t taps[t] * a[i + t - R]."""
    pad = [(0, 0)] * a.ndim
    pad[axis] = (R, R)
    p = np.pad(a, pad)
    n = a.shape[axis]
    out = np.zeros(a.shape)
    for t in range(TAPS):
        out += taps[t] * np.take(p, np.arange(t, t + n), axis=axis)
    return out


@register("convsep", "separable 17-tap convolution: rows pass then columns pass (14 KiB tile)",
          "convsep.cu", stands_for=("CONVS", "convolutionSeparable", "SepConv", "CS"),
          traits=("2d-grid", "shared-memory", "constant-memory", "multi-kernel"))
def run(size, rng):
    rows, cols = SIZES[size]
    img = rng.random((rows, cols), dtype=np.float32)
    taps = np.exp(-0.5 * (np.arange(-R, R + 1) / 3.0) ** 2)
    taps = (taps / taps.sum()).astype(np.float32)   # a Gaussian blur
    mod = cp.RawModule(code=kernel_source("convsep.cu"))
    mod.get_global("c_taps").set(np.frombuffer(taps.tobytes(), np.uint8))
    k_rows, k_cols = mod.get_function("conv_rows"), mod.get_function("conv_cols")
    d_in = cp.asarray(img)
    d_tmp, d_out = cp.zeros((rows, cols), np.float32), cp.zeros((rows, cols), np.float32)
    k_rows((-(-cols // (ROW_STEPS * BX)), -(-rows // BY)), (BX, BY), (d_in, d_tmp, np.int32(rows), np.int32(cols)))
    k_cols((-(-cols // BX), -(-rows // (COL_STEPS * BY))), (BX, BY), (d_tmp, d_out, np.int32(rows), np.int32(cols)))
    ref_tmp = conv1d(img.astype(np.float64), taps.astype(np.float64), axis=1)
    ref_out = conv1d(ref_tmp, taps.astype(np.float64), axis=0)
    # 17-term float32 sums of positive values with positive weights summing to 1.
    return [compare("rows", d_tmp.get(), ref_tmp, rtol=1e-5, atol=1e-6),
            compare("out", d_out.get(), ref_out, rtol=1e-5, atol=1e-6)]

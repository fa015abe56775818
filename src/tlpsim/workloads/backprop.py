"""backprop: one training step of a wide-input 2-layer perceptron (Rodinia backprop).

Forward pass of the input->hidden layer on the device (16x16 CTAs on a (1, n/16)
grid, shared-memory tree reduction), the small hidden->output layer and deltas on
the host, then the momentum weight update on the device.

Stands in for: BP (Lee et al. HPCA 2014, Table 2: 16x16 CTAs, Type II); BP_1/BP_2 (GPUDuet Table 2);
backprop (RegLess: all of Rodinia).
Trait that matters: 16x16 CTAs, thread-limited (6 CTAs/SM on Fermi); shared-memory tree reduction
with barriers."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

HID = 16
TILE = 16
ETA = 0.3
MOMENTUM = 0.3
# input units (including the bias unit); paper: Rodinia's default 65536-unit layer
N_IN = {"tiny": 1024, "small": 32768, "study": 32768, "paper": 65536}


def _sigmoid(x):
    return (1.0 / (1.0 + np.exp(-x))).astype(np.float32)


@register("backprop", "perceptron training step: shared-memory reduction forward pass + weight adjustment",
          "backprop.cu", stands_for=("BP", "backprop"),
          traits=("2d-grid", "shared-memory", "multi-kernel", "barrier-heavy", "memory-bound"))
def run(size, rng):
    n = N_IN[size]
    nb = n // TILE
    inp = rng.random(n, dtype=np.float32)
    inp[0] = 1.0                                               # bias unit
    w = (rng.random((n, HID), dtype=np.float32) - 0.5) * np.float32(0.1)
    oldw = (rng.random((n, HID), dtype=np.float32) - 0.5) * np.float32(0.01)
    w2 = (rng.random(HID + 1, dtype=np.float32) - 0.5)         # hidden->output, [0] = bias
    target = np.float32(0.8)

    mod = cp.RawModule(code=kernel_source("backprop.cu"))
    forward = mod.get_function("bp_layer_forward")
    adjust = mod.get_function("bp_adjust_weights")
    d_in, d_w, d_oldw = cp.asarray(inp), cp.asarray(w), cp.asarray(oldw)
    d_partial = cp.zeros((nb, HID), np.float32)

    forward((1, nb), (HID, TILE), (d_in, d_w, d_partial))
    partial = d_partial.get()
    prod = (w.astype(np.float64) * inp.astype(np.float64)[:, None]).reshape(nb, TILE, HID)
    # 16-term float32 tree sums of products: relative rounding <= ~5 eps of sum|terms|
    checks = [compare("partial sums", partial, prod.sum(axis=1), rtol=1e-5,
                      atol=1e-6 * float(np.abs(prod).sum(axis=1).max()))]

    # host part, in float32 like the original: hidden activations, output, deltas
    hidden = _sigmoid(partial.sum(axis=0, dtype=np.float32))
    out = _sigmoid(w2[0] + np.dot(hidden, w2[1:]))
    delta_o = out * (1 - out) * (target - out)
    delta_h = (hidden * (1 - hidden) * w2[1:] * delta_o).astype(np.float32)

    adjust((1, nb), (HID, TILE), (cp.asarray(delta_h), d_in, d_w, d_oldw, np.float32(ETA), np.float32(MOMENTUM)))
    dw = (np.float32(ETA) * delta_h.astype(np.float64)[None, :] * inp.astype(np.float64)[:, None]
          + np.float32(MOMENTUM) * oldw.astype(np.float64))
    # a handful of float32 roundings per element
    checks.append(compare("weight change", d_oldw.get(), dw, rtol=1e-5, atol=1e-9))
    checks.append(compare("weights", d_w.get(), w.astype(np.float64) + dw, rtol=1e-5, atol=1e-8))
    return checks

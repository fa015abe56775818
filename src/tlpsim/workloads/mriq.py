"""mriq: MRI-Q non-Cartesian reconstruction matrix (Parboil MRI-Q).

Two kernels: |phi|^2 per k-space sample, then one ComputeQ launch per chunk of
(up to) 1024 samples copied into constant memory. Every thread owns a voxel and sums
|phi_k|^2 * (cos, sin)(2*pi k.x) over the chunk: SFU-heavy, compute-bound, with
uniform (broadcast) constant-memory reads.

Stands in for: MQ (EXPARS Table 3: Parboil ComputeQ_GPU).
Trait that matters: SFU-heavy, compute-bound, CTA-slot and register limited."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

CHUNK = 1024  # must match MRIQ_CHUNK in mriq.cu (Parboil's samples per launch)
# (voxels, k-space samples, samples per launch <= CHUNK);
# paper = Parboil MRI-Q "small" (32^3 voxels, 3072 samples)
SIZES = {"tiny": (256, 300, 128), "small": (4096, 1536, 1024),
         "study": (196608, 128, 128), "paper": (32768, 3072, 1024)}


@register("mriq", "MRI-Q: per-voxel sum of |phi|^2 (cos, sin)(2 pi k.x) over constant-memory sample chunks",
          "mriq.cu", stands_for=("MRI-Q", "mri-q"),
          traits=("sfu-heavy", "compute-bound", "constant-memory", "multi-kernel"))
def run(size, rng):
    num_x, num_k, per_launch = SIZES[size]
    # voxel coordinates in [-0.5, 0.5), k-space coordinates in [-1, 1): |2 pi k.x| < 3 pi
    pos = (rng.random((3, num_x), dtype=np.float32) - np.float32(0.5))
    kxyz = (rng.random((3, num_k), dtype=np.float32) * np.float32(2) - np.float32(1))
    phi_re = rng.standard_normal(num_k, dtype=np.float32)
    phi_im = rng.standard_normal(num_k, dtype=np.float32)

    mod = cp.RawModule(code=kernel_source("mriq.cu"))
    k_phimag = mod.get_function("mriq_phimag")
    k_q = mod.get_function("mriq_computeq")
    d_re, d_im = cp.asarray(phi_re), cp.asarray(phi_im)
    d_mag = cp.zeros(num_k, np.float32)
    k_phimag(((num_k + 255) // 256,), (256,), (d_re, d_im, d_mag, np.int32(num_k)))
    phi_mag = d_mag.get()

    dx, dy, dz = (cp.asarray(np.ascontiguousarray(p)) for p in pos)
    q_re, q_im = cp.zeros(num_x, np.float32), cp.zeros(num_x, np.float32)
    const = mod.get_global("c_ksamples")
    samples = np.zeros((CHUNK, 4), np.float32)
    for base in range(0, num_k, per_launch):
        count = min(per_launch, num_k - base)
        samples[:] = 0
        samples[:count, :3] = kxyz[:, base:base + count].T
        samples[:count, 3] = phi_mag[base:base + count]
        const.set(samples.view(np.uint8).ravel())  # the host's cudaMemcpyToSymbol
        k_q(((num_x + 127) // 128,), (128,), (dx, dy, dz, q_re, q_im, np.int32(num_x), np.int32(count)))

    ref_mag = phi_re.astype(np.float64) ** 2 + phi_im.astype(np.float64) ** 2
    arg = 2 * np.pi * (pos.astype(np.float64).T @ kxyz.astype(np.float64))  # (num_x, num_k)
    ref_re = np.cos(arg) @ ref_mag
    ref_im = np.sin(arg) @ ref_mag
    # Each term carries ~1e-6 relative error (float32 argument, fast sin/cos with
    # ~2^-21 absolute error on [-pi, pi]) and the float32 running sum adds
    # ~2^-24 * |partial sum| per sample, mostly cancelling (random phases); both
    # stay well below 4e-6 of sum |phi|^2 (= the largest possible |Q|; measured
    # 2e-7 at small), while a wrong or dropped chunk is off by >= 1e-2 of it.
    atol = 4e-6 * float(ref_mag.sum())
    return [
        compare("phi_mag", phi_mag, ref_mag, rtol=1e-6),
        compare("q_re", q_re.get(), ref_re, rtol=1e-4, atol=atol),
        compare("q_im", q_im.get(), ref_im, rtol=1e-4, atol=atol),
    ]

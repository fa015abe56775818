"""A CuPy RawModule script that runs on tlpsim by changing one import.

Originally `import cupy as cp`; the kernels and host code are unchanged.
Run: .venv/bin/python examples/cupy_rawmodule.py
"""

import numpy as np

import tlpsim.cupy as cp  # was: import cupy as cp

module = cp.RawModule(code=r'''
extern "C" {
__global__ void scale_rows(const float* m, const float* factors, float* out, int rows, int cols) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) out[r * cols + c] = m[r * cols + c] * factors[r];
}
__global__ void row_sums(const float* m, float* sums, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += m[r * cols + c];
    sums[r] = s;
}
}
''')
scale_rows = module.get_function("scale_rows")
row_sums = module.get_function("row_sums")

rows, cols = 37, 53
m = cp.arange(rows * cols, dtype=cp.float32).reshape(rows, cols)
factors = cp.asarray(np.linspace(0.5, 2.0, rows, dtype=np.float32))
scaled = cp.empty_like(m)
sums = cp.zeros(rows, dtype=cp.float32)

scale_rows(((cols + 15) // 16, (rows + 15) // 16), (16, 16), (m, factors, scaled, np.int32(rows), np.int32(cols)))
row_sums(((rows + 31) // 32,), (32,), (scaled, sums, np.int32(rows), np.int32(cols)))

expected = (cp.asnumpy(m) * cp.asnumpy(factors)[:, None]).sum(axis=1, dtype=np.float32)
assert np.allclose(sums.get(), expected, rtol=1e-5), "mismatch"
print("row sums match NumPy:", sums.get()[:4], "...")

// 2D matrix addition C = A + B (Polybench-style element-wise kernel on a 2D grid).
// One thread per element; threadIdx.x runs along a row so loads and stores coalesce.
extern "C" __global__ void matadd(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        int idx = row * cols + col;
        c[idx] = a[idx] + b[idx];
    }
}

// 39_device_runtime_calls.cu
// Exercises: calls to external device-runtime functions that appear in PTX
// as .extern .func declarations: device printf (vprintf with a local
// argument buffer and a .global .b8 format string), assert (__assertfail),
// __trap (trap), __nanosleep (nanosleep.u32, sm_70+), in-kernel
// malloc/free.
#include <cstdio>
#include <cassert>

__global__ void runtime_calls(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    if (i == 0) printf("block %d thread %d: v=%d f=%f\n", blockIdx.x, threadIdx.x, v, 0.5 * v);
    assert(v >= 0);
    if (v == 12345) __trap();
    __nanosleep(100);
    int *scratch = (int *)malloc(4 * sizeof(int));
    if (scratch) {
        for (int k = 0; k < 4; ++k) scratch[k] = v + k;
        out[i] = scratch[0] + scratch[3];
        free(scratch);
    } else {
        out[i] = -1;
    }
}

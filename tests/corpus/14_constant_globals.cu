// 14_constant_globals.cu
// Exercises: __constant__ arrays with initialisers (float, int, a struct),
// constant memory indexed by a runtime value, __device__ global variables
// with initialisers (scalar int, double, array, struct, pointer-free
// nested struct), uninitialised __device__ globals, global read-modify-write.

struct Params {
    float scale;
    int offset;
    short tag[4];
    double bias;
};

__constant__ float c_coeffs[8] = {0.5f, 1.0f, 1.5f, 2.0f, -0.5f, -1.0f, 3.25f, 0.0f};
__constant__ int c_lut[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
__constant__ Params c_params = {2.0f, -3, {1, 2, 3, 4}, 0.125};

__device__ int g_counter = 42;
__device__ double g_scale = 1.5;
__device__ unsigned g_table[6] = {1u, 10u, 100u, 1000u, 10000u, 100000u};
__device__ Params g_params = {1.0f, 7, {9, 8, 7, 6}, -2.5};
__device__ float g_accum[64];               // zero-initialised
__device__ char g_name[8] = "corpus";

__global__ void constant_globals(const int *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    float r = c_coeffs[v & 7] * c_params.scale + (float)c_params.offset;
    r += (float)c_lut[v & 15] + (float)c_params.tag[i & 3] + (float)c_params.bias;
    r += (float)g_table[v % 6] + (float)g_scale + (float)g_params.tag[v & 3];
    r += g_params.scale * (float)g_params.offset + (float)g_params.bias;
    r += (float)g_name[i & 7];
    out[i] = r;
    g_accum[i & 63] = r;
    if (i == 0) g_counter = g_counter + n;
}

// 16_struct_params.cu
// Exercises: structs passed by value as kernel parameters (ld.param of
// fields with different sizes/alignments: char, short, int, float, double,
// pointer, embedded array), a large struct param, a param struct holding
// device pointers, mixing scalar and struct params.

struct Small { char c; short s; int i; };
struct Mixed {
    float f;
    double d;
    const float *src;
    float *dst;
    int dims[3];
    unsigned char flags;
};
struct Big { float m[4][4]; int n; };

__global__ void struct_params(Small sm, Mixed mx, Big bg, long long tag)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n = mx.dims[0] * mx.dims[1] * mx.dims[2];
    if (i >= n) return;
    float v = mx.src[i] * mx.f + (float)mx.d;
    v += (float)sm.c + (float)sm.s + (float)sm.i;
    float acc = 0.0f;
    for (int r = 0; r < 4; ++r) acc += bg.m[r][i & 3];   // param-space array
    v += acc * (float)bg.n;
    if (mx.flags & 1) v = -v;
    mx.dst[i] = v + (float)(tag & 0xff);
}

// 01_int_arith.cu
// Exercises: 32/64-bit integer arithmetic, signed/unsigned division and
// remainder (32 and 64-bit), shifts (logical/arithmetic, variable amount),
// bitwise ops, integer min/max/abs, multiply-add patterns.

__global__ void int_arith32(const int *a, const int *b, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i];
    int y = b[i] | 1;                 // avoid division by zero
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    int r = 0;
    r += x + y;
    r ^= x - y;
    r += x * y;
    r += x / y;                       // signed div
    r += x % y;                       // signed rem
    r += (int)(ux / uy);              // unsigned div
    r += (int)(ux % uy);              // unsigned rem
    r += x >> (y & 31);               // arithmetic shift right
    r += (int)(ux >> (uy & 31));      // logical shift right
    r += x << (y & 15);
    r += (x & y) | (~x ^ y);
    r += min(x, y) + max(x, y);
    r += (int)(umin(ux, uy) + umax(ux, uy));
    r += abs(x);
    r += x * 7 + y;                   // mad
    r += x / 3 + x % 10;              // division by constant
    out[i] = r;
}

__global__ void int_arith64(const long long *a, const long long *b,
                            long long *out, unsigned long long *uout, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long x = a[i];
    long long y = b[i] | 1;
    unsigned long long ux = (unsigned long long)x, uy = (unsigned long long)y;
    long long r = x + y;
    r -= x * y;
    r += x / y;
    r += x % y;
    r += x >> (y & 63);
    r += x << (int)(y & 7);
    r += llabs(x) + llmin(x, y) + llmax(x, y);
    out[i] = r ^ (x & ~y);
    unsigned long long u = ux / uy + ux % uy + (ux >> (uy & 63));
    u += __umul64hi(ux, uy) + (unsigned long long)__mul64hi(x, y);
    uout[i] = u + ullmin(ux, uy) + ullmax(ux, uy);
}

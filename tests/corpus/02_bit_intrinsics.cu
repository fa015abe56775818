// 02_bit_intrinsics.cu
// Exercises: __popc/__popcll, __clz/__clzll, __brev/__brevll, __ffs/__ffsll,
// __byte_perm (prmt), __funnelshift_l/r (+ _lc/_rc clamp variants, shf),
// bit-field extract/insert patterns (bfe/bfi), __mul24/__umul24,
// __umulhi/__mulhi, __sad/__usad, __rhadd/__hadd.

__global__ void bit_intrinsics(const unsigned *a, const unsigned *b,
                               unsigned *out, unsigned long long *out64, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i], y = b[i];
    unsigned r = 0;
    r += __popc(x);
    r += __clz(x);
    r += __brev(y);
    r += __ffs((int)x);
    r += __byte_perm(x, y, 0x5140);
    r += __byte_perm(x, y, y & 0x7777);             // runtime selector
    r += __funnelshift_l(x, y, i & 31);
    r += __funnelshift_r(x, y, i);
    r += __funnelshift_lc(x, y, i);
    r += __funnelshift_rc(x, y, 7);
    // bit-field extract / insert patterns
    unsigned pos = y & 15, len = 5;
    r += (x >> pos) & ((1u << len) - 1u);             // extract
    r += (unsigned)(((int)x << 8) >> 20);             // signed extract
    unsigned mask = 0xFFu << 4;
    r += (x & ~mask) | ((y << 4) & mask);             // insert
    r += __mul24((int)x, (int)y) + __umul24(x, y);
    r += __umulhi(x, y) + (unsigned)__mulhi((int)x, (int)y);
    r += __sad((int)x, (int)y, 3u) + __usad(x, y, r);
    r += (unsigned)__hadd((int)x, (int)y) + __urhadd(x, y);
    out[i] = r;

    unsigned long long X = ((unsigned long long)x << 32) | y;
    unsigned long long R = __popcll(X) + __clzll((long long)X) + __ffsll((long long)X);
    R += __brevll(X);
    out64[i] = R;
}

// 25_inline_asm.cu
// Exercises: inline PTX asm: carry chains (add.cc / addc / sub.cc / subc)
// for 128-bit arithmetic, lop3.b32 with an arbitrary LUT, mad.hi / mad.lo /
// mad.wide, vote.sync.ballot, bfe / bfi, prmt, explicit predicates
// (setp + @p), asm with scoped { .reg } blocks, "memory" clobber,
// multiple outputs, 64-bit "l" operands and 16-bit "h" operands.

__device__ __forceinline__ void add128(unsigned a[4], const unsigned b[4])
{
    asm volatile("add.cc.u32 %0, %0, %4;\n\t"
                 "addc.cc.u32 %1, %1, %5;\n\t"
                 "addc.cc.u32 %2, %2, %6;\n\t"
                 "addc.u32 %3, %3, %7;"
                 : "+r"(a[0]), "+r"(a[1]), "+r"(a[2]), "+r"(a[3])
                 : "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]));
}

__device__ __forceinline__ unsigned long long sub64_via32(unsigned long long x, unsigned long long y)
{
    unsigned lo, hi;
    asm("sub.cc.u32 %0, %2, %4;\n\t"
        "subc.u32 %1, %3, %5;"
        : "=r"(lo), "=r"(hi)
        : "r"((unsigned)x), "r"((unsigned)(x >> 32)), "r"((unsigned)y), "r"((unsigned)(y >> 32)));
    return ((unsigned long long)hi << 32) | lo;
}

__global__ void inline_asm(const unsigned *in, unsigned *out, unsigned long long *out64, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = in[i], y = in[(i + 1) % n], z = in[(i + 2) % n];
    unsigned acc[4] = {x, y, z, 0xffffffffu};
    const unsigned add[4] = {0xffffffffu, 1u, z, 0u};
    add128(acc, add);
    unsigned l3, mh, ml, ball, bf, bi, pr, sel;
    asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(l3) : "r"(x), "r"(y), "r"(z));   // x^y^z
    asm("mad.hi.u32 %0, %1, %2, %3;" : "=r"(mh) : "r"(x), "r"(y), "r"(z));
    asm("mad.lo.s32 %0, %1, %2, %3;" : "=r"(ml) : "r"(x), "r"(y), "r"(z));
    unsigned long long wide;
    asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(wide) : "r"(x), "r"(y), "l"((unsigned long long)z));
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; }"
                 : "=r"(ball) : "r"(x & 1));
    asm("bfe.u32 %0, %1, 4, 8;" : "=r"(bf) : "r"(x));
    asm("bfi.b32 %0, %1, %2, 8, 12;" : "=r"(bi) : "r"(y), "r"(x));
    asm("prmt.b32 %0, %1, %2, 0x3210;" : "=r"(pr) : "r"(x), "r"(z));
    asm("{ .reg .pred q; setp.lt.s32 q, %1, %2; selp.b32 %0, %1, %2, q; @q add.u32 %0, %0, 1; }"
        : "=r"(sel) : "r"((int)x), "r"((int)y));
    unsigned short h;
    asm("cvt.u16.u32 %0, %1;" : "=h"(h) : "r"(x));
    out[4 * i + 0] = acc[0] ^ acc[1] ^ acc[2] ^ acc[3];
    out[4 * i + 1] = l3 + mh + ml + ball;
    out[4 * i + 2] = bf + bi + pr + sel + h;
    asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %0; st.global.u32 [g], %1; }"
                 :: "l"(out + 4 * i + 3), "r"(x * 3u) : "memory");
    out64[i] = wide + sub64_via32(wide, x);
}

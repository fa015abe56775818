// 10_switch.cu
// Exercises: dense switch (candidate for a jump table / brx.idx), sparse
// switch (compare chain), fall-through cases, default, switch inside a
// loop (an "interpreter" kernel with divergent opcodes).
// Note: CUDA 13.5 nvcc lowers these to setp/bra compare trees; it does not
// emit brx.idx for C switches, so 40_asm_brx_red.cu provides one via asm.

__global__ void switch_dense(const int *op, const int *a, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], r;
    switch (op[i]) {
    case 0: r = x + 1; break;
    case 1: r = x * 3; break;
    case 2: r = x ^ 0x55; break;
    case 3: r = x >> 2; break;
    case 4: r = x - 17; break;
    case 5: r = x * x; break;
    case 6: r = ~x; break;
    case 7: r = x | 0x100; break;
    case 8: r = x & 0xff; break;
    case 9: r = -x; break;
    case 10: x += 5;                 // fall through
    case 11: r = x << 1; break;
    default: r = 0; break;
    }
    out[i] = r;
}

__global__ void switch_sparse(const int *a, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int r;
    switch (a[i]) {
    case -100: r = 1; break;
    case 7: r = 2; break;
    case 4096: r = 3; break;
    case 123456: r = 4; break;
    default: r = a[i] & 1;
    }
    out[i] = r;
}

// tiny stack-free interpreter: program in global memory, one per thread
__global__ void interp(const unsigned char *prog, int plen, const int *init, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int acc = init[i];
    for (int pc = 0; pc < plen; ++pc) {
        switch (prog[pc]) {
        case 0: acc += 1; break;
        case 1: acc *= 2; break;
        case 2: acc -= i; break;
        case 3: if (acc & 1) pc++; break;   // conditional skip
        case 4: acc = acc % 1000; break;
        case 5: pc = plen; break;           // halt
        }
    }
    out[i] = acc;
}

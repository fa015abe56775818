// cuRAND's device API (curand_kernel.h): XORWOW, Philox4_32_10 and MRG32k3a
// states, one subsequence per thread (curand_init(seed, thread, 0, &s)), each
// drawing 4 x curand, 2 x curand_uniform and 2 x curand_normal. The program prints
// the draws; tests/cudart/test_curand.py compares them with an independent NumPy
// implementation of the three generators.
#include <cstdio>
#include <curand_kernel.h>

#include "check.h"

const int THREADS = 6;
const unsigned long long SEED = 1234ULL;

template <typename State>
__global__ void draw(unsigned long long seed, unsigned *bits, float *uni, float *nrm)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    State s;
    curand_init(seed, i, 0, &s);
    for (int k = 0; k < 4; k++) bits[4 * i + k] = curand(&s);
    for (int k = 0; k < 2; k++) uni[2 * i + k] = curand_uniform(&s);
    for (int k = 0; k < 2; k++) nrm[2 * i + k] = curand_normal(&s);
}

template <typename State>
static void run(const char *name, unsigned long long seed)
{
    unsigned *bits;
    float *uni, *nrm;
    CHECK(cudaMallocManaged(&bits, 4 * THREADS * sizeof(unsigned)));
    CHECK(cudaMallocManaged(&uni, 2 * THREADS * sizeof(float)));
    CHECK(cudaMallocManaged(&nrm, 2 * THREADS * sizeof(float)));
    draw<State><<<1, THREADS>>>(seed, bits, uni, nrm);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < THREADS; i++) {
        printf("%s %llu %d", name, seed, i);
        for (int k = 0; k < 4; k++) printf(" %08x", bits[4 * i + k]);
        for (int k = 0; k < 2; k++) printf(" %a", uni[2 * i + k]);
        for (int k = 0; k < 2; k++) printf(" %a", nrm[2 * i + k]);
        printf("\n");
    }
    CHECK(cudaFree(bits));
    CHECK(cudaFree(uni));
    CHECK(cudaFree(nrm));
}

int main()
{
    run<curandStateXORWOW_t>("xorwow", SEED);
    run<curandStatePhilox4_32_10_t>("philox", SEED);
    run<curandStatePhilox4_32_10_t>("philox", 0);
    run<curandStateMRG32k3a_t>("mrg32k3a", SEED);
    printf("done\n");
    return 0;
}

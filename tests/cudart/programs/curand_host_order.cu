// How many generator threads NVIDIA's host MRG32k3a and Philox generators interleave
// (docs/exec.md, "cuRAND"): curand_host.cu's 8204 values bound the counts from below
// only. Fills 2^21 uniforms per generator (seed 1234, default ordering) and prints the
// values around every power of two from 2^11 to 2^20 and at every multiple of 2^14:
// where a count of threads T ends, position T holds a thread's second draw instead of
// thread T's first. tests/cudart/test_curand.py checks tlpsim's output against
// curand_reference.py; tests/cudart/test_h200_outputs.py against the H200's, once run.
#include <cstdio>
#include <curand.h>

#include "check.h"

const size_t N = size_t(1) << 21;

static void run(const char *name, curandRngType_t type)
{
    static float uni[N];
    float *d_uni;
    CHECK(cudaMalloc(&d_uni, N * sizeof(float)));
    curandGenerator_t gen;
    if (curandCreateGenerator(&gen, type) != CURAND_STATUS_SUCCESS
        || curandSetPseudoRandomGeneratorSeed(gen, 1234ULL) != CURAND_STATUS_SUCCESS
        || curandGenerateUniform(gen, d_uni, N) != CURAND_STATUS_SUCCESS) {
        printf("%s: cuRAND failed\n", name);
        exit(EXIT_FAILURE);
    }
    CHECK(cudaMemcpy(uni, d_uni, sizeof uni, cudaMemcpyDeviceToHost));
    printf("%s", name);
    for (int k = 11; k <= 20; k++)
        for (long d = -1; d <= 1; d++) {
            size_t at = (size_t(1) << k) + d;
            printf(" %zu:%a", at, uni[at]);
        }
    for (size_t at = 3 << 14; at < N; at += 1 << 14) printf(" %zu:%a", at, uni[at]);
    printf("\n");
    curandDestroyGenerator(gen);
    CHECK(cudaFree(d_uni));
}

int main()
{
    run("mrg32k3a", CURAND_RNG_PSEUDO_MRG32K3A);
    run("philox", CURAND_RNG_PSEUDO_PHILOX4_32_10);
    printf("done\n");
    return 0;
}

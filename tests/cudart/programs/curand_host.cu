// cuRAND's host API through tlpsim's libcurand (-lcurand): XORWOW (the default),
// MRG32k3a and Philox4_32_10 generators seeded with 1234 fill device memory; the
// program prints values at positions around the 4096-subsequence interleaving and
// checks that a host generator (curandCreateGeneratorHost) gives the same numbers
// and that a second call continues the sequence. tests/cudart/test_curand.py
// compares the values with independent NumPy generators.
#include <cstdio>
#include <cstring>
#include <curand.h>

#include "check.h"

#define CURAND_CHECK(call)                                                          \
    do {                                                                            \
        curandStatus_t st_ = (call);                                                \
        if (st_ != CURAND_STATUS_SUCCESS) {                                         \
            fprintf(stderr, "cuRAND error %d at %s:%d: %s\n", (int)st_, __FILE__, __LINE__, #call); \
            exit(EXIT_FAILURE);                                                     \
        }                                                                           \
    } while (0)

const size_t N = 8200;
const size_t AT[] = {0, 1, 2, 4095, 4096, 4097, 8191, 8192, 8199};

static void run(const char *name, curandRngType_t type)
{
    static float uni[N], uni_host[N], nrm[8];
    static unsigned bits[N];
    float *d_uni, *d_nrm;
    unsigned *d_bits;
    CHECK(cudaMalloc(&d_uni, N * sizeof(float)));
    CHECK(cudaMalloc(&d_nrm, 8 * sizeof(float)));
    CHECK(cudaMalloc(&d_bits, N * sizeof(unsigned)));
    curandGenerator_t gen, host;
    CURAND_CHECK(curandCreateGenerator(&gen, type));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(gen, 1234ULL));
    CURAND_CHECK(curandGenerateUniform(gen, d_uni, N));           // positions 0 .. N-1
    CURAND_CHECK(curandGenerate(gen, d_bits, 4));                 // continues: positions N .. N+3
    CHECK(cudaMemcpy(uni, d_uni, sizeof uni, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(bits, d_bits, 4 * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(gen, 1234ULL));  // back to position 0
    CURAND_CHECK(curandGenerateNormal(gen, d_nrm, 8, 0.0f, 1.0f));
    CHECK(cudaMemcpy(nrm, d_nrm, sizeof nrm, cudaMemcpyDeviceToHost));
    CURAND_CHECK(curandCreateGeneratorHost(&host, type));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(host, 1234ULL));
    CURAND_CHECK(curandGenerateUniform(host, uni_host, N));
    printf("%s uniform", name);
    for (size_t k : AT) printf(" %zu:%a", k, uni[k]);
    printf("\n%s bits", name);
    for (int k = 0; k < 4; k++) printf(" %08x", bits[k]);
    printf("\n%s normal", name);
    for (int k = 0; k < 8; k++) printf(" %a", nrm[k]);
    printf("\n%s host generator %s\n", name, memcmp(uni, uni_host, sizeof uni) ? "differs" : "same");
    CURAND_CHECK(curandDestroyGenerator(gen));
    CURAND_CHECK(curandDestroyGenerator(host));
    CHECK(cudaFree(d_uni));
    CHECK(cudaFree(d_nrm));
    CHECK(cudaFree(d_bits));
}

int main()
{
    run("xorwow", CURAND_RNG_PSEUDO_DEFAULT);
    run("mrg32k3a", CURAND_RNG_PSEUDO_MRG32K3A);
    run("philox", CURAND_RNG_PSEUDO_PHILOX4_32_10);
    curandGenerator_t g;
    printf("mtgp32: status %d\n", (int)curandCreateGenerator(&g, CURAND_RNG_PSEUDO_MTGP32));
    printf("done\n");
    return 0;
}

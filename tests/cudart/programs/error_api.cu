// The error API without kernel faults: invalid launches and arguments return the
// documented errors, cudaPeekAtLastError keeps the error and cudaGetLastError
// clears it, names and strings are CUDA's, and the runtime keeps working.
// Two checks are tlpsim's own, stricter than a GPU (docs/exec.md): a copy running past
// the end of an allocation and a made-up stream handle are undefined in CUDA (a real
// GPU may copy into the allocation's padding, and crashed on the bogus stream).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void noop(int *p) { if (p) *p = 1; }

static int errors = 0;
static void expect(const char *what, cudaError_t got, cudaError_t want)
{
    printf("%-34s %s\n", what, cudaGetErrorName(got));
    if (got != want) { ++errors; printf("  expected %s\n", cudaGetErrorName(want)); }
}

int main()
{
    noop<<<1, 2048>>>(nullptr);
    expect("block of 2048 threads (peek)", cudaPeekAtLastError(), cudaErrorInvalidValue);
    expect("same (get)", cudaGetLastError(), cudaErrorInvalidValue);
    expect("after get", cudaGetLastError(), cudaSuccess);
    for (int i = 0; i < 3; ++i) {  // a benchmark loop repeating the bad launch
        noop<<<1, 2048>>>(nullptr);
        if (cudaGetLastError() != cudaErrorInvalidValue) ++errors;
    }
    noop<<<dim3(1, 70000), 1>>>(nullptr);
    expect("grid y of 70000", cudaGetLastError(), cudaErrorInvalidValue);
    int *d;
    expect("cudaMalloc", cudaMalloc(&d, 64), cudaSuccess);
    int x = 0;
    expect("copy past the allocation", cudaMemcpy(d, &x, 128, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    expect("free of a non-allocation", cudaFree(d + 3), cudaErrorInvalidValue);
    expect("invalid copy kind", cudaMemcpy(d, &x, 4, (cudaMemcpyKind)9), cudaErrorInvalidMemcpyDirection);
    expect("symbol that is not one", cudaMemcpyToSymbol(x, &x, 4), cudaErrorInvalidSymbol);
    cudaStream_t bogus = (cudaStream_t)0x1234;
    expect("bogus stream", cudaStreamSynchronize(bogus), cudaErrorInvalidResourceHandle);
    noop<<<1, 1>>>(d);
    expect("a good launch still works", cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(&x, d, 4, cudaMemcpyDeviceToHost);
    if (x != 1) ++errors;
    if (strcmp(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory") != 0) ++errors;
    if (strcmp(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress") != 0) ++errors;
    if (strcmp(cudaGetErrorName(cudaSuccess), "cudaSuccess") != 0) ++errors;
    printf(errors ? "FAIL\n" : "PASS\n");
    return errors ? 1 : 0;
}

// Streams and events: independent work on four streams with async copies from
// pinned memory, events recorded on streams, cudaStreamWaitEvent, a host callback,
// elapsed times, and stream/event queries.
#include <cstdio>
#include "check.h"

__global__ void work(float *x, int n, float factor, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int r = 0; r < rounds; ++r) v = v * factor + 1.0f;
    x[i] = v;
}

static int callbacks = 0;
static void CUDART_CB onDone(void *data) { callbacks += *(int *)data; }

int main()
{
    const int streams = 4, n = 2048;
    cudaStream_t s[streams];
    cudaEvent_t start, stop, done[streams];
    float *host, *dev;
    CHECK(cudaMallocHost(&host, streams * n * sizeof(float)));
    CHECK(cudaMalloc(&dev, streams * n * sizeof(float)));
    for (int i = 0; i < streams * n; ++i) host[i] = (float)(i % 100);
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int k = 0; k < streams; ++k) {
        CHECK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
        CHECK(cudaEventCreateWithFlags(&done[k], cudaEventDefault));
    }
    CHECK(cudaEventRecord(start, 0));
    for (int k = 0; k < streams; ++k) {
        float *h = host + k * n, *d = dev + k * n;
        CHECK(cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, s[k]));
        work<<<n / 256, 256, 0, s[k]>>>(d, n, 0.5f, 8 * (k + 1));
        CHECK(cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, s[k]));
        CHECK(cudaEventRecord(done[k], s[k]));
    }
    // stream 0 waits for stream 3, then runs one more pass over stream 3's data
    CHECK(cudaStreamWaitEvent(s[0], done[3], 0));
    work<<<n / 256, 256, 0, s[0]>>>(dev + 3 * n, n, 1.0f, 1);
    int one = 1;
    CHECK(cudaLaunchHostFunc(s[0], onDone, &one));
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaEventSynchronize(stop));
    float total = 0.0f, first = 0.0f;
    CHECK(cudaEventElapsedTime(&total, start, stop));
    CHECK(cudaEventElapsedTime(&first, start, done[0]));
    for (int k = 0; k < streams; ++k) CHECK(cudaStreamSynchronize(s[k]));
    CHECK(cudaStreamQuery(s[1]));
    CHECK(cudaEventQuery(done[2]));
    float last[1];
    CHECK(cudaMemcpy(last, dev + 3 * n + 5, sizeof(float), cudaMemcpyDeviceToHost));
    int errors = callbacks != 1;
    for (int k = 0; k < streams; ++k)
        for (int i = 0; i < n; ++i) {
            float v = (float)((k * n + i) % 100);
            for (int r = 0; r < 8 * (k + 1); ++r) v = v * 0.5f + 1.0f;
            if (host[k * n + i] != v) { ++errors; break; }
        }
    float v3 = host[3 * n + 5] + 1.0f;
    errors += last[0] != v3;
    errors += !(total > 0.0f) || first > total;
    printf("elapsed: all streams %.4f ms, stream 0 %.4f ms; callbacks %d\n", total, first, callbacks);
    for (int k = 0; k < streams; ++k) { CHECK(cudaStreamDestroy(s[k])); CHECK(cudaEventDestroy(done[k])); }
    CHECK(cudaEventDestroy(start)); CHECK(cudaEventDestroy(stop));
    CHECK(cudaFreeHost(host)); CHECK(cudaFree(dev));
    printf(errors ? "FAIL\n" : "PASS\n");
    return errors ? 1 : 0;
}

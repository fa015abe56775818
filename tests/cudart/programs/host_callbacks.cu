// Host threads and stream callbacks, the pattern of NVIDIA's simpleCallback sample:
// several host threads each create a stream, copy, launch and add a callback; each
// callback starts another host thread that checks the results and frees the stream's
// resources while other threads may still be launching. The runtime is entered from
// many threads at once (issue 28: timing mode crashed in the issue stage and
// cudaStreamAddCallback returned cudaErrorUnknown).
#include <pthread.h>
#include <cstdio>
#include "check.h"

const int N_THREADS = 4, N = 1000;

struct Work {
    int id;
    int *h, *d;
    cudaStream_t stream;
    bool ok;
    pthread_t post;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_done = PTHREAD_COND_INITIALIZER;
static int finished = 0, host_funcs = 0;

__global__ void inc(int *data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1;
}

static void *postprocess(void *arg) {
    Work *w = (Work *)arg;
    CHECK(cudaSetDevice(0));
    w->ok = true;
    for (int i = 0; i < N; ++i) w->ok &= w->h[i] == w->id + i + 1;
    CHECK(cudaFree(w->d));
    CHECK(cudaFreeHost(w->h));
    CHECK(cudaStreamDestroy(w->stream));
    pthread_mutex_lock(&lock);
    ++finished;
    pthread_cond_signal(&all_done);
    pthread_mutex_unlock(&lock);
    return nullptr;
}

static void CUDART_CB callback(cudaStream_t, cudaError_t status, void *arg) {
    CHECK(status);
    Work *w = (Work *)arg;
    pthread_create(&w->post, nullptr, postprocess, w);
}

static void CUDART_CB host_func(void *) {
    pthread_mutex_lock(&lock);
    ++host_funcs;
    pthread_mutex_unlock(&lock);
}

static void *launch(void *arg) {
    Work *w = (Work *)arg;
    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamCreate(&w->stream));
    CHECK(cudaMalloc(&w->d, N * sizeof(int)));
    CHECK(cudaHostAlloc(&w->h, N * sizeof(int), cudaHostAllocPortable));
    for (int i = 0; i < N; ++i) w->h[i] = w->id + i;
    CHECK(cudaMemcpyAsync(w->d, w->h, N * sizeof(int), cudaMemcpyHostToDevice, w->stream));
    inc<<<(N + 127) / 128, 128, 0, w->stream>>>(w->d, N);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(w->h, w->d, N * sizeof(int), cudaMemcpyDeviceToHost, w->stream));
    CHECK(cudaLaunchHostFunc(w->stream, host_func, nullptr));
    CHECK(cudaStreamAddCallback(w->stream, callback, w, 0));
    return nullptr;
}

int main() {
    Work work[N_THREADS];
    pthread_t threads[N_THREADS];
    for (int i = 0; i < N_THREADS; ++i) {
        work[i].id = i;
        pthread_create(&threads[i], nullptr, launch, &work[i]);
    }
    for (int i = 0; i < N_THREADS; ++i) pthread_join(threads[i], nullptr);
    pthread_mutex_lock(&lock);
    while (finished < N_THREADS) pthread_cond_wait(&all_done, &lock);
    pthread_mutex_unlock(&lock);
    bool ok = host_funcs == N_THREADS;
    for (int i = 0; i < N_THREADS; ++i) {
        pthread_join(work[i].post, nullptr);
        ok &= work[i].ok;
    }
    printf("%d workloads, %d host functions: %s\n", N_THREADS, host_funcs, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}

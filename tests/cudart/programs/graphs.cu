// CUDA graphs, built node by node and by stream capture (fork/join over two
// streams), instantiated and launched several times; the results are checked
// against the CPU. Then the capture errors CUDA defines: synchronising a
// capturing stream, and ending a capture with a forked stream not joined back.
#include <cstdio>
#include <cstring>
#include <vector>

#include "check.h"

__global__ void axpb(float *y, const float *x, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}

__global__ void add(float *z, const float *x, const float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}

static int host_calls = 0;
static void CUDART_CB count_call(void *data) { host_calls += *(int *)data; }

static bool same(const float *got, const std::vector<float> &want, const char *what)
{
    for (size_t i = 0; i < want.size(); i++)
        if (got[i] != want[i]) {
            printf("%s: element %zu is %g, expected %g\n", what, i, got[i], want[i]);
            return false;
        }
    return true;
}

int main()
{
    const int n = 1000;
    const size_t bytes = n * sizeof(float);
    std::vector<float> hx(n), hout(n);
    float *dx, *dy, *dz, *dw;
    CHECK(cudaMalloc(&dx, bytes));
    CHECK(cudaMalloc(&dy, bytes));
    CHECK(cudaMalloc(&dz, bytes));
    CHECK(cudaMalloc(&dw, bytes));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreate(&s2));
    bool ok = true;

    // ---- a graph built by hand: copy in, memset, kernel, copy out, host node
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t copy_in, clear, kernel, copy_out, host;
    CHECK(cudaGraphAddMemcpyNode1D(&copy_in, g, NULL, 0, dx, hx.data(), bytes, cudaMemcpyHostToDevice));
    cudaMemsetParams ms;
    memset(&ms, 0, sizeof ms);
    ms.dst = dy; ms.value = 0; ms.elementSize = 4; ms.width = n; ms.height = 1;
    CHECK(cudaGraphAddMemsetNode(&clear, g, NULL, 0, &ms));
    float a = 2.0f, b = 0.5f;
    int count = n;
    void *args[] = {&dy, &dx, &a, &b, &count};
    cudaKernelNodeParams kp;
    memset(&kp, 0, sizeof kp);
    kp.func = (void *)axpb; kp.gridDim = dim3((n + 127) / 128); kp.blockDim = dim3(128); kp.kernelParams = args;
    cudaGraphNode_t kdeps[] = {copy_in, clear};
    CHECK(cudaGraphAddKernelNode(&kernel, g, kdeps, 2, &kp));
    a = 100.0f;  // the node copied the arguments when it was made: this changes nothing
    CHECK(cudaGraphAddMemcpyNode1D(&copy_out, g, &kernel, 1, hout.data(), dy, bytes, cudaMemcpyDeviceToHost));
    int weight = 1;
    cudaHostNodeParams hp = {count_call, &weight};
    CHECK(cudaGraphAddHostNode(&host, g, &copy_out, 1, &hp));
    size_t nodes = 0, roots = 0, edges = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &nodes));
    CHECK(cudaGraphGetRootNodes(g, NULL, &roots));
    CHECK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
    cudaGraphNodeType type;
    CHECK(cudaGraphNodeGetType(kernel, &type));
    printf("manual graph: %zu nodes, %zu roots, %zu edges, kernel node type %d\n", nodes, roots, edges, (int)type);
    cudaGraphExec_t ge;
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    for (int launch = 0; launch < 3; launch++) {
        for (int i = 0; i < n; i++) hx[i] = (float)(i % 97) * 0.25f + launch;  // copied when the graph runs
        CHECK(cudaGraphLaunch(ge, s1));
        CHECK(cudaStreamSynchronize(s1));
        std::vector<float> want(n);
        for (int i = 0; i < n; i++) want[i] = 2.0f * hx[i] + 0.5f;
        ok = same(hout.data(), want, "manual graph") && ok;
    }
    printf("manual graph: 3 launches, host node ran %d times\n", host_calls);
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));

    // ---- stream capture with a fork into s2 and a join back into s1
    for (int i = 0; i < n; i++) hx[i] = (float)((i * 7) % 13) - 6.0f;
    CHECK(cudaMemcpy(dx, hx.data(), bytes, cudaMemcpyHostToDevice));
    cudaEvent_t fork, join;
    CHECK(cudaEventCreate(&fork));
    CHECK(cudaEventCreate(&join));
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus status;
    CHECK(cudaStreamIsCapturing(s1, &status));
    printf("capturing: %d\n", (int)status);
    axpb<<<(n + 255) / 256, 256, 0, s1>>>(dy, dx, 3.0f, 1.0f, n);       // y = 3x + 1
    CHECK(cudaEventRecord(fork, s1));
    CHECK(cudaStreamWaitEvent(s2, fork, 0));
    axpb<<<(n + 255) / 256, 256, 0, s2>>>(dz, dy, -1.0f, 0.0f, n);      // z = -y       (s2)
    axpb<<<(n + 255) / 256, 256, 0, s1>>>(dw, dy, 2.0f, 0.0f, n);       // w = 2y       (s1, beside it)
    CHECK(cudaEventRecord(join, s2));
    CHECK(cudaStreamWaitEvent(s1, join, 0));
    add<<<(n + 255) / 256, 256, 0, s1>>>(dz, dz, dw, n);                // z = z + w = y
    CHECK(cudaMemcpyAsync(hout.data(), dz, bytes, cudaMemcpyDeviceToHost, s1));
    cudaGraph_t cg;
    CHECK(cudaStreamEndCapture(s1, &cg));
    CHECK(cudaStreamIsCapturing(s1, &status));
    CHECK(cudaGraphGetNodes(cg, NULL, &nodes));
    CHECK(cudaGraphGetEdges(cg, NULL, NULL, NULL, &edges));
    printf("captured graph: %zu nodes, %zu edges; capturing after the end: %d\n", nodes, edges, (int)status);
    cudaGraphExec_t ce;
    CHECK(cudaGraphInstantiate(&ce, cg, 0));
    for (int launch = 0; launch < 2; launch++) {
        CHECK(cudaGraphLaunch(ce, s1));
        CHECK(cudaStreamSynchronize(s1));
        std::vector<float> want(n);
        for (int i = 0; i < n; i++) {
            float y = 3.0f * hx[i] + 1.0f;
            want[i] = -y + 2.0f * y;
        }
        ok = same(hout.data(), want, "captured graph") && ok;
    }
    CHECK(cudaGraphExecDestroy(ce));
    CHECK(cudaGraphDestroy(cg));

    // ---- capture errors defined by CUDA
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    axpb<<<1, 32, 0, s1>>>(dy, dx, 1.0f, 0.0f, 32);
    cudaError_t e = cudaStreamSynchronize(s1);
    printf("synchronize while capturing: %s\n", cudaGetErrorName(e));
    cudaGraph_t bad = (cudaGraph_t)0x1;
    e = cudaStreamEndCapture(s1, &bad);
    printf("end of the invalidated capture: %s, graph %s\n", cudaGetErrorName(e), bad ? "set" : "NULL");
    cudaGetLastError();
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaEventRecord(fork, s1));
    CHECK(cudaStreamWaitEvent(s2, fork, 0));
    axpb<<<1, 32, 0, s2>>>(dz, dx, 1.0f, 0.0f, 32);
    e = cudaStreamEndCapture(s1, &bad);
    printf("end with s2 not joined: %s\n", cudaGetErrorName(e));
    cudaGetLastError();

    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaFree(dz));
    CHECK(cudaFree(dw));
    printf("%s\n", ok && host_calls == 3 ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}

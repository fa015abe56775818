// cudaGraphCreate succeeds, as on a GPU (a real H200 runs this program to the
// second call). cudaDeviceGetPCIBusId also succeeds on a GPU, but tlpsim's
// runtime lacks it: it returns cudaErrorNotSupported, which the program's check
// reports, and tlpsim names the call.
#include <cstdio>
#include "check.h"

int main()
{
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    CHECK(cudaGraphDestroy(graph));
    printf("cudaGraphCreate: cudaSuccess\n");
    char bus[32];
    CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
    printf("unreachable\n");
    return 0;
}

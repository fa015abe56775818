// Calls a CUDA runtime function tlpsim does not implement (graphs); the call
// returns an error, which the program's check reports.
#include <cstdio>
#include "check.h"

int main()
{
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    printf("unreachable\n");
    return 0;
}

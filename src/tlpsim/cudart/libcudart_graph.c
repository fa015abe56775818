/* tlpsim's CUDA runtime: CUDA graphs, stream capture and 3D-parameter copies
 * (Python side: api_graph.py). Graph, node and executable-graph handles are small
 * integers handed out by the runtime; structs are unpacked into words here. */

#include <string.h>

#include "libcudart_entry.h"

/* ------------------------------------------------------------------ graphs */

EXPORT cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags) { CALL("cudaGraphCreate", P(pGraph), flags); }
EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) { CALL("cudaGraphDestroy", P(graph)); }

EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                          const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                          const struct cudaKernelNodeParams *p)
{
    if (!p)
        CALL(__func__, P(pGraphNode), P(graph), P(pDependencies), numDependencies, 99);
    CALL(__func__, P(pGraphNode), P(graph), P(pDependencies), numDependencies, cudaGraphNodeTypeKernel,
         P(p->func), P(&p->gridDim), P(&p->blockDim), p->sharedMemBytes, P(p->kernelParams), P(p->extra));
}

#define COPY3D_WORDS(p)                                                                                          \
    P((p)->srcArray), (p)->srcPos.x, (p)->srcPos.y, (p)->srcPos.z, P((p)->srcPtr.ptr), (p)->srcPtr.pitch,       \
        (p)->srcPtr.ysize, P((p)->dstArray), (p)->dstPos.x, (p)->dstPos.y, (p)->dstPos.z, P((p)->dstPtr.ptr),   \
        (p)->dstPtr.pitch, (p)->dstPtr.ysize, (p)->extent.width, (p)->extent.height, (p)->extent.depth,           \
        (uint64_t)(p)->kind

EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                          const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                          const struct cudaMemcpy3DParms *p)
{
    if (!p)
        CALL(__func__, P(pGraphNode), P(graph), P(pDependencies), numDependencies, 99);
    CALL(__func__, P(pGraphNode), P(graph), P(pDependencies), numDependencies, cudaGraphNodeTypeMemcpy, 3,
         COPY3D_WORDS(p));
}

EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                            const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dst,
                                            const void *src, size_t count, enum cudaMemcpyKind kind)
{
    CALL(__func__, P(pGraphNode), P(graph), P(pDependencies), numDependencies, cudaGraphNodeTypeMemcpy, 1,
         P(dst), P(src), count, (uint64_t)kind);
}

EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                          const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                          const struct cudaMemsetParams *p)
{
    if (!p)
        CALL(__func__, P(pGraphNode), P(graph), P(pDependencies), numDependencies, 99);
    CALL(__func__, P(pGraphNode), P(graph), P(pDependencies), numDependencies, cudaGraphNodeTypeMemset,
         P(p->dst), p->pitch, p->value, p->elementSize, p->width, p->height);
}

EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                        const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                        const struct cudaHostNodeParams *p)
{
    if (!p)
        CALL(__func__, P(pGraphNode), P(graph), P(pDependencies), numDependencies, 99);
    CALL(__func__, P(pGraphNode), P(graph), P(pDependencies), numDependencies, cudaGraphNodeTypeHost,
         P(p->fn), P(p->userData));
}

EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                         const cudaGraphNode_t *pDependencies, size_t numDependencies)
{
    CALL(__func__, P(pGraphNode), P(graph), P(pDependencies), numDependencies, cudaGraphNodeTypeEmpty);
}

EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                              cudaGraph_t childGraph)
{
    CALL(__func__, P(pGraphNode), P(graph), P(pDependencies), numDependencies, cudaGraphNodeTypeGraph,
         P(childGraph));
}

EXPORT cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                            const cudaGraphEdgeData *edgeData, size_t numDependencies)
{
    CALL("cudaGraphAddDependencies", P(graph), P(from), P(to), P(edgeData), numDependencies);
}

EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{
    CALL(__func__, P(graph), P(nodes), P(numNodes), 0);
}
EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *pRootNodes, size_t *pNumRootNodes)
{
    CALL(__func__, P(graph), P(pRootNodes), P(pNumRootNodes), 1);
}
EXPORT cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
                                     cudaGraphEdgeData *edgeData, size_t *numEdges)
{
    if (edgeData && numEdges && from)
        memset(edgeData, 0, *numEdges * sizeof *edgeData); /* every edge is a plain (default) edge */
    CALL("cudaGraphGetEdges", P(graph), P(from), P(to), P(numEdges));
}
EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *pType)
{
    CALL("cudaGraphNodeGetType", P(node), P(pType));
}
EXPORT cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node) { CALL("cudaGraphDestroyNode", P(node)); }

EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    CALL("cudaGraphInstantiate", P(pGraphExec), P(graph), flags);
}
EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                 unsigned long long flags)
{
    CALL("cudaGraphInstantiate", P(pGraphExec), P(graph), flags);
}
EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    CALL("cudaGraphLaunch", P(graphExec), P(stream));
}
EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    CALL("cudaGraphUpload", P(graphExec), P(stream));
}
EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) { CALL("cudaGraphExecDestroy", P(graphExec)); }

/* ------------------------------------------------------------------ stream capture */

EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    CALL("cudaStreamBeginCapture", P(stream), (uint64_t)mode);
}
EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    CALL("cudaStreamEndCapture", P(stream), P(pGraph));
}
EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    CALL(__func__, P(stream), P(pCaptureStatus), 0, 0, 0, 0, 0);
}
EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                            unsigned long long *id_out, cudaGraph_t *graph_out,
                                            const cudaGraphNode_t **dependencies_out,
                                            const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    if (edgeData_out)
        *edgeData_out = NULL; /* NULL: every edge is a default edge */
    CALL("cudaStreamGetCaptureInfo", P(stream), P(captureStatus_out), P(id_out), P(graph_out), P(dependencies_out),
         P(numDependencies_out), 1);
}
EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    CALL("cudaThreadExchangeStreamCaptureMode", P(mode));
}

/* ------------------------------------------------------------------ 3D-parameter copies (pitched memory, arrays) */

EXPORT cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    if (!p)
        CALL(__func__, 0, 0, 1, 1);
    CALL(__func__, COPY3D_WORDS(p), 0, 1);
}
EXPORT cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
    if (!p)
        CALL(__func__, 0, 0, 1, 1);
    CALL(__func__, COPY3D_WORDS(p), P(stream), 0);
}

ALIAS(cudaGraphLaunch_ptsz, cudaGraphLaunch);
ALIAS(cudaGraphUpload_ptsz, cudaGraphUpload);
ALIAS(cudaStreamBeginCapture_ptsz, cudaStreamBeginCapture);
ALIAS(cudaStreamEndCapture_ptsz, cudaStreamEndCapture);
ALIAS(cudaStreamIsCapturing_ptsz, cudaStreamIsCapturing);
ALIAS(cudaStreamGetCaptureInfo_ptsz, cudaStreamGetCaptureInfo);
ALIAS(cudaMemcpy3D_ptds, cudaMemcpy3D);
ALIAS(cudaMemcpy3DAsync_ptsz, cudaMemcpy3DAsync);

// 34_bfs.cu  (whole program: host code + kernel)
// Exercises: level-synchronous BFS frontier expansion over a CSR graph:
// queue-based frontier with atomicAdd to reserve output slots, atomicCAS
// to claim unvisited vertices, data-dependent neighbour loops, host loop
// launching until the frontier is empty.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void bfs_expand(const int *row_ptr, const int *adj, int *level,
                           const int *frontier, int fsize, int *next, int *nsize, int depth)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= fsize) return;
    int u = frontier[i];
    for (int e = row_ptr[u]; e < row_ptr[u + 1]; ++e) {
        int v = adj[e];
        if (level[v] != -1) continue;                      // cheap pre-check
        if (atomicCAS(&level[v], -1, depth + 1) == -1) {   // claim vertex
            int slot = atomicAdd(nsize, 1);
            next[slot] = v;
        }
    }
}

int main()
{
    const int V = 8;   // ring 0-1-...-7 plus chords 0-4, 2-6
    int h_row[V + 1], h_adj[32], ne = 0;
    for (int u = 0; u < V; ++u) {
        h_row[u] = ne;
        h_adj[ne++] = (u + 1) % V;
        h_adj[ne++] = (u + V - 1) % V;
        if (u % 2 == 0) h_adj[ne++] = (u + 4) % V;
    }
    h_row[V] = ne;
    int h_level[V];
    for (int u = 0; u < V; ++u) h_level[u] = -1;
    h_level[0] = 0;
    int *d_row, *d_adj, *d_level, *d_fa, *d_fb, *d_nsize;
    cudaMalloc(&d_row, sizeof(h_row));
    cudaMalloc(&d_adj, ne * sizeof(int));
    cudaMalloc(&d_level, sizeof(h_level));
    cudaMalloc(&d_fa, V * sizeof(int));
    cudaMalloc(&d_fb, V * sizeof(int));
    cudaMalloc(&d_nsize, sizeof(int));
    cudaMemcpy(d_row, h_row, sizeof(h_row), cudaMemcpyHostToDevice);
    cudaMemcpy(d_adj, h_adj, ne * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(d_level, h_level, sizeof(h_level), cudaMemcpyHostToDevice);
    int zero = 0, fsize = 1;
    cudaMemcpy(d_fa, &zero, sizeof(int), cudaMemcpyHostToDevice);
    for (int depth = 0; fsize > 0; ++depth) {
        cudaMemcpy(d_nsize, &zero, sizeof(int), cudaMemcpyHostToDevice);
        bfs_expand<<<(fsize + 63) / 64, 64>>>(d_row, d_adj, d_level, d_fa, fsize, d_fb, d_nsize, depth);
        cudaMemcpy(&fsize, d_nsize, sizeof(int), cudaMemcpyDeviceToHost);
        int *t = d_fa; d_fa = d_fb; d_fb = t;
    }
    cudaMemcpy(h_level, d_level, sizeof(h_level), cudaMemcpyDeviceToHost);
    for (int u = 0; u < V; ++u) printf("level[%d] = %d\n", u, h_level[u]);
    cudaFree(d_row); cudaFree(d_adj); cudaFree(d_level);
    cudaFree(d_fa); cudaFree(d_fb); cudaFree(d_nsize);
    return 0;
}

// Level-synchronous breadth-first search over a CSR graph (stands in for Rodinia BFS).
// One thread per vertex. Each level is two launches: `bfs_expand` relaxes the out-edges
// of every frontier vertex (a data-dependent, skewed loop: divergent and irregular), and
// `bfs_commit` turns the discovered set into the next frontier and raises a flag the
// host reads back to decide whether another level is needed.

extern "C" __global__ void bfs_expand(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                                      unsigned char* frontier, unsigned char* discovered,
                                      const unsigned char* __restrict__ visited, int* level, int n)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || !frontier[v]) return;
    frontier[v] = 0;
    int next_level = level[v] + 1;
    int end = row_ptr[v + 1];
    for (int e = row_ptr[v]; e < end; ++e) {
        int u = col_idx[e];
        if (!visited[u]) {
            // Every writer in one level stores the same value, so the race is benign.
            level[u] = next_level;
            discovered[u] = 1;
        }
    }
}

extern "C" __global__ void bfs_commit(unsigned char* frontier, unsigned char* discovered,
                                      unsigned char* visited, int* grew, int n)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || !discovered[v]) return;
    discovered[v] = 0;
    frontier[v] = 1;
    visited[v] = 1;
    *grew = 1;
}

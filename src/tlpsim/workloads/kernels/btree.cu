// B+tree-style search (stands in for Rodinia b+tree): a static, implicit tree kept in
// global memory. Inner level l holds nodes of FANOUT separator keys (the first key of each
// child subtree, INT_MAX where the child does not exist); the leaves are the sorted key
// array itself, LEAF keys per leaf. One thread per query: every thread descends the tree
// with a data-dependent linear scan per node (divergent, irregular, pointer-chasing
// loads whose reuse across queries is what the caches catch), then works in its leaf.

#define FANOUT 16
#define LEAF 16

// Index of the leaf that may hold `key`: at each node take the last child whose
// separator is <= key (the first child when key is below every separator).
__device__ int descend(const int* __restrict__ inner, const int* __restrict__ level_start,
                       int depth, int key)
{
    int node = 0;
    for (int l = 0; l < depth; ++l) {
        const int* sep = inner + (level_start[l] + node) * FANOUT;
        int s = 0;
        while (s + 1 < FANOUT && sep[s + 1] <= key) ++s;
        node = node * FANOUT + s;
    }
    return node;
}

// Point lookups: the value stored under each key, or -1 when the key is absent.
extern "C" __global__ void btree_find(const int* __restrict__ inner, const int* __restrict__ level_start,
                                      int depth, const int* __restrict__ keys, const int* __restrict__ vals,
                                      int nkeys, const int* __restrict__ queries, int* result, int nq)
{
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= nq) return;
    int key = queries[q];
    int pos = descend(inner, level_start, depth, key) * LEAF;
    int end = min(pos + LEAF, nkeys);
    int found = -1;
    for (; pos < end; ++pos) {
        int k = keys[pos];
        if (k >= key) {
            if (k == key) found = vals[pos];
            break;
        }
    }
    result[q] = found;
}

// Range queries [lo, hi]: the index of the first key >= lo, how many keys fall in the
// range and the sum of their values. The scan may run on across leaf boundaries.
extern "C" __global__ void btree_range(const int* __restrict__ inner, const int* __restrict__ level_start,
                                       int depth, const int* __restrict__ keys, const int* __restrict__ vals,
                                       int nkeys, const int* __restrict__ lo, const int* __restrict__ hi,
                                       int* start, int* count, int* total, int nq)
{
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= nq) return;
    int a = lo[q], b = hi[q];
    int pos = descend(inner, level_start, depth, a) * LEAF;
    while (pos < nkeys && keys[pos] < a) ++pos;
    int first = pos, sum = 0;
    while (pos < nkeys && keys[pos] <= b) {
        sum += vals[pos];
        ++pos;
    }
    start[q] = first;
    count[q] = pos - first;
    total[q] = sum;
}

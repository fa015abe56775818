// Longest exact matches of short queries against a reference through its suffix array
// (a MUMmer-like search; stands in for MUMmerGPU, which walks a suffix tree).
//
// One thread per query. The reference is one byte per base (0..3) and `sa` its suffix
// array (suffix start positions in lexicographic order, a suffix that ends first
// sorting first). Each thread binary-searches `sa` for the first suffix not smaller
// than its query (compared on the query's QLEN bases), keeping the longest common
// prefixes with the two bounds (Manber and Myers) so that each step compares bases only
// from min(lcp(lo), lcp(hi)) on. The longest match is with one of the two suffixes that
// bound the final position; the thread writes its length and reference position (the
// left neighbour's on a tie).
//
// Memory behaviour: the first levels of every search hit the same few suffix-array
// entries (shared by all threads), later levels are scattered over the whole index, and
// a thread re-reads its query's bases at every step, so a warp's 32 query lines are
// reused only while the L1 holds them.

#ifndef QLEN
#define QLEN 32
#endif

extern "C" __global__ void mummer_match(const unsigned char* ref, int n, const int* sa,
                                        const unsigned char* queries, int nqueries,
                                        int* __restrict__ match_len, int* __restrict__ match_pos)
{
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= nqueries) return;
    const unsigned char* pat = queries + (size_t)q * QLEN;
    int lo = 0, hi = n;           // answer in [lo, hi]; sa[lo-1] < pattern <= sa[hi]
    int lo_lcp = 0, hi_lcp = 0;   // lcp(pattern, suffix sa[lo-1]) and with sa[hi]
#pragma unroll 1
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        int start = sa[mid];
        int m = min(lo_lcp, hi_lcp);
#pragma unroll 1
        while (m < QLEN && start + m < n && ref[start + m] == pat[m]) ++m;
        // the suffix is smaller if it ended first or differs with a smaller base
        bool smaller = m < QLEN && (start + m >= n || ref[start + m] < pat[m]);
        if (smaller) {
            lo = mid + 1;
            lo_lcp = m;
        } else {
            hi = mid;
            hi_lcp = m;
        }
    }
    // lo_lcp belongs to sa[lo-1] (0 if lo is 0), hi_lcp to sa[lo] (0 if lo is n)
    bool left = lo > 0 && lo_lcp >= hi_lcp;
    match_len[q] = left ? lo_lcp : hi_lcp;
    match_pos[q] = sa[left ? lo - 1 : lo];
}

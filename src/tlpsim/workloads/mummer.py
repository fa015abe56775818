"""mummer: longest exact matches of short DNA queries in a reference, through its suffix
array (stands in for MUM / MUMmerGPU: Lee et al. HPCA 2014 Table 2, Type III; also in
the CCWS/DYNCTA-era studies the other papers compare with).

Trait that matters: an irregular, read-only index search, one thread per query. Every
search starts at the same few suffix-array entries (shared, cacheable) and ends
scattered over an index much larger than the L2 (at `study`: 1 Mbase reference and a
4 MiB suffix array against the GTX480's 768 KiB L2), and each thread re-reads its
query's bases at every step. With 128-thread CTAs, CTA slots limit occupancy (8 per
Fermi SM); the more warps share the 16 KiB L1, the less of the shared top levels and
of the queries stays there.

Verification is exact: a NumPy binary search over the same suffix array (plain
comparisons, no lcp skipping) gives each query's insertion point, and the longest
common prefix with its two neighbours gives the length and position the kernel must
report."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

QLEN = 32     # bases per query (matches kernels/mummer.cu)
BLOCK = 128
MUTATION = 0.03   # per-base substitution rate of the queries drawn from the reference
RANDOM_SHARE = 0.25   # queries that are random sequence (short matches only)
# (reference bases, queries); paper: Lee et al.'s MUM input, 196 CTAs of 256 threads (50176 queries),
# against a 4 Mbase reference (a bacterial genome's length)
SIZES = {"tiny": (4096, 1024), "small": (1 << 18, 16384), "study": (1 << 20, 139264), "paper": (1 << 22, 50176)}
CHUNK = 1 << 16   # queries per step of the NumPy reference (bounds its memory)


def suffix_array(seq: np.ndarray) -> np.ndarray:
    """Suffix array by prefix doubling: suffix start positions in lexicographic order, a
    suffix that ends first sorting before any extension of it."""
    n = seq.size
    rank = seq.astype(np.int64)
    k = 1
    while True:
        second = np.full(n, -1, np.int64)
        second[: n - k] = rank[k:] if k < n else second[:0]
        order = np.lexsort((second, rank))
        key_r, key_s = rank[order], second[order]
        new = np.empty(n, np.int64)
        new[order] = np.cumsum(np.concatenate([[0], (key_r[1:] != key_r[:-1]) | (key_s[1:] != key_s[:-1])]))
        rank = new
        if rank[order[-1]] == n - 1 or k >= n:
            return order.astype(np.int32)
        k *= 2


def _windows(padded: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The QLEN bases from each start (-1 past the reference's end)."""
    return padded[starts[:, None].astype(np.int64) + np.arange(QLEN)]


def _lcp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    diff = a != b
    return np.where(diff.any(axis=1), diff.argmax(axis=1), QLEN)


def reference(ref: np.ndarray, sa: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = ref.size
    padded = np.concatenate([ref.astype(np.int16), np.full(QLEN, -1, np.int16)])
    lens, poss = [], []
    for c in range(0, len(queries), CHUNK):
        q = queries[c:c + CHUNK].astype(np.int16)
        lo = np.zeros(len(q), np.int64)
        hi = np.full(len(q), n, np.int64)
        while True:
            act = np.nonzero(lo < hi)[0]
            if act.size == 0:
                break
            mid = (lo[act] + hi[act]) // 2
            suf = _windows(padded, sa[mid])
            m = _lcp(suf, q[act])
            mm = np.minimum(m, QLEN - 1)
            smaller = (m < QLEN) & (suf[np.arange(act.size), mm] < q[act, mm])
            lo[act] = np.where(smaller, mid + 1, lo[act])
            hi[act] = np.where(smaller, hi[act], mid)
        pos = lo
        left_lcp = np.where(pos > 0, _lcp(_windows(padded, sa[np.maximum(pos - 1, 0)]), q), 0)
        right_lcp = np.where(pos < n, _lcp(_windows(padded, sa[np.minimum(pos, n - 1)]), q), 0)
        left = (pos > 0) & (left_lcp >= right_lcp)
        lens.append(np.where(left, left_lcp, right_lcp))
        poss.append(sa[np.where(left, pos - 1, np.minimum(pos, n - 1))])
    return np.concatenate(lens).astype(np.int32), np.concatenate(poss).astype(np.int32)


def make_queries(ref: np.ndarray, nq: int, rng: np.random.Generator) -> np.ndarray:
    """Reads drawn from the reference with substitutions, and some random sequence."""
    starts = rng.integers(0, ref.size - QLEN, nq)
    q = ref[starts[:, None] + np.arange(QLEN)]
    mutate = rng.random(q.shape) < MUTATION
    q = np.where(mutate, (q + rng.integers(1, 4, q.shape)) % 4, q)
    rand = rng.random(nq) < RANDOM_SHARE
    q[rand] = rng.integers(0, 4, (int(rand.sum()), QLEN))
    return q.astype(np.uint8)


@register("mummer", "MUMmer-like longest-match search of short DNA queries in a reference's suffix array, "
          "one thread per query", "mummer.cu", stands_for=("MUM", "MUMmerGPU", "mummergpu"),
          traits=("irregular", "divergent", "cache-sensitive", "memory-bound"))
def run(size, rng):
    n, nq = SIZES[size]
    ref = rng.integers(0, 4, n).astype(np.uint8)
    sa = suffix_array(ref)
    queries = make_queries(ref, nq, rng)
    k = cp.RawKernel(kernel_source("mummer.cu"), "mummer_match")
    d_ref, d_sa, d_q = cp.asarray(ref), cp.asarray(sa), cp.asarray(queries)
    d_len, d_pos = cp.zeros(nq, np.int32), cp.zeros(nq, np.int32)
    k(((nq + BLOCK - 1) // BLOCK,), (BLOCK,), (d_ref, np.int32(n), d_sa, d_q, np.int32(nq), d_len, d_pos))
    want_len, want_pos = reference(ref, sa, queries)
    return [compare("match length", d_len.get(), want_len), compare("match position", d_pos.get(), want_pos)]

"""nw: Needleman-Wunsch alignment by block anti-diagonal wavefront (Rodinia NW).

One launch per block diagonal (2n/16 - 1 launches, 1..n/16 CTAs each) of
16-thread CTAs -- so occupancy is bounded by CTA slots -- each sweeping its
16x16 tile in shared memory with 31 barrier-separated, partly idle steps.
Integer scores, verified exactly.

Stands in for: nw (RegLess: all of Rodinia).
Trait that matters: 16-thread CTAs (CTA-slot-limited), a wavefront of growing then shrinking grids."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

BS = 16
PENALTY = 10
ALPHABET = 24
# sequence length (multiple of 16); paper: Rodinia's 2048 x 2048 run
N = {"tiny": 64, "small": 512, "study": 1024, "paper": 2048}


def _substitution_table(rng):
    """A symmetric scoring table of the BLOSUM kind: positive on the diagonal."""
    t = rng.integers(-4, 4, size=(ALPHABET, ALPHABET))
    t = np.triu(t) + np.triu(t, 1).T
    np.fill_diagonal(t, rng.integers(4, 12, size=ALPHABET))
    return t.astype(np.int32)


def _reference(sub, n, penalty):
    s = np.zeros((n + 1, n + 1), np.int64)
    s[0, :] = -penalty * np.arange(n + 1)
    s[:, 0] = -penalty * np.arange(n + 1)
    for d in range(2, 2 * n + 1):                 # cell anti-diagonal i + j = d
        i = np.arange(max(1, d - n), min(n, d - 1) + 1)
        j = d - i
        s[i, j] = np.maximum(np.maximum(s[i - 1, j - 1] + sub[i, j], s[i - 1, j] - penalty), s[i, j - 1] - penalty)
    return s.astype(np.int32)


@register("nw", "Needleman-Wunsch: block-diagonal wavefront, 16-thread CTAs, shared-memory tiles",
          "nw.cu", stands_for=("NW", "NDL", "needle"),
          traits=("divergent", "shared-memory", "multi-kernel", "barrier-heavy"))
def run(size, rng):
    n = N[size]
    nb = n // BS
    table = _substitution_table(rng)
    seq_a = rng.integers(0, ALPHABET, size=n)
    seq_b = rng.integers(0, ALPHABET, size=n)
    sub = np.zeros((n + 1, n + 1), np.int32)
    sub[1:, 1:] = table[seq_a[:, None], seq_b[None, :]]
    score = np.zeros((n + 1, n + 1), np.int32)
    score[0, :] = -PENALTY * np.arange(n + 1)
    score[:, 0] = -PENALTY * np.arange(n + 1)

    k = cp.RawKernel(kernel_source("nw.cu"), "nw_diagonal")
    d_score, d_sub = cp.asarray(score), cp.asarray(sub)
    for diag in range(2 * nb - 1):
        first = max(0, diag - nb + 1)
        last = min(diag, nb - 1)
        k((last - first + 1,), (BS,), (d_score, d_sub, np.int32(n), np.int32(diag), np.int32(first),
                                       np.int32(PENALTY)))
    return [compare("score matrix", d_score.get(), _reference(sub.astype(np.int64), n, PENALTY))]

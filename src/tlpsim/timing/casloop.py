"""What a compare-and-swap loop costs the shared-memory path (sm.shared_atomic_cas_ops).

ptxas emulates some shared-memory atomics (float add on sm_90) with a loop: a shared
load, the operation, ATOMS.CAST and a retry branch. Every round re-executes the loop's
two shared instructions, and in each round one lane of every word wins, so round j's
compare-and-swap still carries the lanes that lost before: with `degree` wavefronts in
the first round (the most lanes one bank serves), degree - j in round j, at least one.
Its load is one wavefront (the lanes of a word read it together). The trace holds the
loop as one atomic; these sums are what its rounds take together.
"""

from __future__ import annotations


def _round_waves(degree: int, j: int) -> int:
    """Wavefronts of round j's compare-and-swap."""
    w = degree - j
    return w if w > 1 else 1


def cas_waves(degree: int, rounds: int) -> int:
    """Wavefronts of the loop's compare-and-swaps over `rounds` rounds."""
    total = 0
    for j in range(rounds):
        total += _round_waves(degree, j)
    return total


def cas_path_hold(degree: int, rounds: int, issue_cycles: int, wave_cycles: int) -> int:
    """Cycles the loop holds its sub-core's path into the LD/ST unit: each round's load (one
    wavefront) and compare-and-swap, each the path's issue cycles or its cycles per
    wavefront if more."""
    load = wave_cycles if wave_cycles > issue_cycles else issue_cycles
    total = 0
    for j in range(rounds):
        waves = _round_waves(degree, j) * wave_cycles
        total += load + (waves if waves > issue_cycles else issue_cycles)
    return total

"""Runtime calls that returned an error, by name and error.

The exit summary of `tlpsim exec` names them (`failing runtime calls: cudaMalloc ->
cudaErrorMemoryAllocation (2x)`), so a program that gives up after a failed call
(a thrust exception, an error check that exits) shows which call failed even when
it printed nothing itself. The first failure of each (call, error) is appended to
`failed_calls.jsonl` in the run's record directory as it happens, so the summary
has it even when the program then aborts without the runtime's exit handler; the
counts go to `summary.json` at exit.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tlpsim.cudart import errors as E

FILE = "failed_calls.jsonl"
# calls that report an earlier error rather than fail, and "not yet" answers
REPORTERS = frozenset({"cudaGetLastError", "cudaPeekAtLastError", "tlpsim_error_text",
                       "tlpsim_unsupported"})  # the last: the stub of an unsupported call, counted by its name
NOT_READY = E.CODES["cudaErrorNotReady"]


class FailedCalls:
    def __init__(self, out_dir: Path | None) -> None:
        self.out_dir = out_dir
        self.seen: Counter = Counter()

    def add(self, name: str, code: int) -> None:
        if name in REPORTERS or code == NOT_READY:
            return
        key = (name, E.name_of(code))
        self.seen[key] += 1
        if self.seen[key] == 1 and self.out_dir is not None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            with open(self.out_dir / FILE, "a", encoding="utf-8") as f:
                f.write(json.dumps({"call": key[0], "error": key[1]}) + "\n")

    def counts(self) -> list[dict]:
        return [{"call": n, "error": e, "times": c} for (n, e), c in self.seen.items()]


def summary_line(out_dir: Path, summary: dict | None) -> str | None:
    """The exit summary's line, from summary.json (counts) or, after a crash, failed_calls.jsonl."""
    if summary is not None and "failed_calls" in summary:
        rows = summary["failed_calls"]
        parts = [f"{r['call']} -> {r['error']} ({r['times']}x)" for r in rows]
    else:
        path = out_dir / FILE
        if not path.is_file():
            return None
        rows = []
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                break
        parts = [f"{r['call']} -> {r['error']}" for r in rows]
    return ("failing runtime calls: " + ", ".join(parts)) if parts else None

"""Is a sampled experiment's verdict the full-detail one? (`experiment run --sample`)

The claims of a sampled experiment are compared with those the same experiment gives
from full-detail runs when the results database holds them all (plans are staged:
each stage is planned from the full-detail results of the stages before). The page
and summary.json record the outcome: "same" (every claim's verdict agrees), the
claims that differ, or "unchecked" (the full-detail runs are not in the database:
`tlpsim experiment run NAME` without --sample simulates them)."""

from __future__ import annotations

from typing import Any


def full_detail_claims(exp: Any, db: Any, only: Any, store_cls: Any, plan: Any, max_stages: int) -> list | None:
    """The claims from the full-detail counterparts of the experiment's runs, or None
    when the database lacks some of them."""
    sampling, exp.sampling = exp.sampling, None
    try:
        store = store_cls(db, exp)
        planned: set[str] = set()
        for _ in range(max_stages):
            runs = plan(exp, store, only)
            keys = {r.key for r in runs}
            if keys - set(store.digests):
                return None  # a full-detail run is missing (or failed)
            if keys == planned:
                break
            planned = keys
        results = store.results(planned)
        exp.extra_runs(results, db, lambda _: None, simulate=False)
        return exp.claims(exp.analyse(results))
    finally:
        exp.sampling = sampling


def compare_claims(sampled: list, full: list | None) -> dict:
    """{"status": "same" | "differ" | "unchecked", "differ": [claim ids whose verdict differs]}."""
    if full is None:
        return {"status": "unchecked", "differ": []}
    by_id = {c.id: c.verdict for c in full}
    differ = sorted(c.id for c in sampled if by_id.get(c.id) != c.verdict)
    return {"status": "differ" if differ else "same", "differ": differ}

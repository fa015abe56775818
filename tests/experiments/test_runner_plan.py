"""Planning an experiment whose later runs depend on earlier results: resuming on a
database that holds the whole first stage plans (and so simulates) the second one."""

import time

from tlpsim.experiments.base import Experiment, ExpRun
from tlpsim.experiments.runner import _plan, _Store
from tlpsim.sweep.store import ResultsDB


class TwoStages(Experiment):
    """Stage 1: GTO on two workloads; stage 2, for each whose GTO run is stored: a
    capped run; stage 3, once a capped run is stored: LCS on it."""

    name = "two_stages"

    def plan(self, results, only=None):
        runs = [ExpRun(self.params(w), "GTO") for w in ("vecadd", "reduction")]
        for w in ("vecadd", "reduction"):
            if results.of(ExpRun(self.params(w), "GTO")) is not None:
                capped = ExpRun(self.params(w, {"gpu.max_ctas_per_sm": 1}), "GTO, max 1")
                runs.append(capped)
                if results.of(capped) is not None:
                    runs.append(ExpRun(self.params(w, {"gpu.cta_scheduler": "lcs"}), "LCS"))
        return runs

    def digest(self, record):
        return record["cycles"]


def _store(db, run, cycles=100):
    now = time.time()
    db.put("two_stages", {"key": run.key, "params": run.params.to_dict(), "status": "done",
                          "record": {"cycles": cycles}, "started": now, "finished": now})


def _labels(runs):
    return sorted((r.params.workload, r.label) for r in runs)


def test_resumed_plan_reaches_the_stage_the_stored_results_allow(tmp_path):
    exp = TwoStages("tiny", "fp")
    with ResultsDB(tmp_path / "r.sqlite") as db:
        first = _plan(exp, _Store(db, exp), None)
        assert _labels(first) == [("reduction", "GTO"), ("vecadd", "GTO")]   # nothing stored: stage 1 only
        for r in first:
            _store(db, r)
        # a fresh process (empty store) on that database plans stage 2 at once
        store = _Store(db, exp)
        second = _plan(exp, store, None)
        assert _labels(second) == [("reduction", "GTO"), ("reduction", "GTO, max 1"),
                                   ("vecadd", "GTO"), ("vecadd", "GTO, max 1")]
        assert {r.key for r in second if r.label == "GTO"} <= set(store.digests)
        capped = next(r for r in second if r.params.workload == "vecadd" and r.label == "GTO, max 1")
        _store(db, capped)
        # two stages stored for vecadd: its stage-3 run is planned too, reduction's is not
        third = _plan(exp, _Store(db, exp), None)
        assert ("vecadd", "LCS") in _labels(third) and ("reduction", "LCS") not in _labels(third)
        assert len(third) == 5

"""What an experiment declares: its runs, its figures and tables, its claims.

An experiment reproduces one paper. It is a class with

- `plan(results)`: the runs it needs (`ExpRun`: run parameters, the paper's name
  for the configuration, and the figures that use it), given the results already
  in the database — a plan may depend on earlier results (the CTA counts a
  workload's sweep covers follow from its baseline run; mCKE's limits from the
  LCS runs), so the runner calls it again until nothing is missing;
- `analyse(results)`: the numbers behind the figures, tables and claims;
- `figures` and `tables`: `Artefact`s named after the paper's (`fig12`,
  `table3`), each drawn from the analysis;
- `claims(data)`: `Claim`s, each machine-checkable: a direction or ordering and,
  where the paper gives a number, a magnitude band (the paper's number within a
  factor of 2).

The runner (`tlpsim.experiments.runner`) runs the plan through the sweep store and
writes the outputs (`tlpsim.experiments.outputs`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tlpsim.sweep.job import RunParams

__all__ = ["Artefact", "Claim", "ExpRun", "Experiment", "Outcome", "Results", "RunFailure", "band_ok", "merge_runs"]

#: a measured value is "within the band" of the paper's when measured / paper is in [1/BAND, BAND]
BAND = 2.0


@dataclass
class ExpRun:
    """One run of an experiment: its parameters, the paper's configuration name and
    the figures / tables that need it."""

    params: RunParams
    label: str
    uses: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return self.params.key()


@dataclass
class Artefact:
    """A figure or table of the paper, drawn from the experiment's analysis.

    `draw(data, path_stem)` writes it (figures: PNG and SVG; tables: CSV and
    Markdown) and returns the files written."""

    name: str
    title: str
    kind: str                                  # "figure" | "table"
    draw: Callable[[Any, Any], list[Any]]
    caption: str = ""


@dataclass
class Claim:
    """One checkable statement of the paper and what we measure for it.

    `direction` is the qualitative part (a sign or an ordering) and holds or not;
    `paper` / `measured` are the magnitudes when the paper gives one, and the band
    holds when measured / paper lies within [1/2, 2] (for percentages, the
    improvements compared, not the ratios). A claim without a number is checked
    on its direction alone. `detail` lists the numbers the check used."""

    id: str
    figure: str
    statement: str                   # what the paper says
    paper: float | None = None       # the paper's number (e.g. 7.0 for "+7 %")
    measured: float | None = None
    unit: str = ""
    direction: bool | None = None    # None: could not be evaluated (missing runs)
    band: bool | None = None         # None: no magnitude claimed, or not evaluated
    detail: str = ""
    note: str = ""                   # why it fails, where known (model, stand-in, paper detail)

    @property
    def evaluated(self) -> bool:
        return self.direction is not None

    @property
    def holds(self) -> bool | None:
        if self.direction is None:
            return None
        return bool(self.direction) and self.band is not False

    @property
    def verdict(self) -> str:
        h = self.holds
        return "n/a" if h is None else ("PASS" if h else "FAIL")

    def to_dict(self) -> dict:
        return {"id": self.id, "figure": self.figure, "statement": self.statement, "paper": self.paper,
                "measured": self.measured, "unit": self.unit, "direction": self.direction, "band": self.band,
                "holds": self.holds, "verdict": self.verdict, "detail": self.detail, "note": self.note}


def band_ok(measured: float | None, paper: float | None, factor: float = BAND) -> bool | None:
    """Whether `measured` is within `factor` of `paper` (same sign, ratio in
    [1/factor, factor]); None when either is missing."""
    if measured is None or paper is None or not math.isfinite(measured):
        return None
    if paper == 0:
        return abs(measured) <= 1e-12
    r = measured / paper
    return 1.0 / factor <= r <= factor


class Results(Mapping):
    """The stored outcome of an experiment's runs: key -> the experiment's digest of
    the run's record (`Experiment.digest`); failed runs are absent, with their error
    in `errors` (label -> message). `planned` holds the keys of every run the plan
    asked for; `extra` what `Experiment.extra_runs` derived."""

    def __init__(self, records: Mapping[str, Any] | None = None, errors: Mapping[str, str] | None = None,
                 planned: set[str] | None = None) -> None:
        self._records = dict(records or {})
        self.errors = dict(errors or {})
        self.planned = set(planned or ())
        self.extra: dict[str, Any] = {}

    def __getitem__(self, key: str) -> dict | None:
        return self._records[key]

    def __iter__(self):
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def of(self, run: ExpRun) -> Any:
        """The digest of `run` (None when it is missing or failed)."""
        return self._records.get(run.key)


class Experiment:
    """Base class of a paper's experiment."""

    name = ""
    title = ""
    paper = ""        # citation
    seed_file = ""    # the paper's text under shared/seeds (for reference)

    def __init__(self, size: str = "small", code: str = "", plugins: tuple[str, ...] = ()) -> None:
        self.size = size
        self.code = code
        self.plugins = tuple(plugins)   # --plugin specs every run loads (a user's plug-in in a figure)

    # the parts a concrete experiment defines ----------------------------------

    @property
    def artefacts(self) -> list[Artefact]:
        return []

    def plan(self, results: Results, only: Iterable[str] | None = None) -> list[ExpRun]:
        """Every run needed (so far, given `results`) by the artefacts in `only` (all if None)."""
        raise NotImplementedError

    def analyse(self, results: Results) -> Any:
        raise NotImplementedError

    def claims(self, data: Any) -> list[Claim]:
        raise NotImplementedError

    def digest(self, record: dict) -> Any:
        """What the analysis keeps of a run's record (records are large: only this
        stays in memory)."""
        return record

    def stand_ins(self) -> list[str]:
        """The built-in workloads standing in for the paper's benchmarks (their CTA waves
        at the experiment's size are shown on its pages)."""
        return []

    def summary(self, data: Any) -> dict:
        """Headline numbers for summary.json (besides the claims)."""
        return {}

    def extra_runs(self, results: Results, db: Any, echo: Callable[[str], None], simulate: bool = True) -> None:
        """Auxiliary in-process runs whose derived data the experiment keeps in the
        results DB's meta table (e.g. a per-CTA timeline), put in `results.extra`
        before the analysis; with `simulate` false, only what the DB holds."""

    # helpers ------------------------------------------------------------------

    def params(self, workload: str, overrides: dict | None = None, preset: str = "") -> RunParams:
        return RunParams(workload, self.size, preset or self.preset, dict(overrides or {}), 1, "timing",
                         self.plugins, simulator=self.code, sampling=self.sampling)

    sampling: dict | None = None  # `experiment run --sample`: every planned run sampled (SamplingSpec dict)

    preset = "gtx480"

    def artefact(self, name: str) -> Artefact:
        for a in self.artefacts:
            if a.name == name:
                return a
        raise KeyError(name)


def merge_runs(runs: Iterable[ExpRun]) -> list[ExpRun]:
    """One ExpRun per key, the figures that use it merged (several figures share runs)."""
    out: dict[str, ExpRun] = {}
    for r in runs:
        have = out.get(r.key)
        if have is None:
            out[r.key] = ExpRun(r.params, r.label, tuple(r.uses))
        else:
            have.uses = tuple(dict.fromkeys(have.uses + tuple(r.uses)))
    return list(out.values())


@dataclass
class RunFailure:
    label: str
    error: str


@dataclass
class Outcome:
    """What `run_experiment` / `check_experiment` return."""

    claims: list[Claim]
    files: list[Any] = field(default_factory=list)
    ran: int = 0
    reused: int = 0
    failed: list[RunFailure] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0

"""The GPGPU-Sim reference data a validation compares against: per-program
statistics (`gpgpusim-gtx480.json`), CTA-limit sweeps (`gpgpusim-gtx480-cta-sweeps.json`)
and the microbenchmarks (`micro/gpgpusim-gtx480-micro.json`), with the PTX each
program ran.

The directory is, in order: the one given, `$TLPSIM_REFERENCE_DIR`, or
`shared/reference/kernels` next to the project checkout (the layout of the
development machines). A missing or malformed file is a `ReferenceDataError`
naming the file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tlpsim.errors import TlpsimError

__all__ = ["MICRO_JSON", "PROGRAMS_JSON", "SWEEPS_JSON", "Reference", "ReferenceDataError", "find_reference_dir",
           "load_reference", "sweep_points"]

PROGRAMS_JSON = "gpgpusim-gtx480.json"
SWEEPS_JSON = "gpgpusim-gtx480-cta-sweeps.json"
MICRO_JSON = "micro/gpgpusim-gtx480-micro.json"


class ReferenceDataError(TlpsimError):
    """The reference data is missing, unreadable or not in the expected layout."""


def find_reference_dir(explicit: str | Path | None = None) -> Path:
    tried = []
    cands: list[Path] = []
    if explicit:
        cands.append(Path(explicit))
    elif os.environ.get("TLPSIM_REFERENCE_DIR", "").strip():
        cands.append(Path(os.environ["TLPSIM_REFERENCE_DIR"].strip()))
    else:
        here = Path(__file__).resolve()
        # src/tlpsim/validate/reference.py -> <checkout>/.. /shared/reference/kernels
        cands += [here.parents[4] / "shared" / "reference" / "kernels",
                  Path.cwd().parent / "shared" / "reference" / "kernels"]
    for c in cands:
        tried.append(str(c))
        if (c / PROGRAMS_JSON).is_file():
            return c
    raise ReferenceDataError(f"no GPGPU-Sim reference data ({PROGRAMS_JSON}) in {', '.join(tried)}; "
                             "pass --ref-dir DIR or set TLPSIM_REFERENCE_DIR")


def _load(path: Path) -> Any:
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise ReferenceDataError(f"reference file {path} not found") from None
    except json.JSONDecodeError as exc:
        raise ReferenceDataError(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg})") from None


def _need(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise ReferenceDataError(f"{where}: missing '{key}'")
    return obj[key]


@dataclass
class Reference:
    dir: Path
    programs: dict[str, dict]                               # name -> gpgpusim-gtx480.json entry
    notes: dict = field(default_factory=dict)
    sweeps: dict[str, dict] = field(default_factory=dict)   # name -> cta-sweeps entry
    sweep_notes: dict = field(default_factory=dict)
    micro: dict[str, dict] = field(default_factory=dict)    # program -> micro entry
    micro_notes: dict = field(default_factory=dict)

    @property
    def micro_dir(self) -> Path:
        """Where the microbenchmarks' PTX files are (their entries name them relative to it)."""
        return (self.dir / MICRO_JSON).parent


def load_reference(ref_dir: str | Path | None = None) -> Reference:
    d = find_reference_dir(ref_dir)
    main = _load(d / PROGRAMS_JSON)
    kernels = _need(main, "kernels", str(d / PROGRAMS_JSON))
    programs = {}
    for k, entry in enumerate(kernels):
        programs[_need(entry, "name", f"{d / PROGRAMS_JSON}: kernels[{k}]")] = entry
    ref = Reference(d, programs, main.get("notes", {}))
    sw = _load(d / SWEEPS_JSON)
    ref.sweeps = dict(_need(sw, "kernels", str(d / SWEEPS_JSON)))
    ref.sweep_notes = sw.get("notes", {})
    for name, entry in ref.sweeps.items():
        _need(entry, "sweep", f"{d / SWEEPS_JSON}: kernels.{name}")
    mi = _load(d / MICRO_JSON)
    ref.micro_notes = mi.get("notes", {})
    ref.micro = {k: v for k, v in mi.items() if k != "notes"}
    for name, entry in ref.micro.items():
        _need(entry, "launches", f"{d / MICRO_JSON}: {name}")
        _need(entry, "ptx", f"{d / MICRO_JSON}: {name}")
    return ref


def sweep_points(entry: dict) -> tuple[list[int], list[int], bool]:
    """(N values, cycles, complete) of a reference sweep, N ascending. A sweep is
    complete when it covers every N from 1 to its natural CTAs-per-SM limit and is
    not marked incomplete."""
    pts = sorted(entry["sweep"], key=lambda p: int(p["max_ctas_per_sm"]))
    ns = [int(p["max_ctas_per_sm"]) for p in pts]
    cycles = [int(p["cycles"]) for p in pts]
    limit = int(entry.get("natural_cta_per_sm_limit", ns[-1] if ns else 0))
    marked = entry.get("incomplete") is True or entry.get("complete") is False
    complete = not marked and ns == list(range(1, limit + 1))
    return ns, cycles, complete

"""`lcs_bcs`: Lee et al., "Improving GPGPU resource utilization through alternative
thread block scheduling", HPCA 2014 — workload typing by CTAs per SM, lazy (LCS)
and block (BCS) CTA scheduling with the SCA warp scheduler, mixed concurrent kernel
execution, and the comparison with TLV, CCWS and DYNCTA, on the paper's Fermi
machine (preset `tesla_m2050`).

Runs (all through the sweep store, labelled with the paper's configuration names):

- every built-in workload under the baseline (round-robin dispatch at maximum
  occupancy, GTO), and capped at 1..N-1 CTAs per SM (N from the baseline: see
  `classify`), for Fig. 4-6 and OPT;
- every built-in workload under LCS (Fig. 12-14);
- the stand-ins of the paper's benchmarks (`suite.BENCHMARKS`) under LCS's variants,
  TLV, CCWS, DYNCTA and LCS+BCS (Fig. 19), and the 2D ones under BCS+GTO and
  BCS+SCA (Fig. 16-17); the LPS and 3DFD stand-ins under BCS+SCA capped at
  1..N-1 CTAs (Fig. 15);
- the Table 3 mixes under mCKE and CKE, each kernel limited to the T_new LCS found
  for it alone (Fig. 18);
- one in-process LCS run of the LPS stand-in recording Phase 1 on SM 0 (Fig. 8), and
  one of a thrashing kernel whose sweep is best at 2 CTAs/SM (`tnew_check`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from tlpsim.experiments.base import Artefact, Claim, ExpRun, Experiment, Results
from tlpsim.experiments.lcs_bcs import figures, tnew_check
from tlpsim.experiments.lcs_bcs.analysis import Curve, Digest, StudyData, digest, kernel_t_new, speedup
from tlpsim.experiments.lcs_bcs.claims import build_claims
from tlpsim.experiments.lcs_bcs.classify import classify
from tlpsim.experiments.lcs_bcs.suite import BENCHMARKS, MIXES, config_overrides, stand_in

__all__ = ["LcsBcs"]

# run groups, and the artefacts that need each
GROUPS = {
    "typing": ("fig4", "fig5", "fig6", "fig12", "fig13", "fig14", "fig15", "table2", "table_types", "table_lcs",
               "tnew_check"),
    "lcs": ("fig12", "fig13", "fig14", "fig18", "table3", "tnew_check"),
    "variants": ("table_lcs",),
    "bcs": ("fig16", "fig17"),
    "fig15": ("fig15",),
    "mixes": ("fig18", "table3"),
    "compare": ("fig19",),
}
FIG8_TRACE_EVERY = 100


class LcsBcs(Experiment):
    name = "lcs_bcs"
    title = "Lee et al., HPCA 2014: alternative thread block scheduling (LCS, BCS + SCA, mCKE)"
    paper = ("M. Lee, S. Song, J. Moon, J. Kim, W. Seo, Y. Cho, S. Ryu. Improving GPGPU resource utilization "
             "through alternative thread block scheduling. HPCA 2014.")
    seed_file = "lcs-bcs-cta-scheduling.txt"
    preset = "tesla_m2050"

    @property
    def artefacts(self) -> list[Artefact]:
        A = Artefact
        return [
            A("table2", "Benchmarks and their stand-ins, with the types measured", "table", figures.table2),
            A("table_types", "Every built-in workload typed", "table", figures.table_types),
            A("fig4", "Performance vs CTAs per SM, by type", "figure", figures.fig4,
              "normalised to 1 CTA per SM; one panel per type"),
            A("fig5", "Core activity vs CTAs per SM", "figure", figures.fig5,
              "ACTIVE / IDLE / MEM_STALL / CORE_STALL shares of SM cycles; stand-ins of CONV, SRAD, KMN, LPS "
              "(a typed workload of the panel's type when the stand-in measures otherwise)"),
            A("fig6", "Performance and cache miss rates vs CTAs per SM", "figure", figures.fig6,
              "stand-ins of KMN (Type III in the paper) and BLK (Type IV)"),
            A("fig8", "Instructions issued per CTA during LCS's Phase 1", "figure", figures.fig8,
              "stand-in of LPS, SM 0, first launch, until the first CTA retires"),
            A("tnew_check", "Where T_new lands on a thrashing kernel best at 2 CTAs/SM", "table",
              figures.tnew_check_table, "SM 0's per-CTA warp instructions at the first retirement (Eq. 1's input)"),
            A("fig12", "LCS performance normalised to GTO", "figure", figures.fig12,
              "every built-in workload, coloured by measured type; geometric means per group"),
            A("fig13", "CTAs per SM: baseline T_max, OPT and LCS's T_new", "figure", figures.fig13,
              "per kernel; T_new is the mean over SMs and launches"),
            A("fig14", "Energy of LCS normalised to GTO", "figure", figures.fig14,
              "ideal power gating of register file and shared memory not held by CTAs, in both"),
            A("table_lcs", "LCS variants", "table", figures.table_lcs),
            A("fig15", "Scaling with BCS+SCA", "figure", figures.fig15,
              "stand-ins of LPS and 3DFD: performance vs CTAs per SM, GTO and BCS+SCA"),
            A("fig16", "BCS performance normalised to GTO", "figure", figures.fig16, "2D stand-ins"),
            A("fig17", "L1D miss rate with BCS", "figure", figures.fig17, "2D stand-ins"),
            A("table3", "Concurrent-kernel mixes", "table", figures.table3),
            A("fig18", "mCKE normalised to CKE", "figure", figures.fig18, "makespan of the mix"),
            A("fig19", "Comparison with TLV, CCWS and DYNCTA", "figure", figures.fig19, "stand-ins, normalised to GTO"),
        ]

    # ------------------------------------------------------------ the runs

    def workloads(self) -> list[str]:
        """Every built-in workload, and of the shape variants (`registry.register_variant`)
        only those standing in for a benchmark of the paper."""
        from tlpsim.workloads.registry import load_workloads

        study = set(self.study())
        return sorted(n for n, wl in load_workloads().items() if not wl.variant_of or n in study)

    def study(self) -> list[str]:
        return [b.workload for b in BENCHMARKS]

    def stand_ins(self) -> list[str]:
        return self.study()

    def run(self, workload: str, config: str, two_d: bool = True, max_ctas: int | None = None,
            uses: tuple[str, ...] = ()) -> ExpRun:
        label = config if max_ctas is None else f"{config}, max {max_ctas} CTAs/SM"
        return ExpRun(self.params(workload, config_overrides(config, two_d, max_ctas)), label, uses)

    def mix_runs(self, mix: Any, limits: dict[str, int]) -> tuple[ExpRun, ExpRun]:
        def one(impl: str) -> ExpRun:
            ov = {"gpu.cta_scheduler": {"impl": impl, "limits": dict(sorted(limits.items()))}}
            return ExpRun(self.params(mix.mix_workload, ov), f"{'mCKE' if impl == 'mcke' else 'CKE'} {mix.name}",
                          GROUPS["mixes"])
        return one("mcke"), one("cke")

    def plan(self, results: Results, only: Iterable[str] | None = None) -> list[ExpRun]:
        want = set(only) if only else {a.name for a in self.artefacts}
        groups = {g for g, arts in GROUPS.items() if want & set(arts)}
        everything = self.workloads()
        study = self.study()
        base_uses = tuple(sorted(want))
        runs: list[ExpRun] = []
        for w in everything if groups & {"typing", "lcs"} else study:
            runs.append(self.run(w, "GTO", uses=base_uses))
        base = {w: results.of(self.run(w, "GTO")) for w in everything}
        if "typing" in groups:
            for w in everything:
                d = base[w]
                if d is not None:
                    runs += [self.run(w, "GTO", max_ctas=n, uses=GROUPS["typing"]) for n in range(1, d.sweep_top())]
        if "lcs" in groups:
            runs += [self.run(w, "LCS", uses=GROUPS["lcs"]) for w in everything]
        if "variants" in groups:
            runs += [self.run(w, v, uses=GROUPS["variants"]) for w in study for v in ("LCS", "LCS-ceil", "LCS-1SM")]
        for w in study:
            d = base.get(w)
            if d is None:
                continue
            if "bcs" in groups and d.two_d:
                runs += [self.run(w, c, uses=GROUPS["bcs"]) for c in ("BCS+GTO", "BCS+SCA")]
            if "compare" in groups:
                runs += [self.run(w, c, two_d=d.two_d, uses=GROUPS["compare"])
                         for c in ("TLV", "CCWS", "DYNCTA", "LCS", "LCS+BCS")]
        if "fig15" in groups:
            for w in (stand_in("LPS"), stand_in("3DFD")):
                d = base.get(w)
                if d is not None:
                    runs += [self.run(w, "BCS+SCA", max_ctas=n, uses=GROUPS["fig15"]) for n in range(1, d.sweep_top())]
                    runs.append(self.run(w, "BCS+SCA", uses=GROUPS["fig15"]))
        if "mixes" in groups:
            for mix in MIXES:
                limits = self.mix_limits(mix, results)
                if limits is not None:
                    runs += list(self.mix_runs(mix, limits))
        return runs

    def mix_limits(self, mix: Any, results: Results) -> dict[str, int] | None:
        """CTAs per SM of each kernel of a mix: the T_new LCS found for it alone
        (rounded); None until both parts' LCS runs exist."""
        limits: dict[str, int] = {}
        for w in mix.workloads:
            d = results.of(self.run(w, "LCS"))
            if d is None:
                return None
            for k, t in kernel_t_new(d).items():
                limits[k] = max(1, round(t))
        return limits

    def digest(self, record: dict) -> Digest:
        return digest(record)

    # ------------------------------------------------------------ Fig. 8: an in-process run

    def fig8_params(self) -> Any:
        return self.params(stand_in("LPS"), {"gpu.cta_scheduler": {"impl": "lcs", "trace_sm": 0,
                                                                    "trace_every": FIG8_TRACE_EVERY}})

    def _phase1_run(self, p: Any) -> Any:
        """Run `p` in process and return its GPU, whose LCS scheduler holds the Phase-1 record."""
        from tlpsim.sweep.job import execute

        held: list = []
        execute(p, on_device=lambda dev: held.append(dev))
        return held[0]._timing.gpu

    def extra_runs(self, results: Results, db: Any, echo: Callable[[str], None], simulate: bool = True) -> None:
        p = self.fig8_params()
        key = f"{self.name}:fig8:{p.key()}"
        have = db.get_meta(key)
        if have is None and simulate:
            echo(f"fig8: Phase-1 record of LCS on {p.workload} (in process)")
            gpu = self._phase1_run(p)
            trace = gpu.cta_policy.trace
            first = min((kid for _, kid, _ in trace.samples), default=None)
            samples = [(cyc, {str(i): n for i, n in ctas.items()}) for cyc, kid, ctas in trace.samples if kid == first]
            run = next((r for r in gpu.finished if r.kid == first), None)
            decision = next(((n, t) for kid, sm, n, t in gpu.cta_policy.throttle.history if kid == first and sm == 0),
                            (None, None))
            have = {"workload": p.workload, "kernel": run.name if run else "", "label": "LCS Phase 1, SM 0",
                    "samples": samples, "t_max": decision[0], "t_new": decision[1]}
            db.set_meta(key, have)
        if have is not None:
            results.extra["fig8"] = have
        self._tnew_check(results, db, echo, simulate)

    def _tnew_check(self, results: Results, db: Any, echo: Callable[[str], None], simulate: bool) -> None:
        """Issue 27's check: LCS's T_new on a thrashing kernel whose sweep is best at 2
        CTAs/SM, with the counts Eq. 1 used (`tnew_check`)."""
        d = self.analyse(results)
        row = tnew_check.pick(d.kernels, d.curves, d.study)
        if row is None:
            results.extra["tnew_check"] = {"none": "no kernel with OPT 2, a sweep past 2 CTAs/SM and an L1 miss "
                                                   "rate rising past OPT in this run"}
            return
        p = self.params(row["workload"], {"gpu.cta_scheduler": {"impl": "lcs", "trace_sm": 0,
                                                                "trace_every": FIG8_TRACE_EVERY}})
        key = f"{self.name}:tnew_check:{row['kernel']}:{p.key()}"
        have = db.get_meta(key)
        if have is None and simulate:
            echo(f"tnew_check: LCS's T_new on {row['workload']} ({row['kernel']}, OPT 2; in process)")
            gpu = self._phase1_run(p)
            have = tnew_check.record(row, gpu.cta_policy.trace.samples, gpu.cta_policy.throttle.history,
                                     sorted((r.kid, r.name) for r in gpu.finished))
            db.set_meta(key, have)
        if have is not None:
            # the sweep's figures from this analysis, not the ones stored with the LCS run's
            # counts (they follow the digest: miss rates, types), so the row matches fig6 and fig13
            have = {**have, **{k: row.get(k) for k in ("type", "t_max", "top", "opt", "cycles", "l1_miss", "loss")}}
            results.extra["tnew_check"] = have

    # ------------------------------------------------------------ analysis

    def analyse(self, results: Results) -> StudyData:
        from tlpsim.experiments.waves import fewest_waves, waves_rows

        d = StudyData(size=self.size, workloads=self.workloads(), study=self.study(),
                      waves=fewest_waves(waves_rows(self)))
        d.failed = dict(results.errors)
        study = self.study()
        base = {w: results.of(self.run(w, "GTO")) for w in d.workloads}

        def get(w: str, cfg: str, **kw: Any) -> Digest | None:
            r = self.run(w, cfg, **kw)
            dg = results.of(r)
            if dg is None and r.key in results.planned:
                d.missing.append(f"{w}: {r.label}")
            return dg

        for w, b in base.items():
            if b is None:
                continue
            top = b.sweep_top()
            points = [(n, get(w, "GTO", max_ctas=n)) for n in range(1, top)] + [(top, b)]
            if all(p is not None for _, p in points):
                d.curves[w] = Curve.of(points, max((ln["limit"] for ln in b.launches), default=1), b.grid_limited())
            lcs = get(w, "LCS")
            if lcs is not None:
                en = (lcs.energy_j / b.energy_j) if (lcs.energy_j and b.energy_j) else None
                gate = (b.gateable_j / b.energy_j) if (b.gateable_j is not None and b.energy_j) else None
                d.lcs[w] = {"speedup": speedup(b, lcs), "energy": en, "gateable": gate}
                self._kernel_rows(d, w, b, lcs)
        for w in study:
            b = base.get(w)
            if b is None:
                continue
            d.variants[w] = {v: speedup(b, get(w, v)) for v in ("LCS", "LCS-ceil", "LCS-1SM")}
            if b.two_d:
                row: dict[str, Any] = {"l1 GTO": b.l1_miss_rate}
                for c in ("BCS+GTO", "BCS+SCA"):
                    x = get(w, c)
                    row[c] = speedup(b, x)
                    row["l1 " + c] = x.l1_miss_rate if x is not None else None
                d.bcs[w] = row
            d.compare[w] = {c: speedup(b, get(w, c, two_d=b.two_d)) for c in ("TLV", "CCWS", "DYNCTA", "LCS",
                                                                               "LCS+BCS")}
        for paper in ("LPS", "3DFD"):
            self._fig15(d, paper, base, get)
        for mix in MIXES:
            limits = self.mix_limits(mix, results)
            row = {"types": mix.types, "paper_ctas": "/".join(map(str, mix.paper_ctas)),
                   "workloads": mix.mix_workload, "limits": limits}
            if limits is not None:
                m, c = (results.of(r) for r in self.mix_runs(mix, limits))
                row.update({"mcke_cycles": m.makespan if m else None, "cke_cycles": c.makespan if c else None,
                            "speedup": speedup(c, m, makespan=True)})
            d.mixes[mix.name] = row
        d.fig8 = dict(results.extra.get("fig8") or {})
        d.tnew_check = dict(results.extra.get("tnew_check") or {})
        return d

    def _kernel_rows(self, d: StudyData, w: str, base: Digest, lcs: Digest) -> None:
        """Fig. 13 rows: per kernel of w, its occupancy limit, OPT from the sweep and LCS's mean T_new."""
        curve = d.curves.get(w)
        t_new = kernel_t_new(lcs)
        limits: dict[str, tuple[int, int]] = {}
        for ln in base.launches:
            lim, n = limits.get(ln["kernel"], (0, 0))
            limits[ln["kernel"]] = (max(lim, ln["limit"]), max(n, ln["n_ctas"]))
        for k, (lim, n_ctas) in sorted(limits.items()):
            opt = ktype = None
            top = min(lim, -(-n_ctas // base.n_sms))  # CTAs per SM its grid and occupancy allow
            if curve is not None and top >= 2:        # one point has no OPT to compare with
                cyc = [kc.get(k) for kc in curve.kernel_cycles[:top]]
                if all(c for c in cyc):
                    ktype, opt = classify([cyc[0] / c for c in cyc])
            d.kernels.append({"workload": w, "kernel": k, "t_max": lim, "top": top, "opt": opt, "type": ktype,
                              "t_new": t_new.get(k)})

    def _fig15(self, d: StudyData, paper: str, base: dict[str, Digest | None], get: Callable[..., Any]) -> None:
        w = stand_in(paper)
        b = base.get(w)
        curve = d.curves.get(w)
        if b is None or curve is None:
            return
        top = b.sweep_top()
        bcs = [get(w, "BCS+SCA", max_ctas=n) for n in range(1, top)] + [get(w, "BCS+SCA")]
        row: dict[str, Any] = {"workload": w, "counts": curve.counts, "GTO": curve.perf, "GTO type": curve.type,
                               "GTO drop": 1 - curve.perf[-1] / max(curve.perf)}
        if all(x is not None for x in bcs):
            perf = [curve.cycles[0] / x.cycles for x in bcs]  # normalised to GTO at 1 CTA
            row["BCS+SCA"] = perf
            row["BCS+SCA type"] = classify(perf)[0]
            row["BCS+SCA drop"] = 1 - perf[-1] / max(perf)
        d.fig15[paper] = row

    def claims(self, data: StudyData) -> list[Claim]:
        return build_claims(data)

    def summary(self, data: StudyData) -> dict:
        types: dict[str, list[str]] = {}
        for w, c in sorted(data.curves.items()):
            types.setdefault(c.type, []).append(w)
        return {"types": types, "opt": {w: c.opt for w, c in sorted(data.curves.items())},
                "lcs_speedup": {w: v["speedup"] for w, v in sorted(data.lcs.items())},
                "lcs_energy": {w: v["energy"] for w, v in sorted(data.lcs.items())},
                "kernels": data.kernels, "bcs": data.bcs, "compare": data.compare, "mixes": data.mixes,
                "variants": data.variants, "fig15": data.fig15, "missing_runs": data.missing,
                "failed_runs": data.failed}

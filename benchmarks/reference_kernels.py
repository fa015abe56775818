"""The six GPGPU-Sim reference kernels (../shared/reference/kernels) re-run in tlpsim:
same PTX, problem size, inputs (the programs' fixed-seed LCG, replicated in NumPy),
launches and output check; then tlpsim's counts and timing against GPGPU-Sim's.

    .venv/bin/python benchmarks/reference_kernels.py [--functional | --timing]
        [--kernels mm_naive,histogram_atomic,...] [--json] [--time-limit 1800]

`--functional` (default): warp instructions and thread instructions against
GPGPU-Sim's `warp_insn` and `gpu_tot_sim_insn`. tlpsim's trace holds two
thread-instruction counts: `active` lanes (the SIMT mask, `trace.active_thread_instructions`)
and `executed` lanes (active lanes whose guard predicate held; `rec.thread_instructions`
and the timing model's `thread_insts` count these). GPGPU-Sim's
`gpu_tot_sim_insn` is the second: its functional model clears the lanes of a
guarded instruction whose predicate is false from the instruction's active mask
(`ptx_thread_info::ptx_exec_inst` -> `inst.set_not_active(lane)`), and
`warp_inst_complete` adds `active_count()` of that mask. Its
`gpgpu_n_tot_thrd_icount` is 32 x warp_insn (every lane).

`--timing`: `Device(mode="timing", config="gtx480")`, one fresh device per kernel;
cycles, IPC, L1D/L2 miss rates and simulation speed against GPGPU-Sim, with the
Pearson correlation of cycles and the mean absolute relative error. A kernel that
fails or exceeds `--time-limit` seconds (SIGALRM) is reported and skipped.

The programs themselves (inputs, launches, checks) and the metrics are
`tlpsim.validate` (programs, measure); `tlpsim validate` compares the timing model
in more depth (microbenchmarks, CTA sweeps). The reference directory is
../shared/reference/kernels relative to the project (override with --ref-dir or
TLPSIM_REFERENCE_DIR).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import tlpsim as cp
from tlpsim.validate.measure import counts, gs_program_metrics, run_timed, timing_metrics
from tlpsim.validate.programs import PROGRAMS
from tlpsim.validate.reference import find_reference_dir, load_reference as _load_all
from tlpsim.validate.stats import mae, pearson


def load_reference(ref_dir: Path | None = None) -> dict[str, dict]:
    return _load_all(ref_dir).programs


# ---------------------------------------------------------------- functional comparison

def _launch_shape_ok(ref: dict, recs: list) -> bool:
    return (len(recs) == int(ref["n_launches"])
            and all(list(rc.grid) == list(ref["grid"]) and list(rc.block) == list(ref["block"]) for rc in recs))


def run_functional(name: str, ref: dict, ref_dir: Path) -> dict:
    with cp.Device(trace_cache=False, toolchain="cuda11"):  # the reference PTX GPGPU-Sim ran
        t0 = time.perf_counter()
        r = PROGRAMS[name](ref, ref_dir)
        wall = time.perf_counter() - t0
    c = counts(r.records)
    sim_wall = sum(rc.wall_seconds for rc in r.records)
    return {
        "kernel": name, "verified": r.verified, "bad": r.bad, "output": r.output,
        "reference_output": ref.get("program_output", ""), "launch_shape_ok": _launch_shape_ok(ref, r.records),
        **c,
        "gs_warp_insn": int(ref["warp_insn"]), "gs_thread_insn": int(ref["gpu_tot_sim_insn"]),
        "gs_thrd_icount_all_lanes": int(ref["gpgpu_n_tot_thrd_icount"]),
        "warp_diff": c["warp_insn"] - int(ref["warp_insn"]),
        "thread_diff_executed": c["thread_insn_executed"] - int(ref["gpu_tot_sim_insn"]),
        "thread_diff_active": c["thread_insn_active"] - int(ref["gpu_tot_sim_insn"]),
        "functional_wall_s": sim_wall, "program_wall_s": wall,
        "thread_insn_per_s": c["thread_insn_executed"] / sim_wall if sim_wall else 0.0,
    }


# ---------------------------------------------------------------- timing comparison

def run_timing(name: str, ref: dict, ref_dir: Path, time_limit: int = 1800) -> dict:
    gs = gs_program_metrics(ref)
    row: dict = {"kernel": name, "error": None, "gs_cycles": gs["cycles"], "gs_ipc": gs["ipc"],
                 "gs_l1d_miss_rate": gs["l1d_miss_rate"], "gs_l2_miss_rate": gs["l2_miss_rate"],
                 "gs_wall_s": gs["wall_s"], "gs_thread_insn_per_wall_s": gs["thread_insn_per_wall_s"],
                 "gs_occupancy_pct": gs["occupancy_pct"], "gs_cta_per_sm_limit": gs["ctas_per_sm_limit"],
                 **{f"gs_{k}": ref[k] for k in ("l1d_accesses", "l1d_misses", "l1d_pending_hits",
                                                 "l1d_reservation_fails", "l2_accesses", "l2_misses",
                                                 "dram_reads", "dram_writes") if k in ref}}
    # end to end measured cold: no trace cache, so the functional model runs every time
    oc = run_timed(lambda: PROGRAMS[name](ref, ref_dir), "gtx480", time_limit, trace_cache=False)
    row["total_wall_s"] = oc.wall_s
    if oc.error is not None:
        row.update(error=oc.error, traceback=oc.traceback)
        return row
    row.update(verified=oc.result.verified, output=oc.result.output)
    row.update(timing_metrics(oc.records, oc.max_warps))
    row["rel_err"] = (row["cycles"] - row["gs_cycles"]) / row["gs_cycles"]
    # end to end: PTX parse + functional (cold: trace_cache=False) + timing + the host program
    row["e2e_thread_insn_per_s"] = row["thread_insn_executed"] / row["total_wall_s"]
    row["peak_rss_mb"] = oc.peak_rss_mb
    return row


def summary(rows: list[dict]) -> dict:
    ok = [r for r in rows if r.get("error") is None and "cycles" in r]
    out: dict = {"kernels_ok": len(ok), "kernels_failed": len(rows) - len(ok)}
    if ok:
        out["mean_abs_rel_err"] = mae([r["cycles"] for r in ok], [r["gs_cycles"] for r in ok])
    if len(ok) >= 2:
        out["pearson_cycles"] = pearson([r["cycles"] for r in ok], [r["gs_cycles"] for r in ok])
    return out


# ---------------------------------------------------------------- reports

def _pct(x: float) -> str:
    return f"{100 * x:+.1f}%"


def table_functional(rows: list[dict]) -> str:
    lines = [("| kernel | verified | warp insn (tlpsim) | warp insn (GPGPU-Sim) | diff | thread insn executed "
             "(tlpsim) | gpu_tot_sim_insn (GPGPU-Sim) | diff | thread insn active lanes (tlpsim) | "
             "functional wall s | M thread-insn/s |"),
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r.get("error"):
            lines.append(f"| {r['kernel']} | ERROR: {r['error']} |" + " |" * 9)
            continue
        lines.append(
            f"| {r['kernel']} | {'PASS' if r['verified'] else 'FAIL'} | {r['warp_insn']:,} | {r['gs_warp_insn']:,} | "
            f"{r['warp_diff']:+,} | {r['thread_insn_executed']:,} | {r['gs_thread_insn']:,} | "
            f"{r['thread_diff_executed']:+,} | {r['thread_insn_active']:,} | {r['functional_wall_s']:.2f} | "
            f"{r['thread_insn_per_s'] / 1e6:.2f} |")
    return "\n".join(lines)


def table_timing(rows: list[dict], summ: dict) -> str:
    lines = [("| kernel | cycles (tlpsim) | cycles (GPGPU-Sim) | rel. err | IPC (tlpsim) | IPC (GPGPU-Sim) | "
             "L1D miss (tlpsim / GPGPU-Sim) | L2 miss (tlpsim / GPGPU-Sim) | occupancy % (tlpsim / GPGPU-Sim) | "
             "wall s functional + timing | thread-insn/s (tlpsim / GPGPU-Sim) | verified |"),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if r.get("error") is not None or "cycles" not in r:
            lines.append(f"| {r['kernel']} | — | {r['gs_cycles']:,} | — | — | {r['gs_ipc']:.1f} | — / "
                         f"{r['gs_l1d_miss_rate']:.3f} | — / {r['gs_l2_miss_rate']:.3f} | — / {r['gs_occupancy_pct']:.1f} | "
                         f"(failed after {r['total_wall_s']:.0f} s) | — / {r['gs_thread_insn_per_wall_s']:,.0f} | "
                         f"ERROR: {str(r.get('error', '')).replace('|', '/')[:200]} |")
            continue
        lines.append(
            f"| {r['kernel']} | {r['cycles']:,} | {r['gs_cycles']:,} | {_pct(r['rel_err'])} | {r['ipc']:.1f} | "
            f"{r['gs_ipc']:.1f} | {r['l1d_miss_rate']:.3f} / {r['gs_l1d_miss_rate']:.3f} | "
            f"{r['l2_miss_rate']:.3f} / {r['gs_l2_miss_rate']:.3f} | "
            f"{r['occupancy_pct']:.1f} / {r['gs_occupancy_pct']:.1f} | {r['functional_wall_s']:.1f} + {r['timing_wall_s']:.1f} | "
            f"{r['thread_insn_per_wall_s']:,.0f} / {r['gs_thread_insn_per_wall_s']:,.0f} | "
            f"{'PASS' if r.get('verified') else 'FAIL'} |")
    lines.append("")
    pear = summ.get("pearson_cycles")
    mare = summ.get("mean_abs_rel_err")
    lines.append(f"Kernels simulated: {summ['kernels_ok']}, failed: {summ['kernels_failed']}. "
                 f"Pearson r(cycles): {'n/a' if pear is None else f'{pear:.3f}'}; "
                 f"mean |relative error| of cycles: {'n/a' if mare is None else f'{100 * mare:.1f}%'}.")
    lines.append("IPC = thread instructions (GPGPU-Sim's convention: active lanes whose guard held) per core cycle. "
                 "Miss rates = misses / accesses with MSHR-merged pending hits counted as accesses, not misses "
                 "(GPGPU-Sim's L1D/L2_total_cache_miss_rate); tlpsim's L1D counts load line-accesses only, its L2 "
                 "one access per request (line + sector mask), GPGPU-Sim's L2 one per sector. "
                 "thread-insn/s = those instructions over tlpsim's functional + timing wall time, against "
                 "GPGPU-Sim's thread_insn_per_wall_s (whole program wall time).")
    return "\n".join(lines)


def host() -> str:
    """The CPU this ran on: speed ratios against GPGPU-Sim's recorded rate hold only on
    its machine class (a 2-vCPU x86-64 VM; the CTA sweeps' notes name an AMD EPYC)."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"


def table_speed(rows: list[dict]) -> str:
    """Simulation speed against GPGPU-Sim's (issue 18 targets, timing alone: every
    program >= 8x, geometric mean >= 12x)."""
    lines = ["| kernel | thread insn | cycles | timing s | timing-alone thread-insn/s | x GPGPU-Sim | "
             "warp-insn/s | cycles/s | end-to-end s | end-to-end thread-insn/s | x GPGPU-Sim | peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r.get("error") is not None or "cycles" not in r:
            continue
        gs = r["gs_thread_insn_per_wall_s"]
        t = r["timing_wall_s"]
        lines.append(
            f"| {r['kernel']} | {r['thread_insn_executed']:,} | {r['cycles']:,} | {t:.1f} | "
            f"{r['timing_thread_insn_per_s'] / 1e6:.2f} M | {r['timing_thread_insn_per_s'] / gs:.1f}x | "
            f"{r['warp_insn'] / t / 1e3:.0f} k | {r['cycles'] / t:,.0f} | {r['total_wall_s']:.1f} | "
            f"{r['e2e_thread_insn_per_s'] / 1e6:.2f} M | {r['e2e_thread_insn_per_s'] / gs:.1f}x | "
            f"{r['peak_rss_mb']:.0f} |")
    ok = [r for r in rows if r.get("error") is None and "cycles" in r]
    if ok:
        def geo(key: str) -> float:
            return math.exp(sum(math.log(r[key] / r["gs_thread_insn_per_wall_s"]) for r in ok) / len(ok))

        lines.append("")
        lines.append(f"Geometric mean x GPGPU-Sim over {len(ok)} kernels: timing alone "
                     f"{geo('timing_thread_insn_per_s'):.1f}x, end to end {geo('e2e_thread_insn_per_s'):.1f}x. "
                     f"Host: {host()}.")
    lines.append("")
    lines.append("GPGPU-Sim's rate is its thread_insn_per_wall_s (whole program) on the same machine class; "
                 "timing alone = the timing model's wall time with the trace in hand; end to end = PTX parse, "
                 "functional execution with tracing (no trace cache), timing and the host program. Peak RSS is "
                 "the benchmark process's maximum so far (kernels run one after another in one process).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--functional", action="store_true", help="instruction counts (default)")
    mode.add_argument("--timing", action="store_true", help="cycles, IPC, miss rates, speed (gtx480 preset)")
    ap.add_argument("--kernels", default="", help="comma-separated subset of " + ",".join(PROGRAMS))
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument("--time-limit", type=int, default=1800, help="seconds per kernel in --timing (0 = none)")
    ap.add_argument("--ref-dir", type=Path, default=None,
                    help="reference data (default: $TLPSIM_REFERENCE_DIR or ../shared/reference/kernels)")
    args = ap.parse_args(argv)
    args.ref_dir = find_reference_dir(args.ref_dir)
    refs = load_reference(args.ref_dir)
    names = [n.strip() for n in args.kernels.split(",") if n.strip()] or [n for n in PROGRAMS if n in refs]
    unknown = [n for n in names if n not in PROGRAMS or n not in refs]
    if unknown:
        ap.error(f"unknown kernel(s) {', '.join(unknown)}; choose from {', '.join(PROGRAMS)}")
    rows = []
    for n in names:
        if args.timing:
            row = run_timing(n, refs[n], args.ref_dir, args.time_limit)
        else:
            try:
                row = run_functional(n, refs[n], args.ref_dir)
            except Exception as exc:  # noqa: BLE001 - report the kernel and go on
                row = {"kernel": n, "error": f"{type(exc).__name__}: {exc}"[:400]}
        rows.append(row)
        print(f"  {n}: done" + (f" (error: {row['error']})" if row.get("error") else ""), file=sys.stderr,
              flush=True)
    if args.json:
        out = {"mode": "timing" if args.timing else "functional", "kernels": rows}
        if args.timing:
            out["summary"] = summary(rows)
            out["host"] = host()
        print(json.dumps(out, indent=1, default=str))
    elif args.timing:
        print(table_timing(rows, summary(rows)))
        print()
        print(table_speed(rows))
    else:
        print(table_functional(rows))
        for r in rows:
            if not r.get("error"):
                same = "identical" if r["output"] == r["reference_output"] else "differs"
                print(f"\n{r['kernel']}: output {same}\n  tlpsim:     {r['output']}\n"
                      f"  GPGPU-Sim:  {r['reference_output']}")
    bad = any(r.get("error") or not r.get("verified", False) for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""The Markdown page of a validation against real-GPU measurements
(docs/validation-h200.md): summary against the targets and beside Accel-Sim's
published correlation, the scatter plot, every compared launch, what was left out,
the occupancy sweeps and the microbenchmarks."""

from __future__ import annotations

import math
from typing import Any

from tlpsim.validate.stats import pearson

__all__ = ["console_summary", "render", "write"]

# Published correlation of Accel-Sim against real GPUs, for scale (Khairy et al., "Accel-Sim: An
# Extensible Simulation Framework for Validated GPU Modeling", ISCA 2020)
ACCEL_SIM = [
    ("Accel-Sim, SASS traces, Quadro V100 (Volta)", "~15%", "80 workloads, 1,945 kernel instances; the abstract: "
     "79 percentage points below GPGPU-Sim 3.x's cycle error; the maintainers quote the ~15% MAE "
     "(accel-sim-framework issue #145)"),
    ("GPGPU-Sim 3.x, PTX, same GPU and workloads", "~94%", "15% + the 79 points of the abstract"),
]


def _pct(x: Any, signed: bool = True) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{100 * x:+.1f}%" if signed else f"{100 * x:.1f}%"


def _r(x: Any) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _us(x: Any) -> str:
    return "–" if x is None else f"{x:,.1f}"


def _verdict(ok: bool | None) -> str:
    return "–" if ok is None else ("met" if ok else "**missed**")


def _errors(v: dict, *kernels: str) -> str:
    """'kernel +x%' of each compared launch of `kernels` (in the order named)."""
    by = {}
    for r in v["launches"]:
        if r["kernel"] in kernels and r["error"] is None:
            by.setdefault(r["kernel"], []).append(_pct(r["rel_err"]))
    return ", ".join(f"{k} {' / '.join(by[k])}" for k in kernels if k in by) or "none compared"


def _shortfalls(v: dict) -> list[str]:
    """The page's causes of error, each with the compared launches it bears on."""
    return [
        "- **Launch latency: modelled.** A CUDA-event time includes the front end's work between the launch "
        "and its first CTA: the card's one-CTA launches take 2.9 µs and more (below, \"Launch-bound "
        "launches\"), where their CTAs' own work is a few hundred cycles. tlpsim waits GPGPU-Sim's "
        "`gpgpu_kernel_launch_latency` before each launch's first CTA and counts it in the launch's cycles "
        "(`gpu.kernel_launch_latency`, 5,000 cycles, 2.5 µs at 1,980 MHz; the value of GPGPU-Sim's Volta, "
        "Pascal and Ampere configurations, not fitted: no microbenchmark here times it). The one-CTA launches "
        "then come out " + _floor_summary(v) + ". Before 2026-11-29 every launch was 2.5 µs shorter: at "
        "`small` 21.6% / r 0.896 (mean signed -10.2%), all 17 21.7% / r 0.880; the kernels tlpsim ran too fast "
        "came closer (raycast -45.6%, lud_perimeter -40.2%, kmeans_accumulate -46.7%) and those it ran too "
        "slow moved further (sgemm_naive +34.1%, transpose_naive +21.0%, spmv_csr_scalar +21.3%, scalarprod "
        "+35.2%). The figures in parentheses below, from earlier states of the model, are without it.",
        "- **Interconnect: [Q]'s crossbar speed-up.** The L2's replies cross an input-queued crossbar whose "
        "inputs send their head packet only (head-of-line blocking). [Q]'s own network, GPGPU-Sim's local "
        "crossbar, moves a whole packet to each output a cycle and lets an input send to several outputs in a "
        "cycle; the nearest of the crossbar modelled here is [Q]'s booksim file, internal speed-up 2.0 "
        "(`icnt.internal_speedup`, as the gtx480 preset). Until 2026-11-29 the preset kept 1.0, from when the "
        "setting did nothing, which caps the replies near 0.59 of 96 x 40 B a cycle, about 3.6 TB/s of data, "
        "below the 4.8 TB/s of HBM behind it: " + _errors(v, "scalarprod", "dct8x8_forward", "transpose_naive",
                                                           "sgemm_naive", "nn_distances")
        + " (+46.6%, +34.2%, +39.1%, +60.7% and -10.3% at 1.0; all 17 launches 23.3% / r 0.929 then).",
        "- **Issue order: modelled.** ptxas hoists a block's loads ahead of the arithmetic that uses them; "
        "nvcc's PTX keeps each load next to its use, so a warp issuing the PTX in order waits a load's whole "
        "latency before every use. `gpu.block_schedule = \"list\"` issues each basic block list-scheduled "
        "within its dependences, as the card's SASS is laid out (docs/toolchains.md): "
        + _errors(v, "sgemm_naive", "spmv_csr_scalar", "nbody_step", "mriq_computeq")
        + " (+189.5%, +101.6%, +67.5% and +46.8% in the PTX's order). Like ptxas, the list order moves a load "
        "past a store it provably cannot alias (one base register at disjoint offsets, or another state space: "
        "sgemm_tiled's epilogue, four `LDG` then four `STG` per base in the cubin, where nvcc's order waited "
        "for the L2 before each store) and first predicates forward branches over at most 12 PTX instructions "
        "(`tlpsim.analysis.ifconvert`: bfs_expand's unrolled edge loop becomes one block whose eight loads "
        "issue ahead of its stores, as in the cubin; the bound is read from the workloads' cubins, "
        "benchmarks/ifconvert_vs_sass.py): " + _errors(v, "bfs_expand") + " (+54.8% without the two); "
        + _errors(v, "lud_perimeter") + " (-7.2% without them: its staging loads now pass its shared stores, "
        "as the cubin's 12 `LDG` before its `STS`; one latency-bound warp per SM, whose remaining time on the "
        "card nothing modelled accounts for). What "
        "the page once blamed, the instruction count, is not it: the SASS of these kernels executes 0.94 to "
        "1.29 times the PTX's warp instructions (benchmarks/ptx_vs_sass.py, docs/toolchains.md).",
        "- **Shared memory through the sub-cores: modelled.** The LD/ST unit is one unit the four "
        "sub-partitions share, taking one instruction a cycle, and the banks return 128 B a cycle (NVIDIA's "
        "answers on the CUDA forums, cited in the preset): one wavefront a cycle for the SM "
        "(`sm.shared_cycles_per_conflict` 1). Each sub-partition hands its warps' addresses to it through its "
        "own path, 4 cycles a shared instruction or 2 per wavefront if more "
        "(`sm.shared_subcore_issue_cycles`, `sm.shared_subcore_cycles_per_conflict`), calibrated on "
        "smem_stride.tput (4.8 cycles an access at strides 1 and 2, then 2 per wavefront) and the chain's 2 "
        "cycles per extra wavefront: " + _errors(v, "sgemm_tiled", "histo_cta") + " (+46.4% and +14.2% "
        "through one SM-wide unit at 2 cycles a wavefront, which paced sgemm_tiled's 128 shared loads per "
        "256 FMAs per warp and tile at half the card's rate). Global memory instructions are not paced by the "
        "sub-core path: no measurement here times their issue.",
        "- **Registers per thread: modelled.** `sm.register_count = \"ptxas_exact\"` reserves ptxas's count, as "
        "the card does, so CTAs per SM are the card's (kmeans_assign 5 with 48 registers, raycast 9 with 51; "
        "reserving tlpsim's own larger allocation of the list-scheduled PTX, 77 and 80, gives 3 and 6; "
        "tests/timing/test_ptxas_exact.py). The allocation's extra register names are timed (scoreboard, banks) "
        "but not reserved (docs/plugins.md).",
        "- **Shared-memory atomics: modelled.** A warp's lanes updating one word are serialised, a wavefront "
        "each (`sm.shared_atomic_same_word`), and float adds run the compare-and-swap loop ptxas emits "
        "for sm_90, one 56-cycle round per lane on the busiest word (`sm.shared_atomic_cas_ops`; the round is "
        "derived from the calibrated latencies, not fitted). Every round re-executes the loop's load and "
        "compare-and-swap, so each takes the banks and its sub-core's path again, the compare-and-swap "
        "carrying the lanes that lost before (timing/casloop.py: 4 + 3 + 2 + 1 wavefronts for 4 lanes on a "
        "word): " + _errors(v, "kmeans_accumulate") + " (-76.5% with one lane a round, -41.2% with the "
        "first round's wavefronts alone, until 2026-11-29). The round's length is not measured on the card; "
        "its ATOMS.CAST may take longer than a load (benchmarks/hw/smem_atomics.cu measures it on the card).",
        "- **L2 near/far halves: modelled.** `l2.far_latency`: an SM's read of a line whose home slice is in "
        "the other half of the L2 pays the crossing (457 cycles load to use against 261 near) and leaves a copy "
        "in the reader's half that serves its later reads at the near latency until a write or atomic drops it "
        "(timing/l2.py). Calibrated on pointer_chase.32MB (" + _figure(v, "pointer_chase.32MB") + "; first "
        "touches, about half of them far) with the near:far ratio published for Ampere (1.75, no Hopper figure "
        "is public). pointer_chase.256KB (" + _figure(v, "pointer_chase.256KB") + ") is not fitted: its second "
        "lap partly hits the card's L1, while tlpsim's 224 KB LRU L1 (below) misses every line of it. The "
        "bandwidth of the link between the halves is not "
        "modelled (no public figure).",
        "- **L1/shared carveout: modelled.** The 256 KB array is split per launch: the L1 keeps what the "
        "shared-memory carveout leaves, the smallest carveout that keeps the kernel's occupancy unless the "
        "kernel or `l1d.carveout_preference` prefers more (`l1d.shared_carveouts_kb`, timing/carveout.py; "
        "GPGPU-Sim's adaptive L1, whose ways shrink in its 4 sets). So the occupancy sweeps compare like with "
        "like: the card's padded points preferred the largest carveout, a 28 KB L1, and tlpsim's capped points "
        "now do too. Until 2026-11-29 they ran with a fixed 224 KB L1 and the card's unpadded point, with the "
        "driver's carveout and a large L1, stood in for its last N: spmv_csr and kmeans_assign looked as if "
        "the last CTAs sped them up, when the larger L1 did (3 of 6 shapes then). What the carveout alone "
        "gains (natural over padded, the same N): " + _carveout_costs(v, "spmv_csr", "kmeans_assign",
                                                                     "conv2d_smem", "mm_naive") +
        ". The card loses more to a 28 KB L1 than tlpsim's 4-set LRU L1 does (spmv_csr's gathered vector "
        "fits the large L1 on both); why is not measured here. A kernel without shared memory still reserves "
        "1 KB per CTA, so the rule as modelled gives pointer_chase's 32 CTA slots the 32 KB carveout and a "
        "224 KB L1; whether the card counts that reserve is not documented (GPGPU-Sim has no reserve and would "
        "leave all 256 KB).",
        "- **L1 banks: modelled.** The L1 takes up to 4 of an instruction's accesses a cycle, one per bank, "
        "its banks interleaved by 32-byte sector (`l1d.banks` 4, GPGPU-Sim's Volta value and sector "
        "interleaving, cited in the preset), and looks up as many a cycle. Until 2026-11-29 the setting was "
        "read but nothing used it, and every access took the L1 one a cycle: a divergent load, one sector in "
        "each of 32 lines, held the unit 32 cycles where it now takes about 8. " + _errors(
            v, "spmv_csr_scalar", "sgemm_naive", "transpose_naive", "btree_range", "dct8x8_forward") +
        " (+22.8%, +36.5%, +18.8%, -13.4% and +6.8% before).",
        "- **Instruction fetch: modelled.** A 128 KB L1I whose misses go to the L2 (GPGPU-Sim's Volta "
        "geometry) and the stream buffer Huerta et al. found in NVIDIA's recent SMs (arXiv:2503.20481, §5.2): "
        "a miss starts a stream at the next line, whose lines are requested one a cycle, at most 16 in flight, "
        "and the stream keeps 16 lines ahead of the fetches that use it (`l1i.prefetch_lines`, "
        "timing/iprefetch.py). An SM's first fetch of a kernel waits one L2 round trip and the code behind it "
        "streams in: " + _errors(v, "raycast", "lud_perimeter", "sgemm_tiled", "cutcp_slice") + " (-54.3%, "
        "-43.4%, -6.8% and -11.2% with Accel-Sim's perfect instruction cache, which the preset had before; "
        "without the prefetcher every line is a serial L2 round trip and sgemm_tiled's 43 lines per SM made it "
        "+72.3%). The start-up offsets move memory-bound one-wave kernels both ways: " + _errors(v, "scalarprod",
        "dct8x8_forward") + " (+22.6% and -2.6% with the perfect cache; scalarprod's busiest SM waits longer on "
        "a saturated memory system, 2,419 cycles a request). The card's buffer depth is Huerta et al.'s "
        "estimate for Ampere, not measured on Hopper (benchmarks/hw/icache_cold.cu measures it).",
        "- **Scheduler order: [Q]'s.** The four sub-cores' schedulers share the LD/ST unit and its path into "
        "shared memory; GPGPU-Sim 4.x lets the first of them change every cycle (`shader_core_ctx::issue`, "
        "`Issue_Prio`), where tlpsim ran scheduler 0 first every cycle until 2026-11-29, so its warps always "
        "reached the shared unit first and those of scheduler 3 last (`sm.scheduler_order = \"rotate\"`, "
        "docs/validation.md, \"The schedulers take turns\"). With the turns: " + _errors(v, "sgemm_naive",
                                                                                      "transpose_naive")
        + " (+53.8% and +31.6% before); all 17 launches 19.5% / r 0.946 before, and conv2d_smem's sweep, "
        "which fell at 8 CTAs per SM where the card's keeps rising, now rises as the card's does.",
        "- **What the rest points to (not modelled yet).** Launches of one or two CTA waves that read "
        "memory run too slow: " + _errors(v, "spmv_csr_scalar", "transpose_naive", "histo_cta", "sgemm_tiled")
        + ". What they share is the start of a wave, where tlpsim's largest cost is the cold "
        "instruction fetch: all 132 SMs ask one L2 slice for each code line at once, and its MSHRs merge 4 "
        "requests a line ([Q]), so the rest retry (blackscholes at 8 CTAs, launch latency aside: 7,592 cycles, "
        "6,140 with a perfect instruction cache, 7,195 with the merge unlimited). The card's cold start is not "
        "measured (benchmarks/hw/icache_cold.cu would; GPGPU-Sim's Volta model sidesteps it with a perfect "
        "instruction cache). Too fast: "
        + _errors(v, "raycast", "kmeans_accumulate") + " (kmeans_accumulate's loop round is unmeasured, "
        "above). Raycast, not explained, is one wave of latency-bound warps; the "
        "`sqrt.rn`/`div.rn` that ptxas expands into multi-instruction sequences are not what it lacks (the SFU "
        "latency at 40 instead of 18 and the fp32 divide's at 72 instead of 36 add 9 %), nor are cold "
        "instruction fetches (above).",
        "- **Not modelled:** the card's cost per "
        "iteration of smem_stride.tput's loop (0.8 cycles an access at every stride: about 26 cycles per 32 "
        "loads, near one shared load's latency, as if each iteration waited for its last load), the extra FMA issue cost warp 0 sees at 8 warps "
        "(dep_chain.fma.256), the card's taken-branch cost in dep_chain's loop (its SASS, like the list "
        "order, issues the loop counter inside the chain; the card's 4.5 cycles per op leave about 10 cycles "
        "per 32-op iteration to the branch, tlpsim's 4.2 about 6)."]


def _r_sensitivity(v: dict) -> list[str]:
    """Which launches r hinges on: r over all compared launches with each one made exact in turn."""
    rows = [r for r in v["launches"] if r["tlpsim_us"] is not None]
    if len(rows) < 3:
        return []
    ours, gpu = [r["tlpsim_us"] for r in rows], [r["gpu_us"] for r in rows]
    exact = sorted(((pearson(ours[:i] + [gpu[i]] + ours[i + 1:], gpu), i) for i in range(len(rows))), reverse=True)
    (r1, a), (r2, b) = exact[0], exact[1]
    return ["", f"What r hinges on: made exact, {rows[a]['kernel']} ({_pct(rows[a]['rel_err'])}) alone would raise "
            f"r over all {len(rows)} launches from {_r(pearson(ours, gpu))} to {_r(r1)}; the next, "
            f"{rows[b]['kernel']} ({_pct(rows[b]['rel_err'])}), to {_r(r2)}. The launches span {min(gpu):.0f} to "
            f"{max(gpu):.0f} µs on the GPU, a narrow range against errors of the MAE's size."]


def _floor_summary(v: dict) -> str:
    a = (v.get("summary") or {}).get("floor") or {}
    if not a.get("launches"):
        return "uncompared (none simulated)"
    return (f"at MAE {_pct(a['mae'], False)}, mean signed error {_pct(a['mean_signed'])} over "
            f"{a['launches']} workloads")


def _carveout_costs(v: dict, *programs: str) -> str:
    """'program GPU ×a, tlpsim ×b': each sweep's natural point over its padded point at the
    same N, i.e. what the driver's carveout (a large L1) gains over the largest (28 KB)."""
    out = []
    for sw in v.get("sweeps", []):
        nat = sw.get("natural") or {}
        if sw["program"] not in programs or not sw["gpu_us"] or None in (nat.get("gpu_us"), nat.get("tlpsim_us")) \
                or sw["tlpsim_us"][-1] is None:
            continue
        out.append(f"{sw['program']} GPU ×{nat['gpu_us'] / sw['gpu_us'][-1]:.2f}, "
                   f"tlpsim ×{nat['tlpsim_us'] / sw['tlpsim_us'][-1]:.2f}")
    return "; ".join(out) or "no sweep compared"


def _figure(v: dict, fid: str) -> str:
    """'GPU x, tlpsim y (±z%)' of one microbenchmark figure, or 'not run'."""
    for f in v.get("figures", []):
        if f["id"] == fid and f.get("tlpsim") is not None:
            return f"GPU {f['gpu']:.1f}, tlpsim {f['tlpsim']:.1f} cycles, {_pct(f['rel_err'])}"
    return "not run"


def render(v: dict, images: dict[str, str] | None = None, command: str = "") -> str:
    images = images or {}
    o, s, t = v["options"], v["summary"], v["summary"]["targets"]
    dev = v["hardware"]["device"]
    out = [f"# Validation against a real {dev}", ""]
    out += [f"tlpsim's `{o['config']}` preset ({o['compile']['toolchain']} {o['compile']['arch']}, "
            f"{o['core_clock_mhz']:.0f} MHz) against measurements of the {dev} in `{v['hardware']['dir']}`: "
            "simulated kernel time (cycles / core clock) against the CUDA-event time of each launch, the shape "
            "of the CTA-occupancy sweeps, and the calibration microbenchmarks. No figure is fitted per kernel: "
            "the preset's latencies are calibrated on the microbenchmarks only, and a miss stays a miss.", ""]
    if command:
        out += ["Regenerate with:", "", f"    {command}", ""]
    out += [f"tlpsim {v['tlpsim'].get('tlpsim', '')}, model commit {v['tlpsim'].get('model_commit') or '–'}; "
            f"wall time {v['wall_s'] / 60:.1f} min with {o['workers']} worker(s), {v['cpu_s'] / 60:.1f} CPU-minutes "
            f"in the jobs (about {v['cpu_s'] / 120:.0f} min on two idle cores) "
            f"(1-min load {v['loadavg_1min_start_end'][0]} → {v['loadavg_1min_start_end'][1]})"
            + (" — **interrupted**, partial results" if v["interrupted"] else "") + ".", ""]
    out += ["## Summary", "",
            "| set | launches | MAE | r | r (log) | mean signed error | targets (MAE ≤ 25%, r ≥ 0.95) |",
            "|---|---:|---:|---:|---:|---:|---|"]
    for key, label in (("small", f"`small`, launches ≥ {o['min_us']:g} µs on the GPU"),
                       ("paper", "`paper` subset: " + ", ".join(o["paper_subset"])), ("all", "all")):
        a = s[key]
        met = None if not a["launches"] else (a["mae"] <= t["mae"] and (a["pearson_r"] or 0) >= t["pearson_r"])
        failed = f" (+{a['failed']} failed)" if a["failed"] else ""
        out.append(f"| {label} | {a['launches']}{failed} | "
                   f"{_pct(a['mae'], False)} | {_r(a['pearson_r'])} | {_r(a['log_pearson_r'])} | "
                   f"{_pct(a['mean_signed'])} | {_verdict(met)} |")
    out += _r_sensitivity(v)
    m = s["micro"]
    out += ["", f"Microbenchmarks: {m['within']} of {m['figures']} figures within {100 * t['micro_rel']:.0f}% "
            f"(MAE {_pct(m['mae'], False)}). Occupancy sweeps: {s['sweeps']['match']} of {s['sweeps']['compared']} "
            "with the GPU's shape and best N (±1). The occupancy rule itself equals the card's on every sweep "
            "point (tests/config/test_h200_occupancy.py).", ""]
    out += ["For scale, published correlations of cycle counts against real GPUs:", "",
            "| simulator | cycle MAE | over |", "|---|---:|---|"]
    for name, err, what in ACCEL_SIM:
        out.append(f"| {name} | {err} | {what} |")
    a = s["all"]
    out += [f"| tlpsim `{o['config']}`, PTX, {dev} (this page) | {_pct(a['mae'], False)} | "
            f"{a['launches']} launches of {len({(r['size'], r['workload']) for r in v['launches']})} workload "
            "runs |", "",
            "Accel-Sim's figure replays the SASS the GPU ran; tlpsim simulates PTX, issued in the order ptxas "
            "lays out the SASS (`gpu.block_schedule`), not the SASS's own instructions: on the kernels measured "
            "the SASS executes 0.87 to 1.53 times the PTX's warp instructions (benchmarks/ptx_vs_sass.py). The two "
            "figures are over different workloads and GPUs: they give the scale, not a ranking.", ""]
    if "scatter" in images:
        out += [f"![kernel time per launch]({images['scatter']})", ""]
    out += ["### Where it falls short, and why", ""] + _shortfalls(v) + [""]
    out += ["## Launches", "",
            "| size | workload | # | kernel | grid × block | GPU µs | tlpsim µs | error | CTAs/SM (limit) |",
            "|---|---|---:|---|---|---:|---:|---:|---|"]
    for r in sorted(v["launches"], key=lambda r: (r["size"], r["workload"], r["ordinal"])):
        g = "×".join(map(str, r["grid"])) + " × " + "×".join(map(str, r["block"]))
        err = _pct(r["rel_err"]) if r["error"] is None else f"failed: {r['error']}"
        lim = f"{r['ctas_per_sm']} ({r['limited_by']})" if r["ctas_per_sm"] is not None else "–"
        out.append(f"| {r['size']} | {r['workload']} | {r['ordinal']} | {r['kernel']} | {g} | {_us(r['gpu_us'])} | "
                   f"{_us(r['tlpsim_us'])} | {err} | {lim} |")
    out += _floor_section(v)
    out += ["", "## Left out", ""]
    left = v["left_out"]
    by: dict[tuple[str, str], list[dict]] = {}
    for x in left:
        by.setdefault((x["size"], x["why"]), []).append(x)
    out.append(f"Launches shorter than {o['min_us']:g} µs on the GPU are not among the targets (launch overhead and "
               "the timer's ±0.5 µs dominate them; each workload's shortest one-CTA launch is compared apart, "
               "above, as the check of the launch latency). Of the longer ones, these were not simulated (they "
               "ran functionally, so the programs stayed correct and verified):")
    out.append("")
    for (size, why), xs in sorted(by.items()):
        wls = sorted({x["workload"] for x in xs})
        out.append(f"- `{size}`, {why}: {len(xs)} launches ({sum(x['us'] for x in xs):,.0f} GPU-µs) of "
                   + ", ".join(wls))
    for size, skipped in sorted(v["hardware"]["skipped"].items()):
        if skipped:
            out.append(f"- `{size}`, not measured on the GPU: " + "; ".join(f"{k} ({w})" for k, w in
                                                                           sorted(skipped.items())))
    out += ["", "## Occupancy sweeps", "",
            "Resident CTAs per SM limited to N: on the GPU by padding dynamic shared memory, in tlpsim by a CTA "
            "cap (gpu.max_ctas_per_sm); both with the largest shared-memory carveout preferred, as the GPU's "
            "padded points were, so the L1 keeps only what it leaves (28 KB of 256 on the H200; "
            "l1d.carveout_preference 100). The last N is the kernel's own occupancy, unpadded. The shape is "
            "judged on these points. The natural point is that occupancy with the driver's own carveout (the "
            "smallest that keeps it, so the largest L1): its ratio to the padded point at the same N is what "
            "the carveout alone costs.", ""]
    if "sweeps" in images:
        out += [f"![occupancy sweeps]({images['sweeps']})", ""]
    out += ["| program | N | GPU µs | tlpsim µs | GPU shape (best N) | tlpsim shape (best N) | match | natural: "
            "GPU µs (× padded) | natural: tlpsim µs (× padded) |",
            "|---|---|---|---|---|---|---|---:|---:|"]
    for sw in v["sweeps"]:
        g, ours = sw["gpu"], sw["ours"]
        nat = sw.get("natural") or {}
        out.append(f"| {sw['program']} | {', '.join(map(str, sw['n']))} | "
                   f"{', '.join(_us(x) for x in sw['gpu_us'])} | {', '.join(_us(x) for x in sw['tlpsim_us'])} | "
                   f"{g['shape'] if g else '–'} ({g['best_n'] if g else '–'}) | "
                   f"{ours['shape'] if ours else '–'} ({ours['best_n'] if ours else '–'}) | "
                   f"{'yes' if sw['match'] else ('–' if sw['match'] is None else '**no**')} | "
                   f"{_natural(nat.get('gpu_us'), sw['gpu_us'])} | {_natural(nat.get('tlpsim_us'), sw['tlpsim_us'])} |")
    gone = v.get("sweeps_left_out") or []
    if gone:
        out += ["", "Not compared: " + "; ".join(f"{x['sweep']} ({x['why']})" for x in gone) + "."]
    out += ["", "## Microbenchmarks", "",
            "In-kernel `%clock` intervals of warp 0 divided by the timed operations, on the GPU (native nvcc "
            "-O3 sm_90 build) and in tlpsim (the same source compiled to sm_90 PTX, clock read at issue).", "",
            "| figure | unit | GPU | tlpsim | error |", "|---|---|---:|---:|---:|"]
    for f in v["figures"]:
        err = _pct(f["rel_err"])
        if f["rel_err"] is not None and abs(f["rel_err"]) > t["micro_rel"]:
            err = f"**{err}**"
        out.append(f"| {f['id']} | {f['unit']} | {f['gpu']:.2f} | "
                   f"{'–' if f['tlpsim'] is None else format(f['tlpsim'], '.2f')} | {err} |")
    failed = [j for j in v["jobs"] if j["error"]]
    if failed:
        out += ["", "## Failed jobs", ""] + [f"- {j['kind']} {j['name']}: {j['error']}" for j in failed]
    return "\n".join(out) + "\n"


def _floor_section(v: dict) -> list[str]:
    """The launch-bound check: each workload's shortest one-CTA launch, most of whose time on the
    card is the launch itself, so it tests gpu.kernel_launch_latency (not among the targets)."""
    rows = v.get("floor") or []
    if not rows:
        return []
    a = v["summary"].get("floor") or {}
    out = ["", "## Launch-bound launches", "",
           "Each workload's shortest one-CTA launch at `small` (under the comparison's "
           f"{v['options']['min_us']:g} µs): the CTA's own work is a few hundred to a few thousand cycles, so "
           "most of the card's time is the launch itself, the front end's work before the grid reaches an SM. "
           "tlpsim models it as GPGPU-Sim does, a fixed wait before the first CTA that the launch's cycles "
           "include (`gpu.kernel_launch_latency`, GPGPU-Sim's 5,000 cycles in the preset, not fitted). These "
           f"launches are not among the targets: MAE {_pct(a.get('mae'), False)}, mean signed error "
           f"{_pct(a.get('mean_signed'))} over {a.get('launches', 0)}.", "",
           "| workload | # | kernel | block | GPU µs | tlpsim µs | of which launch latency | error |",
           "|---|---:|---|---|---:|---:|---:|---:|"]
    lat_us = v["options"].get("kernel_launch_latency", 0) / v["options"]["core_clock_mhz"]
    for r in sorted(v["floor"], key=lambda r: (r["workload"], r["ordinal"])):
        err = _pct(r["rel_err"]) if r["error"] is None else f"failed: {r['error']}"
        out.append(f"| {r['workload']} | {r['ordinal']} | {r['kernel']} | {'×'.join(map(str, r['block']))} | "
                   f"{_us(r['gpu_us'])} | {_us(r['tlpsim_us'])} | {_us(lat_us)} | {err} |")
    return out


def _natural(us: float | None, padded: list) -> str:
    """The natural point's time and its ratio to the padded point at the same N (the last)."""
    if us is None:
        return "–"
    last = padded[-1] if padded else None
    return _us(us) + (f" ({us / last:.2f})" if last else "")


def write(v: dict, out_dir: Any, doc: Any = None, command: str = "") -> dict:
    """Write validation.json, validation.md and the figures into `out_dir` and, with `doc`,
    the page there too (linking to the same figures); returns {kind: path}."""
    import json
    import os
    from pathlib import Path

    from tlpsim.validate import hw_plots
    from tlpsim.validate.output import _atomic, json_safe

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"json": "validation.json", "md": "validation.md", "scatter": "time_scatter.png",
             "sweeps": "occupancy_sweeps.png"}
    paths: dict = {}
    _atomic(out / files["json"], json.dumps(json_safe({**v, "command": command}), indent=1, default=str))
    paths["json"] = out / files["json"]
    for kind, draw in (("scatter", hw_plots.scatter), ("sweeps", hw_plots.sweep_curves)):
        target = out / files[kind]
        if draw(v, target) is not None:
            paths[kind] = target
        elif target.exists():
            target.unlink()
    imgs = {k: files[k] for k in ("scatter", "sweeps") if k in paths}
    _atomic(out / files["md"], render(v, imgs, command))
    paths["md"] = out / files["md"]
    if doc:
        d = Path(doc)
        d.parent.mkdir(parents=True, exist_ok=True)
        rel = {k: os.path.relpath(out.resolve() / files[k], d.parent.resolve()) for k in imgs}
        _atomic(d, render(v, rel, command))
        paths["doc"] = d
    return paths


def console_summary(v: dict) -> list[str]:
    s = v["summary"]
    lines = []
    for key in ("small", "paper", "all"):
        a = s[key]
        lines.append(f"{key:5s}: {a['launches']} launches, MAE {_pct(a['mae'], False)}, r {_r(a['pearson_r'])}"
                     + (f", {a['failed']} failed" if a["failed"] else ""))
    m = s["micro"]
    lines.append(f"micro: {m['within']}/{m['figures']} figures within 15%, MAE {_pct(m['mae'], False)}")
    lines.append(f"sweeps: {s['sweeps']['match']}/{s['sweeps']['compared']} match the GPU's shape and best N")
    return lines

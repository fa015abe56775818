#!/usr/bin/env python3
"""Build NVIDIA's CUDA samples with `tlpsim nvcc` and run them under `tlpsim exec`.

    .venv/bin/python scripts/run_cuda_samples.py PATH/TO/cuda-samples [--only vectorAdd,matrixMul]
        [--mode functional|timing] [--timing vectorAdd,matrixMul] [--build-dir DIR] [--timeout S]
        [--archs "75 80 86 87 89 90 100 110 120"] [--markdown]

PATH is a checkout of github.com/NVIDIA/cuda-samples that you obtained yourself;
this script downloads nothing and changes nothing in it. Each sample is built the
way its CMakeLists.txt builds it (the repository's CMake settings: C++17,
`--extended-lambda`, `-lineinfo`, `-Wno-deprecated-gpu-targets`, position-independent
code, CUDA_SEPARABLE_COMPILATION, i.e. `-rdc=true` and a device link, for every
architecture of CMAKE_CUDA_ARCHITECTURES, `-I Common`), with `tlpsim nvcc` as the
CUDA compiler: one `-c` step per source, then one link step that device-links.
Host-only .cpp files are compiled by `tlpsim nvcc` too (nvcc hands them to the host
compiler with the CUDA include path, as CMake's CUDAToolkit include does).

The programs run unmodified in functional mode and, if correct there, in timing mode
(--timing), with problem sizes reduced only through their own command-line options
(the ARGS below). The table gives, per program: builds unmodified, runs (exit status 0,
no kernel fault, nothing unsupported), correct (the sample's own verdict: its pass
message, or its exit status where that is the result of its own check; "-" if it checks
nothing), and the wall seconds of `tlpsim exec` in each mode (with the simulated cycles
in timing mode). Samples that depend on runtime work of another branch (textures, CUDA
graphs, cuRAND, thrust) or that have no option to make them small enough are listed
under the table, not run (`--only NAME` runs one anyway).

    --jobs 2 --results FILE    two at a time; keep outcomes in FILE and skip those already there
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

CMAKE_ARCHS = "75 80 86 87 89 90 100 110 120"
CMAKE_FLAGS = ["-std=c++17", "--extended-lambda", "-Wno-deprecated-gpu-targets", "-lineinfo", "-Xcompiler=-fPIC"]


@dataclass
class Sample:
    name: str
    directory: str                       # under Samples/
    sources: list[str]
    args: list[str] = field(default_factory=list)
    why_args: str = ""
    # how correctness shows: "verdict" (the program prints `passed` and exits 0), "exit" (its
    # exit status is the result of its own check against a CPU reference), "none" (it has no check)
    check: str = "verdict"
    passed: str = r"Result = PASS|Test passed|Test PASSED|PASSED|\bPASS\b"
    timeout: float = 600
    host_flags: list[str] = field(default_factory=list)   # what the sample's CMakeLists adds (OpenMP)
    expect_fault: bool = False           # simpleAssert's kernel fails on purpose (a device assert)
    needs: str = ""                      # not run: it depends on runtime work done elsewhere


SAMPLES = [
    Sample("vectorAdd", "0_Introduction/vectorAdd", ["vectorAdd.cu"]),
    Sample("matrixMul", "0_Introduction/matrixMul", ["matrixMul.cu"],
           ["-wA=64", "-hA=64", "-wB=64", "-hB=64"], "301 launches of the 320x320 x 320x640 product by default"),
    Sample("transpose", "6_Performance/transpose", ["transpose.cu"], ["-dimX=64", "-dimY=64"],
           "8 kernels x 101 launches on a 1024x1024 matrix by default"),
    Sample("reduction", "2_Concepts_and_Techniques/reduction", ["reduction.cpp", "reduction_kernel.cu"],
           ["-n=32768"], "2^24 elements x 101 launches by default"),
    Sample("simpleTemplates", "0_Introduction/simpleTemplates", ["simpleTemplates.cu"],
           passed=r"Test Results: 0 Failures"),
    Sample("template", "0_Introduction/template", ["template.cu", "template_cpu.cpp"], check="exit"),
    Sample("clock", "0_Introduction/clock", ["clock.cu"], check="none"),
    Sample("simpleAtomicIntrinsics", "0_Introduction/simpleAtomicIntrinsics",
           ["simpleAtomicIntrinsics.cu", "simpleAtomicIntrinsics_cpu.cpp"], passed=r"completed, returned OK"),
    Sample("asyncAPI", "0_Introduction/asyncAPI", ["asyncAPI.cu"], check="exit"),
    Sample("simpleCallback", "0_Introduction/simpleCallback", ["simpleCallback.cu", "multithreading.cpp"],
           passed=r"^Success$"),
    Sample("simpleAssert", "0_Introduction/simpleAssert", ["simpleAssert.cu"],  # its kernel fails on purpose
           passed=r"Device assert failed as expected(.|\n)*completed, returned OK", expect_fault=True),
    Sample("simplePrintf", "0_Introduction/simplePrintf", ["simplePrintf.cu"], check="none"),
    Sample("simpleVoteIntrinsics", "0_Introduction/simpleVoteIntrinsics", ["simpleVoteIntrinsics.cu"],
           check="exit"),
    Sample("simpleZeroCopy", "0_Introduction/simpleZeroCopy", ["simpleZeroCopy.cu"], check="exit"),
    Sample("simpleOccupancy", "0_Introduction/simpleOccupancy", ["simpleOccupancy.cu"]),
    Sample("simpleCooperativeGroups", "0_Introduction/simpleCooperativeGroups", ["simpleCooperativeGroups.cu"],
           check="none"),
    Sample("fp16ScalarProduct", "0_Introduction/fp16ScalarProduct", ["fp16ScalarProduct.cu"]),
    Sample("cudaOpenMP", "0_Introduction/cudaOpenMP", ["cudaOpenMP.cu"], check="exit",
           host_flags=["-Xcompiler=-fopenmp", "-lgomp"]),
    Sample("deviceQuery", "1_Utilities/deviceQuery", ["deviceQuery.cpp"]),
    Sample("scalarProd", "2_Concepts_and_Techniques/scalarProd", ["scalarProd.cu", "scalarProd_cpu.cpp"]),
    Sample("shfl_scan", "2_Concepts_and_Techniques/shfl_scan", ["shfl_scan.cu"], check="exit"),
    Sample("threadFenceReduction", "2_Concepts_and_Techniques/threadFenceReduction", ["threadFenceReduction.cu"],
           ["-n=16384"], "2^20 elements by default", check="exit"),
    Sample("inlinePTX", "2_Concepts_and_Techniques/inlinePTX", ["inlinePTX.cu"], check="exit"),
    Sample("interval", "2_Concepts_and_Techniques/interval", ["interval.cu"], check="exit"),
    Sample("warpAggregatedAtomicsCG", "3_CUDA_Features/warpAggregatedAtomicsCG", ["warpAggregatedAtomicsCG.cu"]),
    Sample("binaryPartitionCG", "3_CUDA_Features/binaryPartitionCG", ["binaryPartitionCG.cu"], check="exit"),
    Sample("quasirandomGenerator", "5_Domain_Specific/quasirandomGenerator",
           ["quasirandomGenerator.cpp", "quasirandomGenerator_gold.cpp", "quasirandomGenerator_kernel.cu"],
           check="exit"),
    Sample("SobolQRNG", "5_Domain_Specific/SobolQRNG",
           ["sobol.cpp", "sobol_gold.cpp", "sobol_gpu.cu", "sobol_primitives.cpp"],
           ["-vectors=4096", "-dimensions=16"], "100000 vectors x 100 dimensions by default", check="exit"),
    Sample("LargeKernelParameter", "6_Performance/LargeKernelParameter", ["LargeKernelParameter.cu"]),
    Sample("streamOrderedAllocation", "2_Concepts_and_Techniques/streamOrderedAllocation",
           ["streamOrderedAllocation.cu"]),
    Sample("newdelete", "3_CUDA_Features/newdelete", ["newdelete.cu"], check="exit"),
    # runtime features implemented on another branch (issue 28 §2): listed, not run here
    Sample("simpleTexture", "0_Introduction/simpleTexture", ["simpleTexture.cu"], needs="textures"),
    Sample("simplePitchLinearTexture", "0_Introduction/simplePitchLinearTexture", ["simplePitchLinearTexture.cu"],
           needs="textures"),
    Sample("bindlessTexture", "3_CUDA_Features/bindlessTexture", ["bindlessTexture.cpp", "bindlessTexture_kernel.cu"],
           needs="textures"),
    Sample("simpleCudaGraphs", "3_CUDA_Features/simpleCudaGraphs", ["simpleCudaGraphs.cu"], needs="graphs"),
    Sample("MC_EstimatePiP", "2_Concepts_and_Techniques/MC_EstimatePiP",
           ["src/main.cpp", "src/piestimator.cu", "src/test.cpp"], needs="cuRAND"),
    Sample("radixSortThrust", "2_Concepts_and_Techniques/radixSortThrust", ["radixSortThrust.cu"], needs="thrust"),
    # correct earlier but too long for this table on a shared 2-core machine (no size option)
    Sample("histogram", "2_Concepts_and_Techniques/histogram",
           ["histogram256.cu", "histogram64.cu", "histogram_gold.cpp", "main.cpp"],
           needs="time: a fixed 64 MB input x 34 launches (260 s; `--only histogram` runs it)"),
    Sample("simpleStreams", "0_Introduction/simpleStreams", ["simpleStreams.cu"],
           needs="time: 50 launches of a 16M-thread kernel, no size option"),
    Sample("scan", "2_Concepts_and_Techniques/scan", ["main.cpp", "scan_gold.cpp", "scan.cu"],
           needs="time: 13M-element arrays, 100 iterations at each of 9 sizes, no options"),
    Sample("BlackScholes", "5_Domain_Specific/BlackScholes", ["BlackScholes.cu", "BlackScholes_gold.cpp"],
           needs="time: 512 launches over 4M options, no options"),
]


def tlpsim_command() -> list[str]:
    exe = Path(sys.executable).with_name("tlpsim")
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "tlpsim.cli"]


def gencode(archs: str) -> list[str]:
    return [f"--generate-code=arch=compute_{a},code=[compute_{a},sm_{a}]" for a in archs.split()]


def build(sample: Sample, root: Path, out: Path, archs: str, log) -> tuple[bool, float, Path, str]:
    """Compile each source with -rdc=true, then link (nvcc device-links); True if it built."""
    src_dir = root / "Samples" / sample.directory
    out.mkdir(parents=True, exist_ok=True)
    tl = tlpsim_command()
    includes = [f"-I{root / 'Common'}", f"-I{src_dir}", *([f"-I{src_dir / 'inc'}"] if (src_dir / "inc").is_dir() else [])]
    common = [*CMAKE_FLAGS, *gencode(archs), "-rdc=true", *includes,
              *[f for f in sample.host_flags if not f.startswith("-l")]]
    t0 = time.perf_counter()
    exe = out / sample.name
    sources = [src_dir / s for s in sample.sources]
    if exe.is_file() and all(exe.stat().st_mtime > p.stat().st_mtime for p in sources) \
            and (out / "build-options.txt").is_file() and (out / "build-options.txt").read_text() == repr(common):
        log(f"{exe} is newer than its sources and was built with the same options: not rebuilt")
        return True, 0.0, exe, ""
    (out / "build-options.txt").unlink(missing_ok=True)
    objects = []
    for s in sample.sources:
        obj = out / (Path(s).name + ".o")
        cmd = [*tl, "nvcc", *common, "-c", str(src_dir / s), "-o", str(obj)]
        log(" ".join(shlex.quote(c) for c in cmd))
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            log(r.stdout + r.stderr)
            return False, time.perf_counter() - t0, out / sample.name, first_error(r.stdout + r.stderr)
        objects.append(str(obj))
    cmd = [*tl, "nvcc", *gencode(archs), "-rdc=true", *objects, *sample.host_flags, "-o", str(exe)]
    log(" ".join(shlex.quote(c) for c in cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        log(r.stdout + r.stderr)
    else:
        (out / "build-options.txt").write_text(repr(common))
    return r.returncode == 0, time.perf_counter() - t0, exe, first_error(r.stdout + r.stderr)


def first_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("tlpsim nvcc:")]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return (errors[0] if errors else (lines or [""])[-1])[:160]


@dataclass
class Outcome:
    runs: bool            # exited as the program does when it completes, no kernel fault, nothing unsupported
    correct: str          # "yes", "no", "-" (the program has no check)
    seconds: float
    why: str = ""
    cycles: int | None = None


def run(sample: Sample, exe: Path, mode: str, run_dir: Path | None, timeout: float, log) -> Outcome:
    cmd = [*tlpsim_command(), "exec", "--mode", mode, "--timeout", str(timeout)]
    if run_dir is not None:
        cmd += ["--run-dir", str(run_dir)]
    cmd += ["--", str(exe), *sample.args]
    log(" ".join(shlex.quote(c) for c in cmd))
    t0 = time.perf_counter()
    # the samples write files (e.g. ./data/regression.dat) relative to where they run
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=exe.parent, check=False)
    wall = time.perf_counter() - t0
    log(r.stdout[-4000:] + "\n--- stderr ---\n" + r.stderr[-4000:])
    if "ran longer than --timeout" in r.stderr:
        return Outcome(False, "-", wall, f"not finished in {timeout:g} s")
    fault = "kernel fault" in r.stderr and not sample.expect_fault
    unfaithful = "this run is not the program's real behaviour" in r.stderr
    runs = r.returncode == 0 and not fault and not unfaithful
    if sample.check == "none":
        correct = "-"
    elif sample.check == "exit":
        correct = "yes" if runs else "no"
    else:
        correct = "yes" if runs and re.search(sample.passed, r.stdout, re.MULTILINE) else "no"
    if sample.check == "verdict" and re.search(r"FAIL", r.stdout):
        correct = "no"
    cycles = None
    if run_dir is not None and (run_dir / "launches.jsonl").is_file():
        import json

        rows = [json.loads(line) for line in (run_dir / "launches.jsonl").read_text().splitlines() if line.strip()]
        cycles = sum(int(row.get("cycles") or 0) for row in rows)
    why = ""
    if not runs or correct == "no":
        lines = [ln for ln in (r.stderr + r.stdout).splitlines() if ln.strip()]
        why = next((ln for ln in lines if ln.startswith("tlpsim:") and "run directory" not in ln),
                   lines[-1] if lines else "")
        why = f"exit {r.returncode}: {why[:160]}"
    return Outcome(runs, correct, wall, why, cycles)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("samples", type=Path, help="a cuda-samples checkout")
    ap.add_argument("--only", default="", help="comma-separated sample names (default: all that can run)")
    ap.add_argument("--timing", default="passed",
                    help="samples to run in timing mode too: 'passed' (those correct in functional mode, the "
                         "default), 'none', or comma-separated names")
    ap.add_argument("--build-dir", type=Path, default=Path("runs/cuda-samples"))
    ap.add_argument("--archs", default=CMAKE_ARCHS, help=f"CMAKE_CUDA_ARCHITECTURES (default: {CMAKE_ARCHS})")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per run (default: per sample)")
    ap.add_argument("--timing-timeout", type=float, default=300,
                    help="seconds per timing-mode run (default 300; a longer one is reported as not finished)")
    ap.add_argument("--results", type=Path, default=None,
                    help="a JSON file keeping each sample's outcome: samples already there are not run again "
                         "(their timing run is added if it is asked for and missing), so a long table can be "
                         "made in several sittings")
    ap.add_argument("--commit", default=None, help="the checkout's commit, when it is not a git work tree")
    ap.add_argument("--jobs", type=int, default=1, help="samples built and run at once (default 1; wall "
                    "times are then each sample's own, on a busier machine)")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args(argv)
    root = args.samples.resolve()
    if not (root / "Samples").is_dir() or not (root / "Common" / "helper_cuda.h").is_file():
        print(f"{root} is not a cuda-samples checkout (no Samples/ and Common/helper_cuda.h)", file=sys.stderr)
        return 2
    commit = args.commit or subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                                           text=True, check=False).stdout.strip() or "unknown"
    names = [n for n in args.only.split(",") if n]
    unknown = set(names) - {s.name for s in SAMPLES}
    if unknown:
        print(f"unknown sample(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    chosen = [s for s in SAMPLES if s.name in names] if names else [s for s in SAMPLES if not s.needs]
    build_dir = args.build_dir.resolve()

    import json
    from dataclasses import asdict

    saved: dict[str, dict] = {}
    if args.results is not None and args.results.is_file():
        saved = json.loads(args.results.read_text())
    lock = threading.Lock()

    def keep(row: dict) -> None:
        if args.results is None:
            return
        with lock:
            saved[row["program"]] = {k: asdict(v) if isinstance(v, Outcome) else v for k, v in row.items()}
            args.results.write_text(json.dumps(saved, indent=1) + "\n")

    def one(s: Sample) -> dict:
        if s.name in saved:
            row = {k: Outcome(**v) if k in ("functional", "timing") else v for k, v in saved[s.name].items()}
            f = row.get("functional")
            wants = f is not None and "timing" not in row and (
                (args.timing == "passed" and f.runs and f.correct != "no") or s.name in args.timing.split(","))
            if not wants:
                return row
            exe = build_dir / s.name / s.name
            run_dir = build_dir / s.name / "timing-run"
            if run_dir.exists():
                shutil.rmtree(run_dir)
            with open(build_dir / s.name / "log.txt", "a", encoding="utf-8") as fh:
                print(f"[{s.name}] timing run", file=sys.stderr, flush=True)
                row["timing"] = run(s, exe, "timing", run_dir, args.timing_timeout, lambda t: fh.write(t + "\n"))
            keep(row)
            return row
        logfile = build_dir / s.name / "log.txt"
        logfile.parent.mkdir(parents=True, exist_ok=True)
        with open(logfile, "w", encoding="utf-8") as fh:
            def log(text: str, fh=fh) -> None:
                fh.write(text + "\n")
                fh.flush()

            print(f"[{s.name}] building", file=sys.stderr, flush=True)
            ok, _, exe, build_error = build(s, root, build_dir / s.name, args.archs, log)
            row: dict = {"program": s.name, "build": ok, "build_error": build_error,
                         "command": " ".join([s.name, *s.args]), "why_args": s.why_args}
            if ok:
                print(f"[{s.name}] running", file=sys.stderr, flush=True)
                row["functional"] = f = run(s, exe, "functional", None, args.timeout or s.timeout, log)
                want_timing = (args.timing == "passed" and f.runs and f.correct != "no") or \
                    s.name in args.timing.split(",")
                if want_timing:
                    run_dir = build_dir / s.name / "timing-run"
                    if run_dir.exists():
                        shutil.rmtree(run_dir)
                    row["timing"] = run(s, exe, "timing", run_dir, args.timing_timeout, log)
            f = row.get("functional")
            print(f"[{s.name}] " + (f"runs={f.runs} correct={f.correct} {f.seconds:.1f} s {f.why}" if f else
                                     f"build failed: {build_error}"), file=sys.stderr, flush=True)
            keep(row)
            return row

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        rows = list(pool.map(one, chosen))
    print_table(rows, commit, args.markdown)
    if not names:
        print_needs(args.markdown)
    return 0 if all(r.get("functional") and r["functional"].correct != "no" and r["functional"].runs
                    for r in rows) else 1


def print_table(rows: list[dict], commit: str, markdown: bool) -> None:
    heads = ["program", "builds unmodified", "runs", "correct", "command line", "functional s", "timing s (cycles)"]
    body = []
    for r in rows:
        f, t = r.get("functional"), r.get("timing")
        if f is None:
            body.append([r["program"], f"no: {r['build_error']}", "-", "-", r["command"], "-", "-"])
            continue
        runs = "yes" if f.runs else f"no ({f.why})"
        correct = f.correct if f.runs else "-"
        correct += f" ({f.why})" if f.runs and f.correct == "no" else ""
        if t is None:
            timing = "-"
        elif t.runs and t.correct != "no":
            timing = f"{t.seconds:.1f} ({t.cycles:,})" if t.cycles is not None else f"{t.seconds:.1f}"
        elif t.why.startswith("not finished"):
            timing = t.why
        else:
            timing = f"failed ({t.why})"
        body.append([r["program"], "yes", runs, correct, r["command"], f"{f.seconds:.1f}", timing])
    n = len(rows)
    built = sum(1 for r in rows if r["build"])
    ran = sum(1 for r in rows if r.get("functional") and r["functional"].runs)
    right = sum(1 for r in rows if r.get("functional") and r["functional"].runs and r["functional"].correct == "yes")
    nocheck = sum(1 for r in rows if r.get("functional") and r["functional"].runs and r["functional"].correct == "-")
    print(f"cuda-samples commit {commit}: {n} samples, {built} build unmodified, {ran} run, {right} correct by "
          f"their own check, {nocheck} without a check of their own")
    if markdown:
        print("| " + " | ".join(heads) + " |")
        print("|" + "|".join("---" for _ in heads) + "|")
        for b in body:
            b[4] = f"`{b[4]}`"
            print("| " + " | ".join(str(c).replace("|", "\\|") for c in b) + " |")
        return
    widths = [max(len(str(x)) for x in col) for col in zip(heads, *body)]
    for line in [heads, *body]:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip())


def print_needs(markdown: bool) -> None:
    waiting = [s for s in SAMPLES if s.needs]
    print()
    print("Not run here:" if not markdown else "Not run here (listed by the script):")
    for s in waiting:
        print(f"- {s.name}: " + (f"needs {s.needs} (issue 28 §2, another branch)" if not s.needs.startswith("time")
                                 else s.needs))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())

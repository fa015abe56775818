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

The programs run unmodified in functional mode (and in timing mode for the
samples named by --timing), with problem sizes reduced only through their own
command-line options (the ARGS below). The table gives, per program: build ok,
the result (PASS if the program printed its own pass message and exited 0), and
the wall time of `tlpsim exec`.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import time
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
    # the program's own success message; None: the program reports only through its exit status
    passed: str | None = r"Result = PASS|Test passed|Test PASSED|PASSED|\bPASS\b"
    timeout: float = 900


SAMPLES = [
    Sample("vectorAdd", "0_Introduction/vectorAdd", ["vectorAdd.cu"]),
    Sample("matrixMul", "0_Introduction/matrixMul", ["matrixMul.cu"],
           ["-wA=64", "-hA=64", "-wB=64", "-hB=64"], "301 launches of the 320x320 x 320x640 product by default"),
    Sample("transpose", "6_Performance/transpose", ["transpose.cu"], ["-dimX=64", "-dimY=64"],
           "8 kernels x 101 launches on a 1024x1024 matrix by default"),
    Sample("reduction", "2_Concepts_and_Techniques/reduction", ["reduction.cpp", "reduction_kernel.cu"],
           ["-n=32768"], "2^24 elements x 101 launches by default"),
    Sample("histogram", "2_Concepts_and_Techniques/histogram",
           ["histogram256.cu", "histogram64.cu", "histogram_gold.cpp", "main.cpp"]),
    Sample("scan", "2_Concepts_and_Techniques/scan", ["main.cpp", "scan_gold.cpp", "scan.cu"]),
    Sample("simpleTemplates", "0_Introduction/simpleTemplates", ["simpleTemplates.cu"],
           passed=r"Test Results: 0 Failures"),
    Sample("template", "0_Introduction/template", ["template.cu", "template_cpu.cpp"], passed=None),
    Sample("clock", "0_Introduction/clock", ["clock.cu"], passed=None),
    Sample("simpleAtomicIntrinsics", "0_Introduction/simpleAtomicIntrinsics",
           ["simpleAtomicIntrinsics.cu", "simpleAtomicIntrinsics_cpu.cpp"], passed=r"completed, returned OK"),
    Sample("asyncAPI", "0_Introduction/asyncAPI", ["asyncAPI.cu"], passed=None),
    Sample("simpleStreams", "0_Introduction/simpleStreams", ["simpleStreams.cu"]),
    Sample("BlackScholes", "5_Domain_Specific/BlackScholes", ["BlackScholes.cu", "BlackScholes_gold.cpp"]),
    Sample("convolutionSeparable", "2_Concepts_and_Techniques/convolutionSeparable",
           ["convolutionSeparable.cu", "convolutionSeparable_gold.cpp", "main.cpp"]),
]


def tlpsim_command() -> list[str]:
    exe = Path(sys.executable).with_name("tlpsim")
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "tlpsim.cli"]


def gencode(archs: str) -> list[str]:
    return [f"--generate-code=arch=compute_{a},code=[compute_{a},sm_{a}]" for a in archs.split()]


def build(sample: Sample, root: Path, out: Path, archs: str, log) -> tuple[bool, float, Path]:
    """Compile each source with -rdc=true, then link (nvcc device-links); True if it built."""
    src_dir = root / "Samples" / sample.directory
    out.mkdir(parents=True, exist_ok=True)
    tl = tlpsim_command()
    common = [*CMAKE_FLAGS, *gencode(archs), "-rdc=true", f"-I{root / 'Common'}", f"-I{src_dir}"]
    t0 = time.perf_counter()
    objects = []
    for s in sample.sources:
        obj = out / (Path(s).name + ".o")
        cmd = [*tl, "nvcc", *common, "-c", str(src_dir / s), "-o", str(obj)]
        log(" ".join(shlex.quote(c) for c in cmd))
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            log(r.stdout + r.stderr)
            return False, time.perf_counter() - t0, out / sample.name
        objects.append(str(obj))
    exe = out / sample.name
    cmd = [*tl, "nvcc", *gencode(archs), "-rdc=true", *objects, "-o", str(exe)]
    log(" ".join(shlex.quote(c) for c in cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        log(r.stdout + r.stderr)
    return r.returncode == 0, time.perf_counter() - t0, exe


def run(sample: Sample, exe: Path, mode: str, run_dir: Path | None, timeout: float, log) -> tuple[str, float, str]:
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
    ok = r.returncode == 0 and not re.search(r"FAIL", r.stdout) \
        and (sample.passed is None or re.search(sample.passed, r.stdout))
    if ok:
        return "PASS" if sample.passed else "PASS (exit 0)", wall, ""
    lines = [ln for ln in (r.stderr + r.stdout).splitlines() if ln.strip()]
    why = next((ln for ln in lines if ln.startswith("tlpsim:") and "run directory" not in ln), lines[-1] if lines
               else "")
    return f"FAIL (exit {r.returncode})", wall, why[:200]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("samples", type=Path, help="a cuda-samples checkout")
    ap.add_argument("--only", default="", help="comma-separated sample names (default: all)")
    ap.add_argument("--timing", default="", help="samples to run in timing mode as well (comma-separated)")
    ap.add_argument("--build-dir", type=Path, default=Path("runs/cuda-samples"))
    ap.add_argument("--archs", default=CMAKE_ARCHS, help=f"CMAKE_CUDA_ARCHITECTURES (default: {CMAKE_ARCHS})")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per run (default: per sample)")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args(argv)
    root = args.samples.resolve()
    if not (root / "Samples").is_dir() or not (root / "Common" / "helper_cuda.h").is_file():
        print(f"{root} is not a cuda-samples checkout (no Samples/ and Common/helper_cuda.h)", file=sys.stderr)
        return 2
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=False).stdout.strip() or "unknown"
    names = [n for n in args.only.split(",") if n]
    chosen = [s for s in SAMPLES if not names or s.name in names]
    unknown = set(names) - {s.name for s in SAMPLES}
    if unknown:
        print(f"unknown sample(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    timing = {n for n in args.timing.split(",") if n}
    build_dir = args.build_dir.resolve()
    rows = []
    for s in chosen:
        logfile = build_dir / s.name / "log.txt"
        logfile.parent.mkdir(parents=True, exist_ok=True)
        with open(logfile, "w", encoding="utf-8") as fh:
            def log(text: str, fh=fh) -> None:
                fh.write(text + "\n")
                fh.flush()

            print(f"[{s.name}] building", file=sys.stderr, flush=True)
            ok, build_s, exe = build(s, root, build_dir / s.name, args.archs, log)
            row = {"program": s.name, "build": "ok" if ok else "FAILED", "build_s": build_s,
                   "command": " ".join([s.name, *s.args]), "why_args": s.why_args}
            if ok:
                print(f"[{s.name}] running", file=sys.stderr, flush=True)
                row["result"], row["wall"], row["why"] = run(s, exe, "functional", None, args.timeout or s.timeout,
                                                             log)
                if s.name in timing:
                    run_dir = build_dir / s.name / "timing-run"
                    if run_dir.exists():
                        import shutil

                        shutil.rmtree(run_dir)
                    row["timing_result"], row["timing_wall"], row["timing_why"] = run(
                        s, exe, "timing", run_dir, args.timeout or s.timeout, log)
            else:
                row.update(result="not run", wall=0.0, why=f"build failed, see {logfile}")
            rows.append(row)
            print(f"[{s.name}] {row['result']} {row.get('wall', 0):.1f} s {row.get('why', '')}", file=sys.stderr,
                  flush=True)
    print_table(rows, commit, args.markdown)
    return 0 if all(r["result"].startswith("PASS") for r in rows) else 1


def print_table(rows: list[dict], commit: str, markdown: bool) -> None:
    heads = ["program", "build ok", "command line", "result", "wall s (functional)", "timing", "wall s (timing)"]
    body = []
    for r in rows:
        result = r["result"] + (f": {r['why']}" if r.get("why") else "")
        timing = r.get("timing_result", "-") + (f": {r['timing_why']}" if r.get("timing_why") else "")
        body.append([r["program"], r["build"], r["command"], result, f"{r['wall']:.1f}", timing,
                     f"{r['timing_wall']:.1f}" if "timing_wall" in r else "-"])
    print(f"cuda-samples commit {commit}")
    if markdown:
        print("| " + " | ".join(heads) + " |")
        print("|" + "|".join("---" for _ in heads) + "|")
        for b in body:
            print("| " + " | ".join(str(c).replace("|", "\\|") for c in b) + " |")
        return
    widths = [max(len(str(x)) for x in col) for col in zip(heads, *body)]
    for line in [heads, *body]:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip())


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())

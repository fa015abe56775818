"""Parse speed of the PTX parser in PTX lines per second.

Compiles the test corpus (tests/corpus/*.cu, cached) plus the reference PTX, then
times parsing each module (best of --repeat runs) and the whole lot.

    .venv/bin/python benchmarks/parse_speed.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tlpsim.frontend.nvcc import compile_cuda_file
from tlpsim.frontend.ptx_parser import parse_ptx

ROOT = Path(__file__).resolve().parent.parent


def corpus_ptx() -> list[tuple[str, str]]:
    out = [(p.stem, compile_cuda_file(p, arch="sm_80").ptx) for p in sorted((ROOT / "tests" / "corpus").glob("*.cu"))]
    ref = ROOT.parent / "shared" / "reference" / "kernels"
    out += [(p.name, p.read_text()) for p in sorted(ref.glob("*.ptx"))]
    return out


def best_time(text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        parse_ptx(text)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    modules = corpus_ptx()
    total_lines = 0
    total_time = 0.0
    print(f"{'module':28s} {'lines':>7s} {'ms':>8s} {'lines/s':>10s}")
    for name, text in modules:
        lines = text.count("\n")
        t = best_time(text, args.repeat)
        total_lines += lines
        total_time += t
        print(f"{name:28s} {lines:7d} {1e3 * t:8.2f} {lines / t:10.0f}")
    print(f"{'TOTAL (sum of modules)':28s} {total_lines:7d} {1e3 * total_time:8.2f} {total_lines / total_time:10.0f}")
    # one large file: every module's functions renamed apart and concatenated
    big = []
    for k, (_, text) in enumerate(modules):
        body = text.split(".address_size 64", 1)[-1]
        big.append(body.replace("_Z", f"_M{k}_Z"))
    joined = ".version 9.5\n.target sm_80\n.address_size 64\n" + "\n".join(big)
    try:
        t = best_time(joined, args.repeat)
        lines = joined.count("\n")
        print(f"{'one concatenated module':28s} {lines:7d} {1e3 * t:8.2f} {lines / t:10.0f}")
    except Exception as exc:  # concatenation can clash on module-scope names; the per-module figure stands
        print(f"(concatenated module skipped: {exc.__class__.__name__})")


if __name__ == "__main__":
    main()

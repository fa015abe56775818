"""Which short forward-branch regions ptxas turns into predication: the evidence for
tlpsim.analysis.ifconvert's bound.

    .venv/bin/pip install nvidia-cuda-nvdisasm==13.5.37     # or: pip install -e .[sass]
    .venv/bin/python benchmarks/ifconvert_vs_sass.py [--arch sm_90] [--max 30]

Every built-in workload's CUDA source is compiled to PTX (CUDA 13.5, as the h200 preset
does), the regions `if_convert` would rewrite are listed with bodies of up to --max PTX
instructions, and the module is assembled by the pinned ptxas with each PTX line tagged
(benchmarks/ptx_vs_sass.py). A region counts as predicated when no SASS branch comes
from its PTX branch's line. Prints one row per body length: regions, branches kept,
branches removed.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import ptx_vs_sass  # noqa: E402

import tlpsim  # noqa: E402
import tlpsim.analysis.ifconvert as ifconvert  # noqa: E402
from tlpsim.frontend.inline import flatten_kernel  # noqa: E402

_BRA = re.compile(r"^(@!?U?P\w+ )?BRA\b")
_KERNEL = re.compile(r'extern "C" __global__ void(?:\s+__launch_bounds__\([^)]*\))?\s+(\w+)\s*\(')


def scan(arch: str, longest: int) -> dict[int, list[int]]:
    """{body length: [regions, branches kept]} over the workloads' kernels."""
    ifconvert.MAX_REGION = longest
    rows: dict[int, list[int]] = collections.defaultdict(lambda: [0, 0])
    kernels = Path(tlpsim.__file__).parent / "workloads" / "kernels"
    for path in sorted(kernels.glob("*.cu")):
        src = path.read_text()
        names = _KERNEL.findall(src)
        if not names:
            continue
        program = tlpsim.RawKernel(src, names[0]).program
        sass = ptx_vs_sass.sass_by_line(program.compile_result.ptx, arch)
        module = program.module
        for name, fn in module.functions.items():
            if not fn.is_entry:
                continue
            flat = flatten_kernel(module, fn)
            branch_lines = {line for op, line in sass.get(name, []) if _BRA.match(op)}
            for i, end in ifconvert.regions(flat):
                row = rows[end - i - 1]
                row[0] += 1
                row[1] += flat.instructions[i].line in branch_lines
    return dict(sorted(rows.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--max", type=int, default=30, help="longest body listed (PTX instructions)")
    args = ap.parse_args()
    rows = scan(args.arch, args.max)
    print("| body (PTX instructions) | regions | branch kept | predicated |")
    print("|---:|---:|---:|---:|")
    for n, (total, kept) in rows.items():
        print(f"| {n} | {total} | {kept} | {total - kept} |")
    bound = ifconvert.MAX_REGION = 12
    short = [v for n, v in rows.items() if n <= bound]
    long_ = [v for n, v in rows.items() if n > bound]
    print(f"\nbodies <= {bound}: {sum(t - k for t, k in short)} of {sum(t for t, _ in short)} predicated; "
          f"longer: {sum(k for _, k in long_)} of {sum(t for t, _ in long_)} kept")


if __name__ == "__main__":
    main()

"""PTX against the SASS ptxas makes of it: instruction counts per launch, static and dynamic.

    .venv/bin/pip install nvidia-cuda-nvdisasm==13.5.37     # or: pip install -e .[sass]
    .venv/bin/python benchmarks/ptx_vs_sass.py sgemm_naive,spmv [--size small] [--arch sm_90] [--json]

Each workload runs functionally with traces under the `h200` compile options (CUDA
13.5, sm_90, PTX in nvcc's order) and its launches' executed warp instructions are
counted per PTX instruction. Each module's PTX is then assembled by the pinned ptxas
with `-lineinfo`, after tagging every PTX instruction with a `.loc` naming its own
PTX line, and disassembled by nvdisasm 13.5 (`-g`): every SASS instruction is
attributed to the PTX line it came from (the SASS itself is the same as without the
tags). The SASS dynamic count of a launch is estimated as the sum over executed PTX
instructions of (times executed) x (SASS instructions attributed to its line) / (copies
of its block in the SASS: ptxas unrolls loops, so a block's memory instructions
appear once per copy). "no SASS" is the share of executed PTX instructions that
left no SASS instruction (folded into addressing modes, constant-bank operands,
or removed). docs/validation-h200.md quotes this table.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import tlpsim
from tlpsim.frontend.toolkit import find_toolkit
from tlpsim.workloads.registry import get_workload

_SASS = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);")
_LINE = re.compile(r'//## File "k\.ptx", line (\d+)')
_FUNC = re.compile(r"^\s*\.text\.(\S+):")
_SASS_MEM = re.compile(r"^(@!?U?P\w+ )?(LDG|STG|LDS|STS|LD|ST|LDL|STL|ATOM|ATOMS|ATOMG|RED)\b")


def tag_lines(ptx: str) -> str:
    """`ptx` with a `.loc 1 LINE 0` before every instruction naming its own line."""
    out = []
    for number, line in enumerate(ptx.splitlines(), 1):
        s = line.strip()
        if s.startswith((".loc", ".file")):
            out.append("//")
        elif s.startswith(".address_size"):
            out.append(line + ' .file 1 "k.ptx"')
        elif s.endswith(";") and not s.startswith((".", "//")):
            out.append(f".loc 1 {number} 0 {line}")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def nvdisasm() -> Path:
    path = find_toolkit().bin_dir / "nvdisasm"
    if not path.exists():
        sys.exit("nvdisasm is not installed: .venv/bin/pip install nvidia-cuda-nvdisasm==13.5.37")
    return path


def sass_by_line(ptx: str, arch: str) -> dict[str, list[tuple[str, int]]]:
    """Per function: its SASS instructions (text, PTX line), the never-executed tail dropped."""
    with tempfile.TemporaryDirectory() as d:
        src, cubin = Path(d) / "k.ptx", Path(d) / "k.cubin"
        src.write_text(tag_lines(ptx))
        subprocess.run([str(find_toolkit().ptxas), f"-arch={arch}", "-lineinfo", str(src), "-o", str(cubin)],
                       check=True, capture_output=True)
        dis = subprocess.run([str(nvdisasm()), "-g", "-c", str(cubin)], check=True, capture_output=True,
                             text=True).stdout
    funcs: dict[str, list[tuple[str, int]]] = {}
    cur: list[tuple[str, int]] | None = None
    line = 0
    for raw in dis.splitlines():
        if m := _FUNC.match(raw):
            cur, line = funcs.setdefault(m.group(1), []), 0
        elif m := _LINE.search(raw):
            line = int(m.group(1))
        elif (m := _SASS.search(raw)) and cur is not None:
            cur.append((m.group(2).strip(), line))
    for ins in funcs.values():  # padding and the final self-branch
        while ins and (ins[-1][0].startswith("NOP") or re.match(r"BRA `\(\.L_x_\d+\)\s*$", ins[-1][0])):
            ins.pop()
    return funcs


def launch_counts(fn, pcs: np.ndarray, sass: list[tuple[str, int]]) -> dict:
    per_line = collections.Counter(line for _, line in sass)
    mem_per_line = collections.Counter(line for op, line in sass if _SASS_MEM.match(op))
    ptx_per_line = collections.Counter(i.line for i in fn.instructions if not i.synthetic)
    copies: dict[int, int] = {}
    for i in fn.instructions:
        if i.base in ("ld", "st", "atom", "red") and i.space != "param" and mem_per_line.get(i.line):
            copies[i.block] = min(copies.get(i.block, 1 << 30), mem_per_line[i.line])
    dyn = np.bincount(pcs, minlength=len(fn.instructions))
    sass_dyn = 0.0
    no_sass = 0
    for i in fn.instructions:
        n = int(dyn[i.index])
        if not n:
            continue
        k = 0.0 if i.synthetic else per_line.get(i.line, 0) / ptx_per_line[i.line] / copies.get(i.block, 1)
        sass_dyn += n * k
        no_sass += n if k == 0 else 0
    ptx_dyn = int(dyn.sum())
    return {"ptx_static": sum(not i.synthetic for i in fn.instructions), "sass_static": len(sass),
            "ptx_dynamic": ptx_dyn, "sass_dynamic": round(sass_dyn), "sass_per_ptx": sass_dyn / max(ptx_dyn, 1),
            "ptx_without_sass": no_sass / max(ptx_dyn, 1)}


def measure(name: str, size: str, arch: str) -> list[dict]:
    with tlpsim.Device(config="h200", mode="functional", trace=True, trace_cache=False) as dev:
        get_workload(name).execute(size)
    compiled = {ck.source.name: ck for ck in dev._compiled.values()}
    sass_of: dict[int, dict] = {}
    rows = []
    for k, rec in enumerate(dev.launches):
        ck = compiled[rec.mangled]
        if id(ck.module) not in sass_of:
            sass_of[id(ck.module)] = sass_by_line(ck.module.source, arch)
        tr = rec.trace
        pcs = tr.pc if hasattr(tr, "pc") else np.concatenate([tr.piece(j).pc for j in range(tr.n_pieces)])
        row = {"workload": name, "launch": k, "kernel": rec.kernel}
        row.update(launch_counts(ck.fn, pcs, sass_of[id(ck.module)].get(rec.mangled, [])))
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads")
    ap.add_argument("--size", default="small")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [r for name in args.workloads.split(",") for r in measure(name, args.size, args.arch)]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print("| workload | # | kernel | PTX static | SASS static | PTX warp insts | SASS warp insts (est.) "
          "| SASS / PTX | PTX with no SASS |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['workload']} | {r['launch']} | {r['kernel']} | {r['ptx_static']} | {r['sass_static']} | "
              f"{r['ptx_dynamic']:,} | {r['sass_dynamic']:,} | {r['sass_per_ptx']:.2f} | "
              f"{100 * r['ptx_without_sass']:.0f}% |")


if __name__ == "__main__":
    main()

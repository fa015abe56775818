#!/usr/bin/env python3
"""Build Rodinia 3.1's CUDA programs with their own Makefiles, pointed at `tlpsim toolkit`,
and run them under `tlpsim exec` with small inputs this script generates.

    .venv/bin/python scripts/run_rodinia.py PATH/TO/rodinia [--work DIR] [--only bfs,lud] [--timeout S]

PATH is a Rodinia 3.1 checkout that you obtained yourself (the `cuda/` and `common/`
folders; the suite's data tarball is not needed). The script downloads nothing and
changes nothing there: it copies the checkout into --work and builds each program with

    PATH=$(tlpsim toolkit)/bin:$PATH make CUDA_DIR=$(tlpsim toolkit)

so Makefiles that use CUDA_DIR and those that call `nvcc` by name both reach tlpsim. No
source or Makefile is changed. Inputs are generated (seeded) where a program reads files;
sizes are reduced only through the programs' own arguments. "correct" is checked against
a reference computed here (bfs: breadth-first costs; nn: nearest records) or the program's
own verification (lud -v, huffman's GPU-vs-CPU comparison); other programs are only checked to run to completion
("ran" = exit status 0 with no kernel fault). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

TLPSIM = [sys.executable, "-m", "tlpsim.cli"]


@dataclass
class Program:
    name: str
    folder: str                # under cuda/, where `make` runs
    run_dir: str               # where the program runs, relative to folder
    argv: list[str]            # {work} is replaced by the work folder
    exec_options: tuple = ()   # tlpsim exec options
    check: str | None = None   # name of a check function below


PROGRAMS = [
    Program("b+tree", "b+tree", ".", ["./b+tree.out", "file", "{work}/data/b+tree/mil.txt", "command",
                                      "{work}/data/b+tree/command.txt"]),
    Program("backprop", "backprop", ".", ["./backprop", "1024"]),
    Program("bfs", "bfs", ".", ["./bfs.out", "{work}/data/bfs/graph512.txt"], check="bfs"),
    Program("cfd", "cfd", ".", ["./euler3d", "{work}/data/cfd/fvcorr.domn.097K"]),
    Program("dwt2d", "dwt2d", ".", ["./dwt2d", "64.bmp", "-d", "64x64", "-f", "-5", "-l", "3"]),
    Program("gaussian", "gaussian", ".", ["./gaussian", "-s", "16"]),
    Program("heartwall", "heartwall", ".", ["./heartwall", "{work}/data/heartwall/test.avi", "1"]),
    Program("hotspot", "hotspot", ".", ["./hotspot", "64", "2", "2", "{work}/data/hotspot/temp_64",
                                        "{work}/data/hotspot/power_64", "output.out"]),
    Program("hotspot3D", "hotspot3D", ".", ["./3D", "64", "8", "2", "{work}/data/hotspot3D/power_64x8",
                                            "{work}/data/hotspot3D/temp_64x8", "output.out"]),
    Program("huffman", "huffman", ".", ["./pavle", "{work}/data/huffman/skewed64k.in"], check="huffman"),
    Program("hybridsort", "hybridsort", ".", ["./hybridsort", "r"]),
    Program("kmeans", "kmeans", ".", ["./kmeans", "-o", "-i", "{work}/data/kmeans/100"]),
    Program("lavaMD", "lavaMD", ".", ["./lavaMD", "-boxes1d", "1"]),
    Program("leukocyte", "leukocyte", "CUDA", ["./leukocyte", "{work}/data/leukocyte/testfile.avi", "1"]),
    Program("lud", "lud", "cuda", ["./lud_cuda", "-s", "64", "-v"], check="lud"),
    Program("mummergpu", "mummergpu", ".", ["./bin/mummergpu", "ref.fa", "query.fa"]),
    Program("myocyte", "myocyte", ".", ["./myocyte.out", "100", "1", "0"]),
    Program("nn", "nn", ".", ["./nn", "filelist_4", "-r", "5", "-lat", "30", "-lng", "90"], check="nn"),
    Program("nw", "nw", ".", ["./needle", "64", "10"]),
    Program("particlefilter", "particlefilter", ".", ["./particlefilter_naive", "-x", "32", "-y", "32", "-z", "4",
                                                      "-np", "100"]),
    Program("pathfinder", "pathfinder", ".", ["./pathfinder", "256", "8", "4"]),
    Program("srad_v1", "srad/srad_v1", ".", ["./srad", "2", "0.5", "64", "64"]),
    # srad_v2 loads one row before its arrays (undefined in CUDA; a GPU tolerates it)
    Program("srad_v2", "srad/srad_v2", ".", ["./srad", "64", "64", "0", "31", "0", "31", "0.5", "2"],
            exec_options=("--oob-reads", "zero")),
    Program("streamcluster", "streamcluster", ".", ["./sc_gpu", "10", "20", "16", "256", "256", "100", "none",
                                                    "output.txt", "1"]),
]


def generate_inputs(work: Path) -> None:
    """Seeded small inputs for the programs that read files."""
    rng = random.Random(1)
    data = work / "data"
    # bfs: Rodinia's graph format (nodes "first-edge count", source, edges "dest cost")
    n = 512
    adj: list[list[int]] = [[] for _ in range(n)]
    for u in range(n):
        for _ in range(rng.randint(1, 4)):
            v = rng.randrange(n)
            adj[u].append(v)
            adj[v].append(u)
    lines, first = [str(n)], 0
    for u in range(n):
        lines.append(f"{first} {len(adj[u])}")
        first += len(adj[u])
    lines += ["", "0", "", str(first)] + [f"{v} 1" for u in range(n) for v in adj[u]]
    (data / "bfs").mkdir(parents=True, exist_ok=True)
    (data / "bfs" / "graph512.txt").write_text("\n".join(lines) + "\n")
    cost = [-1] * n
    cost[0], queue = 0, deque([0])
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            if cost[v] < 0:
                cost[v] = cost[u] + 1
                queue.append(v)
    (data / "bfs" / "graph512.expected").write_text("".join(f"{i}) cost:{c}\n" for i, c in enumerate(cost)))
    (data / "hotspot").mkdir(exist_ok=True)
    for name, lo, hi in (("temp_64", 320.0, 340.0), ("power_64", 0.0, 0.001)):
        (data / "hotspot" / name).write_text("".join(f"{rng.uniform(lo, hi):.6f}\n" for _ in range(64 * 64)))
    # b+tree: "N" then N keys; commands k (point queries) and j (range queries: count, range size)
    (data / "b+tree").mkdir(exist_ok=True)
    keys = rng.sample(range(1, 100_000), 2000)
    (data / "b+tree" / "mil.txt").write_text(f"{len(keys)}\n" + "".join(f"{k}\n" for k in keys))
    (data / "b+tree" / "command.txt").write_text("k 64\nj 64 32\n")
    # huffman: 64 KiB of bytes with a skewed distribution (64 blocks of 256 words)
    (data / "huffman").mkdir(exist_ok=True)
    (data / "huffman" / "skewed64k.in").write_bytes(bytes(min(255, int(rng.expovariate(0.05)))
                                                          for _ in range(65536)))
    # dwt2d: a 64x64 24-bit BMP (it reads ../../data/dwt2d/NAME)
    (data / "dwt2d").mkdir(exist_ok=True)
    pixels = bytes(rng.randrange(256) for _ in range(64 * 64 * 3))
    header = b"BM" + struct.pack("<IHHI", 54 + len(pixels), 0, 0, 54) \
        + struct.pack("<IiiHHIIiiII", 40, 64, 64, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    (data / "dwt2d" / "64.bmp").write_bytes(header + pixels)
    # srad_v1 reads ../../../data/srad/image.pgm (a 458x502 grey image) from its folder
    (data / "srad").mkdir(exist_ok=True)
    rows = [" ".join(str(rng.randint(0, 255)) for _ in range(458)) for _ in range(502)]
    (data / "srad" / "image.pgm").write_text("P2\n458 502\n255\n" + "\n".join(rows) + "\n")


def prepare_nn(work: Path, folder: Path, env: dict) -> None:
    """nn's inputs from the suite's own generator (built by nn's Makefile): 4 files of 1024
    records, at ../../data/nn/cane4_K.db as nn/filelist_4 names them."""
    (work / "data" / "nn").mkdir(parents=True, exist_ok=True)
    (work / "data" / "data").symlink_to("nn")  # hurricane_gen writes data/caneN_K.db
    subprocess.run([str(folder / "hurricane_gen"), "1024", "4"], cwd=work / "data", env=env, check=True,
                   capture_output=True)


PREPARE = {"nn": prepare_nn}


def check_bfs(work: Path, folder: Path, out: str) -> str:
    got = [line.rstrip() for line in (folder / "result.txt").read_text().splitlines()]
    want = (work / "data" / "bfs" / "graph512.expected").read_text().splitlines()
    return "yes (costs = CPU BFS)" if got == want else "NO: result.txt differs from CPU BFS"


def check_lud(work: Path, folder: Path, out: str) -> str:
    return "NO: " + out.split("dismatch", 1)[1][:60] if "dismatch" in out else "yes (its own -v check)"


def check_nn(work: Path, folder: Path, out: str) -> str:
    records = []
    for k in range(4):
        for line in (work / "data" / "nn" / f"cane4_{k}.db").read_text().splitlines():
            f = line.split()
            records.append(math.hypot(float(f[6]) - 30, float(f[7]) - 90))
    want = sorted(records)[:5]
    got = [float(line.rsplit("=", 1)[1]) for line in out.splitlines() if "Distance=" in line]
    ok = len(got) == 5 and all(abs(a - b) < 1e-3 for a, b in zip(got, want))
    return "yes (5 nearest = CPU)" if ok else f"NO: distances {got} vs {want}"


def check_huffman(work: Path, folder: Path, out: str) -> str:
    return "yes (its own GPU = CPU check)" if "PASS! vectors are matching!" in out else "NO: its own check failed"


CHECKS = {"bfs": check_bfs, "lud": check_lud, "nn": check_nn, "huffman": check_huffman}


def run(cmd: list[str], cwd: Path, env: dict, timeout: float) -> tuple[int, str, str, float]:
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        return p.returncode, p.stdout, p.stderr, time.perf_counter() - t0
    except subprocess.TimeoutExpired:
        return -1, "", f"timed out after {timeout:g} s", time.perf_counter() - t0


def last_error(text: str) -> str:
    """The first line that reports an error (tlpsim nvcc's architecture warning is not one)."""
    lines = [ln.strip() for ln in text.splitlines() if not ln.startswith("tlpsim nvcc:")]
    errors = [ln for ln in lines if "error" in ln.lower()] or [ln for ln in lines if ln.startswith("tlpsim")]
    return (errors[0] if errors else (lines or ["?"])[-1])[:110].replace("|", "/")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rodinia", type=Path)
    ap.add_argument("--work", type=Path, default=Path("runs/rodinia"))
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()
    if not (args.rodinia / "cuda").is_dir():
        sys.exit(f"{args.rodinia}: not a Rodinia checkout (no cuda/ folder)")
    work = args.work.resolve()
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(args.rodinia / "cuda", work / "cuda", symlinks=True)
    if (args.rodinia / "common").is_dir():
        shutil.copytree(args.rodinia / "common", work / "common", symlinks=True)
    generate_inputs(work)
    toolkit = subprocess.run([*TLPSIM, "toolkit"], capture_output=True, text=True, check=True).stdout.strip()
    env = dict(os.environ, PATH=f"{toolkit}/bin{os.pathsep}{os.environ.get('PATH', '')}")
    only = set(filter(None, args.only.split(",")))
    print("| program | builds unmodified | runs | correct | command | functional s |")
    print("|---|---|---|---|---|---|")
    for prog in PROGRAMS:
        if only and prog.name not in only:
            continue
        folder = work / "cuda" / prog.folder
        rc, out, err, _ = run(["make", f"CUDA_DIR={toolkit}"], folder, env, args.timeout)
        if prog.name in PREPARE:
            PREPARE[prog.name](work, folder, env)
        argv = [a.replace("{work}", str(work)) for a in prog.argv]
        shown = " ".join(a.replace(str(work), "WORK") for a in [*prog.exec_options, *argv])
        if rc != 0:
            print(f"| {prog.name} | no: {last_error(out + err)} | - | - | `{shown}` | - |", flush=True)
            continue
        rdir = folder / prog.run_dir
        rc, out, err, secs = run([*TLPSIM, "exec", *prog.exec_options, "--", *argv], rdir, env, args.timeout)
        fault = "kernel fault" in err
        ran = "yes" if rc == 0 and not fault else f"no (exit {rc}{', kernel fault' if fault else ''}: " \
                                                     f"{last_error(err)})"
        correct = CHECKS[prog.check](work, rdir, out) if prog.check and ran == "yes" else "-"
        print(f"| {prog.name} | yes | {ran} | {correct} | `{shown}` | {secs:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

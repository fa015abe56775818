#!/usr/bin/env python3
"""Build Rodinia 3.1's CUDA programs with their own Makefiles, pointed at `tlpsim toolkit`,
and run them under `tlpsim exec` with small inputs this script generates.

    .venv/bin/python scripts/run_rodinia.py PATH/TO/rodinia [--work DIR] [--only bfs,lud] [--timeout S]

PATH is a Rodinia 3.1 checkout that you obtained yourself (the `cuda/` and `common/`
folders, and `openmp/` for the CPU references; the suite's data tarball is not needed).
The script downloads nothing and changes nothing there: it copies the checkout into
--work and builds each program with

    PATH=$(tlpsim toolkit)/bin:$PATH make CUDA_DIR=$(tlpsim toolkit)

so Makefiles that use CUDA_DIR and those that call `nvcc` by name both reach tlpsim. No
source or Makefile is changed (nw is built with its Makefile's own KERNEL_DIM variable
set to -DTRACEBACK, so that it writes its result; lavaMD with its KERNEL_DIM naming the
toolkit's lib64, ahead of the fixed -L/usr/local/cuda/lib64 it links with). Inputs are generated (seeded) where a
program reads files; sizes are reduced only through the programs' own arguments.
"correct" is checked against
- the suite's CPU (OpenMP) version, built with its own Makefile and run on one thread
  with the same input: b+tree (output.txt), nw (the traceback), srad_v1 (the output
  image, +-1 grey level), streamcluster (the centres);
- a reference computed here: bfs (breadth-first costs), nn (nearest records), hotspot
  (the CUDA kernel's stencil in NumPy; the OpenMP version treats the edges differently);
- the program's own verification: lud -v, huffman's GPU-vs-CPU comparison;
- a NumPy reference of the program's kernels applied to the inputs it copied to the
  device, compared with what it copied back, both saved by `tlpsim exec --save-copies`
  (rodinia_copy_checks.py): backprop, gaussian, pathfinder, srad_v2, lavaMD, and
  particlefilter's kernel, whose program seeds from the clock (its estimate is also
  checked to be plausible).
Other programs are only checked to run to completion ("ran" = exit status 0 with no
kernel fault): they print nothing to compare. Prints a Markdown table. docs/exec.md
("Rodinia 3.1, unmodified") says which 14 programs the issue's target counts.
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
COPIES = "tlpsim-copies"  # --save-copies folder, in the program's run folder


@dataclass
class Program:
    name: str
    folder: str                # under cuda/, where `make` runs
    run_dir: str               # where the program runs, relative to folder
    argv: list[str]            # {work} is replaced by the work folder
    exec_options: tuple = ()   # tlpsim exec options
    make_vars: tuple = ()      # Makefile variables the suite provides (no source change), e.g. nw's KERNEL_DIM
    check: str | None = None   # name of a check function below
    save_copies: bool = False  # run with tlpsim exec --save-copies (the check reads the copies)


PROGRAMS = [
    Program("b+tree", "b+tree", ".", ["./b+tree.out", "file", "{work}/data/b+tree/mil.txt", "command",
                                      "{work}/data/b+tree/command.txt"], check="b+tree"),
    Program("backprop", "backprop", ".", ["./backprop", "1024"], check="backprop", save_copies=True),
    Program("bfs", "bfs", ".", ["./bfs.out", "{work}/data/bfs/graph512.txt"], check="bfs"),
    Program("cfd", "cfd", ".", ["./euler3d", "{work}/data/cfd/fvcorr.domn.097K"]),
    Program("dwt2d", "dwt2d", ".", ["./dwt2d", "64.bmp", "-d", "64x64", "-f", "-5", "-l", "3"]),
    Program("gaussian", "gaussian", ".", ["./gaussian", "-s", "16"], check="gaussian", save_copies=True),
    Program("heartwall", "heartwall", ".", ["./heartwall", "{work}/data/heartwall/test.avi", "1"]),
    Program("hotspot", "hotspot", ".", ["./hotspot", "64", "2", "2", "{work}/data/hotspot/temp_64",
                                        "{work}/data/hotspot/power_64", "output.out"], check="hotspot"),
    Program("hotspot3D", "hotspot3D", ".", ["./3D", "64", "8", "2", "{work}/data/hotspot3D/power_64x8",
                                            "{work}/data/hotspot3D/temp_64x8", "output.out"]),
    Program("huffman", "huffman", ".", ["./pavle", "{work}/data/huffman/skewed64k.in"], check="huffman"),
    Program("hybridsort", "hybridsort", ".", ["./hybridsort", "r"]),
    Program("kmeans", "kmeans", ".", ["./kmeans", "-o", "-i", "{work}/data/kmeans/100"]),
    # lavaMD links with `gcc ... -L/usr/local/cuda/lib64 -lcudart`: where a CUDA installation is there, gcc
    # takes NVIDIA's library (which lacks what CUDA 13's host code needs from libstdc++) unless its Makefile's
    # KERNEL_DIM variable, which heads every command line, names the toolkit's lib64 first
    Program("lavaMD", "lavaMD", ".", ["./lavaMD", "-boxes1d", "2"], make_vars=("KERNEL_DIM=-L{toolkit}/lib64",),
            check="lavaMD", save_copies=True),
    Program("leukocyte", "leukocyte", "CUDA", ["./leukocyte", "{work}/data/leukocyte/testfile.avi", "1"]),
    Program("lud", "lud", "cuda", ["./lud_cuda", "-s", "64", "-v"], check="lud"),
    Program("mummergpu", "mummergpu", ".", ["./bin/mummergpu", "ref.fa", "query.fa"]),
    Program("myocyte", "myocyte", ".", ["./myocyte.out", "100", "1", "0"]),
    Program("nn", "nn", ".", ["./nn", "filelist_4", "-r", "5", "-lat", "30", "-lng", "90"], check="nn"),
    # KERNEL_DIM is nw's Makefile variable for -D options; TRACEBACK makes it write result.txt
    Program("nw", "nw", ".", ["./needle", "64", "10"], make_vars=("KERNEL_DIM=-DTRACEBACK",), check="nw"),
    # the suite's own run-script size: at -x 32 -y 32 -z 4 -np 100 its host code's first-frame
    # estimate is already NaN, before any kernel runs (its OpenMP version differs there)
    Program("particlefilter", "particlefilter", ".", ["./particlefilter_naive", "-x", "128", "-y", "128", "-z", "10",
                                                      "-np", "1000"], check="particlefilter", save_copies=True),
    Program("pathfinder", "pathfinder", ".", ["./pathfinder", "256", "8", "4"], check="pathfinder",
            save_copies=True),
    Program("srad_v1", "srad/srad_v1", ".", ["./srad", "2", "0.5", "64", "64"], check="srad_v1"),
    # srad_v2 loads one row before its arrays (undefined in CUDA; a GPU tolerates it)
    Program("srad_v2", "srad/srad_v2", ".", ["./srad", "64", "64", "0", "31", "0", "31", "0.5", "2"],
            exec_options=("--oob-reads", "zero"), check="srad_v2", save_copies=True),
    Program("streamcluster", "streamcluster", ".", ["./sc_gpu", "10", "20", "16", "256", "256", "100", "none",
                                                    "output.txt", "1"], check="streamcluster"),
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


def cpu_version(work: Path, name: str, make: list[str], argv: list[str]) -> Path:
    """Build and run the suite's own CPU (OpenMP) version, one thread, in its openmp/ folder."""
    folder = work / "openmp" / name
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} (the checkout has no openmp/{name})")
    subprocess.run(["make", *make], cwd=folder, capture_output=True, check=True, timeout=600)
    subprocess.run([a.replace("{work}", str(work)) for a in argv], cwd=folder, capture_output=True, check=True,
                   timeout=600)
    return folder


def numbers(text: str) -> list[float]:
    out = []
    for tok in text.replace(",", " ").split():
        try:
            out.append(float(tok))
        except ValueError:
            pass
    return out


def same_numbers(got: list[float], want: list[float], rtol: float, atol: float) -> str | None:
    """None if equal within the tolerance, else where they first differ."""
    if len(got) != len(want):
        return f"{len(got)} numbers vs the CPU's {len(want)}"
    for i, (a, b) in enumerate(zip(got, want)):
        if abs(a - b) > atol + rtol * abs(b):
            return f"number {i}: {a:g} vs the CPU's {b:g}"
    return None


def compare_with_cpu(what: str, got_file: Path, want_file: Path, rtol: float = 1e-4, atol: float = 1e-4,
                     text: bool = True) -> str:
    if text:
        diff = same_numbers(numbers(got_file.read_text(errors="replace")),
                            numbers(want_file.read_text(errors="replace")), rtol, atol)
    else:
        diff = None if got_file.read_bytes() == want_file.read_bytes() else "files differ"
    return f"yes ({what})" if diff is None else f"NO: {got_file.name}: {diff}"


def check_hotspot(work: Path, folder: Path, out: str) -> str:
    """The CUDA kernel's own stencil in NumPy (borders clamp to the edge cell, as the kernel
    does; the OpenMP version treats edges and corners differently, so it is not the reference)."""
    import numpy as np

    f32 = np.float32
    n, iterations = 64, 2
    temp = np.array(numbers((work / "data/hotspot/temp_64").read_text()), dtype=f32).reshape(n, n)
    power = np.array(numbers((work / "data/hotspot/power_64").read_text()), dtype=f32).reshape(n, n)
    gh, gw = f32(f32(0.016) / n), f32(f32(0.016) / n)
    t_chip = f32(0.0005)
    cap = f32(0.5 * 1.75e6 * t_chip * gw * gh)
    rx = f32(gw / (2.0 * 100 * t_chip * gh))
    ry = f32(gh / (2.0 * 100 * t_chip * gw))
    rz = f32(t_chip / (100 * gh * gw))
    step = f32(0.001 / f32(3.0e6 / (0.5 * t_chip * 1.75e6)))
    sdc, rx1, ry1, rz1 = f32(step / cap), f32(1 / rx), f32(1 / ry), f32(1 / rz)
    for _ in range(iterations):
        t = temp.astype(np.float64)
        north = np.vstack([t[:1], t[:-1]])
        south = np.vstack([t[1:], t[-1:]])
        west = np.hstack([t[:, :1], t[:, :-1]])
        east = np.hstack([t[:, 1:], t[:, -1:]])
        temp = (t + float(sdc) * (power + (south + north - 2.0 * t) * float(ry1) + (east + west - 2.0 * t) * float(rx1)
                                  + (80.0 - t) * float(rz1))).astype(f32)
    got = numbers((folder / "output.out").read_text())
    want = [v for i, x in enumerate(temp.ravel()) for v in (i, float(x))]
    diff = same_numbers(got, want, 2e-5, 1e-4)  # the file has %g's six digits
    return "yes (output.out = the kernel's stencil in NumPy)" if diff is None else f"NO: output.out: {diff}"


def check_nw(work: Path, folder: Path, out: str) -> str:
    """The traceback against the OpenMP version's, but for its last value: both versions' last
    step (at row 0) adds referrence[0 * cols + 1], a word malloc never initialised, so that one
    value is whatever the heap held (0 in a fresh process; in a program running tlpsim's
    runtime, the embedded interpreter has used the heap before)."""
    cpu = cpu_version(work, "nw", ["needle"], ["./needle", "64", "10", "1"])
    got, want = numbers((folder / "result.txt").read_text()), numbers((cpu / "result.txt").read_text())
    diff = same_numbers(got[:-1], want[:-1], 0, 0)
    return "yes (traceback = OpenMP version's but its uninitialised last value)" if diff is None \
        else f"NO: result.txt: {diff}"


def check_btree(work: Path, folder: Path, out: str) -> str:
    cpu = cpu_version(work, "b+tree", [], ["./b+tree.out", "core", "1", "file", "{work}/data/b+tree/mil.txt",
                                           "command", "{work}/data/b+tree/command.txt"])
    return compare_with_cpu("output.txt = OpenMP version's", folder / "output.txt", cpu / "output.txt", 0, 0)


def check_streamcluster(work: Path, folder: Path, out: str) -> str:
    cpu = cpu_version(work, "streamcluster", ["omp"], ["./sc_omp", "10", "20", "16", "256", "256", "100", "none",
                                                       "output.txt", "1"])
    return compare_with_cpu("centres = OpenMP version's", folder / "output.txt", cpu / "output.txt")


def check_srad_v1(work: Path, folder: Path, out: str) -> str:
    cpu = cpu_version(work, "srad/srad_v1", [], ["./srad", "2", "0.5", "64", "64", "1"])
    # the image is written as integers: a last-bit float difference may move a pixel by one
    return compare_with_cpu("image_out.pgm = OpenMP version's (+-1)", folder / "image_out.pgm",
                            cpu / "image_out.pgm", 0, 1)


def check_particlefilter(work: Path, folder: Path, out: str) -> str:
    """Seeded from the clock, so its output is checked twice: the last frame's estimate lies
    within 5 pixels of the object, which starts at the centre of the 128x128 frame and moves
    2 pixels per frame along the first coordinate and 1 along the second (its OpenMP
    version's estimate at this size is 2.6 pixels off), and its kernel's resampling is
    exactly the NumPy reference's on the inputs of each frame (saved copies)."""
    xe = [float(line.split()[1]) for line in out.splitlines() if line.startswith("XE:")]
    ye = [float(line.split()[1]) for line in out.splitlines() if line.startswith("YE:")]
    if not xe or not ye:
        return "NO: no estimate printed"
    frames, centre = 10, 64
    d = math.hypot(xe[-1] - (centre - 2 * (frames - 1)), ye[-1] - (centre + frames - 1))
    if d >= 5:
        return f"NO: estimate {d:.1f} px off"
    import rodinia_copy_checks as cc

    kernel = cc.check_particlefilter(folder / COPIES, particles=1000)
    return kernel or f"yes (every frame's resampling = its kernel in NumPy; estimate {d:.1f} px from the object)"


def check_saved(name: str):
    """A check against the program's saved copies (rodinia_copy_checks.py), with its arguments."""
    import rodinia_copy_checks as cc

    calls = {"pathfinder": lambda d: cc.check_pathfinder(d, cols=256, rows=8),
             "gaussian": lambda d: cc.check_gaussian(d, size=16),
             "backprop": lambda d: cc.check_backprop(d, n_in=1024),
             "srad_v2": lambda d: cc.check_srad_v2(d, rows=64, cols=64, roi=(0, 31, 0, 31), lam=0.5, niter=2),
             "lavaMD": cc.check_lavamd}
    return lambda work, folder, out: calls[name](folder / COPIES)


CHECKS = {"bfs": check_bfs, "lud": check_lud, "nn": check_nn, "huffman": check_huffman, "hotspot": check_hotspot,
          "b+tree": check_btree, "nw": check_nw, "streamcluster": check_streamcluster, "srad_v1": check_srad_v1,
          "particlefilter": check_particlefilter,
          **{name: check_saved(name) for name in ("pathfinder", "gaussian", "backprop", "srad_v2", "lavaMD")}}


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
    for extra in ("common", "openmp"):  # openmp/: the suite's CPU versions, the references of some checks
        if (args.rodinia / extra).is_dir():
            shutil.copytree(args.rodinia / extra, work / extra, symlinks=True)
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
        make_vars = [v.replace("{toolkit}", toolkit) for v in prog.make_vars]
        rc, out, err, _ = run(["make", f"CUDA_DIR={toolkit}", *make_vars], folder, env, args.timeout)
        if prog.name in PREPARE:
            PREPARE[prog.name](work, folder, env)
        argv = [a.replace("{work}", str(work)) for a in prog.argv]
        saved_shown = ["--save-copies", COPIES] if prog.save_copies else []
        shown = " ".join(a.replace(str(work), "WORK") for a in [*prog.exec_options, *saved_shown, *argv])
        if prog.make_vars:
            shown = f"make {' '.join(prog.make_vars)}`, `{shown}".replace("{toolkit}", "$(tlpsim toolkit)")
        if rc != 0:
            print(f"| {prog.name} | no: {last_error(out + err)} | - | - | `{shown}` | - |", flush=True)
            continue
        rdir = folder / prog.run_dir
        saved = ("--save-copies", str(rdir / COPIES)) if prog.save_copies else ()
        rc, out, err, secs = run([*TLPSIM, "exec", *prog.exec_options, *saved, "--", *argv], rdir, env, args.timeout)
        fault = "kernel fault" in err
        ran = "yes" if rc == 0 and not fault else f"no (exit {rc}{', kernel fault' if fault else ''}: " \
                                                     f"{last_error(err)})"
        try:
            correct = CHECKS[prog.check](work, rdir, out) if prog.check and ran == "yes" else "-"
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            correct = f"not checked: {str(exc)[:90]}"
        print(f"| {prog.name} | yes | {ran} | {correct} | `{shown}` | {secs:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

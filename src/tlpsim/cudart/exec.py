"""`tlpsim exec`: run an unmodified CUDA program on the simulator.

The program runs as a child process with tlpsim's libcudart.so.13 first on its
library path; that library starts tlpsim's runtime inside the program (see
libcudart.c and runtime.py for why the runtime is embedded rather than a
sibling process). This process supervises: it checks the configuration before
anything runs, passes the settings in $TLPSIM_EXEC, waits, explains a crash or
a runtime that could not start, and afterwards turns the runtime's launch
records into the console summary and (timing mode, or --run-dir) a run
directory with the HTML report.

Exit status: the program's own; 128+N if signal N killed it; 2 if tlpsim
could not run it, or if it exited 0 although it called an unsupported CUDA
function or a kernel could not be simulated (its output would not be that of
the program).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tlpsim.cudart import toolkit_dir
from tlpsim.cudart.build import SONAME, find_libpython, library
from tlpsim.cudart.results import ExecParams, Outcome, build_record, console_summary, read_records, write_run
from tlpsim.cudart.runtime import ENV_SETTINGS, Settings
from tlpsim.errors import TlpsimError

SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c", ".o")
STARTUP_FAILED = 86  # libcudart.c's exit status when the runtime cannot start


def split_command(command: list[str]) -> tuple[list[str], list[str]]:
    """(sources to compile, the rest): `prog.cu [more.cu] [--] args` or `./prog args`."""
    sources = []
    rest = list(command)
    while rest and rest[0].endswith(SOURCE_SUFFIXES) and not rest[0].startswith("-"):
        sources.append(rest.pop(0))
    if sources and rest[:1] == ["--"]:
        rest.pop(0)
    return sources, rest


def compile_program(sources: list[str], options: list[str], echo) -> Path:
    """Build `sources` with tlpsim nvcc into the cache (reused while sources, options
    and the runtime library are unchanged; #included headers are not tracked)."""
    from tlpsim.cudart import nvcc
    from tlpsim.cudart.modules import exec_cache

    for s in sources:
        if not Path(s).is_file():
            raise TlpsimError(f"no such source file: {s}")
    # the binary links the runtime by path (rpath): rebuild when the library moves, not when it changes
    h = hashlib.sha256(json.dumps([options, str(library().parent)]).encode())
    for s in sources:
        h.update(Path(s).resolve().as_posix().encode() + b"\0" + Path(s).read_bytes())
    out_dir = exec_cache() / "bin" / h.hexdigest()[:20]
    exe = out_dir / Path(sources[0]).stem
    if exe.is_file():
        return exe
    out_dir.mkdir(parents=True, exist_ok=True)
    echo(f"tlpsim: compiling {' '.join(sources)} with tlpsim nvcc")
    tmp = out_dir / f".{exe.name}.{os.getpid()}"
    rc = nvcc.main([*options, *sources, "-o", str(tmp)])
    if rc != 0:
        raise TlpsimError(f"tlpsim nvcc failed (exit {rc}) on {' '.join(sources)}; its messages are above")
    os.replace(tmp, exe)
    return exe


def resolve_program(name: str) -> str:
    path = Path(name)
    if "/" not in name:
        found = shutil.which(name)
        if found is None and path.is_file():
            found = str(path.resolve())
        if found is None:
            raise TlpsimError(f"no such program: {name} (not a file and not on PATH)")
        return found
    if not path.is_file():
        raise TlpsimError(f"no such program: {name}")
    if not os.access(path, os.X_OK):
        raise TlpsimError(f"{name} is not executable")
    return os.path.abspath(name)


_WRAPPER_MAGIC = (0x466243B1).to_bytes(4, "little")  # a fat binary wrapper (fatbinary_section.h)


def check_binary(program: str) -> None:
    """Refuse a program that carries CUDA device code but would not load tlpsim's
    runtime: nvcc links NVIDIA's static runtime (libcudart_static) unless told
    `-cudart shared`, and that runtime looks for a real GPU driver."""
    try:
        with open(program, "rb") as fh:
            head = fh.read(4)
            if head != b"\x7fELF":
                return  # a script: whatever it runs is its business
            data = head + fh.read()
    except OSError:
        return
    if _WRAPPER_MAGIC in data and b"libcudart.so" not in data:
        raise TlpsimError(f"{program} contains CUDA device code but is linked with NVIDIA's static CUDA runtime "
                          "(nvcc's default, -cudart static), so it would look for a real GPU instead of running on "
                          "tlpsim; rebuild it with `tlpsim nvcc` (or with nvcc -cudart shared --no-compress)")


def child_env(settings: Settings) -> dict[str, str]:
    lib = library()
    libpython = find_libpython()
    if not libpython:
        raise TlpsimError(f"this Python ({sys.executable}) has no shared libpython, which tlpsim's CUDA runtime "
                          "loads into the program; use a Python built with --enable-shared (python.org, pyenv with "
                          "PYTHON_CONFIGURE_OPTS=--enable-shared, or Debian/Ubuntu's libpython3.X package)")
    env = dict(os.environ)
    # the toolkit's lib64 holds libcuda.so.1, which programs linked `-lcuda` from `tlpsim toolkit` load
    stub_dir = toolkit_dir.ROOT / "lib64"
    dirs = (str(lib.parent), str(stub_dir) if stub_dir.is_dir() else "", env.get("LD_LIBRARY_PATH", ""))
    env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in dirs if p)
    env["TLPSIM_PYTHON"] = sys.executable
    env["TLPSIM_LIBPYTHON"] = libpython
    env[ENV_SETTINGS] = settings.to_env()
    env["TLPSIM_SYS_PATH"] = os.pathsep.join(p for p in sys.path if p)  # the same tlpsim and packages as here
    return env


def describe_exit(returncode: int) -> dict:
    if returncode < 0:
        sig = -returncode
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        what = signal.strsignal(sig) or name
        return {"exit_status": 128 + sig, "signal": name,
                "text": f"the program was killed by {name} ({what.lower()}); a crash in the program's own code "
                        "(e.g. a host pointer used as a device pointer, or the reverse) or an abort"}
    if returncode == STARTUP_FAILED:
        return {"exit_status": 2, "text": "tlpsim's CUDA runtime could not start in the program (see above)"}
    return {"exit_status": returncode, "text": f"the program exited with status {returncode}"}


def _empty_folder(folder: Path) -> Path:
    """--save-copies DIR: a new or empty folder (copies of two runs never mix)."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise TlpsimError(f"--save-copies {folder}: exists and is not an empty folder; name a new one")
    folder.mkdir(parents=True, exist_ok=True)
    return folder.resolve()


def run(command: list[str], *, mode: str, preset: str, overrides: dict, plugins: list[str], run_dir: str | None,
        device_memory: int, timeout: float | None, nvcc_options: list[str], echo, oob_reads: str = "error",
        save_copies: str | None = None) -> int:
    from tlpsim.config.loader import load_config
    from tlpsim.policies.external import activate
    from tlpsim.report.rundir import check_new

    if save_copies is not None:
        save_copies = str(_empty_folder(Path(save_copies)))
    sources, rest = split_command(command)
    if sources:
        rest = [str(compile_program(sources, nvcc_options, echo)), *rest]
    elif nvcc_options:
        raise TlpsimError("--nvcc options apply when exec compiles .cu sources")
    if not rest:
        raise TlpsimError("no program given: tlpsim exec [options] -- ./program [args] (or program.cu)")
    program = resolve_program(rest[0])
    check_binary(program)
    plugins = [lp.spec for lp in activate(plugins)]  # the program's process loads the same files
    config = load_config(preset, overrides)  # a bad preset or --set fails here, before the program runs
    params = ExecParams(Path(program).name, [program, *rest[1:]], preset, overrides, mode, list(plugins),
                        oob_reads=oob_reads)
    out = None
    if run_dir is not None:
        check_new(run_dir)
        out = Path(run_dir)
    elif mode == "timing":
        out = _fresh_dir(Path("runs") / f"exec-{params.workload}-{preset}-{params.key()[:8]}")
    scratch = None
    if out is None:
        scratch = tempfile.TemporaryDirectory(prefix="tlpsim-exec-")
    out_dir = out if out is not None else Path(scratch.name)
    out_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings(mode=mode, preset=preset, overrides=overrides, plugins=list(plugins),
                        out_dir=str(out_dir.resolve()), device_memory=device_memory, oob_reads=oob_reads,
                        save_copies=save_copies)
    env = child_env(settings)
    t0 = time.perf_counter()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the program's to handle
    try:
        proc = subprocess.Popen([program, *rest[1:]], env=env)
        try:
            returncode = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            echo(f"tlpsim: the program ran longer than --timeout {timeout:g} s and was killed")
            returncode = -signal.SIGKILL
    except OSError as exc:
        raise TlpsimError(f"cannot run {program}: {exc}") from None
    finally:
        signal.signal(signal.SIGINT, previous)
    wall = time.perf_counter() - t0
    status = describe_exit(returncode)
    rows, summary = read_records(out_dir)
    if returncode < 0 or returncode != 0 and summary is None:
        echo(f"tlpsim: {status['text']}")
    console_summary(rows, mode, echo)
    code = status["exit_status"]
    if summary is None and returncode != STARTUP_FAILED:
        echo("tlpsim: the program ended without the runtime's exit handler (a crash or _exit); the launches "
             f"recorded before that ({len(rows)}) are kept")
    from tlpsim.cudart.failed_calls import summary_line

    failed = summary_line(out_dir, summary)
    if failed:
        echo(f"tlpsim: {failed}")
    if summary is not None:
        faults = summary.get("faults") or []
        if faults:
            echo(f"tlpsim: {len(faults)} kernel fault(s), reported to the program as "
                 + ", ".join(sorted({f['error'] for f in faults})))
        bad = [f"{n} ({c}x)" for n, c in summary.get("unsupported", {}).items()] + summary.get("problems", [])
        if bad:
            echo("tlpsim: this run is not the program's real behaviour: " + "; ".join(bad))
            if code == 0:
                code = 2
    if out is not None and returncode != STARTUP_FAILED:
        record = build_record(params, rows, summary, status, config, wall)
        written = write_run(Outcome(params, record, config if mode == "timing" else None), out_dir)
        echo(f"tlpsim: run directory {written} (report {written / 'report.html'})")
    if scratch is not None:
        scratch.cleanup()
    return code


def _fresh_dir(path: Path) -> Path:
    k, base = 2, path
    while path.exists():  # a re-run gets its own directory
        path = base.with_name(f"{base.name}.{k}")
        k += 1
    return path


def library_status() -> str:
    """One line for `tlpsim exec --check`: where the runtime library is and which Python it loads."""
    return f"{library()} ({SONAME}); Python library {find_libpython() or 'not found'}"

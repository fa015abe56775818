"""Locate the CUDA compiler toolchain that tlpsim uses to turn CUDA C into PTX.

tlpsim does not need a system CUDA installation: the front-end runs ``nvcc``
and ``ptxas`` from NVIDIA's pip wheels, which install into
``site-packages/nvidia/cu13/``::

    nvidia/cu13/bin/nvcc, bin/ptxas      (nvidia-cuda-nvcc)
    nvidia/cu13/nvvm/bin/cicc            (nvidia-nvvm)
    nvidia/cu13/include/cuda_runtime.h   (nvidia-cuda-runtime)
    nvidia/cu13/include/crt/*.h          (nvidia-cuda-crt)

Setting the environment variable ``TLPSIM_CUDA_HOME`` to a directory with the
same layout (for instance a system toolkit such as ``/usr/local/cuda``)
overrides the wheel lookup.

``nvcc`` always runs the host compiler (``gcc``) to preprocess, even with
``-ptx``, so :func:`check_host_compiler` verifies that ``gcc`` is on ``PATH``.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tlpsim.errors import ToolkitNotFound

__all__ = [
    "CUDA_WHEEL_VERSION",
    "ENV_CUDA_HOME",
    "REQUIRED_WHEELS",
    "Toolkit",
    "check_host_compiler",
    "find_toolkit",
    "nvcc_path",
    "ptxas_path",
    "subprocess_env",
    "toolkit_version",
]

#: The toolkit release the project pins (see pyproject.toml).
CUDA_WHEEL_VERSION = "13.5.37"

#: Environment variable overriding the toolkit location.
ENV_CUDA_HOME = "TLPSIM_CUDA_HOME"

#: pip package -> pinned version.
REQUIRED_WHEELS: dict[str, str] = {
    "nvidia-cuda-nvcc": CUDA_WHEEL_VERSION,
    "nvidia-nvvm": CUDA_WHEEL_VERSION,
    "nvidia-cuda-runtime": CUDA_WHEEL_VERSION,
    "nvidia-cuda-crt": CUDA_WHEEL_VERSION,
}

#: Subdirectory of the ``nvidia`` namespace package the CUDA 13 wheels use.
_WHEEL_SUBDIR = "cu13"

# (path relative to the toolkit root, pip package providing it, must be executable)
_REQUIRED_FILES: tuple[tuple[str, str, bool], ...] = (
    ("bin/nvcc", "nvidia-cuda-nvcc", True),
    ("bin/ptxas", "nvidia-cuda-nvcc", True),
    ("nvvm/bin/cicc", "nvidia-nvvm", True),
    ("include/cuda_runtime.h", "nvidia-cuda-runtime", False),
    ("include/crt/host_defines.h", "nvidia-cuda-crt", False),
)

# Environment variables that make nvcc silently add flags behind our back
# (and behind the compilation cache's back); removed from the child environment.
_NVCC_ENV_FLAGS = ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS")


def _pip_command(packages: list[str]) -> str:
    return "pip install " + " ".join(f"{p}=={REQUIRED_WHEELS[p]}" for p in packages)


@dataclass(frozen=True)
class Toolkit:
    """A located CUDA toolkit (paths only; nothing is run on construction)."""

    root: Path
    #: ``"wheel"`` or ``"TLPSIM_CUDA_HOME"``: where the location came from.
    origin: str = "wheel"

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    @property
    def nvcc(self) -> Path:
        return self.bin_dir / "nvcc"

    @property
    def ptxas(self) -> Path:
        return self.bin_dir / "ptxas"

    @property
    def nvvm_bin_dir(self) -> Path:
        return self.root / "nvvm" / "bin"

    @property
    def cicc(self) -> Path:
        return self.nvvm_bin_dir / "cicc"

    @property
    def include_dir(self) -> Path:
        return self.root / "include"

    @property
    def lib_dirs(self) -> list[Path]:
        """Library directories that exist (``lib`` holds libnvvm in the wheels,
        ``nvvm/lib64`` in a system toolkit)."""
        candidates = [self.root / "lib", self.root / "lib64", self.root / "nvvm" / "lib", self.root / "nvvm" / "lib64"]
        return [p for p in candidates if p.is_dir()]

    def env(self) -> dict[str, str]:
        """A copy of ``os.environ`` in which nvcc/ptxas/cicc work on their own."""
        return subprocess_env(self)

    def version(self) -> str:
        """The toolkit version, e.g. ``"13.5.37"`` (from ``nvcc --version``; cached)."""
        return _nvcc_version(str(self.nvcc))


def _check_root(root: Path) -> tuple[list[str], list[str]]:
    """Return (missing packages, problems) for a candidate toolkit root."""
    missing: list[str] = []
    problems: list[str] = []
    for rel, package, executable in _REQUIRED_FILES:
        path = root / rel
        if not path.is_file():
            if package not in missing:
                missing.append(package)
            problems.append(f"missing {path}")
        elif executable and not os.access(path, os.X_OK):
            problems.append(f"{path} is not executable (try: chmod +x {path})")
    return missing, problems


def nvidia_package_dirs() -> list[Path]:
    """The folders of the ``nvidia`` namespace package on the import path (where NVIDIA's
    pip wheels install: CUDA 13's ``cu13`` and CUDA 11.8's per-component folders)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return []
    locations = list(spec.submodule_search_locations or [])
    if not locations and spec.origin:
        locations = [str(Path(spec.origin).parent)]
    return [Path(loc) for loc in locations]


def _wheel_candidates() -> list[Path]:
    """``nvidia/cu13`` folders on the import path (``nvidia`` is a namespace package)."""
    locations = nvidia_package_dirs()
    seen: list[Path] = []
    for loc in locations:
        candidate = Path(loc) / _WHEEL_SUBDIR
        if candidate not in seen:
            seen.append(candidate)
    return seen


def find_toolkit() -> Toolkit:
    """Locate the toolkit, raising :class:`ToolkitNotFound` with a fix-it message.

    ``TLPSIM_CUDA_HOME`` wins when set (non-empty); otherwise the ``nvidia/cu13``
    folder of the installed wheels is used.  Not cached (cheap, and tests change
    the environment); the nvcc version lookup is cached separately.
    """
    override = os.environ.get(ENV_CUDA_HOME, "").strip()
    if override:
        root = Path(override).expanduser()
        missing, problems = _check_root(root)
        if problems:
            raise ToolkitNotFound(
                f"{ENV_CUDA_HOME}={override} is not a usable CUDA toolkit: "
                + "; ".join(problems)
                + f".\nPoint {ENV_CUDA_HOME} at a directory containing bin/nvcc, bin/ptxas and nvvm/bin/cicc, "
                f"or unset it to use the pip wheels ({_pip_command(list(REQUIRED_WHEELS))})."
            )
        return Toolkit(root.resolve(), origin=ENV_CUDA_HOME)

    candidates = _wheel_candidates()
    best: tuple[Path, list[str], list[str]] | None = None
    for root in candidates:
        missing, problems = _check_root(root)
        if not problems:
            return Toolkit(root.resolve(), origin="wheel")
        if root.is_dir() and (best is None or len(problems) < len(best[2])):
            best = (root, missing, problems)

    if best is None:
        packages = list(REQUIRED_WHEELS)
        where = "no nvidia/cu13 folder found on the Python path"
        detail = ""
    else:
        root, packages, problems = best
        where = f"incomplete toolkit in {root}"
        detail = " (" + "; ".join(problems) + ")"
        if not packages:  # files present but not executable
            raise ToolkitNotFound(f"CUDA toolkit wheels are broken: {where}{detail}.")
    raise ToolkitNotFound(
        f"CUDA compiler wheels not found: {where}{detail}.\n"
        f"Install them with:\n  {_pip_command(packages)}\n"
        f"(or set {ENV_CUDA_HOME} to an existing CUDA toolkit directory)."
    )


def subprocess_env(toolkit: Toolkit | None = None) -> dict[str, str]:
    """Environment for running nvcc/ptxas: ``PATH`` starts with the toolkit's
    ``bin`` and ``nvvm/bin`` (so nvcc finds cicc/ptxas even without its
    ``nvcc.profile``), ``LD_LIBRARY_PATH`` includes its library folders, and
    ``NVCC_PREPEND_FLAGS``/``NVCC_APPEND_FLAGS`` are removed."""
    tk = toolkit or find_toolkit()
    env = dict(os.environ)
    for var in _NVCC_ENV_FLAGS:
        env.pop(var, None)
    path_parts = [str(tk.bin_dir), str(tk.nvvm_bin_dir)]
    if env.get("PATH"):
        path_parts.append(env["PATH"])
    else:
        path_parts.append(os.defpath)
    env["PATH"] = os.pathsep.join(path_parts)
    lib_parts = [str(p) for p in tk.lib_dirs]
    if env.get("LD_LIBRARY_PATH"):
        lib_parts.append(env["LD_LIBRARY_PATH"])
    if lib_parts:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(lib_parts)
    return env


def check_host_compiler(env: dict[str, str] | None = None) -> str:
    """Return the path of ``gcc`` on the (subprocess) ``PATH``; raise
    :class:`ToolkitNotFound` if there is none.  nvcc needs it even for ``-ptx``."""
    path = (env or os.environ).get("PATH", os.defpath)
    gcc = shutil.which("gcc", path=path)
    if gcc is None:
        raise ToolkitNotFound(
            "nvcc needs the host C/C++ compiler gcc (even to generate PTX), but gcc is not on PATH.\n"
            "Install it, e.g.:\n  apt-get install gcc g++    (Debian/Ubuntu)\n  dnf install gcc gcc-c++    (Fedora/RHEL)"
        )
    return gcc


@functools.lru_cache(maxsize=8)
def _nvcc_version(nvcc: str) -> str:
    try:
        proc = subprocess.run([nvcc, "--version"], check=False, capture_output=True, text=True, timeout=60)
    except OSError as exc:
        raise ToolkitNotFound(f"cannot run {nvcc}: {exc}") from exc
    out = proc.stdout + proc.stderr
    match = re.search(r"\bV(\d+(?:\.\d+)+)", out) or re.search(r"release\s+(\d+(?:\.\d+)+)", out)
    if proc.returncode != 0 or match is None:
        raise ToolkitNotFound(f"`{nvcc} --version` failed (exit {proc.returncode}):\n{out.strip()}")
    return match.group(1)


def nvcc_path() -> Path:
    return find_toolkit().nvcc


def ptxas_path() -> Path:
    return find_toolkit().ptxas


def toolkit_version() -> str:
    """Version of the located toolkit, e.g. ``"13.5.37"`` (cached per nvcc path)."""
    return find_toolkit().version()

"""CuPy's own files that tlpsim's CuPy API uses but does not ship: its CUDA headers
(`cupy/complex.cuh`, `cupy/carray.cuh`, `cupy/cuComplex_bridge.h`, ..., which
`#include <cupy/...>` and `translate_cucomplex=True` need) and its test suite (run
with `tlpsim cupy -- python -m pytest tests/cupy_tests/...`). They come from one
pinned CuPy source package on PyPI (MIT licence), downloaded on request —
`tlpsim cupy --fetch-sources` or `make cupy-tests` — checked against its SHA-256 and
unpacked into the cache folder (`$TLPSIM_CACHE_DIR/cupy-VERSION`, else
`~/.cache/tlpsim/cupy-VERSION`): `include/cupy/...`, `tests/...`, `pyproject.toml`
(CuPy's pytest settings) and `LICENSE`. CuPy's Python package is not unpacked, so
`import cupy` there still finds tlpsim's. `TLPSIM_CUPY_SOURCES` names another
folder laid out so (or a CuPy checkout: its `cupy/_core/include` is used)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tarfile
import tempfile
from pathlib import Path

from tlpsim.errors import TlpsimError

CUPY_VERSION = "14.2.0"
SDIST_URL = ("https://files.pythonhosted.org/packages/dc/10/059a92d40b161ea24607c9e41a75098812ca7021f2b565524f87beba15c9/"
             "cupy-14.2.0.tar.gz")
SDIST_SHA256 = "cfed725e612178cfbdbf62f4a3a598b60edecbbca718c0d4580c21a16ae4a62c"
#: members of the source package that are unpacked: (prefix in the package, folder here)
_MEMBERS = (("cupy/_core/include/", "include/"), ("tests/", "tests/"), ("pyproject.toml", "pyproject.toml"),
            ("LICENSE", "LICENSE"))
_CUPY_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"]cupy/", re.MULTILINE)
_CCCL_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"](cub|thrust|cuda)/", re.MULTILINE)


def sources_dir() -> Path:
    """Where the unpacked CuPy files are (or will be)."""
    env = os.environ.get("TLPSIM_CUPY_SOURCES", "").strip()
    if env:
        return Path(env).expanduser()
    root = os.environ.get("TLPSIM_CACHE_DIR", "").strip()
    if root:
        return Path(root).expanduser() / f"cupy-{CUPY_VERSION}"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "tlpsim" / f"cupy-{CUPY_VERSION}"


def include_dir() -> Path | None:
    """The folder holding `cupy/complex.cuh`, or None when the sources are not fetched."""
    root = sources_dir()
    for d in (root / "include", root / "cupy" / "_core" / "include"):
        if (d / "cupy" / "complex.cuh").is_file():
            return d
    return None


def tests_dir() -> Path | None:
    d = sources_dir() / "tests"
    return d if (d / "cupy_tests").is_dir() else None


def cupy_include_options(source: str, toolchain: str) -> tuple[str, ...]:
    """`-I` for CuPy's headers, after their bundled CCCL (cub, thrust, libcudacxx), as CuPy
    orders them, when `source` includes one of CuPy's headers, or (toolchain cuda11,
    whose NVRTC has no CCCL of its own) a CCCL header, and they are fetched. Nothing
    otherwise, so other programs' compile commands (and PTX cache keys) are unchanged."""
    if not (_CUPY_INCLUDE.search(source) or (toolchain == "cuda11" and _CCCL_INCLUDE.search(source))):
        return ()
    inc = include_dir()
    if inc is None:
        return ()
    cccl = inc / "cupy" / "_cccl"
    opts = tuple(f"-I{cccl / part}" for part in ("cub", "thrust", "libcudacxx") if (cccl / part).is_dir()) \
        + (f"-I{inc}",)
    # CuPy 14's CCCL refuses CUDA 11 by default; its complex type and the CUB/Thrust parts
    # CuPy kernels use compile with NVRTC 11.8 once that check is waived
    return opts + (("-DCCCL_IGNORE_DEPRECATED_CUDA_BELOW_12",) if toolchain == "cuda11" else ())


def fetch(echo=print) -> Path:
    """Download, check and unpack the pinned CuPy source package (once); its folder."""
    dest = sources_dir()
    if include_dir() is not None and tests_dir() is not None:
        return dest
    import urllib.request

    echo(f"downloading CuPy {CUPY_VERSION}'s source package (headers and tests, ~4 MB) from PyPI")
    with tempfile.TemporaryDirectory(prefix="tlpsim-cupy-") as tmp:
        archive = Path(tmp) / "cupy.tar.gz"
        try:
            with urllib.request.urlopen(SDIST_URL, timeout=120) as r, open(archive, "wb") as f:
                shutil.copyfileobj(r, f)
        except OSError as exc:
            raise TlpsimError(f"cannot download {SDIST_URL}: {exc}; download it by hand and unpack it, then "
                              "point TLPSIM_CUPY_SOURCES at the folder") from None
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != SDIST_SHA256:
            raise TlpsimError(f"{SDIST_URL}: SHA-256 {digest} is not the pinned {SDIST_SHA256}; not unpacked")
        staging = Path(tmp) / "out"
        top = f"cupy-{CUPY_VERSION}/"
        with tarfile.open(archive) as tar:
            for m in tar.getmembers():
                if not m.name.startswith(top) or not (m.isfile() or m.isdir()):
                    continue
                rel = m.name[len(top):]
                for prefix, folder in _MEMBERS:
                    if rel == prefix or (prefix.endswith("/") and rel.startswith(prefix)):
                        target = staging / (folder + rel[len(prefix):])
                        if m.isdir():
                            target.mkdir(parents=True, exist_ok=True)
                        else:
                            target.parent.mkdir(parents=True, exist_ok=True)
                            src = tar.extractfile(m)
                            target.write_bytes(src.read() if src is not None else b"")
                        break
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        shutil.move(str(staging), str(dest))
    echo(f"CuPy {CUPY_VERSION} headers and tests in {dest}")
    return dest


__all__ = ["CUPY_VERSION", "cupy_include_options", "fetch", "include_dir", "sources_dir", "tests_dir"]

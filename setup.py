"""Build of tlpsim's compiled parts (everything else is in pyproject.toml).

The CUDA runtime library that `tlpsim exec` loads into programs
(src/tlpsim/cudart/lib/libcudart.so.13) is compiled with the system C compiler by
tlpsim/cudart/build.py, always (it is not part of the optional compiled core).

mypyc compiles the timing model's hot modules (listed in src/tlpsim/_core.py) from
the same Python sources into C extensions; tlpsim runs them when they match the
sources and the sources otherwise. TLPSIM_PURE_PYTHON=1 at install time skips the
build (a pure-Python install); a failed build stops the install with the compiler's
message, as any C extension would.
"""

import hashlib
import importlib.util
import json
import os
import re
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent
SRC = ROOT / "src"
RECORD = SRC / "tlpsim" / "_core_build.json"
BUILT_SOURCES: dict = {}


def compiled_modules() -> list[str]:
    text = (SRC / "tlpsim" / "_core.py").read_text()
    block = re.search(r"COMPILED_MODULES: tuple\[str, \.\.\.\] = \((.*?)\)", text, re.S)
    return re.findall(r'"([\w.]+)"', block.group(1))


def ext_modules() -> list:
    if os.environ.get("TLPSIM_PURE_PYTHON", "").strip() not in ("", "0"):
        return []
    if {"egg_info", "dist_info", "sdist"} & set(sys.argv[1:]):
        return []  # metadata only: nothing is compiled in these steps
    from mypyc.build import mypycify

    modules = compiled_modules()
    paths = [SRC.joinpath(*m.split(".")).with_suffix(".py") for m in modules]
    # the digests of what is compiled: tlpsim runs the extensions only while they match.
    # The record is written once the build has succeeded (BuildExt.run): a build that
    # fails leaves none, so the extensions of an earlier build are never taken for these
    # sources
    RECORD.unlink(missing_ok=True)
    BUILT_SOURCES["sources"] = {m: hashlib.sha256(p.read_bytes()).hexdigest() for m, p in zip(modules, paths)}
    return mypycify([str(p.relative_to(ROOT)) for p in paths], opt_level="3", debug_level="0",
                    group_name="tlpsim_core")


class BuildExt(build_ext):
    """The extensions, then the CUDA runtime library next to them (in place for editable installs)."""

    def run(self) -> None:
        super().run()
        root = SRC if self.inplace else Path(self.build_lib)
        if BUILT_SOURCES:  # (beside the sources, and beside the extensions where they go elsewhere)
            for where in {RECORD, root / "tlpsim" / RECORD.name}:
                where.write_text(json.dumps(BUILT_SOURCES, indent=1) + "\n")
        spec = importlib.util.spec_from_file_location("tlpsim_cudart_build", SRC / "tlpsim" / "cudart" / "build.py")
        cudart = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(cudart)
        cudart.build(root / "tlpsim" / "cudart" / "lib")


class BinaryDistribution(Distribution):
    def has_ext_modules(self) -> bool:
        return True  # the runtime library is built even when the compiled core is not


setup(ext_modules=ext_modules(), cmdclass={"build_ext": BuildExt}, distclass=BinaryDistribution)

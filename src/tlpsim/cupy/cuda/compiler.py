"""`cupy.cuda.compiler`: compiling CUDA source for the simulated GPU with CuPy's entry
points and exceptions. The compiler is the device's toolchain (NVRTC 11.8 for
"cuda11", nvcc 13.5 for "cuda13"; docs/toolchains.md) whatever `backend` says;
`compile_with_cache` returns a module whose kernels launch on the simulator."""

from __future__ import annotations

import os
import subprocess

from tlpsim.cuda_errors import CompileException, JitifyException
from tlpsim.cupy import _device, _util
from tlpsim.cupy.cuda import _compiler_cache
from tlpsim.cupy_sources import sources_dir
from tlpsim.host_kernels import RawModule

# where CuPy keeps its on-disk cache and in-memory preprocess cache (tests patch these)
_kernel_cache_backend = _compiler_cache.DiskKernelCacheBackend(
    os.environ.get("CUPY_CACHE_DIR", str(sources_dir().parent / "cupy-kernel-cache")))
_empty_file_preprocess_cache: dict = {}


def _get_bool_env_variable(name: str, default: bool) -> bool:
    val = os.environ.get(name)
    if val is None or len(val) == 0:
        return default
    try:
        return int(val) == 1
    except ValueError:
        return False


def _get_arch() -> str:
    """The SM number kernels are compiled for on the current device ('35', '80')."""
    major, minor = _device.compute_capability(_device.current())
    return f"{major}{minor}"


def _get_max_compute_capability() -> str:
    return _get_arch()


def _run_cc(cmd, cwd, backend: str, log_stream=None) -> str:
    """Run a compiler command (nvcc from get_nvcc_path()); its output, or CompileException with it."""
    from tlpsim.frontend.toolkit import find_toolkit

    env = find_toolkit().env()
    try:
        out = subprocess.check_output(list(cmd), cwd=cwd, env=env, stderr=subprocess.STDOUT, text=True,
                                      errors="replace")
    except subprocess.CalledProcessError as exc:
        raise CompileException(f"{backend} failed (exit status {exc.returncode}): {' '.join(map(str, cmd))}\n"
                               f"{exc.output}", "", str(cmd[-1]) if cmd else "", tuple(cmd[1:]), backend) from None
    except OSError as exc:
        raise CompileException(f"cannot run {backend}: {exc}", "", "", tuple(cmd), backend) from None
    if log_stream is not None:
        log_stream.write(out)
    return out


@_util.memoize(for_each_device=True)
def _compile_module(source: str, options: tuple, backend: str, enable_cooperative_groups: bool,
                    name_expressions, jitify) -> RawModule:
    mod = RawModule(code=source, options=options, backend=backend,
                    enable_cooperative_groups=enable_cooperative_groups, name_expressions=name_expressions)
    mod.jitify = bool(jitify)
    return mod


def compile_with_cache(source: str, options=(), arch=None, cache_dir=None, extra_source=None, backend="nvrtc",
                       enable_cooperative_groups=False, name_expressions=None, log_stream=None, jitify=False):
    """A compiled module (`.get_function(name)` gives launchable kernels)."""
    if arch is not None and str(arch) != _get_arch():
        from tlpsim.cuda_errors import ArgumentValueError

        raise ArgumentValueError(f"compile_with_cache(arch={arch!r}): the simulated device compiles for "
                                 f"sm_{_get_arch()}; choose the target with `tlpsim cupy --config` / gpu.arch")
    mod = _compile_module(source, tuple(options), backend, bool(enable_cooperative_groups),
                          tuple(name_expressions) if name_expressions else None, bool(jitify))
    mod.compile(log_stream)
    return mod


def compile_using_nvrtc(source: str, options=(), arch=None, filename="kern.cu", name_expressions=None,
                        log_stream=None, cache_in_memory=False, jitify=None):
    """The PTX of `source` (the device's toolchain compiles it)."""
    _jitify_warn(jitify)
    mod = RawModule(code=source, options=tuple(options), name_expressions=name_expressions)
    mod.jitify = bool(jitify)
    mod.compile(log_stream)
    return mod.program.compile_result.ptx if mod.program.compile_result else source


def _jitify_warn(jitify) -> None:
    from tlpsim.host_kernels import _jitify_warning

    _jitify_warning(jitify)


__all__ = ["CompileException", "JitifyException", "compile_using_nvrtc", "compile_with_cache"]

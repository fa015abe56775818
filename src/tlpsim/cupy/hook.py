"""Running unmodified CuPy programs: an import hook that resolves `import cupy`,
`cupy.*`, `cupyx` and the `cupy_backends` modules CuPy's tests use to tlpsim's CuPy
API, the simulated device it sets up from the environment `tlpsim cupy` passes
(TLPSIM_CUPY_CONFIG, TLPSIM_CUPY_MODE, TLPSIM_CUPY_SET), and the launch summary
printed at exit.

`tlpsim cupy -- CMD` puts `tlpsim/cupy/_boot` first on the child's PYTHONPATH; its
`sitecustomize` calls `install()`, so every Python process the command starts
(pytest's subprocesses too) sees the hook. Aliases are the very module objects of
`tlpsim.cupy` (`cupy.cuda.compiler is tlpsim.cupy.cuda.compiler`), so patching a
CuPy name (`mock.patch('cupy.cuda.compiler._kernel_cache_backend')`) patches
tlpsim's."""

from __future__ import annotations

import atexit
import importlib
import importlib.abc
import importlib.util
import json
import os
import sys
import types

#: top-level names that resolve to tlpsim's modules
_PREFIXES = {"cupy": "tlpsim.cupy", "cupyx": "tlpsim.cupy.cupyx"}
#: cupy_backends modules CuPy's own code and tests import
_BACKENDS = {
    "cupy_backends.cuda.libs.nvrtc": "tlpsim.cupy.cuda.nvrtc",
    "cupy_backends.cuda.api.runtime": "tlpsim.cupy.cuda.runtime",
    "cupy_backends.cuda.api.driver": "tlpsim.cupy.cuda.driver",
}
_BACKEND_PACKAGES = {"cupy_backends", "cupy_backends.cuda", "cupy_backends.cuda.libs", "cupy_backends.cuda.api"}

ENV_CONFIG, ENV_MODE, ENV_SET, ENV_SUMMARY = "TLPSIM_CUPY_CONFIG", "TLPSIM_CUPY_MODE", "TLPSIM_CUPY_SET", \
    "TLPSIM_CUPY_SUMMARY"


def real_name(fullname: str) -> str | None:
    """The tlpsim module a CuPy module name resolves to (None: not a CuPy name)."""
    if fullname in _BACKENDS:
        return _BACKENDS[fullname]
    top, dot, rest = fullname.partition(".")
    if top in _PREFIXES:
        return _PREFIXES[top] + dot + rest
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        module.__spec__ = self.spec  # the import system set the alias's spec; keep tlpsim's


class CupyFinder(importlib.abc.MetaPathFinder):
    """Finds CuPy's module names and hands out tlpsim's modules for them."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in _BACKEND_PACKAGES:
            module = types.ModuleType(fullname, "tlpsim: CuPy's backend modules that CuPy's tests import")
            module.__path__ = []
            return importlib.util.spec_from_loader(fullname, _AliasLoader(module), is_package=True)
        real = real_name(fullname)
        if real is None:
            return None
        start_session()
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as exc:
            if exc.name != real:
                raise
            raise ModuleNotFoundError(f"No module named {fullname!r}: tlpsim's CuPy API does not provide it "
                                      "(docs/cupy.md lists what it does)", name=fullname) from None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module),
                                               is_package=hasattr(module, "__path__"))


_session: dict = {}


def start_session() -> None:
    """Make the simulated device from the environment (once per process) and print the
    launch summary at exit."""
    if _session:
        return
    _session["started"] = True
    import tlpsim.host as host

    config = os.environ.get(ENV_CONFIG) or "gtx480"
    mode = os.environ.get(ENV_MODE) or "functional"
    overrides = json.loads(os.environ.get(ENV_SET) or "{}")
    if overrides:
        from tlpsim.config.loader import load_config

        cfg = load_config(config, overrides=overrides)
    else:
        cfg = config
    device = host.Device(config=cfg, mode=mode)
    device.preset = config
    host._default_device = device
    _session["device"] = device
    atexit.register(_at_exit)


def _at_exit() -> None:
    from tlpsim.cupy.summary import summary_lines, summary_record

    device = _session.get("device")
    if device is None:
        return
    try:
        device.synchronize()
    except Exception as exc:  # noqa: BLE001 - a failed simulation at exit is reported, not raised
        print(f"tlpsim cupy: the pending timing launches could not be simulated: {exc}", file=sys.stderr)
    path = os.environ.get(ENV_SUMMARY)
    if path:
        record = summary_record(device)
        record["argv"] = sys.argv
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
    for line in summary_lines(device):
        print(line, file=sys.stderr)


def install() -> None:
    """Put the finder first on sys.meta_path (once)."""
    if not any(isinstance(f, CupyFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, CupyFinder())


def boot_dir() -> str:
    """The folder `tlpsim cupy` puts first on the child's PYTHONPATH."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_boot")

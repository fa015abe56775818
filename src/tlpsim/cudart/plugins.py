"""`--plugin FILE.py|module` for `tlpsim exec`: importing a plug-in registers its
policies with tlpsim.policies.registry.register, before the config that names
them is resolved (in the program's process, where the simulator runs)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path

from tlpsim.errors import TlpsimError


def load_plugin_files(specs) -> None:
    for spec in specs:
        path = Path(spec)
        if spec.endswith(".py") or path.is_file():
            if not path.is_file():
                raise TlpsimError(f"--plugin {spec}: no such file")
            name = f"tlpsim_plugin_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]}"
            if name in sys.modules:
                continue
            mod_spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(mod_spec)
            sys.modules[name] = module
            try:
                mod_spec.loader.exec_module(module)
            except Exception as exc:
                del sys.modules[name]
                raise TlpsimError(f"--plugin {spec}: importing it failed: {type(exc).__name__}: {exc}") from exc
        else:
            try:
                importlib.import_module(spec)
            except ImportError as exc:
                raise TlpsimError(f"--plugin {spec}: not a file and not an importable module ({exc})") from exc

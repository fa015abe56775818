"""Installed by `tlpsim cupy -- CMD` (first on PYTHONPATH): resolve `import cupy` to
tlpsim's CuPy API, then run the sitecustomize this one shadows, if any."""

import importlib.util
import os
import sys

try:
    from tlpsim.cupy.hook import install
except ImportError as exc:  # another Python than tlpsim's: say so once, leave the program alone
    sys.stderr.write(f"tlpsim cupy: {sys.executable} cannot import tlpsim ({exc}); run the command with the "
                     "Python tlpsim is installed in\n")
else:
    install()

_here = os.path.dirname(os.path.abspath(__file__))
for _entry in sys.path:
    if _entry and os.path.abspath(_entry) != _here and os.path.isfile(os.path.join(_entry, "sitecustomize.py")):
        _spec = importlib.util.spec_from_file_location("_shadowed_sitecustomize",
                                                       os.path.join(_entry, "sitecustomize.py"))
        _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
        break

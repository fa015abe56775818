"""Drop-in for `import cupy as cp`: `import tlpsim.cupy as cp` runs RawKernel/RawModule
scripts on the simulated GPU."""

from tlpsim import *  # noqa: F401,F403
from tlpsim import __all__  # noqa: F401

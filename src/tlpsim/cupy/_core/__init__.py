"""`cupy._core`: the parts CuPy's tests import (`_accelerator`)."""

from tlpsim.cupy._core import _accelerator  # noqa: F401

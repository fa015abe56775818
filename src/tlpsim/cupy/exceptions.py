"""`cupy.exceptions`: NumPy's warning and error classes, under CuPy's names."""

from numpy.exceptions import AxisError, ComplexWarning, DTypePromotionError, TooHardError, VisibleDeprecationWarning

__all__ = ["AxisError", "ComplexWarning", "DTypePromotionError", "TooHardError", "VisibleDeprecationWarning"]

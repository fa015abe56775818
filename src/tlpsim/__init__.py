"""tlpsim: a Python simulator of NVIDIA-style GPUs for SM resource-management research."""

__version__ = "0.1.0"

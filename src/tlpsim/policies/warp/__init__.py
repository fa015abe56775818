"""Warp schedulers: which eligible warp issues (one module per policy)."""

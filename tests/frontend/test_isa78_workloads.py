"""Every built-in workload compiled as the Fermi/Kepler paper presets compile it (the
cuda11 toolchain: NVRTC 11.8, compute_35, PTX ISA 7.8, ptxas 11.8 with the cap of 63)
parses, runs and verifies against NumPy at `tiny`. All 37 run (about a second each);
the Maxwell target (sm_52) was checked the same way when the toolchain was added
(docs/toolchains.md)."""

from __future__ import annotations

import pytest

import tlpsim
from tlpsim.config import load_config
from tlpsim.workloads.registry import load_workloads

NAMES = sorted(load_workloads())
GTX480 = load_config("gtx480").gpu.compile_options


def test_gtx480_compiles_with_cuda11_for_sm35():
    assert GTX480 == {"toolchain": "cuda11", "arch": "sm_35", "maxrregcount": 63}


@pytest.mark.parametrize("name", NAMES)
def test_tiny_verifies_under_isa78(name):
    with tlpsim.Device(trace=False, **GTX480):
        result = load_workloads()[name].execute("tiny")
    assert result.launches, "no kernel launched"
    assert result.verified, [c for c in result.checks if not c.ok]
    for rec in result.launches:
        assert rec.compile["toolchain"] == "cuda11" and rec.compile["arch"] == "sm_35", rec.kernel
        assert rec.resources is not None and 0 < rec.resources.registers <= 63, rec.kernel

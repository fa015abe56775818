"""Timing-model entry points reject bad input with clear errors."""

import numpy as np
import pytest

import tlpsim
from tlpsim.errors import ConfigError, TlpsimError


def test_unknown_preset_and_key_are_named():
    from tlpsim.config.loader import load_config

    with pytest.raises(ConfigError, match="available"):
        load_config("gtx481")
    with pytest.raises(ConfigError, match="sm.warp_schedler"):
        load_config("gtx480", ["sm.warp_schedler=gto"])


def test_unknown_policy_lists_choices():
    from tlpsim.config.loader import load_config

    cfg = load_config("gtx480", ["sm.warp_scheduler=fastest"])
    with pytest.raises(ConfigError, match="gto"):
        tlpsim.Device(mode="timing", config=cfg)


def test_cta_that_never_fits_is_reported():
    src = r'''extern "C" __global__ void big(float* x) { x[threadIdx.x] = 1.0f; }'''
    with tlpsim.Device(mode="timing", trace_cache=False):
        k = tlpsim.RawKernel(src, "big")
        with pytest.raises(TlpsimError, match="never fits"):
            k((1,), (256,), (tlpsim.zeros(256, np.float32),), resources={"registers": 255, "shared_bytes": 0})

"""Hopper-era PTX tlpsim does not model is refused with the feature named, the file and the
line: tensor cores, TMA, mbarriers, thread-block clusters (Ampere's cp.async executes)."""

from __future__ import annotations

import pytest

import tlpsim as cp
from tlpsim.errors import UnsupportedPTX

_HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .f32 %f<8>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 0;
"""


@pytest.mark.parametrize("line, feature", [
    ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 16, [%r1];",
     "Tensor Memory Accelerator"),
    ("mbarrier.init.shared.b64 [%r1], 1;", "mbarriers"),
    ("mapa.u64 %rd2, %rd1, 0;", "thread-block clusters"),
    ("mov.u32 %r2, %cluster_ctarank;", "thread-block clusters"),
    ("barrier.cluster.arrive;", "thread-block clusters"),
    ("ld.shared::cluster.u32 %r2, [%r1];", "thread-block clusters"),
    ("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r2}, [%r1];", "tensor-core"),
])
def test_refused_with_the_feature_named(line, feature):
    src = _HEAD + "  " + line + "\n  ret;\n}\n"
    with cp.Device(mode="functional", config="h200"):
        mod = cp.RawModule(code=src)
        out = cp.zeros(4, cp.uint32)
        with pytest.raises(UnsupportedPTX) as exc:
            mod.get_function("k")((1,), (32,), (out,))
    msg = str(exc.value)
    assert feature in msg and "kernel k" in msg and ":11:" in msg


def test_cluster_scope_fence_is_accepted():
    src = _HEAD + "  fence.acq_rel.cluster;\n  st.global.u32 [%rd1], %r1;\n  ret;\n}\n"
    with cp.Device(mode="functional", config="h200"):
        out = cp.full(4, 7, cp.uint32)
        cp.RawModule(code=src).get_function("k")((1,), (32,), (out,))
        assert out.get()[0] == 0

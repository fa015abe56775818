"""Texture fetches on texture objects (`tex.1d`/`tex.2d`) run (tests/cudart/test_textures.py
covers their semantics); a made-up handle is a kernel fault naming it. The other
texture and surface instructions are not simulated: a kernel using one is rejected
when it is first launched, naming the instruction, the kernel and the PTX line (it
used to fail parsing with a misleading "undeclared register"), and the module's
other kernels still run."""

from __future__ import annotations

import numpy as np
import pytest

import tlpsim
from tlpsim.errors import UnsupportedPTX
from tlpsim.frontend.ptx_parser import parse_ptx

CUDA = r'''
extern "C" __global__ void fetch1d(cudaTextureObject_t t, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, i) * 2.0f;
}
extern "C" __global__ void fetch2d(cudaTextureObject_t t, float* out, int w) {
    out[blockIdx.x * w + threadIdx.x] = tex2D<float>(t, threadIdx.x + 0.5f, blockIdx.x + 0.5f);
}
extern "C" __global__ void write2d(cudaSurfaceObject_t s) {
    surf2Dwrite<float>(1.0f, s, threadIdx.x * 4, blockIdx.x);
}
extern "C" __global__ void plain(float* out) { out[threadIdx.x] = threadIdx.x; }
'''

# hand-written forms nvcc no longer emits: a legacy texture reference with a sampler, txq, suld
PTX = """.version 9.5
.target sm_80, texmode_independent
.address_size 64
.global .texref tref;
.global .samplerref samp;
.visible .entry legacy(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .f32 %f<6>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    txq.width.b32 %r2, [tref];
    tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tref, samp, {%r1}];
    st.global.f32 [%rd1], %f1;
    ret;
}
.visible .entry surface_load(.param .u64 s)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [s];
    mov.u32 %r1, %tid.x;
    suld.b.2d.b32.trap {%r2}, [%rd1, {%r1, %r1}];
    ret;
}
"""


@pytest.mark.parametrize("kernel, opcode, args", [
    ("write2d", "sust.b.2d.b32.trap", lambda out: (np.uint64(1),)),
])
def test_surface_kernels_are_rejected_by_name(kernel, opcode, args):
    with tlpsim.Device():
        mod = tlpsim.RawModule(code=CUDA)
        line = next(k + 1 for k, text in enumerate(mod.program.module.source.splitlines()) if opcode in text)
        out = tlpsim.zeros(32, np.float32)
        with pytest.raises(UnsupportedPTX) as err:
            mod.get_function(kernel)((1,), (32,), args(out))
        assert not out.get().any()  # rejected before anything ran
        tlpsim.RawKernel(None, "plain", _module=mod)((1,), (32,), (out,))  # the module's other kernels run
        np.testing.assert_array_equal(out.get(), np.arange(32, dtype=np.float32))
    assert str(err.value).startswith(f"<cuda>.ptx:{line}:1: texture/surface instruction '{opcode}' is not "
                                     f"supported: tlpsim samples textures with tex.1d/tex.2d only (kernel {kernel})")


def test_texture_object_fetches_run_and_a_made_up_handle_faults():
    from tlpsim.errors import KernelError
    from tlpsim.functional.textures import FLOAT, ChannelFormat, Texture

    with tlpsim.Device() as dev:
        mod = tlpsim.RawModule(code=CUDA)
        data = tlpsim.asarray(np.arange(32, dtype=np.float32) * 0.5)
        dev.memory.textures[7] = Texture(int(data.data.ptr), ChannelFormat((32, 0, 0, 0), FLOAT), 32)
        out = tlpsim.zeros(32, np.float32)
        mod.get_function("fetch1d")((1,), (32,), (np.uint64(7), out, np.int32(32)))
        np.testing.assert_array_equal(out.get(), np.arange(32, dtype=np.float32))  # 2 * 0.5 * i
        with pytest.raises(KernelError, match="not a live texture object"):
            mod.get_function("fetch2d")((1,), (32,), (np.uint64(8), out, np.int32(32)))


@pytest.mark.parametrize("kernel, opcode, line", [("legacy", "txq.width.b32", 13), ("surface_load",
                                                  "suld.b.2d.b32.trap", 24)])
def test_texture_references_txq_and_surface_loads_are_rejected(tmp_path, kernel, opcode, line):
    m = parse_ptx(PTX, "t.ptx")  # every operand form parses
    ins = {i.opcode: i for i in m.kernels["legacy"].instructions}
    tex = ins["tex.1d.v4.f32.s32"]
    assert [str(e) for e in tex.srcs[0].elems] == ["tref", "samp", "%r1"] and tex.opclass == "tex"
    path = tmp_path / "t.ptx"
    path.write_text(PTX)
    with tlpsim.Device():
        k = tlpsim.RawModule(path=str(path)).get_function(kernel)
        with pytest.raises(UnsupportedPTX) as err:
            k((1,), (32,), (tlpsim.zeros(32, np.float32),))
    assert str(err.value).startswith(f"{path}:{line}:1: texture/surface instruction '{opcode}' is not supported")
    assert f"(kernel {kernel})" in str(err.value)

"""A retired CTA's warps, with their instruction streams, are freed at once by
reference counting: a launch's memory is its resident warps', not every warp it
has run (a long kernel may not reach a full garbage collection before its end)."""

import gc

import numpy as np

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.session import build_gpu
from tlpsim.timing.builder import latency_tables
from tlpsim.timing.static import StaticKernel
from tlpsim.timing.warp import CTA, Warp

SRC = r'''extern "C" __global__ void k(const int* a, int* b) {
    __shared__ int s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = a[i];
    __syncthreads();
    b[i] = s[threadIdx.x ^ 1] + 1; }'''
N_CTAS, BLOCK = 64, 128  # 64 CTAs: several waves on gtx480's 15 SMs x 8 CTA slots


def _live(kind: type) -> int:
    return sum(type(o) is kind for o in gc.get_objects())


def test_retired_ctas_and_their_warps_are_freed_without_a_garbage_collection():
    with tlpsim.Device() as dev:
        k = tlpsim.RawKernel(SRC, "k")
        a = tlpsim.asarray(np.arange(N_CTAS * BLOCK, dtype=np.int32))
        rec = k((N_CTAS,), (BLOCK,), (a, tlpsim.zeros(N_CTAS * BLOCK, np.int32)))
        ck = dev._compiled[(id(k.program.module), k.kernel.name)]
    cfg = load_config("gtx480")
    gpu = build_gpu(cfg)
    gpu.launch(StaticKernel(ck.fn, latency_tables(cfg), ck.oc.space_of_access), rec.trace,
               rec.resources.registers, rec.resources.shared_bytes)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()  # only reference counting frees anything now
    try:
        (st,) = gpu.run()
        assert st.warp_insts == rec.trace.warp_instructions and rec.trace.n_warps == N_CTAS * BLOCK // 32
        assert (_live(Warp), _live(CTA)) == (0, 0)
    finally:
        if enabled:
            gc.enable()

"""Shared and local addresses are 32-bit offsets that wrap modulo 2^32 (PTX ISA,
state spaces): nvcc -O3 keeps a shared-array base minus a thread-dependent term
in a register that goes below zero and adds the rest as the access's immediate
offset. Rodinia's nw kernel computes wrong results (here: a spurious illegal
address) unless the sum wraps."""

from __future__ import annotations

import numpy as np
import pytest

import tlpsim
from tlpsim.functional.memory import MemoryFault

REGS = ".reg .b32 %r<16>; .reg .b64 %rd<8>;"
N = 32

# Rodinia nw's first kernel (needle_cuda_shared_1), as the benchmark writes it
NEEDLE = r'''
#define BLOCK_SIZE 16
__device__ int maximum(int a, int b, int c) { int k = a > b ? a : b; return k > c ? k : c; }
extern "C" __global__ void needle_1(const int* referrence, int* matrix_cuda, int cols, int penalty, int i) {
    int bx = blockIdx.x, tx = threadIdx.x;
    int b_index_x = bx, b_index_y = i - 1 - bx;
    int index    = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x + tx + (cols + 1);
    int index_n  = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x + tx + 1;
    int index_w  = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x + cols;
    int index_nw = cols * BLOCK_SIZE * b_index_y + BLOCK_SIZE * b_index_x;
    __shared__ int temp[BLOCK_SIZE + 1][BLOCK_SIZE + 1];
    __shared__ int ref[BLOCK_SIZE][BLOCK_SIZE];
    if (tx == 0) temp[tx][0] = matrix_cuda[index_nw];
    for (int ty = 0; ty < BLOCK_SIZE; ty++) ref[ty][tx] = referrence[index + cols * ty];
    __syncthreads();
    temp[tx + 1][0] = matrix_cuda[index_w + cols * tx];
    __syncthreads();
    temp[0][tx + 1] = matrix_cuda[index_n];
    __syncthreads();
    for (int m = 0; m < BLOCK_SIZE; m++) {
        if (tx <= m) {
            int t_index_x = tx + 1, t_index_y = m - tx + 1;
            temp[t_index_y][t_index_x] = maximum(temp[t_index_y - 1][t_index_x - 1] + ref[t_index_y - 1][t_index_x - 1],
                                                 temp[t_index_y][t_index_x - 1] - penalty,
                                                 temp[t_index_y - 1][t_index_x] - penalty);
        }
        __syncthreads();
    }
    for (int m = BLOCK_SIZE - 2; m >= 0; m--) {
        if (tx <= m) {
            int t_index_x = tx + BLOCK_SIZE - m, t_index_y = BLOCK_SIZE - tx;
            temp[t_index_y][t_index_x] = maximum(temp[t_index_y - 1][t_index_x - 1] + ref[t_index_y - 1][t_index_x - 1],
                                                 temp[t_index_y][t_index_x - 1] - penalty,
                                                 temp[t_index_y - 1][t_index_x] - penalty);
        }
        __syncthreads();
    }
    for (int ty = 0; ty < BLOCK_SIZE; ty++) matrix_cuda[index + ty * cols] = temp[ty + 1][tx + 1];
}'''


def _needleman_wunsch(ref: np.ndarray, score: np.ndarray, penalty: int) -> np.ndarray:
    out = score.copy()
    for i in range(1, out.shape[0]):
        for j in range(1, out.shape[1]):
            out[i, j] = max(out[i - 1, j - 1] + ref[i, j], out[i, j - 1] - penalty, out[i - 1, j] - penalty)
    return out


def test_rodinia_nw_at_O3_matches_numpy():
    bs, blocks, penalty = 16, 3, 10
    cols = bs * blocks + 1
    rng = np.random.default_rng(7)
    ref = rng.integers(-10, 11, (cols, cols)).astype(np.int32)
    score = np.zeros((cols, cols), np.int32)
    score[0, :] = -penalty * np.arange(cols)
    score[:, 0] = -penalty * np.arange(cols)
    expect = _needleman_wunsch(ref, score, penalty)
    with tlpsim.Device():
        k = tlpsim.RawKernel(NEEDLE, "needle_1")  # compiled with the default -O3
        assert "neg.s32" in k.program.module.source  # the negative term the wrap is about
        d_ref, d_score = tlpsim.asarray(ref), tlpsim.asarray(score)
        for i in range(1, blocks + 1):  # the upper-left half of the block anti-diagonals
            k((i,), (bs,), (d_ref, d_score, np.int32(cols), np.int32(penalty), np.int32(i)))
        got = d_score.get()
    by, bx = np.divmod(np.arange(blocks * blocks), blocks)
    for y, x in zip(by.tolist(), bx.tolist()):
        rows, cols_ = slice(1 + bs * y, 1 + bs * (y + 1)), slice(1 + bs * x, 1 + bs * (x + 1))
        if x + y < blocks:
            np.testing.assert_array_equal(got[rows, cols_], expect[rows, cols_], err_msg=f"block ({y}, {x})")
        else:
            assert not got[rows, cols_].any()  # not computed by the first kernel


def test_shared_access_wraps_modulo_2_to_the_32(run_ptx):
    decls = REGS + "\n.shared .align 4 .b8 sm[256];"
    body = "\n".join([
        "st.shared.u32 [%r1+72], %r2;",        # 0xFFFFFFC0 + 4*lane + 72 -> 8 + 4*lane
        "ld.shared.u32 %r3, [%r1+72];",
        "atom.shared.add.u32 %r4, [%r1+72], 1;",
        "ld.shared.u32 %r5, [%rd1+8];",        # a 64-bit register wraps as well
    ])
    base = (np.uint32(0xFFFFFFC0) + 4 * np.arange(N, dtype=np.uint32)).astype(np.uint32)
    wide = (np.uint64(0xFFFFFFFFFFFFFFF8) + 4 * np.arange(N, dtype=np.uint64)).astype(np.uint64)
    vals = np.arange(N, dtype=np.uint32) + 100
    out = run_ptx(body, {"%r1": base, "%r2": vals, "%rd1": wide}, decls=decls)
    expect_addr = 8 + 4 * np.arange(N, dtype=np.uint64)
    for a in out.addresses[:3]:
        np.testing.assert_array_equal(a, expect_addr)  # what the tracer sees (bank conflicts)
    np.testing.assert_array_equal(out.reg("%r3"), vals)
    np.testing.assert_array_equal(out.reg("%r4"), vals)
    np.testing.assert_array_equal(out.state.shared[8: 8 + 4 * N].view(np.uint32), vals + 1)
    np.testing.assert_array_equal(out.reg("%r5"), np.r_[0, 0, vals[:-2] + 1])  # words 0 and 4 were not written
    np.testing.assert_array_equal(out.addresses[3], 4 * np.arange(N, dtype=np.uint64))


def test_wrapped_address_outside_the_window_is_still_an_error(run_ptx):
    # 0xFFFFFF00 + 0x40 wraps nowhere: 0xFFFFFF40 is past the 256-byte window
    with pytest.raises(MemoryFault) as err:
        run_ptx("ld.shared.u32 %r2, [%r1+64];", {"%r1": np.uint32(0xFFFFFF00)},
                decls=REGS + "\n.shared .align 4 .b8 sm[256];")
    assert err.value.address == 0xFFFFFF40 and "the shared window holds 256 bytes" in err.value.reason

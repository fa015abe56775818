"""Where local memory lives for the timing model: GPGPU-Sim's local-memory map.

Functionally every thread has its own local window starting at offset 0, so the
same offset in two threads is two different bytes. The memory system must see them
as different addresses, laid out as GPGPU-Sim lays them out
(shader_core_ctx::translate_local_memaddr with gpgpu_local_mem_map): 4-byte word `d`
of hardware thread `t` is at

    d * N * 4 + 4 * (T * (sm + n_sms * slot) + t % T)

where T is the CTA's threads padded to whole warps, `slot` the CTA's hardware slot on
its SM and N = T * slots * n_sms the threads the GPU can hold. A warp reading the same
word in every lane therefore touches one 128-byte line, and local memory's footprint
is the resident threads' (a CTA's successor in its slot reuses its lines).

The functional pass knows a thread's place in its CTA but not the SM or slot, so the
trace records the CTA-relative part (`cta_relative`) and the LD/ST unit adds the
placement when the access issues (`placed_line`). T * 4 is a multiple of 128, so a
128-byte line of the CTA-relative layout maps onto one line of the placed one."""

from __future__ import annotations

import numpy as np

#: base of the placed local-memory region (above any device allocation)
LOCAL_MEM_START = 0x7E00_0000_0000


def cta_relative(offsets: np.ndarray, thread: np.ndarray, threads_padded: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per lane (its local `offsets` and its `thread` index in the CTA), the CTA-relative
    addresses of the 4-byte words an access of `size` bytes touches (wider accesses are
    split into words, as GPGPU-Sim does), and for each address the lane it came from."""
    off = offsets.astype(np.int64, copy=False)
    t = thread.astype(np.int64, copy=False)
    span = threads_padded * 4
    words = max(size // 4, 1)
    lane = np.arange(off.size, dtype=np.int64)
    if words == 1:
        return (off >> 2) * span + t * 4 + (off & 3), lane
    d = ((off >> 2)[:, None] + np.arange(words, dtype=np.int64)).ravel()
    return d * span + np.repeat(t, words) * 4, np.repeat(lane, words)


def placed_line(line: int, threads_padded: int, sm_id: int, slot: int, n_sms: int, slots: int) -> int:
    """A CTA-relative line address placed for a CTA in `slot` of SM `sm_id`."""
    span = threads_padded * 4
    d, r = divmod(line, span)
    return LOCAL_MEM_START + d * span * slots * n_sms + span * (sm_id + n_sms * slot) + r

"""Stream-ordered allocation's memory pools (cudaMallocAsync, cudaMemPool*).

One device, so one default pool (also the device's current pool unless the program
sets another); cudaMemPoolCreate makes more. Allocations from a pool live in the same
unified-address window as cudaMalloc's, and a stream-ordered free takes effect at
once: kernels run when launched, so the stream's earlier work is already complete.
A pool therefore holds no freed memory: its reserved memory is the memory in use,
ReleaseThreshold is kept and reported but releases nothing, and cudaMemPoolTrimTo
has nothing to trim. The usage attributes (UsedMemCurrent/High,
ReservedMemCurrent/High) count the pool's live allocations as CUDA documents them.
"""

from __future__ import annotations

import ctypes
import itertools
from dataclasses import dataclass, field

from tlpsim.cudart import errors as E
from tlpsim.cudart.runtime import api, put

_HANDLES = itertools.count(0x7000, 0x10)  # opaque cudaMemPool_t values

# enum cudaMemPoolAttr
REUSE_FOLLOW_EVENTS, REUSE_OPPORTUNISTIC, REUSE_INTERNAL_DEPS, RELEASE_THRESHOLD = 1, 2, 3, 4
RESERVED_CURRENT, RESERVED_HIGH, USED_CURRENT, USED_HIGH = 5, 6, 7, 8
_INT_ATTRS = (REUSE_FOLLOW_EVENTS, REUSE_OPPORTUNISTIC, REUSE_INTERNAL_DEPS)
_NAMES = {1: "ReuseFollowEventDependencies", 2: "ReuseAllowOpportunistic", 3: "ReuseAllowInternalDependencies",
          4: "ReleaseThreshold", 5: "ReservedMemCurrent", 6: "ReservedMemHigh", 7: "UsedMemCurrent",
          8: "UsedMemHigh"}


@dataclass
class MemPool:
    flags: dict[int, int] = field(default_factory=lambda: dict.fromkeys(_INT_ATTRS, 1))
    release_threshold: int = 0
    used: int = 0
    used_high: int = 0
    reserved_high: int = 0


@dataclass
class Pools:
    default: int
    pools: dict[int, MemPool]
    current: int
    owner: dict[int, tuple[int, int]] = field(default_factory=dict)  # address -> (pool, bytes)

    def pool(self, handle: int) -> MemPool:
        p = self.pools.get(handle)
        if p is None:
            raise E.CudaError(E.INVALID_VALUE, f"{handle:#x} is not a memory pool (cudaDeviceGetDefaultMemPool, "
                                               "cudaMemPoolCreate)")
        return p

    def allocated(self, address: int, nbytes: int, handle: int | None = None) -> None:
        handle = self.current if handle is None else handle
        p = self.pool(handle)
        p.used += nbytes
        p.used_high = max(p.used_high, p.used)
        p.reserved_high = max(p.reserved_high, p.used)
        self.owner[address] = (handle, nbytes)

    def freed(self, address: int) -> None:
        hit = self.owner.pop(address, None)
        if hit is not None and hit[0] in self.pools:
            self.pools[hit[0]].used -= hit[1]


def pools_of(rt) -> Pools:
    pools = getattr(rt, "mempools", None)
    if pools is None:
        default = next(_HANDLES)
        pools = rt.mempools = Pools(default, {default: MemPool()}, default)
    return pools


def _device(device: int) -> None:
    if ctypes.c_int32(device).value != 0:
        raise E.CudaError(E.INVALID_DEVICE, f"device {ctypes.c_int32(device).value}: tlpsim simulates one GPU "
                                            "(device 0)")


@api("cudaDeviceGetDefaultMemPool")
def device_get_default_mem_pool(rt, a):
    _device(a[1])
    put(a[0], ctypes.c_uint64, pools_of(rt).default)


@api("cudaDeviceGetMemPool")
def device_get_mem_pool(rt, a):
    _device(a[1])
    put(a[0], ctypes.c_uint64, pools_of(rt).current)


@api("cudaDeviceSetMemPool")
def device_set_mem_pool(rt, a):
    _device(a[0])
    pools = pools_of(rt)
    pools.pool(a[1])
    pools.current = a[1]


@api("cudaMemPoolCreate")
def mem_pool_create(rt, a):
    if a[1] == 0:
        raise E.CudaError(E.INVALID_VALUE, "cudaMemPoolCreate: NULL pool properties")
    pools = pools_of(rt)
    handle = next(_HANDLES)
    pools.pools[handle] = MemPool()
    put(a[0], ctypes.c_uint64, handle)


@api("cudaMemPoolDestroy")
def mem_pool_destroy(rt, a):
    pools = pools_of(rt)
    pools.pool(a[0])
    if a[0] == pools.default:
        raise E.CudaError(E.INVALID_VALUE, "the device's default memory pool cannot be destroyed")
    del pools.pools[a[0]]
    if pools.current == a[0]:
        pools.current = pools.default


@api("cudaMemPoolTrimTo")
def mem_pool_trim_to(rt, a):
    pools_of(rt).pool(a[0])  # nothing is held back (see the module's docstring)


@api("cudaMemPoolSetAttribute")
def mem_pool_set_attribute(rt, a):
    p = pools_of(rt).pool(a[0])
    attr, value = int(a[1]), a[2]
    if value == 0:
        raise E.CudaError(E.INVALID_VALUE, "cudaMemPoolSetAttribute: NULL value")
    if attr in _INT_ATTRS:
        p.flags[attr] = ctypes.c_int32.from_address(value).value
    elif attr == RELEASE_THRESHOLD:
        p.release_threshold = ctypes.c_uint64.from_address(value).value
    elif attr in (RESERVED_HIGH, USED_HIGH):
        if ctypes.c_uint64.from_address(value).value != 0:
            raise E.CudaError(E.INVALID_VALUE, f"cudaMemPoolAttr{_NAMES[attr]} can only be reset to 0")
        if attr == USED_HIGH:
            p.used_high = p.used
        else:
            p.reserved_high = p.used
    else:
        raise E.CudaError(E.INVALID_VALUE, f"memory pool attribute {attr} cannot be set"
                                           + (f" (cudaMemPoolAttr{_NAMES[attr]})" if attr in _NAMES else ""))


@api("cudaMemPoolGetAttribute")
def mem_pool_get_attribute(rt, a):
    p = pools_of(rt).pool(a[0])
    attr, value = int(a[1]), a[2]
    if attr in _INT_ATTRS:
        put(value, ctypes.c_int32, p.flags[attr])
        return
    table = {RELEASE_THRESHOLD: p.release_threshold, RESERVED_CURRENT: p.used, RESERVED_HIGH: p.reserved_high,
             USED_CURRENT: p.used, USED_HIGH: p.used_high}
    if attr not in table:
        raise E.CudaError(E.INVALID_VALUE, f"memory pool attribute {attr} is not reported by tlpsim's runtime")
    put(value, ctypes.c_uint64, table[attr])

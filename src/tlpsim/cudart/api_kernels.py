"""Registration of device code (what nvcc's host code calls at start-up), kernel
launches, kernel attributes and occupancy."""

from __future__ import annotations

import ctypes
import time

from tlpsim.cudart import errors as E
from tlpsim.cudart.fatbin import FatbinError, read_registered
from tlpsim.cudart.modules import FatModule, KernelEntry, VarEntry
from tlpsim.cudart.runtime import api, cstr, dim3, put, read, u64
from tlpsim.cudart.streams import stream_of
from tlpsim.errors import KernelError, TlpsimError

# ------------------------------------------------------------------ registration


@api("__cudaRegisterFatBinary", sticky=False, sets_last=False)
def register_fatbin(rt, a):
    arch = int(rt.config.gpu.arch.split("_")[1].rstrip("af"))
    try:
        module = FatModule(len(rt.modules), read_registered(a[0], read), arch=arch)
    except FatbinError as exc:
        module = FatModule(len(rt.modules), None, error=f"the program's fat binary cannot be read: {exc}", arch=arch)
    rt.modules[a[1]] = module


def _module(rt, handle: int) -> FatModule:
    module = rt.modules.get(handle)
    if module is None:
        raise E.CudaError(E.CODES["cudaErrorInvalidKernelImage"], f"unknown fat binary handle {handle:#x}")
    return module


@api("__cudaRegisterFunction", sticky=False, sets_last=False)
def register_function(rt, a):
    rt.kernels[a[1]] = KernelEntry(_module(rt, a[0]), cstr(a[2]))


@api("__cudaRegisterVar", sticky=False, sets_last=False)
def register_var(rt, a):
    handle, host, name, _ext, size, constant, _global, managed = a
    entry = VarEntry(_module(rt, handle), cstr(name), int(size), bool(constant), bool(managed))
    if managed:
        # the host reaches a __managed__ variable through this pointer: give it the device copy itself
        address = rt.var_address(entry)
        put(host, ctypes.c_uint64, address)
        rt.allocs.setdefault(address, 2)
    rt.vars[host] = entry


# ------------------------------------------------------------------ launches


def launch_bound(kernel) -> int | None:
    """The most threads a block of `kernel` may have by its `__launch_bounds__` (PTX `.maxntid`)."""
    dims = kernel.directives.get("maxntid")
    if not dims:
        return None
    out = 1
    for d in dims:
        out *= d
    return out


def _check_config(rt, entry: KernelEntry, kernel, grid, block, dyn_smem: int, res) -> None:
    from tlpsim.cudart.props import attributes

    lim = attributes(rt.config)
    threads = block[0] * block[1] * block[2]
    name = entry.display
    # CUDA 13's runtime answers a configuration outside the limits, and a block above
    # __launch_bounds__, with cudaErrorInvalidValue (measured on an H200, driver 580:
    # tests/cudart/h200/error_api.stdout, launch_bounds.stdout), not InvalidConfiguration
    if min(block) < 1 or threads > lim["MaxThreadsPerBlock"] or block[0] > lim["MaxBlockDimX"] \
            or block[1] > lim["MaxBlockDimY"] or block[2] > lim["MaxBlockDimZ"]:
        raise E.CudaError(E.INVALID_VALUE, f"kernel {name}: block {block} ({threads} threads) is outside "
                                                   "the limits (1024 threads, 1024 x 1024 x 64)")
    if min(grid) < 1 or grid[0] > lim["MaxGridDimX"] or grid[1] > lim["MaxGridDimY"] or grid[2] > lim["MaxGridDimZ"]:
        raise E.CudaError(E.INVALID_VALUE, f"kernel {name}: grid {grid} is outside the limits "
                                                   "(1..2^31-1 x 1..65535 x 1..65535)")
    bound = launch_bound(kernel)
    if bound is not None and threads > bound:  # as on a GPU: the launch fails, nothing runs
        raise E.CudaError(E.INVALID_VALUE, f"kernel {name}: block {block} ({threads} threads) exceeds its "
                                           f"__launch_bounds__ (.maxntid {bound} threads)")
    static = res.shared_bytes if res is not None else 0
    allowed = entry.max_dynamic_smem if entry.max_dynamic_smem is not None \
        else lim["MaxSharedMemoryPerBlock"] - static
    if dyn_smem > allowed or static + dyn_smem > lim["MaxSharedMemoryPerBlockOptin"]:
        raise E.CudaError(E.INVALID_VALUE, f"kernel {name}: {dyn_smem} bytes of dynamic shared memory (+ {static} "
                                           f"static) exceed the {allowed + static} bytes a block may use "
                                           "(cudaFuncSetAttribute(MaxDynamicSharedMemorySize) raises the limit)")
    if res is not None and res.registers * threads > lim["MaxRegistersPerBlock"]:
        raise E.CudaError(E.OUT_OF_RESOURCES, f"kernel {name}: {res.registers} registers x {threads} threads "
                                              f"exceed the {lim['MaxRegistersPerBlock']} registers of a block")


@api("cudaLaunchKernel")
def launch_kernel(rt, a):
    func, grid_p, block_p, args_p, dyn_smem, stream_h = a
    entry = rt.kernel(func)
    stream = stream_of(rt, stream_h)
    rt.flush_output()  # CUDA prints the previous kernels' printf output when a kernel starts
    program = rt.program(entry.module, what=f"kernel {entry.display} ({entry.name})")
    try:
        kernel = program.kernel(entry.name)
    except TlpsimError:
        rt.problem(f"kernel {entry.display} is not in its module's PTX")
        raise E.CudaError(E.NO_KERNEL_IMAGE, f"kernel {entry.display} ({entry.name}) is registered but its "
                                             "module's PTX does not define it") from None
    grid, block = dim3(grid_p), dim3(block_p)
    res = program.resources.get(kernel.name)
    _check_config(rt, entry, kernel, grid, block, int(dyn_smem), res)
    if args_p == 0 and kernel.params:
        raise E.CudaError(E.INVALID_VALUE, f"kernel {entry.display}: no argument array for its "
                                           f"{len(kernel.params)} parameter(s)")
    args = tuple(read(u64(args_p + 8 * k), p.size) for k, p in enumerate(kernel.params))
    if stream is None:
        rt.clock.flush()  # the legacy default stream waits for every other stream
    t0 = time.perf_counter()
    row = {"launch": rt.n_launches, "kernel": entry.display, "mangled": entry.name, "grid": list(grid),
           "block": list(block), "dynamic_shared_bytes": int(dyn_smem), "stream": 0 if stream is None else stream.id,
           "registers": res.registers if res else None, "shared_bytes": (res.shared_bytes if res else 0) + int(dyn_smem)}
    try:
        rec = rt.device.launch(program, kernel.name, grid, block, args, int(dyn_smem), stream,
                               carveout=entry.carveout)
    except KernelError as exc:
        rt.n_launches += 1
        rt.fault(exc)
        rt.record({**row, "warp_instructions": 0, "thread_instructions": 0, "fault": E.name_of(rt.pending_fault),
                   "fault_detail": str(exc), "wall_seconds": round(time.perf_counter() - t0, 4)})
        return 0  # the launch itself succeeded; the fault is reported by the next call, as on a GPU
    except TlpsimError as exc:
        rt.problem(f"kernel {entry.display}: {exc}")
        raise E.CudaError(E.NOT_SUPPORTED, f"kernel {entry.display} cannot be simulated: {exc}") from None
    rt.n_launches += 1
    row.update(warp_instructions=rec.warp_instructions,
               thread_instructions=rec.thread_instructions, wall_seconds=round(time.perf_counter() - t0, 4),
               from_cache=rec.from_cache)
    if rec.oob_reads is not None:  # --oob-reads zero
        row["oob_reads"] = rec.oob_reads
    rt.clock.launched(rec, rec.stream, row)


# ------------------------------------------------------------------ attributes


@api("cudaFuncGetAttributes")
def func_get_attributes(rt, a):
    from tlpsim.cudart.props import attributes

    entry = rt.kernel(a[0])
    program = rt.program(entry.module, resources=True)
    res = program.resources.get(entry.name)
    if res is None:
        raise E.CudaError(E.INVALID_DEVICE_FUNCTION, f"ptxas reported no resources for kernel {entry.display}")
    lim = attributes(rt.config)
    threads = 1024
    if res.registers:
        threads = min(1024, lim["MaxRegistersPerBlock"] // res.registers // 32 * 32)
    bound = launch_bound(program.kernel(entry.name))
    if bound is not None:
        threads = min(threads, bound)
    # ptxVersion is the virtual architecture the PTX targets (80 for compute_80), not the PTX ISA
    # version: CUB compares it with __CUDA_ARCH_LIST__ and fails with cudaErrorInvalidDeviceFunction
    # when it matches no compiled architecture
    arch = int((program.module.arch or "sm_80").split("_")[1].rstrip("af"))
    dyn = entry.max_dynamic_smem if entry.max_dynamic_smem is not None \
        else lim["MaxSharedMemoryPerBlock"] - res.shared_bytes
    values = (res.shared_bytes, res.const_bytes, res.local_bytes, threads, res.registers, arch, arch, dyn,
              entry.carveout)
    (ctypes.c_int64 * 9).from_address(a[1])[:] = values


_PREFERRED_CARVEOUT = 9   # cudaFuncAttributePreferredSharedMemoryCarveout


@api("cudaFuncSetAttribute")
def func_set_attribute(rt, a):
    from tlpsim.cudart.props import attributes

    entry = rt.kernel(a[0])
    if a[3]:  # cudaFuncAttributeMaxDynamicSharedMemorySize
        value = ctypes.c_int64(a[2]).value
        limit = attributes(rt.config)["MaxSharedMemoryPerBlockOptin"]
        if not 0 <= value <= limit:
            raise E.CudaError(E.INVALID_VALUE, f"kernel {entry.display}: {value} bytes of dynamic shared memory "
                                               f"exceed the device's {limit}")
        entry.max_dynamic_smem = value
    elif a[1] == _PREFERRED_CARVEOUT:  # (cudaFuncSetCacheConfig / SharedMemConfig pass values 0..3 here)
        value = ctypes.c_int64(a[2]).value
        if not -1 <= value <= 100:
            raise E.CudaError(E.INVALID_VALUE, f"kernel {entry.display}: a shared-memory carveout preference is "
                                               f"-1 or a percentage 0..100, not {value}")
        entry.carveout = value


@api("cudaFuncGetName")
def func_get_name(rt, a):
    entry = rt.kernel(a[1])
    buf = rt.names.setdefault(entry.name, ctypes.create_string_buffer(entry.name.encode()))
    put(a[0], ctypes.c_void_p, ctypes.addressof(buf))


@api("cudaOccupancyMaxActiveBlocksPerMultiprocessor")
def occupancy_max_active_blocks(rt, a):
    from tlpsim.timing.builder import sm_limits
    from tlpsim.timing.occupancy import occupancy

    out, func, block_size, dyn_smem = a
    entry = rt.kernel(func)
    block_size = ctypes.c_int32(block_size).value
    if block_size < 1:
        raise E.CudaError(E.INVALID_VALUE, f"block size {block_size} must be positive")
    res = rt.program(entry.module, resources=True).resources.get(entry.name)
    regs, smem = (res.registers, res.shared_bytes) if res else (0, 0)
    occ = occupancy(sm_limits(rt.config), regs, smem + int(dyn_smem), block_size, rt.config.gpu.max_ctas_per_sm)
    put(out, ctypes.c_int32, occ.ctas)

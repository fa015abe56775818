"""What cudaGetDeviceProperties / cudaDeviceGetAttribute report: the simulated GPU
of the chosen preset (SM count, clocks, slots, register file, shared memory, L2,
memory bus), CUDA's architectural limits for the rest, and the capabilities
tlpsim's runtime has (unified addressing and managed memory: yes; peer access,
cooperative launch: no; memory pools: yes, mempools.py). Attributes are named as in
`enum cudaDeviceAttr` without the `cudaDevAttr` prefix."""

from __future__ import annotations

from tlpsim.config.model import GPUConfig


def device_name(config: GPUConfig, preset: str) -> str:
    return f"tlpsim {preset} (simulated, {config.gpu.n_sms} SMs)"


def attributes(config: GPUConfig) -> dict[str, int]:
    g, sm, dram = config.gpu, config.sm, config.dram
    major, minor = divmod(int(g.arch.split("_")[1].rstrip("af")), 10)
    smem_sm = int(sm.shared_bytes)
    return {
        "MaxThreadsPerBlock": 1024, "MaxBlockDimX": 1024, "MaxBlockDimY": 1024, "MaxBlockDimZ": 64,
        "MaxGridDimX": 2**31 - 1, "MaxGridDimY": 65535, "MaxGridDimZ": 65535,
        "MaxSharedMemoryPerBlock": min(48 * 1024, smem_sm), "MaxSharedMemoryPerBlockOptin": smem_sm,
        "MaxSharedMemoryPerMultiprocessor": smem_sm, "ReservedSharedMemoryPerBlock": 0,
        "TotalConstantMemory": 64 * 1024, "WarpSize": int(sm.warp_size), "MaxPitch": 2**31 - 1,
        "MaxRegistersPerBlock": min(65536, int(sm.registers)), "MaxRegistersPerMultiprocessor": int(sm.registers),
        "ClockRate": int(round(g.core_clock_mhz * 1000)), "MemoryClockRate": int(round(g.dram_clock_mhz * 1000)),
        "GlobalMemoryBusWidth": int(dram.n_partitions * dram.chips_per_partition * dram.bus_width_bytes * 8),
        "L2CacheSize": int(config.l2.size_kb * 1024), "MultiProcessorCount": int(g.n_sms),
        "MaxThreadsPerMultiProcessor": int(sm.max_threads), "MaxBlocksPerMultiprocessor": int(sm.max_ctas),
        "ComputeCapabilityMajor": major, "ComputeCapabilityMinor": minor,
        "TextureAlignment": 512, "KernelExecTimeout": 0, "Integrated": 0, "CanMapHostMemory": 1, "ComputeMode": 0,
        "ConcurrentKernels": 1, "EccEnabled": 0, "PciBusId": 0, "PciDeviceId": 0, "PciDomainId": 0, "TccDriver": 0,
        "AsyncEngineCount": 1, "GpuOverlap": 1, "MaxTexture1DLinearWidth": 2**27, "UnifiedAddressing": 1, "StreamPrioritiesSupported": 0,
        "GlobalL1CacheSupported": int(config.l1d.enabled), "LocalL1CacheSupported": 1, "ManagedMemory": 1,
        "IsMultiGpuBoard": 0, "MultiGpuBoardGroupID": 0, "HostNativeAtomicSupported": 0, "PageableMemoryAccess": 0,
        "ConcurrentManagedAccess": 1, "DirectManagedMemAccessFromHost": 1, "ComputePreemptionSupported": 0,
        "CanUseHostPointerForRegisteredMem": 0, "CooperativeLaunch": 0, "MemoryPoolsSupported": 1,
        "GPUDirectRDMASupported": 0, "HostRegisterSupported": 0, "MaxPersistingL2CacheSize": 0,
        "MaxAccessPolicyWindowSize": 0,
    }

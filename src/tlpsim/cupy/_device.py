"""The simulated GPU as CuPy's device queries see it: one device (ID 0) whose
compute capability is the target its kernels are compiled for, and whose
properties are those of its preset (`tlpsim cupy --config`; a device made without
one reports the gtx480 preset's figures, as `tlpsim exec` does by default)."""

from __future__ import annotations

import functools

from tlpsim.host import Device

DEFAULT_PRESET = "gtx480"
#: bytes of device memory reported (the simulated memory grows on demand; this is what a program is told)
TOTAL_MEMORY = 4 << 30


def current() -> Device:
    return Device.current()


@functools.lru_cache(maxsize=16)
def _preset(name: str):
    from tlpsim.config.loader import load_config

    return load_config(name)


def config_of(dev: Device):
    """The GPUConfig whose figures the device reports."""
    cfg = dev.config if dev.config is not None else DEFAULT_PRESET
    return _preset(cfg) if isinstance(cfg, str) else cfg


def compute_capability(dev: Device) -> tuple[int, int]:
    """(major, minor) of the architecture the device compiles kernels for (sm_35 -> (3, 5))."""
    return divmod(int(dev.arch.split("_")[1].rstrip("af")), 10)


def preset_name(dev: Device) -> str:
    cfg = dev.config if dev.config is not None else DEFAULT_PRESET
    return cfg if isinstance(cfg, str) else getattr(cfg, "name", "custom")


def attributes(dev: Device) -> dict[str, int]:
    """cudaDeviceAttr values (names without the cudaDevAttr prefix): the preset's
    (tlpsim.cudart.props), with the compute capability of the compile target."""
    from tlpsim.cudart.props import attributes as preset_attributes

    attrs = dict(preset_attributes(config_of(dev)))
    attrs["ComputeCapabilityMajor"], attrs["ComputeCapabilityMinor"] = compute_capability(dev)
    attrs["CooperativeLaunch"] = 1  # RawKernel(enable_cooperative_groups=True) launches run all CTAs together
    return attrs


def properties(dev: Device) -> dict:
    """cudaGetDeviceProperties as CuPy's runtime.getDeviceProperties returns it."""
    from tlpsim.cudart.props import device_name

    a = attributes(dev)
    return {
        "name": device_name(config_of(dev), preset_name(dev)).encode(),
        "totalGlobalMem": TOTAL_MEMORY,
        "sharedMemPerBlock": a["MaxSharedMemoryPerBlock"],
        "regsPerBlock": a["MaxRegistersPerBlock"],
        "warpSize": a["WarpSize"],
        "maxThreadsPerBlock": a["MaxThreadsPerBlock"],
        "maxThreadsDim": (a["MaxBlockDimX"], a["MaxBlockDimY"], a["MaxBlockDimZ"]),
        "maxGridSize": (a["MaxGridDimX"], a["MaxGridDimY"], a["MaxGridDimZ"]),
        "clockRate": a["ClockRate"],
        "totalConstMem": a["TotalConstantMemory"],
        "major": a["ComputeCapabilityMajor"],
        "minor": a["ComputeCapabilityMinor"],
        "multiProcessorCount": a["MultiProcessorCount"],
        "l2CacheSize": a["L2CacheSize"],
        "maxThreadsPerMultiProcessor": a["MaxThreadsPerMultiProcessor"],
        "maxBlocksPerMultiProcessor": a["MaxBlocksPerMultiprocessor"],
        "sharedMemPerMultiprocessor": a["MaxSharedMemoryPerMultiprocessor"],
        "sharedMemPerBlockOptin": a["MaxSharedMemoryPerBlockOptin"],
        "regsPerMultiprocessor": a["MaxRegistersPerMultiprocessor"],
        "memoryClockRate": a["MemoryClockRate"],
        "memoryBusWidth": a["GlobalMemoryBusWidth"],
        "concurrentKernels": a["ConcurrentKernels"],
        "cooperativeLaunch": a["CooperativeLaunch"],
        "managedMemory": a["ManagedMemory"],
        "unifiedAddressing": a["UnifiedAddressing"],
        "integrated": 0,
        "ECCEnabled": 0,
        "pciBusID": 0,
        "pciDeviceID": 0,
        "pciDomainID": 0,
        "uuid": b"\0" * 16,
    }

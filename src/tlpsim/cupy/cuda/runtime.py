"""`cupy.cuda.runtime`: device count, ID and properties of the simulated GPU, CUDA's
versions, memory and synchronisation calls. One device (ID 0) exists; asking for
another is cudaErrorInvalidDevice, as on a one-GPU machine."""

from __future__ import annotations

import numpy as np

from tlpsim.cudart.errors import CODES, ERRORS
from tlpsim.cupy import _device
from tlpsim.cupy.cuda import versions
from tlpsim.errors import TlpsimError

is_hip = False

cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyDefault = \
    0, 1, 2, 3, 4

# cudaDeviceAttr numbers CuPy scripts pass to deviceGetAttribute (CUDA's driver_types.h)
_ATTR_NUMBERS = {
    1: "MaxThreadsPerBlock", 2: "MaxBlockDimX", 3: "MaxBlockDimY", 4: "MaxBlockDimZ", 5: "MaxGridDimX",
    6: "MaxGridDimY", 7: "MaxGridDimZ", 8: "MaxSharedMemoryPerBlock", 9: "TotalConstantMemory", 10: "WarpSize",
    11: "MaxPitch", 12: "MaxRegistersPerBlock", 13: "ClockRate", 14: "TextureAlignment", 16: "MultiProcessorCount",
    17: "KernelExecTimeout", 18: "Integrated", 19: "CanMapHostMemory", 20: "ComputeMode", 31: "ConcurrentKernels",
    32: "EccEnabled", 33: "PciBusId", 34: "PciDeviceId", 35: "TccDriver", 36: "MemoryClockRate",
    37: "GlobalMemoryBusWidth", 38: "L2CacheSize", 39: "MaxThreadsPerMultiProcessor", 40: "AsyncEngineCount",
    41: "UnifiedAddressing", 50: "PciDomainId", 75: "ComputeCapabilityMajor", 76: "ComputeCapabilityMinor",
    81: "MaxSharedMemoryPerMultiprocessor", 82: "MaxRegistersPerMultiprocessor", 83: "ManagedMemory",
    84: "IsMultiGpuBoard", 95: "CooperativeLaunch", 97: "MaxSharedMemoryPerBlockOptin",
    106: "MaxBlocksPerMultiprocessor",
}
for _n, _name in _ATTR_NUMBERS.items():
    globals()[f"cudaDevAttr{_name}"] = _n


class CUDARuntimeError(TlpsimError):
    """`cupy.cuda.runtime.CUDARuntimeError`: `status` is the cudaError_t code; the text
    starts with CUDA's error name, as CuPy's does."""

    def __init__(self, status: int, detail: str = "") -> None:
        self.status = int(status)
        name, text = ERRORS.get(self.status, (f"cudaError{self.status}", "unknown error"))
        super().__init__(f"{name}: {text}" + (f" ({detail})" if detail else ""))


def _check(device: int) -> None:
    if int(device) != 0:
        raise CUDARuntimeError(CODES["cudaErrorInvalidDevice"],
                               f"device {device}: tlpsim simulates one GPU, device 0")


def getDeviceCount() -> int:  # noqa: N802 - CUDA's names
    return 1


def getDevice() -> int:  # noqa: N802
    return 0


def setDevice(device: int) -> None:  # noqa: N802
    _check(device)


def getDeviceProperties(device: int) -> dict:  # noqa: N802
    _check(device)
    return _device.properties(_device.current())


def deviceGetAttribute(attrib: int, device: int) -> int:  # noqa: N802
    _check(device)
    name = _ATTR_NUMBERS.get(int(attrib))
    attrs = _device.attributes(_device.current())
    if name is None or name not in attrs:
        raise CUDARuntimeError(CODES["cudaErrorInvalidValue"], f"device attribute {attrib} is not modelled")
    return attrs[name]


def deviceGetPCIBusId(device: int) -> str:  # noqa: N802
    _check(device)
    return "0000:00:00.0"


def driverGetVersion() -> int:  # noqa: N802
    return versions.DRIVER_VERSION


def runtimeGetVersion() -> int:  # noqa: N802
    return versions.runtime_version()


def deviceSynchronize() -> None:  # noqa: N802
    _device.current().synchronize()


def getLastError() -> int:  # noqa: N802
    return 0


def memGetInfo() -> tuple[int, int]:  # noqa: N802
    used = int(_device.current().memory.top)
    return max(0, _device.TOTAL_MEMORY - used), _device.TOTAL_MEMORY


def malloc(size: int) -> int:
    return _device.current().memory.alloc(int(size), "runtime.malloc")


def free(ptr: int) -> None:
    _device.current().memory.free(int(ptr))


def memset(ptr: int, value: int, size: int) -> None:
    _device.current().memory.write(int(ptr), np.full(int(size), int(value) & 0xFF, np.uint8))


def memcpy(dst: int, src: int, size: int, kind: int) -> None:
    """Device-to-device (or `cudaMemcpyDefault` between device addresses); host copies go
    through arrays (`ndarray.set/get`) or MemoryPointer.copy_from_host/copy_to_host."""
    if kind not in (cudaMemcpyDeviceToDevice, cudaMemcpyDefault):
        raise CUDARuntimeError(CODES["cudaErrorInvalidMemcpyDirection"],
                               "runtime.memcpy takes device addresses; copy host memory with "
                               "MemoryPointer.copy_from_host / copy_to_host")
    mem = _device.current().memory
    mem.write(int(dst), mem.read(int(src), int(size)).copy())


__all__ = ["CUDARuntimeError", "deviceGetAttribute", "deviceSynchronize", "driverGetVersion", "getDevice",
           "getDeviceCount", "getDeviceProperties", "is_hip", "memGetInfo", "runtimeGetVersion", "setDevice"]

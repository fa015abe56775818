"""`cupy.cuda.device`: the one simulated GPU (ID 0) as CuPy's Device, and its compute
capability (that of the target its kernels are compiled for)."""

from __future__ import annotations

from tlpsim.cupy import _device
from tlpsim.cupy.cuda import runtime
from tlpsim.cupy.cuda.runtime import CUDARuntimeError


class Device:
    """`cupy.cuda.Device(id)`: a handle on the simulated GPU (ID 0 only). As a context
    manager it makes no change: there is one device."""

    def __init__(self, device=None) -> None:
        device = 0 if device is None else int(device)
        if device != 0:
            raise CUDARuntimeError(101, f"Device({device}): tlpsim simulates one GPU, device 0")
        self.id = device

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc) -> None:
        pass

    def __int__(self) -> int:
        return self.id

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id} ({_device.current().name})>"

    def use(self) -> None:
        pass

    def synchronize(self) -> None:
        _device.current().synchronize()

    @property
    def compute_capability(self) -> str:
        major, minor = _device.compute_capability(_device.current())
        return f"{major}{minor}"

    @property
    def attributes(self) -> dict[str, int]:
        return dict(_device.attributes(_device.current()))

    @property
    def mem_info(self) -> tuple[int, int]:
        return runtime.memGetInfo()

    @property
    def pci_bus_id(self) -> str:
        return runtime.deviceGetPCIBusId(self.id)


def get_device_id() -> int:
    return 0


def get_compute_capability() -> str:
    """'35' for sm_35: the target of the current device's kernels."""
    major, minor = _device.compute_capability(_device.current())
    return f"{major}{minor}"

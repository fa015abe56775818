"""`cupy._core._accelerator`: tlpsim's host-executed reductions use no accelerator
(CUB, cuTENSOR), so the lists are empty."""

ACCELERATOR_CUB = 1
ACCELERATOR_CUTENSOR = 2
ACCELERATOR_CUTENSORNET = 3

_reduction: list[int] = []
_routine: list[int] = []


def get_reduction_accelerators() -> list[int]:
    return list(_reduction)


def get_routine_accelerators() -> list[int]:
    return list(_routine)


def set_reduction_accelerators(accelerators) -> None:
    if list(accelerators):
        raise ValueError("tlpsim has no reduction accelerators (reductions run on the host with NumPy)")


def set_routine_accelerators(accelerators) -> None:
    if list(accelerators):
        raise ValueError("tlpsim has no routine accelerators (array routines run on the host with NumPy)")

"""CUDA runtime error codes (cudaError_t) the runtime returns, with the names and
texts cudaGetErrorName/cudaGetErrorString give, and the mapping from a simulator
fault to the code CUDA reports for it."""

from __future__ import annotations

from tlpsim.errors import DeviceAssertError, KernelError

# code -> (name, text); numbering from CUDA 13's driver_types.h (checked by a test)
ERRORS: dict[int, tuple[str, str]] = {
    0: ("cudaSuccess", "no error"),
    1: ("cudaErrorInvalidValue", "invalid argument"),
    2: ("cudaErrorMemoryAllocation", "out of memory"),
    3: ("cudaErrorInitializationError", "initialization error"),
    4: ("cudaErrorCudartUnloading", "driver shutting down"),
    9: ("cudaErrorInvalidConfiguration", "invalid configuration argument"),
    12: ("cudaErrorInvalidPitchValue", "invalid pitch argument"),
    13: ("cudaErrorInvalidSymbol", "invalid device symbol"),
    16: ("cudaErrorInvalidHostPointer", "invalid host pointer"),
    17: ("cudaErrorInvalidDevicePointer", "invalid device pointer"),
    18: ("cudaErrorInvalidTexture", "invalid texture reference"),
    20: ("cudaErrorInvalidChannelDescriptor", "invalid channel descriptor"),
    21: ("cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"),
    52: ("cudaErrorMissingConfiguration", "__global__ function call is not configured"),
    98: ("cudaErrorInvalidDeviceFunction", "invalid device function"),
    100: ("cudaErrorNoDevice", "no CUDA-capable device is detected"),
    101: ("cudaErrorInvalidDevice", "invalid device ordinal"),
    200: ("cudaErrorInvalidKernelImage", "device kernel image is invalid"),
    209: ("cudaErrorNoKernelImageForDevice", "no kernel image is available for execution on the device"),
    215: ("cudaErrorUnsupportedLimit", "limit is not supported on this architecture"),
    218: ("cudaErrorInvalidPtx", "a PTX JIT compilation failed"),
    400: ("cudaErrorInvalidResourceHandle", "invalid resource handle"),
    401: ("cudaErrorIllegalState", "the operation cannot be performed in the present state"),
    500: ("cudaErrorSymbolNotFound", "named symbol not found"),
    600: ("cudaErrorNotReady", "device not ready"),
    700: ("cudaErrorIllegalAddress", "an illegal memory access was encountered"),
    701: ("cudaErrorLaunchOutOfResources", "too many resources requested for launch"),
    702: ("cudaErrorLaunchTimeout", "the launch timed out and was terminated"),
    710: ("cudaErrorAssert", "device-side assert triggered"),
    712: ("cudaErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"),
    713: ("cudaErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"),
    715: ("cudaErrorIllegalInstruction", "an illegal instruction was encountered"),
    716: ("cudaErrorMisalignedAddress", "misaligned address"),
    719: ("cudaErrorLaunchFailure", "unspecified launch failure"),
    801: ("cudaErrorNotSupported", "operation not supported"),
    900: ("cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"),
    901: ("cudaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"),
    902: ("cudaErrorStreamCaptureMerge", "operation would result in a merge of separate capture sequences"),
    903: ("cudaErrorStreamCaptureUnmatched", "capture was not initiated in this stream"),
    904: ("cudaErrorStreamCaptureUnjoined", "capturing stream has unjoined work"),
    906: ("cudaErrorStreamCaptureImplicit",
          "operation would make the legacy stream depend on a capturing blocking stream"),
    999: ("cudaErrorUnknown", "unknown error"),
}
CODES: dict[str, int] = {name: code for code, (name, _) in ERRORS.items()}

SUCCESS = 0
INVALID_VALUE = CODES["cudaErrorInvalidValue"]
MEMORY_ALLOCATION = CODES["cudaErrorMemoryAllocation"]
INVALID_CONFIGURATION = CODES["cudaErrorInvalidConfiguration"]
INVALID_SYMBOL = CODES["cudaErrorInvalidSymbol"]
INVALID_DEVICE_POINTER = CODES["cudaErrorInvalidDevicePointer"]
INVALID_MEMCPY_DIRECTION = CODES["cudaErrorInvalidMemcpyDirection"]
INVALID_DEVICE_FUNCTION = CODES["cudaErrorInvalidDeviceFunction"]
INVALID_DEVICE = CODES["cudaErrorInvalidDevice"]
NO_KERNEL_IMAGE = CODES["cudaErrorNoKernelImageForDevice"]
INVALID_PTX = CODES["cudaErrorInvalidPtx"]
INVALID_HANDLE = CODES["cudaErrorInvalidResourceHandle"]
NOT_READY = CODES["cudaErrorNotReady"]
ILLEGAL_ADDRESS = CODES["cudaErrorIllegalAddress"]
OUT_OF_RESOURCES = CODES["cudaErrorLaunchOutOfResources"]
LAUNCH_TIMEOUT = CODES["cudaErrorLaunchTimeout"]
ASSERT = CODES["cudaErrorAssert"]
MISALIGNED = CODES["cudaErrorMisalignedAddress"]
LAUNCH_FAILURE = CODES["cudaErrorLaunchFailure"]
NOT_SUPPORTED = CODES["cudaErrorNotSupported"]
UNKNOWN = CODES["cudaErrorUnknown"]


class CudaError(Exception):
    """Raised by an API handler: the call returns `code`; `message` (if any) is
    tlpsim's explanation, printed on stderr."""

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(message or ERRORS.get(code, ("", "error"))[1])
        self.code = code
        self.message = message


def name_of(code: int) -> str:
    return ERRORS[code][0] if code in ERRORS else "unrecognized error code"


def text_of(code: int) -> str:
    return ERRORS[code][1] if code in ERRORS else "unrecognized error code"


def fault_code(exc: KernelError) -> int:
    """The sticky error CUDA reports after a kernel fault of this kind."""
    if isinstance(exc, DeviceAssertError):
        return ASSERT
    text = str(exc)
    if exc.address is not None or text.startswith("illegal memory access"):
        return MISALIGNED if "misaligned" in text else ILLEGAL_ADDRESS
    if "instruction budget" in text or "can never complete" in text:
        return LAUNCH_TIMEOUT  # a hung kernel: what the watchdog of a real GPU reports
    return LAUNCH_FAILURE  # trap and everything else

"""cupy.cuda.runtime / Device queries describe the simulated GPU of the device's preset."""

from __future__ import annotations

import pytest

import tlpsim
import tlpsim.cupy as cp


def test_runtime_reports_the_preset_and_its_compile_target():
    with tlpsim.Device(config="gtx480", trace_cache=False):
        rt = cp.cuda.runtime
        assert rt.getDeviceCount() == 1 and rt.getDevice() == 0
        props = rt.getDeviceProperties(0)
        assert props["multiProcessorCount"] == 15 and props["warpSize"] == 32
        assert (props["major"], props["minor"]) == (3, 5)  # gtx480 compiles for cuda11's sm_35
        assert props["name"] == b"tlpsim gtx480 (simulated, 15 SMs)"
        assert rt.deviceGetAttribute(rt.cudaDevAttrMultiProcessorCount, 0) == 15
        assert cp.cuda.Device(0).compute_capability == "35" == cp.cuda.compiler._get_arch()
        assert rt.runtimeGetVersion() == 11080 and cp.cuda.nvrtc.getVersion() == (11, 8)
        assert rt.driverGetVersion() == 13050
    with tlpsim.Device(config="gtx480", toolchain="cuda13", trace_cache=False):
        assert cp.cuda.device.get_compute_capability() == "80" and rt.runtimeGetVersion() == 13050


def test_a_second_device_is_cuda_invalid_device():
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match="cudaErrorInvalidDevice: invalid device ordinal"):
        cp.cuda.Device(1)
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError) as exc:
        cp.cuda.runtime.setDevice(2)
    assert exc.value.status == 101

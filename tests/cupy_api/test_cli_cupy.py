"""`tlpsim cupy -- CMD`: an unmodified CuPy script runs on the simulator and its launches
and host operations are summarised."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

TLPSIM = str(Path(sys.executable).parent / "tlpsim")

SCRIPT = textwrap.dedent(r'''
    import numpy as np
    import cupy as cp
    import cupyx
    from cupy.cuda import compiler

    src = r"""extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += a * x[i]; }"""
    assert cp.__name__ == "tlpsim.cupy" and cupyx.__name__ == "tlpsim.cupy.cupyx"
    import tlpsim.cupy.cuda.compiler
    assert compiler is tlpsim.cupy.cuda.compiler  # one module object: patching CuPy's name patches tlpsim's
    from cupy_backends.cuda.libs import nvrtc
    assert nvrtc.getVersion() == (11, 8)
    try:
        import cupyx.scipy  # noqa: F401
    except ModuleNotFoundError as exc:
        assert "tlpsim's CuPy API does not provide it" in str(exc)
    else:
        raise SystemExit("cupyx.scipy imported")
    k = cp.RawKernel(src, "axpy")
    x = cp.arange(1000, dtype=cp.float32)
    y = cp.ones(1000, dtype=cp.float32)
    k((4,), (256,), (cp.float32(2), x, y, np.int32(1000)))
    k((4,), (256,), (cp.float32(-2), x, y, np.int32(1000)))
    assert cp.allclose(y, cp.ones(1000, dtype=cp.float32))
    try:
        cp.RawModule(code="__global__ void broken( {").get_function("broken")
    except compiler.CompileException as exc:
        assert "expected a" in str(exc)  # the compiler log is in the message
    else:
        raise SystemExit("no CompileException")
    print("sm", cp.cuda.Device(0).compute_capability, "sms", cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"])
''')


def _run(tmp_path, *args):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    summary = tmp_path / "summary.jsonl"
    proc = subprocess.run([TLPSIM, "cupy", "--summary-json", str(summary), *args, "--", "python", str(script)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    return proc, [json.loads(line) for line in summary.read_text().splitlines()] if summary.exists() else []


def test_script_runs_unmodified(tmp_path):
    proc, records = _run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "sm 35 sms 15" in proc.stdout
    (rec,) = records
    assert rec["preset"] == "gtx480" and rec["mode"] == "functional" and rec["launches"] == 2
    assert list(rec["kernels"]) == ["axpy"] and rec["kernels"]["axpy"]["launches"] == 2
    assert rec["host_operations"] == {"allclose": 1}
    assert "tlpsim cupy: 2 kernel launches on gtx480 (functional mode)" in proc.stderr
    assert "host array operations (NumPy on the host, not simulated): 1 (allclose 1)" in proc.stderr


def test_timing_mode_and_config(tmp_path):
    proc, records = _run(tmp_path, "--mode", "timing", "--config", "gtx980")
    assert proc.returncode == 0, proc.stderr
    assert "sms 16" in proc.stdout
    (rec,) = records
    assert rec["mode"] == "timing" and rec["kernels"]["axpy"]["cycles"] > 0


def test_bad_preset_is_named_before_the_program_runs(tmp_path):
    proc = subprocess.run([TLPSIM, "cupy", "--config", "gtx9999", "--", "python", "-c", "print('ran')"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "gtx9999" in proc.stderr and "ran" not in proc.stdout


def test_no_command(tmp_path):
    proc = subprocess.run([TLPSIM, "cupy"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "give the command to run after `--`" in proc.stderr

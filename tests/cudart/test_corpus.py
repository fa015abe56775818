"""Every program of the corpus (ordinary CUDA runtime code, not tlpsim-aware) built
with `tlpsim nvcc` and run with `tlpsim exec` in functional mode: the programs that
check themselves print their own PASS; the ones that fail on purpose (a failed
device assert, an unsupported call, a host crash, a binary without PTX) fail with
a clear message and a non-zero exit."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from .conftest import BUILDS, PROGRAMS, run_exec

PASSING = ["vector_add", "multi_kernel", "constant_memory", "dynamic_shared", "streams_events", "templates",
           "separate", "separate_rdc", "illegal_address", "device_query", "managed_memory", "printf_kernel", "matrix_mul",
           "pitched_copies", "error_api", "histogram_atomics", "profiler_async", "launch_bounds",
           "host_callbacks", "mempool_async"]
FAILING = ["device_assert", "unsupported_call", "crash"]


@pytest.fixture(scope="module")
def runs(binaries):
    names = PASSING + FAILING
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(names, pool.map(lambda n: run_exec(binaries[n]), names)))


def test_corpus_covers_the_issue():
    assert len(PASSING) >= 12
    assert set(PASSING + FAILING) <= set(BUILDS)
    sources = {n: " ".join((PROGRAMS / s).read_text() for s in BUILDS[n][0]) for n in BUILDS}
    uses = {what: [n for n, text in sources.items() if all(w in text for w in words)] for what, words in {
        "multiple kernels": ["blockSum<<<", "saxpy<<<"], "__constant__": ["__constant__"],
        "cudaMemcpyToSymbol": ["cudaMemcpyToSymbol"], "dynamic shared memory": ["extern __shared__"],
        "streams and events": ["cudaStreamCreate", "cudaEventElapsedTime"], "templates": ["template <"],
        "error checking macro": ["check.h", "CHECK("], "illegal address": ["cudaErrorIllegalAddress"],
    }.items()}
    assert all(uses.values()), {k: v for k, v in uses.items() if not v}
    assert len(BUILDS["separate"][0]) == 2


@pytest.mark.parametrize("name", PASSING)
def test_program_passes_its_own_check(runs, name):
    r = runs[name]
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS" in r.stdout and "FAIL" not in r.stdout


def test_vector_add_summary_names_the_launch(runs):
    r = runs["vector_add"]
    assert r.stdout.splitlines() == ["CUDA kernel launch with 20 blocks of 256 threads", "Test PASSED"]
    assert "vectorAdd  20x1x1  256x1x1" in r.stderr and "1 launch(es)" in r.stderr


def test_device_printf_is_flushed_at_synchronisation(runs):
    out = runs["printf_kernel"].stdout.splitlines()
    assert out == ["host: before synchronize",
                   "block 0 thread 0:  0.00|0   |ff|a|even|0",
                   "block 0 thread 1:  0.50|1   |100|b|odd|8589934592",
                   "block 1 thread 0:  1.00|2   |101|c|even|17179869184",
                   "block 1 thread 1:  1.50|3   |102|d|odd|25769803776",
                   "host: after synchronize", "PASS"]


def test_illegal_address_is_reported_by_the_next_call_and_diagnosed(runs):
    """Stricter than a GPU (docs/exec.md): a store a few elements past an allocation is
    undefined in CUDA, and a real H200 ran it without a fault (issue 28); tlpsim checks
    every access against the allocations and reports it, as a GPU does for unmapped pages."""
    r = runs["illegal_address"]
    assert "synchronize: cudaErrorIllegalAddress (an illegal memory access was encountered)" in r.stdout
    assert "launch: cudaSuccess" in r.stdout
    # tlpsim's own diagnostic: kernel, CTA, thread, PTX line, address
    diag = next(line for line in r.stderr.splitlines() if "kernel fault" in line)
    assert "cudaErrorIllegalAddress" in diag and "out-of-bounds access at global address 0x" in diag
    assert "kernel overrun, CTA (0, 0, 0), thread (4, 0, 0)" in diag and ".ptx line " in diag
    assert "1 kernel fault(s), reported to the program as cudaErrorIllegalAddress" in r.stderr


def test_failed_device_assert_exits_through_the_programs_check(runs):
    r = runs["device_assert"]
    assert r.returncode == 1
    assert "device_assert.cu:10: void positive(const int *, int): block: [0,0,0], thread: [4,0,0] " \
           "Assertion `v[i] >= 0` failed." in r.stderr
    assert "CUDA error cudaErrorAssert (device-side assert triggered)" in r.stderr
    assert "unreachable" not in r.stdout


def test_unsupported_call_names_the_call_and_fails(runs):
    """CUDA's behaviour: cudaGraphCreate succeeds (it does on a real H200). tlpsim's
    limitation, not CUDA's behaviour: cudaDeviceGetPCIBusId, which a GPU answers,
    returns cudaErrorNotSupported, named on stderr and in the exit summary."""
    r = runs["unsupported_call"]
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["cudaGraphCreate: cudaSuccess"]
    assert ("tlpsim: cudaDeviceGetPCIBusId is not supported by tlpsim's CUDA runtime; it returns "
            "cudaErrorNotSupported") in r.stderr
    assert "CUDA error cudaErrorNotSupported" in r.stderr
    assert "not the program's real behaviour: cudaDeviceGetPCIBusId (1x)" in r.stderr
    assert "tlpsim: failing runtime calls: cudaDeviceGetPCIBusId -> cudaErrorNotSupported (1x)" in r.stderr


def test_host_crash_is_reported_and_keeps_the_launches(runs):
    r = runs["crash"]
    assert r.returncode == 128 + 11
    assert r.stdout == "kernel done\n"
    assert "killed by SIGSEGV" in r.stderr
    assert "the launches recorded before that (1) are kept" in r.stderr


def test_missing_ptx_is_a_clear_error(tmp_path):
    from tlpsim.cudart import nvcc

    exe = tmp_path / "vector_add_compressed"
    assert nvcc.main(["--compress-mode=default", str(PROGRAMS / "vector_add.cu"), "-o", str(exe)]) == 0
    r = run_exec(exe)
    assert r.returncode != 0
    assert "kernel vectorAdd (_Z9vectorAddPKfS0_Pfi): the program's fat binary holds SASS for sm_80, compressed PTX " \
           "for compute_80 but no uncompressed PTX; build the program with `tlpsim nvcc`" in r.stderr
    assert "cudaErrorNoKernelImageForDevice" in r.stderr


def test_exec_compiles_and_runs_a_source_in_one_step(tmp_path):
    r = run_exec("--nvcc=-O2", PROGRAMS / "vector_add.cu", "--", "100")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "CUDA kernel launch with 1 blocks of 256 threads\nTest PASSED\n"


def test_plain_nvcc_binary_is_refused_with_a_clear_message(tmp_path):
    """`nvcc prog.cu` (no tlpsim nvcc): NVIDIA's static runtime would look for a real GPU."""
    import subprocess

    from tlpsim.frontend.toolkit import find_toolkit, subprocess_env

    tk = find_toolkit()
    exe = tmp_path / "vector_add_plain"
    subprocess.run([str(tk.nvcc), "-arch=sm_80", str(PROGRAMS / "vector_add.cu"), "-o", str(exe)], check=True,
                   env=subprocess_env(), capture_output=True)
    r = run_exec(exe)
    assert r.returncode == 2 and r.stdout == ""
    assert "linked with NVIDIA's static CUDA runtime (nvcc's default, -cudart static)" in r.stderr
    assert "rebuild it with `tlpsim nvcc`" in r.stderr


def test_error_api_cuda_defined_errors_and_tlpsims_stricter_checks(runs):
    """Issue 28 §4. CUDA defines the errors of invalid launch configurations, a free of a
    pointer that is not an allocation, a bad copy kind and an unknown symbol: tlpsim returns
    them as a GPU does — as CUDA 13 on an H200 answers them (tests/cudart/h200/: an
    invalid configuration is cudaErrorInvalidValue there, and so is a copy past an
    allocation's end). A made-up stream handle is undefined behaviour (the H200 crashed
    on it, SIGSEGV): tlpsim is stricter than a GPU and returns an error with a
    diagnostic of its own instead."""
    got = dict(line.rsplit(None, 1) for line in runs["error_api"].stdout.splitlines()[:-1])
    got = {k.strip(): v for k, v in got.items()}
    cuda_defined = {"block of 2048 threads (peek)": "cudaErrorInvalidValue",
                    "same (get)": "cudaErrorInvalidValue", "after get": "cudaSuccess",
                    "grid y of 70000": "cudaErrorInvalidValue", "cudaMalloc": "cudaSuccess",
                    "copy past the allocation": "cudaErrorInvalidValue",
                    "free of a non-allocation": "cudaErrorInvalidValue",
                    "invalid copy kind": "cudaErrorInvalidMemcpyDirection",
                    "symbol that is not one": "cudaErrorInvalidSymbol", "a good launch still works": "cudaSuccess"}
    stricter_than_a_gpu = {"bogus stream": "cudaErrorInvalidResourceHandle"}
    assert got == {**cuda_defined, **stricter_than_a_gpu}
    err = runs["error_api"].stderr
    assert "tlpsim: cudaStreamSynchronize: 0x1234 is not a stream created by cudaStreamCreate" in err


def test_memory_pools_count_the_stream_ordered_allocations(runs):
    """streamOrderedAllocation's calls: the default pool, its attributes, cudaMallocAsync and
    cudaFreeAsync, a created pool. tlpsim counts the bytes asked for (a GPU may round up), and
    the default pool cannot be destroyed (cudaErrorInvalidValue, as CUDA documents)."""
    r = runs["mempool_async"]
    assert r.stdout.splitlines() == ["default pool: used 12000 bytes with 3 allocations, 0 after freeing, high 12000",
                                     "PASS"]
    assert "tlpsim: cudaMemPoolDestroy: the device's default memory pool cannot be destroyed" in r.stderr


def test_a_repeated_failing_call_is_diagnosed_once_and_counted_at_exit(runs):
    lines = [ln for ln in runs["error_api"].stderr.splitlines() if "2048" in ln]
    assert len(lines) == 2, lines
    assert lines[1] == lines[0] + " (repeated 4 times in all)"


def test_out_of_bounds_read_faults_by_default_and_reads_zero_when_asked(binaries):
    """srad_v2's pattern (issue 28): a load before its array. tlpsim is stricter than a GPU by
    default, and its diagnostic names the option that relaxes it."""
    strict = run_exec(binaries["oob_read"])
    assert strict.returncode == 1
    assert strict.stdout.splitlines() == ["kernel failed: cudaErrorIllegalAddress"]
    assert "--oob-reads zero" in strict.stderr
    lenient = run_exec("--oob-reads", "zero", binaries["oob_read"])
    assert lenient.returncode == 0, lenient.stderr
    assert lenient.stdout.splitlines() == ["out[0] = 0, out[1..63] = in[0..62]: PASS"]
    assert "1 lane load(s) outside every allocation read 0 (--oob-reads zero), in 1 launch(es)" in lenient.stderr


def test_launch_exceeding_launch_bounds_fails_as_on_a_gpu(runs):
    r = runs["launch_bounds"]
    assert r.stdout.splitlines() == ["maxThreadsPerBlock 128", "256 threads: cudaErrorInvalidValue", "PASS"]
    assert ("tlpsim: cudaLaunchKernel: kernel fill: block (256, 1, 1) (256 threads) exceeds its __launch_bounds__ "
            "(.maxntid 128 threads)") in r.stderr


def test_trace_api_names_every_call_and_its_result(binaries):
    import os
    import subprocess

    from .conftest import TLPSIM

    env = dict(os.environ, TLPSIM_TRACE_API="1")
    proc = subprocess.run([*TLPSIM, "exec", str(binaries["error_api"])], capture_output=True, text=True,
                          timeout=600, env=env, check=False)
    calls = [ln for ln in proc.stderr.splitlines() if ln.startswith("tlpsim: api ")]
    assert calls[0].startswith("tlpsim: api __cudaRegisterFatBinary(0x")
    assert any(ln.startswith("tlpsim: api cudaStreamSynchronize(0x1234")
               and ln.endswith(") -> cudaErrorInvalidResourceHandle") for ln in calls), calls

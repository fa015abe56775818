"""The two toolchains (gpu.toolchain): the config key and its validation, the cuda11
compilation (NVRTC 11.8 -> ISA 7.8 compute_XX PTX, ptxas 11.8 sm_XX resources), its
errors, and that no cache mixes the toolchains' results.

Register counts are exact for the pinned wheels (nvidia-cuda-nvrtc-cu11 and
nvidia-cuda-nvcc-cu11 11.8.89, nvidia-cuda-nvcc 13.5.37)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import tlpsim
from tlpsim.config import load_config, list_presets
from tlpsim.errors import CompileError, ConfigError, TlpsimError
from tlpsim.frontend import nvrtc
from tlpsim.frontend.nvcc import compile_cuda, compile_cuda_file, compile_cuda_source
from tlpsim.functional.replay import launch_key
from tlpsim.sweep.job import RunParams

BOUNDED = textwrap.dedent(
    """\
    extern "C" __global__ void __launch_bounds__(256) heavy(const float* in, float* out) {
        float r[40];
    #pragma unroll
        for (int i = 0; i < 40; ++i) r[i] = in[threadIdx.x + i * 256];
    #pragma unroll
        for (int j = 0; j < 6; ++j)
    #pragma unroll
            for (int i = 0; i < 40; ++i) r[i] = r[i] * r[(i + j + 1) % 40] + 1.0f;
        float s = 0;
    #pragma unroll
        for (int i = 0; i < 40; ++i) s += r[i] * (i + 1);
        out[threadIdx.x] = s;
    }
    """
)
SAXPY = 'extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {\n' \
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n"


@pytest.fixture
def cache_env(tmp_path, monkeypatch):
    monkeypatch.setenv("TLPSIM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "ptx"


# ------------------------------------------------------------------ the config key


def test_paper_presets_default_to_cuda11_with_their_era_target():
    want = {"gtx480": ("sm_35", 63), "tesla_m2050": ("sm_35", 63), "fermi_rfv": ("sm_35", 63),
            "fermi_dmr": ("sm_35", 63), "gtx980": ("sm_52", None), "maxwell_gpuduet": ("sm_52", None),
            "expars_maxwell": ("sm_52", None)}
    assert sorted(want) == [p for p in list_presets() if p not in ("h100", "h200")]   # the Hopper presets: below
    for preset, (arch, cap) in want.items():
        gpu = load_config(preset).gpu
        assert gpu.compile_options == {"toolchain": "cuda11", "arch": arch, "maxrregcount": cap}, preset
        # one override restores the CUDA 13.5 compilation of before: sm_80, the same cap
        modern = load_config(preset, ["gpu.toolchain=cuda13"]).gpu
        assert modern.compile_options == {"toolchain": "cuda13", "arch": "sm_80", "maxrregcount": cap}, preset


def test_hopper_presets_compile_for_sm_90_with_cuda13():
    for preset in ("h100", "h200"):
        assert load_config(preset).gpu.compile_options == {"toolchain": "cuda13", "arch": "sm_90",
                                                          "maxrregcount": None}
        assert load_config(preset, ["gpu.toolchain=cuda11"]).gpu.compile_arch == "sm_90"


def test_generic_config_keeps_cuda13():
    gpu = load_config("gtx480").gpu.model_validate({})
    assert (gpu.toolchain, gpu.arch, gpu.cuda11_arch, gpu.compile_arch) == ("cuda13", "sm_80", "sm_35", "sm_80")


@pytest.mark.parametrize("override, message", [
    ("gpu.toolchain=cuda12", "gpu.toolchain: Input should be 'cuda13' or 'cuda11'"),
    ("gpu.arch=sm_35", "gpu.arch: CUDA 13.5 (nvcc + ptxas 13.5; targets sm_75 and newer) cannot target sm_35: this "
                       "is the cuda13 toolchain's target; for sm_35 set gpu.toolchain = 'cuda11' and "
                       "gpu.cuda11_arch = 'sm_35'"),
    ("gpu.arch=compute_80", "gpu.arch: 'compute_80' is not a GPU architecture"),
    ("gpu.cuda11_arch=sm_20", "gpu.cuda11_arch: CUDA 11.8 (NVRTC + ptxas 11.8; targets sm_35 to sm_90) cannot "
                              "target sm_20 (Fermi's sm_20/sm_21 were last supported by CUDA 8"),
    ("gpu.cuda11_arch=sm_90a", "gpu.cuda11_arch: CUDA 11.8 (NVRTC + ptxas 11.8; targets sm_35 to sm_90) cannot "
                               "target sm_90a; its targets are sm_35, sm_37, sm_50"),
])
def test_bad_toolchain_settings_name_the_key(override, message):
    with pytest.raises(ConfigError) as err:
        load_config("gtx480", [override])
    assert message in str(err.value)


def test_device_rejects_a_target_its_toolchain_cannot_compile():
    with pytest.raises(TlpsimError, match=r"Device\(toolchain='cuda13', arch='sm_52'\): CUDA 13.5 .* cannot target "
                                          "sm_52"):
        tlpsim.Device(arch="sm_52")
    with pytest.raises(TlpsimError, match="cannot target sm_30"):
        tlpsim.Device(toolchain="cuda11", arch="sm_30")


# ------------------------------------------------------------------ compiling with cuda11


def test_cuda11_gives_isa78_sm35_ptx_and_sm35_resources(cache_env):
    r = compile_cuda_source(SAXPY, arch="sm_35", toolchain="cuda11")
    assert r.toolchain == "cuda11" and r.arch == "sm_35" and r.toolkit_version == "nvrtc 11.8 / ptxas 11.8.89"
    assert "\n.version 7.8\n.target sm_35\n.address_size 64\n" in r.ptx
    assert "Cuda compilation tools, release 11.8, V11.8.89" in r.ptx
    headers = str(nvrtc.find_cuda11().include_dir)  # CUDA 11.8's headers (nvidia-cuda-runtime-cu11)
    assert headers.endswith("nvidia/cuda_runtime/include")
    assert r.command == ["nvrtc", "--gpu-architecture=compute_35", "--std=c++17", f"-I{headers}", "source.cu"]
    assert r.flags == ["--gpu-architecture=compute_35", "--std=c++17", f"-I{headers}"]
    assert r.ptxas_command[0].endswith("cuda_nvcc/bin/ptxas") and r.ptxas_command[1:3] == ["-arch=sm_35", "-v"]
    res = r.resources["saxpy"]
    # ptxas 11.8 for sm_35: 7 registers, parameters at 320 + 28 bytes of bank 0 (CUDA 13.5 for sm_80: 10, 352 + 28)
    assert (res.registers, res.arch, res.shared_bytes, res.cmem_banks, res.is_entry) == (7, "sm_35", 0, {0: 348},
                                                                                          True)
    modern = compile_cuda_source(SAXPY)
    assert ".target sm_80" in modern.ptx and modern.resources["saxpy"].registers == 10
    assert modern.resources["saxpy"].cmem_banks == {0: 380}
    maxwell = compile_cuda_source(SAXPY, arch="sm_52", toolchain="cuda11")
    assert "\n.target sm_52\n" in maxwell.ptx and maxwell.resources["saxpy"].arch == "sm_52"


def test_cuda11_holds_the_register_cap_for_launch_bounded_kernels(cache_env):
    uncapped = compile_cuda_source(BOUNDED, arch="sm_35", toolchain="cuda11").resources["heavy"]
    capped = compile_cuda_source(BOUNDED, arch="sm_35", toolchain="cuda11", maxrregcount=32)
    # ptxas 11.8 alone ignores -maxrregcount under __launch_bounds__; .maxnreg (ptxas's copy only) holds it
    assert (uncapped.registers, uncapped.spill_stores) == (47, 0)
    assert (capped.resources["heavy"].registers, capped.resources["heavy"].spill_stores) == (32, 464)
    assert ".maxnreg" not in capped.ptx  # the simulated PTX is NVRTC's own
    assert nvrtc.with_register_cap(capped.ptx, 32).count(".maxnreg 32\n{") == 1
    assert nvrtc.with_register_cap(capped.ptx, None) == capped.ptx


def test_cuda11_runs_a_kernel_correctly_on_a_gtx480_device(cache_env):
    x = np.arange(1000, dtype=np.float32)
    with tlpsim.Device(config="gtx480") as dev:
        assert dev.compile_options == {"toolchain": "cuda11", "arch": "sm_35", "maxrregcount": 63}
        dx, dy = tlpsim.asarray(x), tlpsim.asarray(np.ones(1000, np.float32))
        rec = tlpsim.RawKernel(SAXPY, "saxpy")((4,), (256,), (np.float32(2.0), dx, dy, np.int32(1000)))
        np.testing.assert_array_equal(dy.get(), 2.0 * x + 1.0)
    assert rec.resources.registers == 7 and rec.compile["toolchain"] == "cuda11"


# ------------------------------------------------------------------ errors


def test_missing_cuda11_wheel_is_a_compile_error_naming_it(cache_env, monkeypatch):
    monkeypatch.setattr(nvrtc, "nvidia_package_dirs", lambda: [])
    with pytest.raises(CompileError, match=r"the cuda11 toolchain needs the wheels nvidia-cuda-nvrtc-cu11, "
                                           r"nvidia-cuda-nvcc-cu11, nvidia-cuda-runtime-cu11, which are not "
                                           r"installed: install it with `make setup` \(requirements.lock\) or "
                                           r"`pip install nvidia-cuda-nvrtc-cu11==11.8.89 "
                                           r"nvidia-cuda-nvcc-cu11==11.8.89 nvidia-cuda-runtime-cu11==11.8.89`"):
        compile_cuda_source(SAXPY, arch="sm_35", toolchain="cuda11")


def test_nvrtc_error_names_file_and_line(cache_env, tmp_path):
    src = tmp_path / "broken.cu"
    src.write_text('extern "C" __global__ void k(int* a) {\n    a[0] = undefined_name;\n}\n')
    with pytest.raises(CompileError) as err:
        compile_cuda_file(src, arch="sm_35", toolchain="cuda11")
    first = str(err.value).splitlines()[0]
    assert first == (f"NVRTC 11.8 (toolchain cuda11) failed to compile {src} (NVRTC_ERROR_COMPILATION): "
                     f'{src}:2: error: identifier "undefined_name" is undefined')


def test_whole_program_under_cuda11_says_to_use_cuda13(cache_env):
    prog = "#include <cstdio>\n__global__ void k() {}\nint main() { k<<<1, 1>>>(); return 0; }\n"
    with pytest.raises(CompileError, match="NVRTC compiles device code only, and this looks like a whole program"):
        compile_cuda_source(prog, arch="sm_35", toolchain="cuda11")
    assert compile_cuda_source(prog).kernels == ["_Z1kv"]  # nvcc 13.5 keeps the device code


def test_targets_a_toolchain_cannot_reach_are_compile_errors(cache_env):
    with pytest.raises(CompileError, match="toolchain cuda11: .* cannot target sm_20 "):
        compile_cuda_source(SAXPY, arch="sm_20", toolchain="cuda11")
    with pytest.raises(CompileError, match="toolchain cuda13: CUDA 13.5 .* cannot target sm_35"):
        compile_cuda(SAXPY, arch="sm_35")
    with pytest.raises(CompileError, match=r"--std=c\+\+20: NVRTC 11.8 \(toolchain cuda11\) knows c\+\+03, c\+\+11"):
        compile_cuda_source(SAXPY, arch="sm_35", toolchain="cuda11", std="c++20")
    with pytest.raises(TlpsimError, match="compile option '-arch=sm_50' is not allowed"):
        compile_cuda_source(SAXPY, arch="sm_35", toolchain="cuda11", options=["-arch=sm_50"])


# ------------------------------------------------------------------ caches keep the toolchains apart


def test_ptx_cache_keys_separate_the_toolchains(cache_env):
    old = compile_cuda_source(SAXPY, arch="sm_35", toolchain="cuda11")
    new = compile_cuda_source(SAXPY, arch="sm_80")
    old80 = compile_cuda_source(SAXPY, arch="sm_80", toolchain="cuda11")
    keys = {old.cache_key, new.cache_key, old80.cache_key}
    assert len(keys) == 3 and sorted(p.stem for p in cache_env.glob("*.json")) == sorted(keys)
    again = compile_cuda_source(SAXPY, arch="sm_80", toolchain="cuda11")
    assert again.from_cache and again.toolchain == "cuda11" and again.ptx == old80.ptx
    assert compile_cuda_source(SAXPY, arch="sm_80").toolchain == "cuda13"


def test_trace_cache_keys_separate_the_toolchains(cache_env):
    mem = tlpsim.Device().memory
    params = np.zeros(4, np.uint8)
    keys = {launch_key(compile_cuda_source(SAXPY, arch=arch, toolchain=tc).ptx, "saxpy", (1, 1, 1), (32, 1, 1), 0,
                       params, mem) for tc, arch in (("cuda11", "sm_35"), ("cuda11", "sm_80"), ("cuda13", "sm_80"))}
    assert len(keys) == 3  # the PTX text (ISA version, target, code) is part of the key


def test_run_keys_separate_the_toolchains():
    base = RunParams("vecadd", "tiny", "gtx480")
    modern = RunParams("vecadd", "tiny", "gtx480", {"gpu.toolchain": "cuda13"})
    maxwell = RunParams("vecadd", "tiny", "gtx480", {"gpu.cuda11_arch": "sm_52"})
    assert len({base.key(), modern.key(), maxwell.key()}) == 3
    # a CUDA 13.5 run keeps the key it had before toolchains existed: parameters and code only
    from tlpsim.sweep.job import _hash, compile_stamp

    assert compile_stamp("gtx480", {"gpu.toolchain": "cuda13"}, "timing") == {}
    assert modern.key() == _hash({**modern._params(), "code": modern.fingerprint()})
    assert compile_stamp("gtx480", {}, "timing") == {
        "toolchain": "cuda11 sm_35 nvidia-cuda-nvcc-cu11==11.8.89 nvidia-cuda-nvrtc-cu11==11.8.89 "
                     "nvidia-cuda-runtime-cu11==11.8.89"}


def test_nvrtc_leaves_the_processs_text_encoding_alone():
    # NVRTC 11.8 switches the calling thread to the "C" locale; left so, every later
    # open() without an encoding would read and write ASCII
    import locale

    before = locale.getpreferredencoding(False)
    nvrtc.nvrtc_compile('extern "C" __global__ void k(float* x) { x[threadIdx.x] = 4.f; }', "k.cu",
                        ["--gpu-architecture=compute_35"])
    assert locale.getpreferredencoding(False) == before

"""`[gpu]`: chip-level parameters — SM count, clock domains, kernel concurrency and
launch latency, the CTA scheduler choice, the per-SM CTA cap and the compile options.

The compile options: `toolchain` picks the compiler of workloads and host-API
kernels (tlpsim.frontend.toolchains), and each toolchain has its own target key —
`arch` for `cuda13`, `cuda11_arch` for `cuda11` — so one `--set gpu.toolchain=...`
switches between a preset's modern and era compilation. `arch` also stays what
whole programs (`tlpsim exec`, always CUDA 13.5) are compiled for and the compute
capability their `cudaGetDeviceProperties` reports. `maxrregcount` applies to both.
`block_schedule` is the issue order the assembler would give each basic block; like the
compile options it holds in functional and timing mode alike, so both run one order."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from tlpsim.config.base import Section
from tlpsim.config.policy import PolicyChoice
from tlpsim.config.types import MHz, field
from tlpsim.frontend.toolchains import target_problem

__all__ = ["GPUSection"]

Toolchain = Literal["cuda13", "cuda11"]


class GPUSection(Section):
    """The whole chip: how many SMs, at what clocks, and how CTAs reach them."""

    KEY = "gpu"

    name: str = field("generic", "name of the modelled GPU (informational; shown in reports)")
    n_sms: int = field(15, "number of streaming multiprocessors (GPGPU-Sim gpgpu_n_clusters × "
                           "gpgpu_n_cores_per_cluster)", unit="SMs", ge=1, le=1024)

    core_clock_mhz: MHz = field(700.0, "SM (core) clock the timing model ticks at; one warp "
                                       "instruction per pipeline per cycle (GPGPU-Sim gpgpu_clock_domains[0])",
                                unit="MHz", gt=0)
    icnt_clock_mhz: MHz = field(700.0, "interconnect clock (gpgpu_clock_domains[1])", unit="MHz", gt=0)
    l2_clock_mhz: MHz = field(700.0, "L2 / memory-partition clock (gpgpu_clock_domains[2])", unit="MHz", gt=0)
    dram_clock_mhz: MHz = field(924.0, "DRAM command clock (gpgpu_clock_domains[3]); data moves at "
                                       "dram.data_rate transfers per command clock", unit="MHz", gt=0)
    shader_clock_mhz: MHz | None = field(None, "vendor 'shader'/'hot' clock as papers quote it (Fermi: 2 × "
                                               "core clock, since a 16-lane pipe at the hot clock is modelled "
                                               "as a 32-lane pipe at the core clock); informational, the "
                                               "timing model uses core_clock_mhz", unit="MHz", gt=0)

    max_concurrent_kernels: int = field(8, "kernels that may run concurrently on the GPU "
                                           "(gpgpu_max_concurrent_kernel)", unit="kernels", ge=1, le=128)
    kernel_launch_latency: int = field(0, "core cycles from a launch's turn (its stream's previous launch done, a "
                                          "concurrent-kernel slot free) to its first CTA dispatch, counted in the "
                                          "launch's cycles: the front end's work between the host's launch and the "
                                          "grid reaching the SMs (GPGPU-Sim gpgpu_kernel_launch_latency); 0 = CTAs "
                                          "dispatch at once", unit="cycles", ge=0, le=10_000_000)
    cta_scheduler: PolicyChoice = field("round_robin", "CTA scheduler plug-in (extension point "
                                                       "'cta_scheduler'): which CTA goes to which SM and when")
    max_ctas_per_sm: int | None = field(None, "extra cap on resident CTAs per SM, below what resources allow "
                                              "(the knob swept in Lee et al. Fig. 4); unset = no cap",
                                        unit="CTAs", ge=1)

    toolchain: Toolchain = field("cuda13", "compiler of workloads and host-API kernels: 'cuda13' = CUDA 13.5 "
                                           "nvcc/ptxas for gpu.arch; 'cuda11' = the papers' era, NVRTC 11.8 "
                                           "compute_XX PTX (ISA 7.8) and ptxas 11.8 resources for gpu.cuda11_arch")
    arch: str = field("sm_80", "target when gpu.toolchain = 'cuda13' (sm_75 and newer); also the target of whole "
                               "programs (tlpsim exec, always CUDA 13.5) and the compute capability they see")
    cuda11_arch: str = field("sm_35", "target when gpu.toolchain = 'cuda11' (sm_35 ... sm_90): sm_35 for the "
                                      "Fermi/Kepler presets (CUDA 11's oldest), sm_50/sm_52 for Maxwell")
    maxrregcount: int | None = field(None, "register cap per thread passed to ptxas (-maxrregcount), under "
                                           "either toolchain; 63 reproduces the Fermi-era limit; unset = no cap",
                                     unit="registers/thread", ge=16, le=255)
    block_schedule: Literal["ptx", "list"] = field(
        "ptx", "order in which a warp issues each basic block's instructions: 'ptx' = as nvcc's PTX lists them "
               "(GPGPU-Sim times PTX so, each load next to its first use); 'list' = as ptxas lays out the machine "
               "code: short forward-branch regions predicated (tlpsim.analysis.ifconvert), then each block "
               "list-scheduled within its dependences, loads hoisted ahead of the arithmetic and past stores "
               "they provably cannot alias (tlpsim.analysis.schedule); the same results either way")

    @field_validator("arch")
    @classmethod
    def _arch(cls, v: str) -> str:
        problem = target_problem("cuda13", v)
        if problem:
            raise ValueError(f"{problem}: this is the cuda13 toolchain's target; for {v} set "
                             f"gpu.toolchain = 'cuda11' and gpu.cuda11_arch = '{v}'")
        return v

    @field_validator("cuda11_arch")
    @classmethod
    def _cuda11_arch(cls, v: str) -> str:
        problem = target_problem("cuda11", v)
        if problem:
            raise ValueError(problem)
        return v

    @property
    def compile_arch(self) -> str:
        """The target kernels are compiled for under the selected toolchain."""
        return self.cuda11_arch if self.toolchain == "cuda11" else self.arch

    @property
    def compile_options(self) -> dict[str, str | int | None]:
        """`toolchain`, `arch`, `maxrregcount` as the host API and the compiler take them."""
        return {"toolchain": self.toolchain, "arch": self.compile_arch, "maxrregcount": self.maxrregcount}

    @property
    def core_period_ps(self) -> int:
        """Core clock period in integer picoseconds (rounded)."""
        return round(1e6 / self.core_clock_mhz)

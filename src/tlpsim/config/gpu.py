"""`[gpu]`: chip-level parameters — SM count, clock domains, kernel concurrency,
the CTA scheduler choice, the per-SM CTA cap and the compile options."""

from __future__ import annotations

import re

from pydantic import field_validator

from tlpsim.config.base import Section
from tlpsim.config.policy import PolicyChoice
from tlpsim.config.types import MHz, field

__all__ = ["GPUSection"]

_ARCH_RE = re.compile(r"(sm|compute)_[0-9]{2,3}[a-z]?")


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
    cta_scheduler: PolicyChoice = field("round_robin", "CTA scheduler plug-in (extension point "
                                                       "'cta_scheduler'): which CTA goes to which SM and when")
    max_ctas_per_sm: int | None = field(None, "extra cap on resident CTAs per SM, below what resources allow "
                                              "(the knob swept in Lee et al. Fig. 4); unset = no cap",
                                        unit="CTAs", ge=1)

    arch: str = field("sm_80", "nvcc target used to compile kernels for this preset (-arch); the "
                               "bundled toolkit compiles sm_75 and newer")
    maxrregcount: int | None = field(None, "register cap per thread passed to ptxas (-maxrregcount); "
                                           "63 reproduces the Fermi-era limit; unset = no cap",
                                     unit="registers/thread", ge=16, le=255)

    @field_validator("arch")
    @classmethod
    def _arch(cls, v: str) -> str:
        if not _ARCH_RE.fullmatch(v):
            raise ValueError(f"not an nvcc architecture: {v!r} (write e.g. 'sm_80')")
        return v

    @property
    def core_period_ps(self) -> int:
        """Core clock period in integer picoseconds (rounded)."""
        return round(1e6 / self.core_clock_mhz)

"""`GPUConfig`: the root of the typed configuration tree.

Sections (each a frozen pydantic model; see its module for the fields)::

    gpu      GPUSection              chip: SMs, clocks, kernels, CTA scheduler, CTA cap, compile options
    sm       SMConfig                one SM: slots, RF, scratchpad, front end, collectors, pipelines,
                                     latency tables, SM-level policy choices
    l1d      L1DConfig               per-SM L1 data cache
    l1c      L1CConfig               per-SM constant cache
    l1i      L1IConfig               per-SM instruction cache
    l1t      L1TConfig               per-SM texture cache
    icnt     InterconnectConfig      SM↔L2 crossbar
    l2       L2Config                shared L2 (total size; slices per partition)
    dram     DRAMConfig              memory partitions, GDDR timing, scheduler
    power    PowerConfig             technology node, energy-table overrides
    monitor  MonitorConfig           timeline sampling, watchdog, monitor plug-in

`GPUConfig()` with no arguments is GPGPU-Sim's GTX480; presets
(`tlpsim.config.load_config`) set every field explicitly anyway.

Policy choices (extension point → key), resolved by `tlpsim.policies.registry`::

    cta_scheduler → gpu.cta_scheduler        warp_scheduler → sm.warp_scheduler
    resource_allocator → sm.resource_allocator   operand_storage → sm.operand_storage
    context_switcher → sm.context_switcher   execution_checker → sm.execution_checker
    monitor → monitor.policy
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from tlpsim.config.caches import L1CConfig, L1DConfig, L1IConfig, L1TConfig, L2Config
from tlpsim.config.gpu import GPUSection
from tlpsim.config.memsys import DRAMConfig, InterconnectConfig
from tlpsim.config.monitor import MonitorConfig
from tlpsim.config.policy import PolicyChoice
from tlpsim.config.power import PowerConfig
from tlpsim.config.sm import SMConfig
from tlpsim.config.types import field

__all__ = ["GPUConfig", "POLICY_KEYS"]

#: extension point -> dotted config key of its policy choice
POLICY_KEYS: dict[str, str] = {
    "cta_scheduler": "gpu.cta_scheduler",
    "resource_allocator": "sm.resource_allocator",
    "warp_scheduler": "sm.warp_scheduler",
    "operand_storage": "sm.operand_storage",
    "context_switcher": "sm.context_switcher",
    "execution_checker": "sm.execution_checker",
    "monitor": "monitor.policy",
}

_BANDWIDTH_TOLERANCE = 0.01  # nominal figures in papers are rounded (614 for 614.4 GB/s)


class GPUConfig(BaseModel):
    """A complete, validated GPU configuration (immutable)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    description: str = field("", "one-line description of the configuration and its sources "
                                 "(not part of config_hash)")
    gpu: GPUSection = field(GPUSection(), "chip-level parameters")
    sm: SMConfig = field(SMConfig(), "streaming multiprocessor")
    l1d: L1DConfig = field(L1DConfig(), "per-SM L1 data cache")
    l1c: L1CConfig = field(L1CConfig(), "per-SM constant cache")
    l1i: L1IConfig = field(L1IConfig(), "per-SM instruction cache")
    l1t: L1TConfig = field(L1TConfig(), "per-SM texture cache")
    icnt: InterconnectConfig = field(InterconnectConfig(), "SM-L2 interconnect")
    l2: L2Config = field(L2Config(), "shared L2 cache")
    dram: DRAMConfig = field(DRAMConfig(), "DRAM partitions")
    power: PowerConfig = field(PowerConfig(), "energy model")
    monitor: MonitorConfig = field(MonitorConfig(), "timeline, watchdog and monitor plug-in")

    # ------------------------------------------------------------------ checks

    @model_validator(mode="after")
    def _cross_sections(self) -> "GPUConfig":
        found = self.problems()
        if found:
            raise ValueError("; ".join(found))
        return self

    def problems(self) -> list[str]:
        """Violations that involve more than one section."""
        out: list[str] = []
        cap = self.gpu.max_ctas_per_sm
        if cap is not None and cap > self.sm.max_ctas:
            out.append(f"gpu.max_ctas_per_sm ({cap}) exceeds sm.max_ctas ({self.sm.max_ctas}); the cap can only "
                       f"lower the CTA count (raise sm.max_ctas to model a bigger SM)")
        wd, lat = self.monitor.watchdog_cycles, self.gpu.kernel_launch_latency
        if wd and 2 * lat > wd:
            # the wait and the cold fetch of the launch's first instructions must fit one window
            out.append(f"gpu.kernel_launch_latency ({lat}) is more than half of monitor.watchdog_cycles ({wd}): the "
                       f"watchdog could report a launch's wait as a deadlock (raise the watchdog or set it to 0)")
        out += self.l2.slice_problems(self.n_l2_slices)
        carveouts = self.l1d.shared_carveouts_kb
        if carveouts and carveouts[-1] * 1024 != self.sm.shared_bytes:
            out.append(f"l1d.shared_carveouts_kb: the largest carveout ({carveouts[-1]} KiB) must be "
                       f"sm.shared_bytes ({self.sm.shared_bytes} B), the shared memory CTAs are allocated from")
        # one SM is allowed: it sits in half 0 and half the channels are far from it
        if self.l2.far_latency and self.dram.n_partitions % 2:
            out.append(f"l2.far_latency ({self.l2.far_latency}) splits the L2 into two halves of the memory "
                       f"channels: it needs an even dram.n_partitions (not {self.dram.n_partitions})")
        out += self._address_mapping_problems()
        if self.dram.banks % self.l2.slices_per_partition:
            out.append(f"dram.banks ({self.dram.banks}) must be a multiple of l2.slices_per_partition "
                       f"({self.l2.slices_per_partition})")
        nominal = self.dram.nominal_bandwidth_gbs
        if nominal is not None and abs(self.dram_bandwidth_gbs - nominal) > _BANDWIDTH_TOLERANCE * nominal:
            out.append(f"dram.nominal_bandwidth_gbs ({nominal}) disagrees with the {self.dram_bandwidth_gbs:.1f} GB/s "
                       f"given by dram.n_partitions × dram.chips_per_partition × dram.bus_width_bytes × "
                       f"dram.data_rate × gpu.dram_clock_mhz")
        nominal = self.icnt.nominal_bandwidth_gbs
        if nominal is not None and abs(self.icnt_bandwidth_gbs - nominal) > _BANDWIDTH_TOLERANCE * nominal:
            out.append(f"icnt.nominal_bandwidth_gbs ({nominal}) disagrees with the {self.icnt_bandwidth_gbs:.1f} GB/s "
                       f"given by min(gpu.n_sms, L2 slices) × icnt.flit_bytes × gpu.icnt_clock_mhz")
        return out

    def _address_mapping_problems(self) -> list[str]:
        # parsed by the decoder the DRAM model builds, so the key is named here and
        # not in a ValueError from the builder
        from tlpsim.timing.addrmap import AddressMap

        try:
            amap = AddressMap.from_gpgpusim(self.dram.address_mapping, self.dram.n_partitions,
                                            self.l2.slices_per_partition)
        except (ValueError, ZeroDivisionError) as exc:
            return [f"dram.address_mapping: {exc} (GPGPU-Sim's gpgpu_mem_addr_mapping syntax: optional "
                    "'dramid@<bit>;' then 64 bit letters D B R C S or 0, dots ignored)"]
        if amap.n_banks != self.dram.banks:
            return [f"dram.banks ({self.dram.banks}) disagrees with dram.address_mapping, whose B bits decode "
                    f"{amap.n_banks} banks"]
        return []

    # ------------------------------------------------------------------ derived

    @property
    def n_l2_slices(self) -> int:
        """L2 slices on the chip (dram.n_partitions × l2.slices_per_partition)."""
        return self.dram.n_partitions * self.l2.slices_per_partition

    @property
    def l2_slice_kb(self) -> float:
        """Capacity of one L2 slice in KiB."""
        return self.l2.size_kb / self.n_l2_slices

    @property
    def l2_sets_per_slice(self) -> int:
        """Sets in one L2 slice."""
        return (self.l2.size_kb * 1024 // self.n_l2_slices) // (self.l2.line_bytes * self.l2.assoc)

    @property
    def dram_bandwidth_gbs(self) -> float:
        """Peak DRAM bandwidth in GB/s."""
        return self.dram.bandwidth_gbs(self.gpu.dram_clock_mhz)

    @property
    def icnt_bandwidth_gbs(self) -> float:
        """Peak interconnect bandwidth per direction in GB/s: one flit per port per icnt cycle on
        min(SMs, L2 slices) ports."""
        ports = min(self.gpu.n_sms, self.n_l2_slices)
        return ports * self.icnt.flit_bytes * self.gpu.icnt_clock_mhz * 1e6 / 1e9

    def policy_choices(self) -> dict[str, tuple[str, PolicyChoice]]:
        """extension point -> (config key, PolicyChoice), for every extension point."""
        out = {}
        for point, key in POLICY_KEYS.items():
            section, name = key.split(".")
            out[point] = (key, getattr(getattr(self, section), name))
        return out

    # ------------------------------------------------------------------ serialisation

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (JSON/TOML types only); `GPUConfig.model_validate(d)` reads it back.
        Policy choices appear flat: {"impl": "two_level", "active_warps": 8}."""
        return self.model_dump(mode="json")

    def to_toml(self, header: str = "") -> str:
        """The fully resolved config as TOML (write it next to results); `header` is
        written as leading comment lines. `load_config(path)` reads it back equal."""
        from tlpsim.config.toml_writer import dumps

        head = header if header else f"tlpsim resolved configuration, config_hash = {self.config_hash()}"
        return dumps(self.to_dict(), head)

    def config_hash(self, length: int = 16) -> str:
        """Stable hex digest of every field except `description` (sorted-key JSON, SHA-256)."""
        data = self.to_dict()
        data.pop("description", None)
        text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(text.encode()).hexdigest()[:length]

    def with_overrides(self, overrides: Mapping[str, Any] | Sequence[str] | str) -> "GPUConfig":
        """A new config with dotted-key overrides applied (see `tlpsim.config.overrides`)."""
        from tlpsim.config.overrides import apply_overrides, validate_raw

        from tlpsim.config.overrides import _normalise

        items = _normalise(overrides)
        raw = apply_overrides(self.to_dict(), items, GPUConfig)
        return validate_raw(raw, GPUConfig, "overrides " + ", ".join(f"{k}={v}" for k, v in items))

    def get(self, key: str) -> Any:
        """The value at a dotted key (`cfg.get("sm.max_ctas")`); raises ConfigError for unknown keys."""
        from tlpsim.config.overrides import _unknown_key

        node: Any = self
        for part in key.split("."):
            if isinstance(node, BaseModel) and part in type(node).model_fields:
                node = getattr(node, part)
            elif isinstance(node, PolicyChoice) and part in node.params:
                node = node.params[part]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise _unknown_key(key, GPUConfig)
        return node

    def __hash__(self) -> int:
        return hash(self.config_hash())

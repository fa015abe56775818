"""Typed, validated GPU configuration: presets in TOML plus dotted-key overrides.

Public API::

    from tlpsim.config import load_config, list_presets, GPUConfig, PolicyChoice

    cfg = load_config("gtx480")                                  # a built-in preset
    cfg = load_config("gtx480", ["sm.max_ctas=3", "l1d.size_kb=32"])   # --set style
    cfg = load_config("fermi_rfv", {"sm.warp_scheduler.active_warps": 8})
    cfg = load_config(Path("my_gpu.toml"))                       # a file (may `extends = "gtx480"`)
    cfg2 = cfg.with_overrides({"gpu.max_ctas_per_sm": 2})        # Lee et al. Fig. 4 knob
    cfg.sm.max_ctas, cfg.l2.size_kb, cfg.dram.tRCD, cfg.get("sm.latency.fp32.mad")
    cfg.to_dict(); cfg.to_toml(); cfg.config_hash()              # write next to results
    list_presets()  # ['expars_maxwell', 'fermi_dmr', 'fermi_rfv', 'gtx480', 'gtx980', 'maxwell_gpuduet', 'tesla_m2050']

Every config model is a frozen pydantic model that rejects unknown keys; every
field carries a description and (where meaningful) a unit in its metadata
(`GPUConfig.model_fields[...]`, `tlpsim.config.types.unit_of`). Errors are
`tlpsim.errors.ConfigError` with the full dotted key (`sm.max_ctas: Input
should be greater than or equal to 1 (got 0)`); unknown keys come with
close-match suggestions, an unknown preset with the list of presets.

The tree (sections → fields; see each module for descriptions and units):

- `gpu` (`gpu.py`): name, n_sms, core/icnt/l2/dram_clock_mhz, shader_clock_mhz,
  max_concurrent_kernels, cta_scheduler, max_ctas_per_sm, toolchain, arch,
  cuda11_arch, maxrregcount
- `sm` (`sm.py`): max_threads, max_warps, max_ctas, warp_size, registers,
  register_alloc_granularity, shared_bytes, shared_alloc_granularity,
  shared_banks, shared_latency, shared_subcore_issue_cycles,
  shared_subcore_cycles_per_conflict, shared_limited_broadcast, simt_width,
  cuda_cores, n_schedulers, issue_width, dual_issue_diff_units, sub_core_model,
  ibuffer_entries, fetch_width, fetch_throughput, rf_banks, rf_bank_read_ports,
  rf_bank_write_ports, rf_bank_writes_block_reads, rf_bank_use_warp_id,
  operand_collector.{specialized, units, in_ports, out_ports}.{sp,sfu,dp,int,mem,gen},
  pipelines.{sp,sfu,dp,int,ldst}.{count,width}, pipelines.wb_width,
  latency/initiation.{int.{add,max,mul,mad,div,shfl}, fp32.*, fp64.*, sfu},
  warp_scheduler, resource_allocator, operand_storage, context_switcher,
  execution_checker
- `l1d`, `l1c`, `l1i`, `l1t`, `l2` (`caches.py`): size_kb, assoc, line_bytes,
  sector_bytes, sectored, replacement, write_policy, allocation,
  write_allocate, set_index, mshr_entries, mshr_max_merge, miss_queue_entries,
  hit_latency; l1d adds enabled, bypass_global, banks, requests_per_cycle; l2
  adds slices_per_partition, queue_entries, data_port_bytes
- `icnt` (`memsys.py`): topology, flit_bytes, input_buffer_flits,
  output_buffer_flits, latency, subnets, num_vcs, internal_speedup, arbiter,
  nominal_bandwidth_gbs
- `dram` (`memsys.py`): n_partitions, chips_per_partition, bus_width_bytes,
  burst_length, data_rate, banks, bank_groups, row_bytes, tCCD tCCDL tRRD tRCD
  tRAS tRP tRC tCL tWL tCDLR tWR tRTPL tRTW tWTR, scheduler, queue_size,
  return_queue_size, latency, address_mapping, nominal_bandwidth_gbs
- `power` (`power.py`): enabled, technology_node, table
- `monitor` (`monitor.py`): timeline_interval_cycles, watchdog_cycles, policy

Policy choices are `PolicyChoice(impl, params)`, written in TOML as
`warp_scheduler = "gto"` or `warp_scheduler = { impl = "two_level",
active_warps = 8 }`; they are checked against the plug-in registry when the
simulator is built (`tlpsim.policies.registry.resolve` / `resolve_config`).
"""

from tlpsim.config.base import Section
from tlpsim.config.caches import CacheConfig, L1CConfig, L1DConfig, L1IConfig, L1TConfig, L2Config
from tlpsim.config.gpu import GPUSection
from tlpsim.config.loader import PRESET_DIR, list_presets, load_config, load_raw, preset_path
from tlpsim.config.memsys import DRAMConfig, InterconnectConfig
from tlpsim.config.model import POLICY_KEYS, GPUConfig
from tlpsim.config.monitor import MonitorConfig
from tlpsim.config.overrides import all_keys
from tlpsim.config.policy import PolicyChoice
from tlpsim.config.power import PowerConfig
from tlpsim.config.sm import (
    CollectorPorts, FpOps, IntOps, OpTable, OperandCollectorConfig, Pipeline, Pipelines, SMConfig,
)
from tlpsim.errors import ConfigError

__all__ = [
    "CacheConfig", "CollectorPorts", "ConfigError", "DRAMConfig", "FpOps", "GPUConfig", "GPUSection", "IntOps",
    "InterconnectConfig", "L1CConfig", "L1DConfig", "L1IConfig", "L1TConfig", "L2Config", "MonitorConfig",
    "OpTable", "OperandCollectorConfig", "POLICY_KEYS", "PRESET_DIR", "Pipeline", "Pipelines", "PolicyChoice",
    "PowerConfig", "SMConfig", "Section", "all_keys", "list_presets", "load_config", "load_raw", "preset_path",
]

"""`[sm]`: one streaming multiprocessor — thread/warp/CTA slots, register file and
scratchpad capacities, front end, schedulers, operand collectors, execution
pipelines, per-opcode latency tables, and the SM-level policy choices.

Sub-tables::

    [sm.operand_collector]            specialized = true
    [sm.operand_collector.units]      sp = 6  sfu = 8  dp = 0  int = 0  mem = 2  gen = 0
    [sm.operand_collector.in_ports]   ...   (same keys)
    [sm.operand_collector.out_ports]  ...
    [sm.pipelines.sp]                 count = 2  width = 2     (also sfu, dp, int, ldst)
    [sm.latency.int]                  add mul mad div max shfl (cycles)
    [sm.latency.fp32] / [sm.latency.fp64]   add max mul mad div
    [sm.latency]                      sfu = 8
    [sm.initiation.*]                 the same keys: initiation intervals

Defaults are GPGPU-Sim's GTX480 (Fermi) values, so `SMConfig()` is a Fermi SM.
"""

from __future__ import annotations

from typing import Literal

from tlpsim.config.base import Section, is_pow2
from tlpsim.config.policy import PolicyChoice
from tlpsim.config.types import Bytes, field

__all__ = ["CollectorPorts", "FpOps", "IntOps", "OpTable", "OperandCollectorConfig", "Pipeline", "Pipelines",
           "SMConfig"]

# bank counts the functional traces record shared-memory conflict degrees for
# (tlpsim.trace.format.SHARED_BANK_COUNTS; a test keeps the two equal)
_SHARED_BANK_COUNTS = (8, 16, 32, 64)
# PTX atom operations and operand types (PTX ISA, "atom")
_ATOM_OPS = ("add", "and", "or", "xor", "cas", "exch", "inc", "dec", "min", "max")
_ATOM_TYPES = ("b32", "b64", "b128", "u32", "u64", "s32", "s64", "f16", "f16x2", "bf16", "bf16x2", "f32", "f64")

# Classes below have a field named `int` (GPGPU-Sim's name for the integer unit);
# annotating with this alias keeps pydantic from resolving "int" to that field.
Int = int

# --------------------------------------------------------------------------- op timing


class IntOps(Section):
    """Integer op classes, in GPGPU-Sim's ptx_opcode_*_int order ADD,MAX,MUL,MAD,DIV,SHFL."""

    add: Int = field(4, "integer add/sub/logic/compare", unit="cycles", ge=1)
    max: Int = field(13, "integer min/max", unit="cycles", ge=1)
    mul: Int = field(4, "integer multiply", unit="cycles", ge=1)
    mad: Int = field(5, "integer multiply-add", unit="cycles", ge=1)
    div: Int = field(145, "integer divide/remainder", unit="cycles", ge=1)
    shfl: Int = field(32, "warp shuffle", unit="cycles", ge=1)


class FpOps(Section):
    """Floating-point op classes, in GPGPU-Sim's ptx_opcode_*_fp/dp order ADD,MAX,MUL,MAD,DIV."""

    add: Int = field(4, "add/sub", unit="cycles", ge=1)
    max: Int = field(13, "min/max", unit="cycles", ge=1)
    mul: Int = field(4, "multiply", unit="cycles", ge=1)
    mad: Int = field(5, "multiply-add / fma", unit="cycles", ge=1)
    div: Int = field(39, "divide", unit="cycles", ge=1)


class OpTable(Section):
    """Latencies (or initiation intervals) per op class: GPGPU-Sim's
    ptx_opcode_latency_{int,fp,dp,sfu} (or ptx_opcode_initiation_*)."""

    int: IntOps = field(IntOps(), "integer ops (ptx_opcode_*_int)")
    fp32: FpOps = field(FpOps(), "single-precision ops (ptx_opcode_*_fp)")
    fp64: FpOps = field(FpOps(add=8, max=19, mul=8, mad=8, div=330), "double-precision ops (ptx_opcode_*_dp)")
    sfu: Int = field(8, "special-function ops: sin, cos, ex2, lg2, rcp, rsqrt, sqrt (ptx_opcode_*_sfu)",
                     unit="cycles", ge=1)

    def rows(self) -> dict[str, Int]:
        """Flat view {"int.add": n, ..., "sfu": n}."""
        out: dict[str, Int] = {}
        for group in ("int", "fp32", "fp64"):
            for name, value in getattr(self, group).model_dump().items():
                out[f"{group}.{name}"] = value
        out["sfu"] = self.sfu
        return out


# --------------------------------------------------------------------------- operand collector


class CollectorPorts(Section):
    """A count per operand-collector class (GPGPU-Sim gpgpu_operand_collector_num_*_{sp,sfu,dp,int,mem,gen})."""

    sp: Int = field(0, "for the SP (fp32/int) pipelines", ge=0)
    sfu: Int = field(0, "for the SFU pipelines", ge=0)
    dp: Int = field(0, "for the DP pipelines", ge=0)
    int: Int = field(0, "for the INT pipelines", ge=0)
    mem: Int = field(0, "for the LD/ST unit", ge=0)
    gen: Int = field(0, "generic collectors usable by any pipeline", ge=0)


class OperandCollectorConfig(Section):
    """Operand collector units between issue and the execution pipelines."""

    KEY = "sm.operand_collector"

    specialized: bool = field(True, "per-pipeline collector classes (sp/sfu/dp/int/mem); false = only "
                                    "generic collectors (gpgpu_enable_specialized_operand_collector)")
    units: CollectorPorts = field(CollectorPorts(sp=6, sfu=8, mem=2),
                                  "collector units per class (gpgpu_operand_collector_num_units_*)")
    in_ports: CollectorPorts = field(CollectorPorts(sp=2, sfu=1, mem=1),
                                     "dispatch ports from issue into each class "
                                     "(gpgpu_operand_collector_num_in_ports_*)")
    out_ports: CollectorPorts = field(CollectorPorts(sp=2, sfu=1, mem=1),
                                      "ports from each class to its pipelines "
                                      "(gpgpu_operand_collector_num_out_ports_*)")

    def problems(self) -> list[str]:
        out = []
        classes = ("sp", "sfu", "mem") if self.specialized else ("gen",)
        for c in classes:
            if getattr(self.units, c) < 1:
                out.append(f"{self.KEY}.units.{c} must be at least 1 "
                           f"({'specialized' if self.specialized else 'generic'} collectors)")
        for c in CollectorPorts.model_fields:
            if getattr(self.units, c) > 0:
                for side in ("in_ports", "out_ports"):
                    if getattr(getattr(self, side), c) < 1:
                        out.append(f"{self.KEY}.{side}.{c} must be at least 1 when "
                                   f"{self.KEY}.units.{c} = {getattr(self.units, c)}")
        return out


# --------------------------------------------------------------------------- pipelines


class Pipeline(Section):
    """One class of execution pipeline: how many units, and how many warp
    instructions the ID_OC / OC_EX pipeline registers of that class hold."""

    count: Int = field(1, "number of units of this class (gpgpu_num_*_units)", unit="units", ge=0, le=64)
    width: Int = field(1, "pipeline-register slots ID_OC and OC_EX (gpgpu_pipeline_widths): instructions of "
                          "this class issued per cycle into its collectors (0: no limit); for ldst, with the "
                          "memory collectors, also the memory instructions waiting for the LD/ST unit "
                          "(ID_OC + collectors + OC_EX)",
                       unit="instructions", ge=0, le=64)


class Pipelines(Section):
    """Execution pipelines of an SM. `dp.count = 0` runs fp64 on the SFU and
    `int.count = 0` runs integer ops on the SP pipelines (GPGPU-Sim's Fermi model)."""

    KEY = "sm.pipelines"

    sp: Pipeline = field(Pipeline(count=2, width=2), "SP (fp32, and int when int.count = 0) pipelines")
    sfu: Pipeline = field(Pipeline(count=1, width=1), "special-function pipelines (also fp64 when dp.count = 0)")
    dp: Pipeline = field(Pipeline(count=0, width=0), "double-precision pipelines")
    int: Pipeline = field(Pipeline(count=0, width=0), "integer pipelines")
    ldst: Pipeline = field(Pipeline(count=1, width=1), "load/store (memory) unit")
    wb_width: Int = field(2, "result buses: arithmetic results written back per cycle (gpgpu_pipeline_widths "
                             "EX_WB); an instruction whose writeback cycle has no free bus waits",
                          unit="instructions/cycle", ge=1, le=64)
    collector_delay: Int = field(1, "cycles from issue until the instruction holds a collector unit (GPGPU-Sim's "
                                    "ID_OC pipeline register); its first operand read is the cycle after",
                                 unit="core cycles", ge=0, le=64)
    dispatch_delay: Int = field(1, "cycles from the last operand read until the instruction enters its unit "
                                   "(GPGPU-Sim's OC_EX register, then the unit's dispatch register, which holds it "
                                   "for its initiation interval before the remaining latency - initiation stages)",
                                unit="core cycles", ge=0, le=64)
    writeback_delay: Int = field(2, "cycles from an instruction's last pipeline stage until its result is written "
                                    "and the scoreboard released (the result port, EX_WB register and writeback "
                                    "stage); a dependent instruction issues latency + collector_delay + "
                                    "dispatch_delay + writeback_delay + 2 cycles later when its operands are read "
                                    "in one cycle (GPGPU-Sim: latency + 6)",
                                 unit="core cycles", ge=0, le=64)
    ldst_writeback_register: bool = field(False, "the LD/ST unit writes shared-memory results and the loads an "
                                                 "L1 fill (or a bypassing or atomic reply) completes through one "
                                                 "writeback register, one a cycle, two cycles after the fill "
                                                 "(GPGPU-Sim's m_next_wb, ldst_unit::writeback); off: a reply's "
                                                 "data is written the cycle after it arrives, unserialised")

    def problems(self) -> list[str]:
        out = []
        for name in ("sp", "sfu", "ldst"):
            if getattr(self, name).count < 1:
                out.append(f"{self.KEY}.{name}.count must be at least 1")
        for name in ("sp", "sfu", "dp", "int", "ldst"):
            p = getattr(self, name)
            if p.count > 0 and p.width < 1:
                out.append(f"{self.KEY}.{name}.width must be at least 1 when {self.KEY}.{name}.count = {p.count}")
        return out


# --------------------------------------------------------------------------- the SM


class SMConfig(Section):
    """A streaming multiprocessor: its resource capacities and its pipeline."""

    KEY = "sm"

    # thread / warp / CTA slots
    max_threads: Int = field(1536, "resident threads per SM (gpgpu_shader_core_pipeline)",
                             unit="threads", ge=32, le=65536)
    max_warps: Int = field(48, "warp slots per SM; must equal max_threads / warp_size",
                           unit="warps", ge=1, le=2048)
    max_ctas: Int = field(8, "CTA slots per SM (gpgpu_shader_cta)", unit="CTAs", ge=1, le=256)
    warp_size: Int = field(32, "threads per warp", unit="threads", ge=1, le=64)

    # register file and scratchpad capacities
    registers: Int = field(32768, "32-bit registers per SM (gpgpu_shader_registers)", unit="registers",
                           ge=1024, le=1 << 22)
    register_alloc_granularity: Int = field(4, "registers per thread are rounded up to a multiple of this "
                                               "when allocating (GPGPU-Sim: 4)", unit="registers/thread",
                                            ge=1, le=256)
    register_alloc_unit: Literal["thread", "warp"] = field(
        "thread", "what register_alloc_granularity rounds: 'thread' = registers per thread (GPGPU-Sim), 'warp' = "
                  "registers per thread x warp_size, per warp (CUDA's occupancy calculator; granularity 256 on "
                  "compute capability 5.0+)")
    register_partitions: Int = field(1, "equal parts the register file is split into, each warp's registers in "
                                        "one part (CUDA: the SM sub-partitions, 4 since Maxwell); the register "
                                        "limit is then parts x floor(registers / parts / registers per warp) "
                                        "warps. 1 = one pool (GPGPU-Sim)", unit="parts", ge=1, le=16)
    register_count: Literal["ptxas", "ptxas_exact", "allocation"] = field(
        "ptxas_exact", "which per-thread register count sizes a kernel's register-file allocation and numbers the "
                 "registers instructions name: 'ptxas' = the compiler's count (the larger of it and the analyses' "
                 "packed allocation when that needs more), values spread over it bank-aware as a production "
                 "allocator does; 'ptxas_exact' = the same numbering, but the RF reserves exactly the compiler's "
                 "count, so occupancy is the card's even where the PTX allocation names more registers (those "
                 "names stand for values ptxas's machine code does not keep: they are timed -- scoreboard, bank "
                 "by name -- but not reserved; GPGPU-Sim and the card reserve ptxas's count; an operand storage that "
                 "places registers by their position in the reservation declares register_names = 'reserved' "
                 "and is refused here); "
                 "'allocation' = the analyses' packed allocation (fewest registers; a research option)")
    shared_bytes: Bytes = field(49152, "shared memory (scratchpad) per SM (gpgpu_shmem_size)", unit="bytes",
                                ge=0, le=1 << 24)
    shared_alloc_granularity: Bytes = field(1, "shared memory per CTA is rounded up to a multiple of this",
                                            unit="bytes", ge=1, le=1 << 16)
    shared_reserved_per_cta: Bytes = field(0, "shared memory the system reserves for every CTA, added to its "
                                              "own before rounding (CUDA reservedSharedMemPerBlock: 1 KiB on "
                                              "compute capability 8.0+)", unit="bytes", ge=0, le=1 << 16)
    shared_banks: Int = field(32, "shared-memory banks (gpgpu_shmem_num_banks)", unit="banks", ge=1, le=256)
    shared_latency: Int = field(26, "shared-memory access latency (gpgpu_smem_latency)", unit="core cycles",
                                ge=1, le=10000)
    shared_cycles_per_conflict: Int = field(1, "bank cycles of each conflict-free part (wavefront) of a shared-"
                                               "memory access: one of conflict degree d holds the banks d x this "
                                               "and returns (d - 1) x this after a conflict-free one (GPGPU-Sim: "
                                               "1)", unit="core cycles", ge=1, le=64)
    shared_subcore_issue_cycles: Int = field(
        0, "cycles a sub-core's path into the SM's shared-memory pipeline takes per shared-memory warp instruction "
           "(Volta-Hopper: each sub-partition hands its warps' 32 addresses to the SM-wide LD/ST unit 8 lanes a "
           "cycle); a sub-core issues its next shared access when its path is free, while the SM's banks take "
           "shared_cycles_per_conflict per wavefront of all four; 0 = no such path (needs sub_core_model)",
        unit="core cycles", ge=0, le=64)
    shared_subcore_cycles_per_conflict: Int = field(
        0, "cycles the sub-core's path takes per wavefront of a shared access: one of conflict degree d holds it "
           "max(shared_subcore_issue_cycles, d x this) and returns (d - 1) x max(this, shared_cycles_per_conflict) "
           "after a conflict-free one; 0 = the banks' cycles alone (needs shared_subcore_issue_cycles)",
        unit="core cycles", ge=0, le=64)
    shared_limited_broadcast: bool = field(False, "only one broadcast word per shared-memory access "
                                                  "(gpgpu_shmem_limited_broadcast)")
    shared_atomic_same_word: Literal["broadcast", "serialize"] = field(
        "broadcast", "lanes of one shared-memory atomic that update the same word: 'broadcast' = served together "
                     "like a load's broadcast, the access costing its distinct-word bank conflicts (GPGPU-Sim); "
                     "'serialize' = each lane's read-modify-write takes its own bank wavefront, so the degree is the "
                     "most lanes one bank serves (CUDA: a warp's atomics to one address are serialised)")
    shared_atomic_cas_ops: tuple[str, ...] = field(
        (), "shared-memory atomics (PTX atom/red .shared) the compiler emulates with a compare-and-swap loop on "
            "this target, as 'op.type' (e.g. 'add.f32': ptxas for sm_90 emits LDS, FADD, ATOMS.CAST and a retry "
            "branch); a warp runs one round of the loop per lane on its busiest word, and issues nothing else "
            "meanwhile; each round's load and compare-and-swap take the banks and the sub-core path again, the "
            "compare-and-swap carrying the lanes that lost before (timing/casloop.py); needs "
            "shared_atomic_same_word = 'serialize'")
    shared_atomic_cas_round_cycles: Int = field(
        0, "cycles one round of such a loop takes (the load, the operation, the compare-and-swap and the retry "
           "branch, each waiting on the one before); > 0 when shared_atomic_cas_ops names any",
        unit="core cycles", ge=0, le=100000)

    # SIMT lanes
    simt_width: Int = field(32, "lanes a warp instruction executes on per pass in core-clock terms; a warp "
                                "takes warp_size / simt_width passes (GPGPU-Sim models 32)", unit="lanes",
                            ge=1, le=64)
    cuda_cores: Int = field(32, "physical SP lanes per SM as vendors and papers count them (informational; "
                                "used by power and lane-level mechanisms)", unit="lanes", ge=1, le=1024)

    # front end and issue
    n_schedulers: Int = field(2, "warp schedulers per SM (gpgpu_num_sched_per_core)", unit="schedulers",
                              ge=1, le=16)
    scheduler_order: Literal["fixed", "rotate"] = field(
        "fixed", "the order the warp schedulers issue in within a cycle, which decides who gets the units they "
                 "share (the memory issue slot, the SFU) first: 'fixed' = scheduler 0 first every cycle "
                 "(GPGPU-Sim 3.x, the papers' simulator); 'rotate' = the first scheduler advances by one every "
                 "cycle (GPGPU-Sim 4.x's shader_core_ctx::issue, Issue_Prio, since 2017)")
    issue_width: Int = field(1, "instructions one scheduler may issue per cycle from one warp "
                                "(gpgpu_max_insn_issue_per_warp)", unit="instructions/cycle", ge=1, le=4)
    dual_issue_diff_units: bool = field(True, "dual-issued instructions must use different pipelines "
                                              "(gpgpu_dual_issue_diff_exec_units)")
    sub_core_model: bool = field(False, "each scheduler owns its own slice of RF banks and pipelines "
                                        "(gpgpu_sub_core_model; Volta/Pascal style)")
    ibuffer_entries: Int = field(2, "instruction-buffer entries per warp", unit="instructions", ge=1, le=64)
    fetch_width: Int = field(2, "instructions fetched per I-cache access for one warp", unit="instructions",
                             ge=1, le=64)
    fetch_throughput: Int = field(1, "I-cache fetches started per cycle (gpgpu_inst_fetch_throughput)",
                                  unit="fetches/cycle", ge=1, le=64)

    # register file
    rf_banks: Int = field(16, "register-file banks (gpgpu_num_reg_banks)", unit="banks", ge=1, le=1024)
    rf_bank_read_ports: Int = field(1, "read ports per RF bank (gpgpu_reg_file_port_throughput)", unit="ports",
                                    ge=1, le=16)
    rf_bank_write_ports: Int = field(1, "write ports per RF bank (gpgpu_reg_file_port_throughput)",
                                     unit="ports", ge=1, le=16)
    rf_bank_writes_block_reads: bool = field(
        False, "a result's write takes one of its bank's read ports in its cycle, ahead of operand reads (GPGPU-Sim: "
               "opndcoll_rfu_t::writeback allocates the bank before allocate_reads grants the banks left, so a "
               "1-port bank does a read or a write a cycle); false: rf_bank_write_ports are ports of their own")
    rf_bank_use_warp_id: bool = field(True, "bank = (register + warp slot) mod banks; false: register mod banks. "
                                            "GPGPU-Sim adds the warp id whatever gpgpu_reg_bank_use_warp_id says "
                                            "(shader.cc sets m_bank_warp_shift unconditionally)")
    rf_subarray_bytes: Int = field(1024, "bytes of one RF subarray, the unit a mechanism may power-gate or place "
                                         "registers by (Jeon thesis Fig. 1.6: a 4 KB bank of 4 x 1 KB subarrays); "
                                         "a bank holds registers x 4 / rf_banks bytes (port.rf_geometry())",
                                   unit="bytes", ge=4, le=1 << 20)
    rf_subarray_wakeup_cycles: Int = field(1, "cycles a power-gated RF subarray takes to wake before it can be "
                                              "accessed (Jeon thesis §2.8.2: CACTI-P gives < 1 cycle; 1, 3 and 10 "
                                              "explored); used by operand-storage plug-ins that gate subarrays",
                                           unit="core cycles", ge=0, le=1000)
    operand_collector: OperandCollectorConfig = field(OperandCollectorConfig(),
                                                      "operand collector units and ports")

    # execution
    pipelines: Pipelines = field(Pipelines(), "execution pipelines (counts and widths)")
    latency: OpTable = field(OpTable(), "result latency per op class (ptx_opcode_latency_*)")
    initiation: OpTable = field(OpTable(int=IntOps(add=1, max=2, mul=2, mad=1, div=8, shfl=4),
                                        fp32=FpOps(add=1, max=2, mul=1, mad=1, div=4),
                                        fp64=FpOps(add=8, max=16, mul=8, mad=8, div=130),
                                        sfu=8),
                                "initiation interval per op class: cycles before the same unit accepts "
                                "another instruction (ptx_opcode_initiation_*)")

    # policy choices (plug-ins; validated against the registry when the simulator is built)
    warp_scheduler: PolicyChoice = field("gto", "warp scheduler plug-in (extension point 'warp_scheduler')")
    resource_allocator: PolicyChoice = field("baseline", "resource allocator plug-in: whether a CTA fits and "
                                                         "where its registers/shared memory live "
                                                         "(extension point 'resource_allocator')")
    operand_storage: PolicyChoice = field("baseline", "operand storage plug-in: banked RF + collectors or "
                                                      "an alternative (extension point 'operand_storage')")
    context_switcher: PolicyChoice = field("none", "context switcher plug-in (extension point "
                                                   "'context_switcher'); 'none' = no switching")
    execution_checker: PolicyChoice = field("none", "redundant-execution checker plug-in (extension point "
                                                    "'execution_checker'); 'none' = no checking")

    def problems(self) -> list[str]:
        out = []
        k = self.k
        if self.shared_limited_broadcast:
            out.append(f"{k('shared_limited_broadcast')} = true is not modelled: every word a shared access reads "
                       "is broadcast to the lanes reading it (GPGPU-Sim's default, and every preset's)")
        if self.max_warps * self.warp_size != self.max_threads:
            out.append(f"{k('max_threads')} ({self.max_threads}) must equal {k('max_warps')} ({self.max_warps}) "
                       f"× {k('warp_size')} ({self.warp_size}); set both")
        if self.max_warps % self.n_schedulers:
            out.append(f"{k('max_warps')} ({self.max_warps}) must be a multiple of "
                       f"{k('n_schedulers')} ({self.n_schedulers})")
        if not is_pow2(self.warp_size):
            out.append(f"{k('warp_size')} ({self.warp_size}) must be a power of two")
        if self.warp_size % self.simt_width:
            out.append(f"{k('warp_size')} ({self.warp_size}) must be a multiple of {k('simt_width')} "
                       f"({self.simt_width})")
        if self.shared_banks not in _SHARED_BANK_COUNTS:
            out.append(f"{k('shared_banks')} ({self.shared_banks}) must be one of "
                       f"{', '.join(map(str, _SHARED_BANK_COUNTS))} (the bank counts traces record conflicts for)")
        if self.registers % self.register_partitions:
            out.append(f"{k('register_partitions')} ({self.register_partitions}) must divide {k('registers')} "
                       f"({self.registers})")
        if self.sub_core_model and self.rf_banks % self.n_schedulers:
            out.append(f"{k('rf_banks')} ({self.rf_banks}) must be a multiple of {k('n_schedulers')} "
                       f"({self.n_schedulers}) with {k('sub_core_model')}")
        if self.register_file_bytes % (self.rf_banks * self.rf_subarray_bytes):
            out.append(f"{k('rf_subarray_bytes')} ({self.rf_subarray_bytes}) must divide a register bank: "
                       f"{k('registers')} x 4 B / {k('rf_banks')} = {self.register_file_bytes / self.rf_banks:g} B")
        for op in self.shared_atomic_cas_ops:
            name, _, typ = op.partition(".")
            if name not in _ATOM_OPS or typ not in _ATOM_TYPES:
                out.append(f"{k('shared_atomic_cas_ops')}: {op!r} is not an atomic 'op.type' (op one of "
                           f"{', '.join(_ATOM_OPS)}; type one of {', '.join(_ATOM_TYPES)})")
        if self.shared_atomic_cas_ops and self.shared_atomic_same_word != "serialize":
            out.append(f"{k('shared_atomic_cas_ops')} needs {k('shared_atomic_same_word')} = 'serialize' (a "
                       f"compare-and-swap loop retries the lanes that lost the word)")
        if self.shared_atomic_cas_ops and self.shared_atomic_cas_round_cycles < 1:
            out.append(f"{k('shared_atomic_cas_round_cycles')} must be at least 1 when "
                       f"{k('shared_atomic_cas_ops')} names operations")
        if not self.shared_atomic_cas_ops and self.shared_atomic_cas_round_cycles:
            out.append(f"{k('shared_atomic_cas_round_cycles')} ({self.shared_atomic_cas_round_cycles}) does nothing "
                       f"without {k('shared_atomic_cas_ops')}")
        if self.shared_subcore_issue_cycles and not self.sub_core_model:
            out.append(f"{k('shared_subcore_issue_cycles')} ({self.shared_subcore_issue_cycles}) models a "
                       f"sub-core's path to the LD/ST unit: it needs {k('sub_core_model')} = true")
        if self.shared_subcore_cycles_per_conflict and not self.shared_subcore_issue_cycles:
            out.append(f"{k('shared_subcore_cycles_per_conflict')} ({self.shared_subcore_cycles_per_conflict}) "
                       f"does nothing without {k('shared_subcore_issue_cycles')}")
        lat, ini = self.latency.rows(), self.initiation.rows()
        for op, ii in ini.items():
            if ii > lat[op]:
                out.append(f"{k('initiation.' + op)} ({ii}) exceeds {k('latency.' + op)} ({lat[op]})")
        return out

    @property
    def warps_per_scheduler(self) -> int:
        """Warp slots each scheduler supervises."""
        return self.max_warps // self.n_schedulers

    @property
    def register_file_bytes(self) -> int:
        """Register-file capacity in bytes (4 bytes per register)."""
        return self.registers * 4

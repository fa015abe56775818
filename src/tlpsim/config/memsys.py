"""`[icnt]` (the SM↔L2 crossbar) and `[dram]` (memory partitions: GDDR timing,
scheduler, queues, address mapping). Clocks live in `[gpu]`; bandwidths that
need a clock are computed by `GPUConfig` (`dram_bandwidth_gbs`,
`icnt_bandwidth_gbs`), which also checks them against the nominal figures a
paper quotes (`nominal_bandwidth_gbs`)."""

from __future__ import annotations

from typing import Literal

from tlpsim.config.base import Section, is_pow2
from tlpsim.config.types import Bytes, field

__all__ = ["DRAMConfig", "InterconnectConfig", "MAX_PACKET_BYTES"]

#: The crossbar's largest packet: an 8-byte header and a 128-byte line
#: (timing/mem_types.HEADER_BYTES + timing/flits.LINE_BYTES; a test keeps them equal).
MAX_PACKET_BYTES = 8 + 128


class InterconnectConfig(Section):
    """The on-chip network between SM clusters and L2 slices (two subnets:
    requests SM→L2 and replies L2→SM). Defaults: GPGPU-Sim's Fermi iSLIP
    crossbar (config_fermi_islip.icnt)."""

    KEY = "icnt"

    topology: Literal["crossbar", "ideal"] = field("crossbar", "network topology: 'crossbar' (GPGPU-Sim's "
                                                               "one-stage 'fly', n = 1) or 'ideal' (fixed latency, "
                                                               "unlimited bandwidth)")
    flit_bytes: Bytes = field(40, "flit (channel) width (icnt_flit_size)", unit="bytes", ge=4, le=1024)
    input_buffer_flits: int = field(64, "buffer per input port (vc_buf_size)", unit="flits", ge=1, le=65536)
    output_buffer_flits: int = field(32, "ejection buffer per output port "
                                         "(gpgpu_n_cluster_ejection_buffer_size)", unit="flits", ge=1, le=65536)
    latency: int = field(2, "cycles from a packet's tail flit crossing until it is in the output queue: the "
                            "router pipeline and channels of one traversal (booksim with GTX480's config: 5, "
                            "see the gtx480 preset)", unit="icnt cycles", ge=0, le=10000)
    ejection_cycles: int = field(0, "cycles a reply spends in the SM cluster's response FIFO after leaving the "
                                    "network, before the SM takes it (GPGPU-Sim's simt_core_cluster::icnt_cycle "
                                    "hands the FIFO's head to the core the cycle after it popped it: 1)",
                                 unit="core cycles", ge=0, le=1000)
    subnets: int = field(2, "1 = requests and replies share a network (not modelled: refused), "
                            "2 = separate networks", unit="networks", ge=1, le=2)
    num_vcs: int = field(1, "virtual channels per port (one modelled: each input is one FIFO; more are refused)",
                         unit="VCs", ge=1, le=64)
    internal_speedup: float = field(2.0, "flits the switch moves per cycle per port (booksim's internal_speedup): "
                                         "a packet whose flits are all at the router crosses in ceil(flits / s) "
                                         "cycles, freeing its input and output sooner, while each port's link "
                                         "still carries one flit a cycle; 1 = the switch at the link rate",
                                    ge=1, le=16)
    arbiter: Literal["islip", "round_robin", "random"] = field("islip", "output arbitration between competing "
                                                                        "inputs (vc/sw allocator)")
    nominal_bandwidth_gbs: float | None = field(None, "peak bandwidth per direction as a paper quotes it; "
                                                      "checked against min(SMs, L2 slices) × flit_bytes × icnt "
                                                      "clock", unit="GB/s", gt=0)

    def problems(self) -> list[str]:
        # tlpsim's crossbar moves and buffers whole packets (timing/icnt.py), so every
        # buffer must hold the largest one. GPGPU-Sim's booksim moves single flits
        # and takes a 1-flit vc_buf_size; here that would stall the first line forever.
        need = -(-MAX_PACKET_BYTES // self.flit_bytes)
        out = [f"{self.k(name)} ({getattr(self, name)}) must be at least {need} flits: a buffer holds whole "
               f"packets, and the largest ({MAX_PACKET_BYTES} bytes: header + 128-byte line) is {need} flits of "
               f"{self.k('flit_bytes')} = {self.flit_bytes} bytes"
               for name in ("input_buffer_flits", "output_buffer_flits") if getattr(self, name) < need]
        # the crossbar is one network each way with one FIFO per input: say so rather than
        # accept a value that would change nothing
        if self.subnets != 2:
            out.append(f"{self.k('subnets')} = {self.subnets} (requests and replies sharing one network) is not "
                       f"modelled: tlpsim has a request and a reply network (GPGPU-Sim's usual 2)")
        if self.topology != "crossbar":
            out.append(f"{self.k('topology')} = '{self.topology}' is not modelled: tlpsim's interconnect is the "
                       "crossbar (timing/icnt.py); use 'crossbar'")
        if self.num_vcs != 1:
            out.append(f"{self.k('num_vcs')} = {self.num_vcs} is not modelled: each crossbar input is one FIFO "
                       f"(one virtual channel, as in GPGPU-Sim's configurations)")
        return out


class DRAMConfig(Section):
    """GDDR memory partitions (channels). Timings are in DRAM command-clock cycles
    as in GPGPU-Sim's gpgpu_dram_timing_opt. Defaults: GTX480 (Hynix H5GQ1H24AFR
    GDDR5)."""

    KEY = "dram"

    n_partitions: int = field(6, "memory partitions = memory controllers = channels (gpgpu_n_mem)",
                              unit="partitions", ge=1, le=256)
    chips_per_partition: int = field(2, "DRAM chips ganged in one partition (gpgpu_n_mem_per_ctrlr)",
                                     unit="chips", ge=1, le=16)
    bus_width_bytes: Bytes = field(4, "data-bus width of one chip (gpgpu_dram_buswidth)", unit="bytes",
                                   ge=1, le=64)
    burst_length: int = field(8, "data beats per access (gpgpu_dram_burst_length)", unit="beats", ge=1, le=64)
    data_rate: int = field(4, "data transfers per command-clock cycle: 2 = DDR, 4 = QDR/GDDR5 "
                              "(dram_data_command_freq_ratio)", unit="transfers/cycle", ge=1, le=16)
    banks: int = field(16, "banks per chip (nbk)", unit="banks", ge=1, le=256)
    bank_groups: int = field(4, "bank groups per chip (nbkgrp); 1 = no bank groups", unit="groups", ge=1, le=64)
    row_bytes: Bytes = field(4096, "row (page) size across the partition's chips, i.e. the bytes one "
                                   "activate opens", unit="bytes", ge=64, le=1 << 20)

    tCCD: int = field(2, "column-to-column delay (CCD)", unit="DRAM cycles", ge=0, le=1000)
    tCCDL: int = field(3, "column-to-column delay within a bank group (CCDL); 0 without bank groups",
                       unit="DRAM cycles", ge=0, le=1000)
    tRRD: int = field(6, "activate-to-activate delay, different banks (RRD)", unit="DRAM cycles", ge=0, le=1000)
    tRCD: int = field(12, "activate-to-column delay (RCD)", unit="DRAM cycles", ge=0, le=1000)
    tRAS: int = field(28, "activate-to-precharge delay (RAS)", unit="DRAM cycles", ge=0, le=1000)
    tRP: int = field(12, "precharge period (RP)", unit="DRAM cycles", ge=0, le=1000)
    tRC: int = field(40, "activate-to-activate delay, same bank (RC)", unit="DRAM cycles", ge=0, le=1000)
    tCL: int = field(12, "CAS (read) latency (CL)", unit="DRAM cycles", ge=0, le=1000)
    tWL: int = field(4, "write latency (WL)", unit="DRAM cycles", ge=0, le=1000)
    tCDLR: int = field(5, "last write data to read command (CDLR)", unit="DRAM cycles", ge=0, le=1000)
    tWR: int = field(12, "write recovery (WR)", unit="DRAM cycles", ge=0, le=1000)
    tRTPL: int = field(2, "read-to-precharge within a bank group (RTPL)", unit="DRAM cycles", ge=0, le=1000)
    tRTW: int | None = field(None, "read-to-write turnaround; unset = GPGPU-Sim's tCL + burst_length/data_rate "
                                   "+ 2 - tWL", unit="DRAM cycles", ge=0, le=1000)
    tWTR: int | None = field(None, "write-to-read turnaround; unset = GPGPU-Sim's tWL + burst_length/data_rate "
                                   "+ tCDLR", unit="DRAM cycles", ge=0, le=1000)

    scheduler: Literal["frfcfs", "fcfs"] = field("frfcfs", "request scheduler (gpgpu_dram_scheduler: 0 fcfs, "
                                                           "1 frfcfs)")
    sector_columns: bool = field(True, "each requested 32-byte sector is its own column access taking a full "
                                       "burst, as when GPGPU-Sim's sectored L2 sends one DRAM request per "
                                       "missing sector; false: one column access per atom-aligned chunk of a "
                                       "request")
    queue_size: int = field(64, "scheduler queue entries per partition (gpgpu_frfcfs_dram_sched_queue_size)",
                            unit="requests", ge=1, le=65536)
    return_queue_size: int = field(116, "return queue entries per partition (gpgpu_dram_return_queue_size)",
                                   unit="requests", ge=1, le=65536)
    latency: int = field(100, "fixed latency added to every DRAM access on top of the timing model "
                              "(GPGPU-Sim dram_latency)", unit="core cycles", ge=0, le=100000)
    address_mapping: str = field("dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.BBBCCCCB."
                                 "CCSSSSSS",
                                 "address → (partition, row, bank, column) bit mapping in GPGPU-Sim's "
                                 "gpgpu_mem_addr_mapping syntax")
    nominal_bandwidth_gbs: float | None = field(None, "peak bandwidth as a paper quotes it; checked against "
                                                      "n_partitions × chips × bus width × data_rate × DRAM clock",
                                                unit="GB/s", gt=0)

    def problems(self) -> list[str]:
        out = []
        k = self.k
        if self.banks % self.bank_groups:
            out.append(f"{k('banks')} ({self.banks}) must be a multiple of {k('bank_groups')} ({self.bank_groups})")
        if not is_pow2(self.banks):
            out.append(f"{k('banks')} ({self.banks}) must be a power of two")
        if self.burst_length % self.data_rate:
            out.append(f"{k('burst_length')} ({self.burst_length}) must be a multiple of {k('data_rate')} "
                       f"({self.data_rate})")
        if self.tRC < self.tRAS:
            out.append(f"{k('tRC')} ({self.tRC}) must be at least {k('tRAS')} ({self.tRAS})")
        return out

    @property
    def partition_bus_bytes(self) -> int:
        """Data-bus width of a whole partition (all its chips)."""
        return self.chips_per_partition * self.bus_width_bytes

    @property
    def atom_bytes(self) -> int:
        """Bytes moved by one access: burst_length × bus width × chips (GPGPU-Sim dram_atom_size)."""
        return self.burst_length * self.partition_bus_bytes

    @property
    def burst_cycles(self) -> int:
        """Command-clock cycles the data bus is busy per access (burst_length / data_rate)."""
        return self.burst_length // self.data_rate

    @property
    def rtw(self) -> int:
        """Read-to-write turnaround in effect."""
        return self.tRTW if self.tRTW is not None else self.tCL + self.burst_cycles + 2 - self.tWL

    @property
    def wtr(self) -> int:
        """Write-to-read turnaround in effect."""
        return self.tWTR if self.tWTR is not None else self.tWL + self.burst_cycles + self.tCDLR

    @property
    def wtp(self) -> int:
        """Write-to-precharge delay (GPGPU-Sim tWTP = tWL + burst cycles + tWR)."""
        return self.tWL + self.burst_cycles + self.tWR

    def bandwidth_gbs(self, dram_clock_mhz: float) -> float:
        """Peak bandwidth of all partitions at the given command clock, in GB/s (10^9 bytes/s)."""
        return self.n_partitions * self.partition_bus_bytes * self.data_rate * dram_clock_mhz * 1e6 / 1e9

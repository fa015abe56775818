"""The workloads of the CTA-scheduling study: each benchmark of Lee et al.'s Table 2
paired with its closest built-in stand-in, the Table 3 concurrent-kernel mixes,
and the configurations the figures compare (named as in the paper)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BENCHMARKS", "CONFIGS", "MIXES", "PaperBenchmark", "PaperMix", "config_overrides", "stand_in"]


@dataclass(frozen=True)
class PaperBenchmark:
    abbr: str          # the paper's name (Table 2)
    name: str
    cta: str           # the paper's CTA shape
    paper_type: str    # the type Table 2 gives
    workload: str      # our stand-in
    why: str           # what makes it the closest stand-in (and what differs)


BENCHMARKS: tuple[PaperBenchmark, ...] = (
    PaperBenchmark("CONV", "Separable Convolution Filter", "16x8", "I", "convsep",
                   "the SDK convolutionSeparable itself: row and column passes through shared-memory tiles"),
    PaperBenchmark("MMUL", "Matrix Multiplication", "16x16", "I", "sgemm",
                   "shared-memory tiled matrix multiply with 16x16 CTAs (64x64 tiles, 4x4 outputs per thread)"),
    PaperBenchmark("BP", "Back Propagation", "16x16", "II", "backprop", "Rodinia backprop, 16x16 CTAs"),
    PaperBenchmark("BFS", "Breadth First Search", "512", "II", "bfs", "level-synchronous BFS (256-thread CTAs)"),
    PaperBenchmark("CP", "Coulombic Potential", "16x8", "II", "cutcp",
                   "Parboil's cutoff variant of Coulombic potential, 16x8 CTAs"),
    PaperBenchmark("RAY", "Ray Tracing", "16x8", "II", "raycast", "a ray caster with 16x8 CTAs"),
    PaperBenchmark("SRAD", "Structured Grid (SRAD)", "16x16", "II", "srad", "Rodinia SRAD, 16x16 CTAs"),
    PaperBenchmark("MADD", "Matrix Addition", "16x16", "II", "matadd_16x16",
                   "matrix addition on a 2D grid with the paper's 16x16 CTAs"),
    PaperBenchmark("TRAN", "Transpose", "16x16", "II", "transpose_16x16",
                   "the SDK's coalesced transpose through a shared-memory tile, 16x16 tiles and CTAs"),
    PaperBenchmark("VADD", "Vector Addition", "256", "II", "vecadd", "the SDK vectorAdd, 256-thread CTAs"),
    PaperBenchmark("FDTD", "3D Finite-Difference Time-Domain", "16x16", "II", "fdtd2d_16x16",
                   "FDTD update kernels, in 2D, with the paper's 16x16 CTAs"),
    PaperBenchmark("KMN", "Kmeans", "256", "III", "kmeans_rodinia",
                   "Rodinia's kmeansPoint: one ~20-register kernel re-reading each point's features per cluster, "
                   "256-thread CTAs"),
    PaperBenchmark("MUM", "MUMmerGPU", "256", "III", "mummer",
                   "longest-match search of short DNA queries in a suffix array, one thread per query (128-thread "
                   "CTAs); MUMmerGPU walks a suffix tree through the texture cache"),
    PaperBenchmark("EIP", "EstimatePiInlineP", "256", "III", "montecarlo",
                   "in-kernel random numbers and a per-CTA reduction, 256-thread CTAs (Monte-Carlo pricing)"),
    PaperBenchmark("3DFD", "3D finite difference", "16x16", "IV", "hotspot_16x16",
                   "a finite-difference stencil stepped in time over a 2D grid, 16x16 CTAs; the SDK FDTD3d marches a "
                   "3D volume"),
    PaperBenchmark("BLK", "Black-Scholes option pricing", "128", "IV", "blackscholes",
                   "the SDK BlackScholes, 128-thread CTAs"),
    PaperBenchmark("STN", "Seven point stencil", "32x4", "IV", "stencil3d",
                   "Parboil's 7-point stencil, 32x4 CTAs marching in z"),
    PaperBenchmark("LBM", "Lattice-Boltzmann Method", "100", "IV", "lbm", "Parboil LBM (D3Q19), 32x4 CTAs"),
    PaperBenchmark("LPS", "3D Laplace Solver", "16x8", "IV", "laplace3d",
                   "GPGPU-Sim's laplace3d itself: 16x8 CTAs, each thread marching a column in z with every "
                   "neighbour read from global memory"),
)


@dataclass(frozen=True)
class PaperMix:
    name: str                  # the paper's mix (Table 3)
    types: str                 # the types Table 3 gives
    paper_ctas: tuple[int, int]  # Table 3's CTAs per kernel
    parts: tuple[str, str]     # the paper benchmarks mixed

    @property
    def workloads(self) -> tuple[str, str]:
        return tuple(stand_in(p) for p in self.parts)  # type: ignore[return-value]

    @property
    def mix_workload(self) -> str:
        return "+".join(self.workloads)


MIXES: tuple[PaperMix, ...] = (
    PaperMix("CP-LPS", "II - IV", (3, 5), ("CP", "LPS")),
    PaperMix("MMUL-VADD", "I - II", (2, 3), ("MMUL", "VADD")),
    PaperMix("MUM-BLK", "III - IV", (2, 4), ("MUM", "BLK")),
    PaperMix("MMUL-RAY", "I - II", (2, 2), ("MMUL", "RAY")),
    PaperMix("CP-MADD", "II - II", (3, 4), ("CP", "MADD")),
    PaperMix("KMN-SRAD", "III - II", (1, 5), ("KMN", "SRAD")),
)


def stand_in(abbr: str) -> str:
    for b in BENCHMARKS:
        if b.abbr == abbr:
            return b.workload
    raise KeyError(abbr)


#: configuration name (as in the paper's figures) -> overrides of the tesla_m2050 preset
#: (whose baseline is round-robin CTA dispatch at maximum occupancy with GTO)
CONFIGS: dict[str, dict] = {
    "GTO": {},
    "LCS": {"gpu.cta_scheduler": "lcs"},
    "LCS-ceil": {"gpu.cta_scheduler": {"impl": "lcs", "rounding": "ceil"}},
    "LCS-1SM": {"gpu.cta_scheduler": {"impl": "lcs", "scope": "one_sm"}},
    "BCS+GTO": {"gpu.cta_scheduler": "bcs"},
    "BCS+SCA": {"gpu.cta_scheduler": "bcs", "sm.warp_scheduler": "sca"},
    "LCS+BCS": {"gpu.cta_scheduler": "lcs_bcs", "sm.warp_scheduler": "sca"},
    "TLV": {"sm.warp_scheduler": "tlv"},
    "CCWS": {"sm.warp_scheduler": "ccws"},
    "DYNCTA": {"gpu.cta_scheduler": "dyncta"},
}


def config_overrides(config: str, two_d: bool = True, max_ctas: int | None = None) -> dict:
    """Overrides of a named configuration; LCS+BCS takes GTO for 1D workloads (Fig. 10);
    `max_ctas` caps CTAs per SM (the Fig. 4 / Fig. 15 sweeps)."""
    ov = dict(CONFIGS[config])
    if config == "LCS+BCS" and not two_d:
        ov["sm.warp_scheduler"] = "gto"
    if max_ctas is not None:
        ov["gpu.max_ctas_per_sm"] = max_ctas
    return ov

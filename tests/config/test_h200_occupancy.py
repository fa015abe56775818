"""The h200 preset's occupancy rule equals the one measured on the H200, on every point of
the occupancy sweeps (`hardware/h200/sweeps.json`): for each kernel of each point, the CTAs
per SM the occupancy API reported with that point's dynamic shared-memory pad (and at the
natural point, without one), from the kernel's registers and static shared memory as the
card's compiler reported them — through both `occupancy()` and the baseline allocator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tlpsim.config.loader import load_config
from tlpsim.policies.alloc.base import BaselineAllocator
from tlpsim.timing.builder import sm_limits
from tlpsim.timing.occupancy import occupancy
from tlpsim.timing.views import KernelResources

HW = Path(__file__).resolve().parents[3] / "shared" / "reference" / "hardware" / "h200"
needs_hw = pytest.mark.skipif(not (HW / "sweeps.json").exists(), reason=f"H200 measurements not present ({HW})")

# reference:kmeans_assign's entry carries the attributes of the *workload* kmeans' kernel of the same
# name (48 registers, 4 B static shared memory); its pads show the reference kernel's own 512 B of static
# shared memory (__shared__ float cs[8 * 16]), and ptxas 13.5 (tlpsim's cuda13 toolchain) gives that kernel
# 38 registers for sm_90 (any count from 33 to 40 rounds to the same 1,280 registers per warp).
_ATTRIBUTE_FIXES = {("reference:kmeans_assign", "kmeans_assign"): {"num_regs": 38, "shared_size_bytes": 512}}


def _points() -> list[tuple[str, str, int, int, int, int]]:
    """(sweep, kernel, registers, static + dynamic shared bytes, threads per CTA, measured CTAs/SM)."""
    sweeps = json.loads((HW / "sweeps.json").read_text())["items"]
    attrs: dict[str, dict] = {}
    for size in ("small", "paper"):
        items = json.loads((HW / f"workloads-{size}.json").read_text())["items"]
        for name, entry in items.items():
            attrs[f"{size}:{name}"] = entry.get("kernel_attributes", {})
    out = []
    for key, entry in sweeps.items():
        for point in entry["points"]:
            for kernel, k in point["kernels"].items():
                if kernel == entry["main_kernel"]:
                    a = dict(entry["main_kernel_attributes"])
                else:
                    a = dict(attrs[f"{entry['size']}:{entry['name']}"][kernel])
                a.update(_ATTRIBUTE_FIXES.get((key, kernel), {}))
                measured = k["achieved_ctas_per_sm"]
                if measured is None:                       # the natural point: the occupancy API's own figure
                    if kernel != entry["main_kernel"]:
                        continue
                    measured = entry["natural_ctas_per_sm"]
                if measured == 0:                          # the pad failed (sweeps.json: "a 0 means the pad failed")
                    continue
                threads = k["block"][0] * k["block"][1] * k["block"][2]
                out.append((key, kernel, int(a["num_regs"]), int(a["shared_size_bytes"]) + int(k["pad"]) +
                            int(k["dyn_smem"]), threads, int(measured)))
    return out


def _allocator_count(lim, regs: int, smem: int, threads: int) -> int:
    alloc = BaselineAllocator(limits=lim)
    kres = KernelResources(kid=0, regs_per_thread=regs, smem_per_cta=smem, threads_per_cta=threads)
    n = 0
    while alloc.fits(kres):
        alloc.allocate(kres, n)
        n += 1
    return n


@needs_hw
def test_every_sweep_point_matches_the_h200():
    lim = sm_limits(load_config("h200"))
    points = _points()
    assert len(points) >= 90       # 11 sweeps, up to 9 points and 4 kernels each
    wrong = []
    for key, kernel, regs, smem, threads, measured in points:
        ours = occupancy(lim, regs, smem, threads).ctas
        dyn = _allocator_count(lim, regs, smem, threads)
        if ours != measured or dyn != measured:
            wrong.append(f"{key} {kernel}: regs {regs}, smem {smem}, {threads} threads: H200 {measured}, "
                         f"occupancy() {ours}, allocator {dyn}")
    assert not wrong, "\n".join(wrong)


def test_cuda_rule_on_hand_made_kernels():
    lim = sm_limits(load_config("h200"))
    # 48 registers x 32 = 1,536 per warp: 16,384 / 1,536 = 10 warps per sub-partition, 40 per SM,
    # 5 CTAs of 8 warps (a single pool of 65,536 would give 42 warps, still 5; 4 CTAs of 10 warps would
    # fit a pool's 42 but the partitions hold 40 = 4 CTAs exactly)
    assert occupancy(lim, 48, 0, 256).ctas == 5
    assert occupancy(lim, 48, 0, 320).per_resource["regs"] == 4
    # 33 registers: 1,056 rounds up to 1,280 per warp: 12 warps per part, 48 per SM
    assert occupancy(lim, 33, 0, 128).per_resource["regs"] == 12
    # 1 KiB reserve per CTA, 128-byte granularity: 4,000 + 1,024 -> 5,120 B; 233,472 / 5,120 = 45 -> 32 (CTA slots)
    occ = occupancy(lim, 16, 4000, 32)
    assert occ.per_resource["smem"] == 45 and occ.ctas == 32 and occ.limited_by == ("ctas",)
    # no shared memory at all still takes the reserve: 233,472 / 1,024 = 228
    assert occupancy(lim, 16, 0, 32).per_resource["smem"] == 228
    assert occupancy(lim, 0, 0, 32).per_resource["regs"] > 10 ** 6


def test_allocator_places_warps_in_the_emptiest_partition():
    lim = sm_limits(load_config("h200"))
    alloc = BaselineAllocator(limits=lim)
    a = KernelResources(kid=0, regs_per_thread=64, smem_per_cta=0, threads_per_cta=96)   # 3 warps of 2,048
    g0 = alloc.allocate(a, 0)
    assert g0.extra == [0, 1, 2] and alloc.part_used == [2048, 2048, 2048, 0]
    g1 = alloc.allocate(a, 1)
    assert g1.extra == [3, 0, 1] and alloc.part_used == [4096, 4096, 2048, 2048]
    alloc.release(g0)
    assert alloc.part_used == [2048, 2048, 0, 2048] and alloc.used.regs == 3 * 2048


def test_old_presets_keep_gpgpusims_rule():
    for preset in ("gtx480", "gtx980", "maxwell_gpuduet"):
        lim = sm_limits(load_config(preset))
        assert not lim.reg_per_warp and lim.reg_partitions == 1 and lim.smem_reserved == 0
        assert not BaselineAllocator(limits=lim).modern

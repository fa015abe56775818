"""The most wave sampling can gain on the built-in workloads at a size, from their
shapes alone (the catalogue's shape-only pass: no simulation): per workload and preset,
its launches' CTAs over the least the rules leave in detail (warm-up + K stable waves,
the resident wave and the tail; all of a launch too short), taking CTAs as equally long
and stability as reached at its first chance. Kernel sampling can gain more where a
kernel is launched many times alike.

    .venv/bin/python benchmarks/sampling_bound.py study      # (about 1 minute)
    .venv/bin/python benchmarks/sampling_bound.py paper      # (a few minutes)
"""

from __future__ import annotations

import argparse
import math

from tlpsim.sampling.rule import least_detail_share
from tlpsim.sampling.spec import SamplingSpec
from tlpsim.workloads.catalog import catalog


def bounds(size: str, presets: tuple[str, ...], warmup: int, window: int) -> dict[tuple[str, str], float]:
    out = {}
    for preset in presets:
        per: dict[str, list[float]] = {}
        for r in catalog(preset, None, size):
            if not r.fits or not r.ctas:
                continue
            w = r.ctas_per_sm * r.n_sms
            acc = per.setdefault(r.workload, [0.0, 0.0])
            acc[0] += r.ctas * r.kernel_launches
            acc[1] += r.ctas * r.kernel_launches * least_detail_share(r.ctas, w, warmup, window)
        out.update({(wl, preset): total / least for wl, (total, least) in per.items()})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("size", nargs="?", default="study")
    ap.add_argument("--presets", default="gtx480,maxwell_gpuduet")
    a = ap.parse_args()
    spec = SamplingSpec("waves")
    b = bounds(a.size, tuple(a.presets.split(",")), spec.warmup_waves, spec.window)
    geo = math.exp(sum(math.log(v) for v in b.values()) / len(b))
    print(f"size {a.size}, warm-up {spec.warmup_waves} + K {spec.window}: {len(b)} workload x preset points; "
          f"timing speed-up wave sampling can reach at most: geomean {geo:.2f}x, max {max(b.values()):.2f}x; "
          f">= 5x on {sum(v >= 5 for v in b.values())}, >= 20x on {sum(v >= 20 for v in b.values())}")
    for k in sorted(b, key=b.get, reverse=True):
        print(f"  {k[0]:24s} {k[1]:16s} {b[k]:7.2f}x")


if __name__ == "__main__":
    main()

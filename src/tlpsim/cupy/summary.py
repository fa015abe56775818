"""The launch summary `tlpsim cupy` prints at exit: each kernel's launches, warp
instructions and (timing mode) simulated cycles, then the host-executed array
operations, which are not simulated."""

from __future__ import annotations

from collections import defaultdict

from tlpsim.array_ops import HOST_OPS


def summary_record(device) -> dict:
    kernels: dict[str, dict] = defaultdict(lambda: {"launches": 0, "warp_instructions": 0, "cycles": 0})
    for rec in device.launches:
        k = kernels[rec.kernel]
        k["launches"] += 1
        k["warp_instructions"] += int(rec.warp_instructions)
        stats = rec._stats
        if stats is not None:
            k["cycles"] += int(stats.cycles)
    return {"preset": getattr(device, "preset", device.config), "mode": device.mode,
            "launches": len(device.launches), "kernels": dict(kernels),
            "host_operations": dict(sorted(HOST_OPS.items(), key=lambda kv: (-kv[1], kv[0])))}


def summary_lines(device) -> list[str]:
    rec = summary_record(device)
    lines = [f"tlpsim cupy: {rec['launches']} kernel launch{'es' if rec['launches'] != 1 else ''} "
             f"on {rec['preset']} ({rec['mode']} mode)"]
    timing = rec["mode"] == "timing"
    if rec["kernels"]:
        width = max(len(name) for name in rec["kernels"])
        head = f"  {'kernel':<{width}}  launches  warp instrs" + ("       cycles" if timing else "")
        lines.append(head)
        for name, k in rec["kernels"].items():
            lines.append(f"  {name:<{width}}  {k['launches']:>8}  {k['warp_instructions']:>11,}"
                         + (f"  {k['cycles']:>11,}" if timing else ""))
    ops = rec["host_operations"]
    if ops:
        shown = ", ".join(f"{name} {n}" for name, n in list(ops.items())[:8])
        more = f", ... ({len(ops) - 8} more kinds)" if len(ops) > 8 else ""
        lines.append(f"  host array operations (NumPy on the host, not simulated): {sum(ops.values())} "
                     f"({shown}{more})")
    return lines

"""Plain-text reports for the command line: launch tables, trace summaries and
timing summaries."""

from __future__ import annotations

from dataclasses import asdict

import click

from tlpsim.report.metrics import plugin_energy, plugin_totals, residency


def table(heads, rows, err: bool = False) -> None:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h)) for i, h in enumerate(heads)]
    click.echo("  ".join(str(h).ljust(w) for h, w in zip(heads, widths)), err=err)
    for r in rows:
        click.echo("  ".join(str(c).ljust(w) for c, w in zip(r, widths)), err=err)


def trace_summary(s: dict, indent: str = "") -> None:
    click.echo(f"{indent}kernel {s['kernel']}  grid {s['grid']}  block {s['block']}  warps {s['warps']}")
    click.echo(f"{indent}  warp instructions {s['warp_instructions']}, thread instructions "
               f"{s['thread_instructions']}, avg active lanes {s['avg_active_lanes']:.1f}/32")
    n = sum(s["mix"].values()) or 1
    click.echo(f"{indent}  mix: " + ", ".join(f"{k} {100 * v / n:.0f}%" for k, v in
                                              sorted(s["mix"].items(), key=lambda kv: -kv[1])))
    click.echo(f"{indent}  memory: {s['memory_instructions']} warp accesses, footprint {s['footprint_bytes']} B, "
               f"{s['avg_sectors_per_global_access']:.2f} sectors/global access, "
               f"shared bank-conflict degree {s['avg_shared_bank_degree']:.2f}")


def launch_rows(result) -> list[dict]:
    rows = []
    for k, rec in enumerate(result.launches):
        rate = rec.thread_instructions / rec.wall_seconds / 1e6 if rec.wall_seconds else 0.0
        row = {"launch": k, "kernel": rec.kernel, "grid": list(rec.grid), "block": list(rec.block),
               "registers": rec.resources.registers if rec.resources else None,
               "shared_bytes": (rec.resources.shared_bytes if rec.resources else 0) + rec.shared_mem,
               "warp_instructions": rec.warp_instructions, "thread_instructions": rec.thread_instructions,
               "wall_seconds": round(rec.wall_seconds, 4), "mthread_inst_per_s": round(rate, 2),
               "compile": rec.compile}
        if rec.oob_reads is not None:  # Device(oob_reads="zero")
            row["oob_reads"] = rec.oob_reads
        if rec.stats is not None:
            st = rec.stats
            row.update({"cycles": st.cycles, "ipc": round(st.ipc, 2),
                        "timing_wall_seconds": round(st.wall_seconds, 4)})
        rows.append(row)
    return rows


def functional_report(result, rows) -> None:
    table(("#", "kernel", "grid", "block", "regs", "smem B", "warp insts", "thread insts", "wall s", "M thr-inst/s"),
          [[r["launch"], r["kernel"], "x".join(map(str, r["grid"])), "x".join(map(str, r["block"])),
            r["registers"], r["shared_bytes"], r["warp_instructions"], r["thread_instructions"],
            r["wall_seconds"], r["mthread_inst_per_s"]] for r in rows])
    if any("oob_reads" in r for r in rows):  # Device(oob_reads="zero"): say how often it mattered
        oob = [(r["launch"], r["kernel"], r["oob_reads"]) for r in rows if r.get("oob_reads")]
        where = ", ".join(f"launch {k} ({name}) {n}" for k, name, n in oob[:5]) + \
            (f" and {len(oob) - 5} more launches" if len(oob) > 5 else "")
        click.echo(f"out-of-bounds global reads that returned 0 (--oob-reads zero): {sum(n for *_, n in oob)} lane "
                   f"loads" + (f": {where}" if oob else ""))
    shown = result.launches[:1] if len(result.launches) > 3 else result.launches
    for rec in shown:
        if rec.trace is not None:
            trace_summary(rec.trace.summary(), indent="  ")
    if len(result.launches) > 3:
        click.echo(f"  ... trace summaries of {len(result.launches) - 1} more launches: tlpsim trace "
                   f"{result.workload}")


def timing_report(result, launch_latency: int = 0) -> None:
    """The timing table; `launch_latency`: the config's gpu.kernel_launch_latency, which each
    launch's cycles include (said under the table, so a short launch's count is not misread)."""
    recs = [r for r in result.launches if r.stats is not None]
    table(("#", "kernel", "CTAs/SM (limit)", "cycles", "IPC", "active", "idle", "mem stall", "core stall",
           "L1D KiB", "L1D hit", "L2 hit", "sim s"),
          [[k, r.kernel, residency(r.stats.ctas_per_sm_limit, r.stats.limited_by,
                                     r.stats.peak_resident_ctas, r.stats.peak_resident_warps), r.stats.cycles,
            f"{r.stats.ipc:.1f}"] + [f"{100 * v / max(sum(r.stats.sm_cycles.values()), 1):.0f}%"
                                      for v in r.stats.sm_cycles.values()] +
           [getattr(r.stats, "l1d_kb", 0), f"{r.stats.l1d_hit_rate:.2f}", f"{r.stats.l2_hit_rate:.2f}",
            f"{r.stats.wall_seconds:.2f}"]
           for k, r in enumerate(recs)])
    total_cycles = sum(r.stats.cycles for r in recs)
    thr = sum(r.stats.thread_insts for r in recs)
    click.echo(f"total {total_cycles} cycles, IPC {thr / max(total_cycles, 1):.1f} (thread instructions per cycle)")
    if launch_latency and recs:
        click.echo(f"each launch's cycles include its launch latency, {launch_latency} cycles before its first CTA "
                   f"(gpu.kernel_launch_latency; {len(recs) * launch_latency} of the total)")
    if recs:
        u = recs[-1].stats.utilisation
        click.echo("utilisation (last launch): " + ", ".join(f"{k} {100 * v:.0f}%" for k, v in asdict(u).items()))


def plugin_report(stats: list[dict], plugins: dict | None) -> None:
    """The plug-ins' declared counters (summed over launches, with units) and the
    energy of the structures they add; nothing when no plug-in declares any."""
    totals, units = plugin_totals(stats)
    selected = (plugins or {}).get("selected") or {}
    if totals:
        click.echo(f"plug-in counters (summed over {len(stats)} launch{'es' if len(stats) != 1 else ''}; "
                   "levels: their peak or cycle-weighted mean):" if any(s.get("plugin_aggs") for s in stats) else
                   f"plug-in counters (summed over {len(stats)} launch{'es' if len(stats) != 1 else ''}):")
        rows = []
        for key, counters in totals.items():
            desc = (selected.get(key) or {}).get("counters") or {}
            for k, (name, v) in enumerate(counters.items()):
                rows.append(["  " + (key if k == 0 else ""), name, f"{v:,}" if isinstance(v, int) else f"{v:.6g}",
                             units.get(key, {}).get(name, ""), (desc.get(name) or {}).get("description", "")])
        table(("  plug-in", "counter", "value", "unit", "description"), rows)
    energy = plugin_energy(stats, plugins)
    if energy and any(s.get("energy") for s in stats):
        click.echo("plug-in energy structures:")
        table(("  structure", "plug-in", "accesses", "dynamic uJ", "static uJ", "source"),
              [["  " + n, key, f"{acc:,.0f}", f"{1e6 * dyn:.4f}", f"{1e6 * sta:.4f}", src]
               for n, key, acc, dyn, sta, src in energy])


def checks_report(result) -> None:
    for c in result.checks:
        why = c.detail or f"max error {c.max_error:.3g}, tolerance {c.tolerance:.3g}"
        click.echo(f"verify {c.name}: {'OK' if c.ok else 'FAILED'} ({why})")

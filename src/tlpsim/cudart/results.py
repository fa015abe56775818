"""What `tlpsim exec` keeps of a program run: the per-launch records the runtime
wrote (`launches.jsonl`, one line per completed launch, so a crash loses nothing
already simulated), its exit summary (`summary.json`), and from them a run
directory like `tlpsim run` writes (params, resolved config, stats.json with
one LaunchStats per launch, timeline, versions) plus the HTML report."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from tlpsim.report.console import table


@dataclass
class ExecParams:
    """The run's parameters, shaped like sweep.job.RunParams for report.rundir."""

    workload: str
    command: list[str]
    preset: str
    overrides: dict = field(default_factory=dict)
    mode: str = "functional"
    plugins: list = field(default_factory=list)
    size: str = "-"
    seed: int | None = None
    oob_reads: str = "error"

    def to_dict(self) -> dict:
        out = {"workload": self.workload, "command": self.command, "preset": self.preset,
               "overrides": dict(sorted(self.overrides.items())), "mode": self.mode, "plugins": self.plugins}
        if self.oob_reads != "error":  # the default adds no key: earlier run directories stay as they were
            out["oob_reads"] = self.oob_reads
        return out

    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]

    def label(self) -> str:
        return " ".join([self.workload, self.preset] + [f"{k}={v}" for k, v in sorted(self.overrides.items())])


@dataclass
class Outcome:
    """What report.rundir.write_run_dir needs."""

    params: ExecParams
    record: dict
    config: object = None


def read_records(out_dir: Path) -> tuple[list[dict], dict | None]:
    rows = []
    path = out_dir / "launches.jsonl"
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                break  # a line cut short by a crash: everything before it is whole
    summary_path = out_dir / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else None
    return rows, summary


def build_record(params: ExecParams, rows: list[dict], summary: dict | None, status: dict, config,
                 wall_seconds: float) -> dict:
    launches = [{k: v for k, v in r.items() if k != "stats"} for r in rows]
    ok = status.get("exit_status") == 0 and not (summary or {}).get("problems") \
        and not (summary or {}).get("unsupported")
    record = {"workload": params.workload, "size": "-", "mode": params.mode, "seed": None, "verified": ok,
              "launches": launches, "wall_seconds": round(wall_seconds, 3), "params": params.to_dict(),
              "checks": [{"name": "program exit status", "ok": status.get("exit_status") == 0,
                          "max_error": 0.0, "tolerance": 0.0, "detail": status.get("text", "")}],
              "program": {**status, "command": params.command, "summary": summary}}
    if params.mode == "timing":
        record["preset"] = params.preset
        record["config"] = config.to_dict()
        record["stats"] = [r["stats"] for r in rows if "stats" in r]
    return record


def write_run(outcome: Outcome, run_dir: Path) -> Path:
    """The run directory's files and report.html (the launch records are already there)."""
    from tlpsim.report.html import render_report
    from tlpsim.report.rundir import load_run_dir, write_run_dir

    # write_run_dir refuses a directory holding files; the runtime's own files are moved aside first
    keep = {}
    for name in ("launches.jsonl", "summary.json", "failed_calls.jsonl"):
        p = run_dir / name
        if p.is_file():
            keep[name] = p.read_bytes()
            p.unlink()
    ptx = run_dir / "ptx"
    moved = None
    if ptx.is_dir():
        moved = run_dir.parent / f".{run_dir.name}.ptx"
        ptx.rename(moved)
    out = write_run_dir(outcome, path=run_dir)
    for name, data in keep.items():
        (out / name).write_bytes(data)
    if moved is not None:
        moved.rename(out / "ptx")
    (out / "report.html").write_text(render_report(load_run_dir(out)), encoding="utf-8")
    return out


def console_summary(rows: list[dict], mode: str, echo) -> None:
    """Per-launch lines (timing: cycles, IPC, simulated time) and totals, on stderr."""
    if not rows:
        echo("tlpsim: the program launched no kernels")
        return
    if mode == "timing":
        heads = ("#", "kernel", "grid", "block", "regs", "smem B", "warp insts", "cycles", "IPC", "stream")
        body = [[r["launch"], r["kernel"], "x".join(map(str, r["grid"])), "x".join(map(str, r["block"])),
                 r.get("registers", "-"), r.get("shared_bytes", "-"), r["warp_instructions"], r.get("cycles", "-"),
                 r.get("ipc", "-"), r.get("stream", 0)] for r in rows[-50:]]
    else:
        heads = ("#", "kernel", "grid", "block", "warp insts", "wall s")
        body = [[r["launch"], r["kernel"], "x".join(map(str, r["grid"])), "x".join(map(str, r["block"])),
                 r["warp_instructions"], r["wall_seconds"]] for r in rows[-50:]]
    if any("fault" in r for r in rows):
        heads += ("fault",)
        body = [b + [r.get("fault", "")] for b, r in zip(body, rows[-50:])]
    if len(rows) > 50:
        echo(f"(last 50 of {len(rows)} launches)")
    table(heads, body, err=True)
    total = sum(r.get("warp_instructions", 0) for r in rows)
    line = f"{len(rows)} launch(es), {total:,} warp instructions"
    if mode == "timing":
        cycles = sum(r.get("cycles", 0) for r in rows)
        line += f", {cycles:,} cycles simulated (kernels on different streams overlap)"
    echo(line)
    oob = sum(r.get("oob_reads", 0) for r in rows)
    if oob:
        hit = sum(1 for r in rows if r.get("oob_reads"))
        echo(f"{oob:,} lane load(s) outside every allocation read 0 (--oob-reads zero), in {hit} launch(es)")

"""Plug-ins through the command line: `tlpsim run --plugin` end to end with exact
counter and energy values in the console, stats JSON, run directory, HTML report
and energy plot; `tlpsim plugins`; TLPSIM_PLUGINS; entry points; and every load
error as one message with exit code 2 and no traceback."""

from __future__ import annotations

import json
import os

import pytest
from plugin_helpers import cli, cli_env, counting_source, write_plugin

from tlpsim.report.html import render_report
from tlpsim.report.rundir import load_run_dir

CORE_HZ = 700e6   # gtx480 core clock
N_SMS = 15


@pytest.fixture(scope="module")
def sgemm_run(tmp_path_factory):
    """sgemm (tiny) scheduled by a plug-in loaded with --plugin: (directory, console output)."""
    d = tmp_path_factory.mktemp("plugin_run")
    write_plugin(d / "plugs" / "counting.py", "counting")
    proc = cli("run", "sgemm", "--size", "tiny", "--plugin", "plugs/counting.py", "--set",
               "sm.warp_scheduler=counting", "--run-dir", "rd", "--energy-plot", "energy.png", cwd=d)
    return d, proc.stdout


def test_run_counts_exactly_in_the_stats(sgemm_run):
    d, _ = sgemm_run
    rec = json.loads((d / "rd" / "stats.json").read_text())
    (st,) = rec["stats"]
    (launch,) = rec["launches"]
    n_ctas = launch["grid"][0] * launch["grid"][1] * launch["grid"][2]
    # every issued warp instruction passed through the plug-in's on_issue; each CTA was admitted once
    assert st["plugins"] == {"warp_scheduler.counting": {"issued": st["warp_insts"], "ctas": n_ctas}}
    assert st["warp_insts"] == launch["warp_instructions"] == 25104 and n_ctas == 2
    assert st["plugin_units"] == {"warp_scheduler.counting": {"issued": "warp instructions", "ctas": "CTAs"}}
    # its energy structure: 1.5 pJ per counted access, 0.25 mW leakage on each of the 15 SMs
    e = st["energy"]
    assert e["events"]["pick_table"] == {"access": st["warp_insts"]}
    assert e["dynamic_j"]["pick_table"] == pytest.approx(st["warp_insts"] * 1.5e-12, rel=1e-12)
    assert e["static_j"]["pick_table"] == pytest.approx(N_SMS * st["cycles"] / CORE_HZ * 0.25e-3, rel=1e-12)
    # the record names the plug-in file, its hash and its declarations
    path = str((d / "plugs" / "counting.py").resolve())
    assert rec["params"]["plugins"] == [path]
    assert rec["params"]["code"]["plugins"] == [rec["plugins"]["loaded"][0]["digest"]]
    assert rec["plugins"]["loaded"][0]["registers"] == ["warp_scheduler.counting"]
    sel = rec["plugins"]["selected"]["warp_scheduler.counting"]
    assert sel["file"] == path and sel["counters"]["ctas"] == {"unit": "CTAs", "description": "CTAs admitted"}
    # the run directory keeps the plug-in's source as it ran
    assert (d / "rd" / "plugins" / "counting.py").read_text() == counting_source("counting")


def test_run_console_shows_counters_and_energy(sgemm_run):
    d, out = sgemm_run
    lines = out.splitlines()
    k = lines.index("plug-in counters (summed over 1 launch):")
    assert lines[k + 1].split() == ["plug-in", "counter", "value", "unit", "description"]
    assert lines[k + 2].split() == ["warp_scheduler.counting", "issued", "25,104", "warp", "instructions",
                                    "instructions", "issued"]
    assert lines[k + 3].split() == ["ctas", "2", "CTAs", "CTAs", "admitted"]
    k = lines.index("plug-in energy structures:")
    assert lines[k + 1].split()[:3] == ["structure", "plug-in", "accesses"]
    row = lines[k + 2].split()
    assert row[:4] == ["pick_table", "warp_scheduler.counting", "25,104", "0.0377"]  # 25104 x 1.5 pJ
    assert " ".join(row[5:]) == "test: 1.5 pJ per pick"
    assert "figure written to energy.png" in out and (d / "energy.png").stat().st_size > 0


def test_html_report_has_the_plugin_section(sgemm_run):
    d, _ = sgemm_run
    page = render_report(load_run_dir(d / "rd"))
    section = page[page.index('<h2 id="plugins">'):page.index("<h2>Configuration")]
    assert ("<tr><td>warp_scheduler.counting</td><td>issued</td><td>warp instructions</td>"
            "<td>instructions issued</td><td>25,104</td></tr>") in section
    assert "<td>ctas</td><td>CTAs</td><td>CTAs admitted</td><td>2</td>" in section
    assert ("<tr><td>pick_table</td><td>warp_scheduler.counting</td><td>25,104</td><td>0.0377</td>") in section
    # and in the run's energy breakdown, among the built-in structures
    energy = page[page.index("<h2>Energy</h2>"):page.index('<h2 id="plugins">')]
    assert "<tr><td>pick_table</td>" in energy and ">pick_table<" in energy.split("<table>")[0]


def test_energy_plot_draws_the_plugin_structure(sgemm_run, monkeypatch):
    """The figure of `--energy-plot` stacks the plug-in's structure (dynamic and static)."""
    import matplotlib.axes

    from tlpsim.report.energy_plot import energy_bars
    from tlpsim.timing.stats import EnergyStats

    d, _ = sgemm_run
    (st,) = json.loads((d / "rd" / "stats.json").read_text())["stats"]
    drawn = {}
    real = matplotlib.axes.Axes.bar

    def spy(self, x, height, *args, **kwargs):
        drawn[kwargs.get("label")] = list(height)
        return real(self, x, height, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "bar", spy)
    energy_bars({"0:sgemm": EnergyStats(**st["energy"])}, d / "e2.png")
    assert drawn["pick_table (dyn)"] == pytest.approx([st["energy"]["dynamic_j"]["pick_table"] * 1e6])
    assert drawn["pick_table (static)"] == pytest.approx([st["energy"]["static_j"]["pick_table"] * 1e6])


def test_plugins_listing_text_and_json(tmp_path):
    write_plugin(tmp_path / "counting.py", "counting")
    out = cli("plugins", "--plugin", "counting.py", "--point", "warp_scheduler", cwd=tmp_path).stdout
    path = str((tmp_path / "counting.py").resolve())
    lines = out.splitlines()
    assert lines[0] == "warp_scheduler (--set sm.warp_scheduler=NAME)"
    k = next(i for i, line in enumerate(lines) if line.split()[:1] == ["counting"])
    assert lines[k].split(None, 1)[1] == "Oldest-first; counts issued instructions and admitted CTAs."
    assert [x.strip() for x in lines[k + 1:k + 6]] == [
        f"source: {path} (--plugin)", "events: cta_admitted",
        "counter issued [warp instructions]  instructions issued",
        "counter ctas [CTAs]  CTAs admitted",
        "energy pick_table: 1.5 pJ/access, leakage 0.25 mW, 1 per SM; source: test: 1.5 pJ per pick"]
    k = next(i for i, line in enumerate(lines) if line.split()[:1] == ["two_level"])
    assert lines[k + 1].strip().startswith("source: ") and "(built-in; module tlpsim.policies.warp.two_level)" in \
        lines[k + 1]
    assert lines[k + 2].strip() == "param active_warps: int = 6"
    data = json.loads(cli("plugins", "--json", "--plugin", str(tmp_path / "counting.py"), cwd=tmp_path).stdout)
    assert {i["point"] for i in data} >= {"cta_scheduler", "resource_allocator", "warp_scheduler", "operand_storage"}
    mine = next(i for i in data if i["name"] == "counting")
    assert mine["file"] == path and mine["origin"] == "--plugin" and mine["events"] == ["cta_admitted"]
    two = next(i for i in data if i["name"] == "two_level")
    assert two["params"] == [{"name": "active_warps", "type": "int", "required": False, "default": 6,
                              "description": ""}]
    out = cli("plugins", "--point", "context_switcher", cwd=tmp_path).stdout.splitlines()
    assert out[0] == "context_switcher (--set sm.context_switcher=NAME)"
    assert out[1].split()[0] == "none" and "(built-in; module tlpsim.policies.ctxswitch.none)" in out[2]


def test_tlpsim_plugins_environment_variable(tmp_path):
    write_plugin(tmp_path / "a" / "one.py", "env_one")
    write_plugin(tmp_path / "b" / "two.py", "env_two")
    env = cli_env(TLPSIM_PLUGINS=os.pathsep.join([str(tmp_path / "a" / "one.py"), "b/two.py"]))
    data = json.loads(cli("plugins", "--json", "--point", "warp_scheduler", cwd=tmp_path, env=env).stdout)
    assert {i["name"]: i["origin"] for i in data if i["name"].startswith("env_")} == {
        "env_one": "TLPSIM_PLUGINS", "env_two": "TLPSIM_PLUGINS"}
    rec = json.loads(cli("run", "vecadd", "--size", "tiny", "--set", "sm.warp_scheduler=env_two", "--json",
                         "--run-dir", "rd", cwd=tmp_path, env=env).stdout)
    assert rec["params"]["plugins"] == [str(tmp_path / "a" / "one.py"), str(tmp_path / "b" / "two.py")]
    (st,) = rec["stats"]
    assert st["plugins"]["warp_scheduler.env_two"]["issued"] == st["warp_insts"]


def test_entry_point_plugins_are_listed(tmp_path):
    info = tmp_path / "labdist-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: labdist\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[tlpsim.policies]\nsched = lab_counting\n")
    (tmp_path / "lab_counting.py").write_text(counting_source("ep_counting"))
    env = cli_env()
    env["PYTHONPATH"] += os.pathsep + str(tmp_path)
    data = json.loads(cli("plugins", "--json", "--point", "warp_scheduler", cwd=tmp_path, env=env).stdout)
    mine = next(i for i in data if i["name"] == "ep_counting")
    assert mine["origin"] == "entry point 'sched' of labdist" and mine["module"] == "lab_counting"


ERRORS = {
    "syntax.py": ("from tlpsim.policies.registry import register\n\nclass X(:\n    pass\n",
                  "syntax.py, line 3: SyntaxError: invalid syntax"),
    "imports.py": ("import os\nimport no_such_package_zz\n",
                   "imports.py, line 2: ModuleNotFoundError: No module named 'no_such_package_zz'"),
    "empty.py": ("X = 1\n", "empty.py (from --plugin) registers no plug-in"),
}


@pytest.mark.parametrize("fname", sorted(ERRORS))
def test_load_errors_exit_2_with_file_and_line(tmp_path, fname):
    text, message = ERRORS[fname]
    (tmp_path / fname).write_text(text)
    proc = cli("plugins", "--plugin", fname, cwd=tmp_path, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: ") and message in proc.stderr and "Traceback" not in proc.stderr
    assert str(tmp_path / fname) in proc.stderr


def test_missing_plugin_on_run_sweep_and_environment(tmp_path):
    proc = cli("run", "vecadd", "--size", "tiny", "--plugin", "nope.py", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr == f"error: plug-in file {tmp_path / 'nope.py'} (from --plugin) not found\n"
    assert not (tmp_path / "runs").exists()  # nothing simulated
    proc = cli("run", "vecadd", "--plugin", "no_such_mod_zz", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "plug-in module 'no_such_mod_zz' (from --plugin) not found" in proc.stderr
    (tmp_path / "spec.toml").write_text('plugins = ["lib/missing.py"]\nworkloads = ["vecadd"]\nsizes = ["tiny"]\n')
    proc = cli("sweep", "spec.toml", "--workers", "1", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr == (f"error: plug-in file {tmp_path / 'lib' / 'missing.py'} (from spec.toml: plugins) "
                           "not found\n")
    env = cli_env(TLPSIM_PLUGINS=str(tmp_path / "gone.py"))
    proc = cli("run", "vecadd", "--size", "tiny", cwd=tmp_path, check=False, env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr == f"error: plug-in file {tmp_path / 'gone.py'} (from TLPSIM_PLUGINS) not found\n"

"""Bad plug-ins get clear errors, never "internal error" or a hang: each case runs
the CLI in a subprocess (with a timeout, so a hang fails the test) and checks exit
status 2 and a message naming the plug-in, its file, the method and the rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_helpers import cli, cli_env

SCHED = '''
import sys
from tlpsim.policies.registry import register
from tlpsim.policies.warp.base import WarpScheduler
PRELUDE

@register("warp_scheduler", "bad_sched")
class BadScheduler(WarpScheduler):
    """A warp scheduler that breaks its contract."""

    def __init__(self, params=None, **context):
        super().__init__(params, **context)
        self.calls = 0
        self.seen = []

    def choose(self, ready, now):
        self.calls += 1
BODY
'''

CASES = {
    "raises": ("", "        raise ValueError('boom')",
               r"raised ValueError: boom at .*bad\.py, line \d+"),
    "int": ("", "        return 3",
            r"must return one of the candidate WarpViews .* it returned 3 \(int\)"),
    "stale": ("", "        if len(self.seen) < 50:\n            self.seen.append(ready[0])\n"
                  "            return ready[0]\n        return self.seen[0]",
              r"it returned the warp in slot \d+, which is not among this cycle's \d+ candidates"),
    "exit": ("", "        sys.exit(0)", r"must not exit the simulator; it called sys.exit\(0\)"),
}


def _plugin(tmp_path: Path, prelude: str, body: str) -> Path:
    p = tmp_path / "bad.py"
    p.write_text(SCHED.replace("PRELUDE", prelude).replace("BODY", body))
    return p


def _run(tmp_path, path, *extra, timeout=120, env=None):
    return cli("run", "vecadd", "--size", "tiny", "--mode", "timing", "--plugin", str(path),
               "--set", "sm.warp_scheduler=bad_sched", *extra, cwd=tmp_path, check=False, timeout=timeout,
               env=env)


@pytest.mark.parametrize("case", list(CASES))
def test_a_failing_choose_is_a_plugin_error_naming_plugin_file_method_and_rule(tmp_path, case):
    prelude, body, rule = CASES[case]
    path = _plugin(tmp_path, prelude, body)
    proc = _run(tmp_path, path)
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.strip()
    assert "internal error" not in err and "Traceback" not in err
    assert f"error: plug-in warp_scheduler.bad_sched (BadScheduler in {path}), choose(): " in err, err
    import re

    assert re.search(rule, err), err
    # the run directory keeps what finished: the error, no launch (vecadd has one), no stats.json
    (run,) = (tmp_path / "runs").iterdir()
    assert f"run directory runs/{run.name} keeps the 0 launches that finished" in err
    import json

    rec = json.loads((run / "error.json").read_text())
    assert rec["error_type"] == "PluginError" and rec["launches"] == [] and "bad_sched" in rec["error"]
    assert not (run / "stats.json").exists() and (run / "plugins" / "bad.py").is_file()


def test_an_endless_choose_ends_at_the_time_limit_naming_the_plugin(tmp_path):
    path = _plugin(tmp_path, "", "        while True:\n            self.calls += 1")
    proc = _run(tmp_path, path, "--time-limit", "2", timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "plug-in warp_scheduler.bad_sched (BadScheduler in " in proc.stderr
    assert "choose(): did not return within the time limit of 2 s" in proc.stderr
    assert f"it was at {path}, line " in proc.stderr


def test_the_time_limit_covers_the_timing_model():
    import tlpsim
    from tlpsim.errors import KernelError
    from tlpsim.workloads.registry import get_workload

    with tlpsim.Device(mode="timing", trace_cache=False) as dev:
        dev._timing.time_limit = 0.001   # the timing run only (the functional run has its own limit)
        with pytest.raises(KernelError, match=r"the timing simulation of sgemm\w* exceeded its time limit of "
                                              r"0\.001 s \(--time-limit"):
            get_workload("sgemm").execute("tiny")


def test_sys_exit_at_import_is_a_load_error(tmp_path):
    path = _plugin(tmp_path, "sys.exit(0)", "        return None")
    proc = _run(tmp_path, path)
    assert proc.returncode == 2, proc.stderr
    assert f"cannot load plug-in file {path}" in proc.stderr
    assert "it called sys.exit(0) while being imported" in proc.stderr
    assert f"{path}, line 5" in proc.stderr


def test_an_endless_import_is_a_load_error_after_the_import_limit(tmp_path):
    path = _plugin(tmp_path, "while True:\n    pass", "        return None")
    proc = _run(tmp_path, path, timeout=60, env=cli_env(TLPSIM_PLUGIN_IMPORT_LIMIT="1"))
    assert proc.returncode == 2, proc.stderr
    assert f"cannot load plug-in file {path}" in proc.stderr
    assert "importing it took longer than 1 s" in proc.stderr and f"it was at {path}, line " in proc.stderr


def _straight(overrides):
    import numpy as np

    import tlpsim
    from tlpsim.config.loader import load_config

    ptx = (Path(__file__).parents[1] / "contract" / "straight.ptx").read_text()
    cfg = load_config("gtx480", {"gpu.n_sms": 1, **overrides})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        out = tlpsim.zeros(32, np.int32)
        tlpsim.RawModule(ptx).get_function("straight")((1,), (32,), (out,))


@pytest.mark.parametrize("method,value,rule", [
    ("try_read", "'soon'", r"try_read\(\): must return None \(refused\) or the cycle the instruction may start, "
                           r"an int > now \(\d+\); it returned 'soon'"),
    ("try_read", "now", r"try_read\(\): must return None .* an int > now \((\d+)\); it returned \1$"),
    ("write", "None", r"write\(\): must return the cycle the write completes, an int >= now \(\d+\); it returned None"),
    ("__init__", "1 / 0", r"__init__\(\): a plug-in method must return normally; it raised ZeroDivisionError"),
])
def test_an_operand_storage_returning_a_wrong_value_is_named(tmp_path, method, value, rule):
    from tlpsim.errors import PluginError
    from tlpsim.policies.external import load

    src = (f"from tlpsim.policies.operands.base import OperandStorage\n"
           f"from tlpsim.policies.registry import register\n\n\n"
           f"@register('operand_storage', 'bad_store')\nclass BadStore(OperandStorage):\n")
    src += ("    def __init__(self, params=None, **context):\n        super().__init__(params, **context)\n"
            f"        {value}\n") if method == "__init__" else \
        f"    def {method}(self, warp, instr, now):\n        return {value}\n"
    (tmp_path / "store.py").write_text(src)
    load(str(tmp_path / "store.py"))
    with pytest.raises(PluginError, match=rule) as info:
        _straight({"sm.operand_storage": "bad_store"})
    e = info.value
    assert (e.plugin, e.path, e.method) == ("operand_storage.bad_store", str(tmp_path / "store.py"), method)
    assert str(e).startswith(f"plug-in operand_storage.bad_store (BadStore in {tmp_path / 'store.py'}), {method}(): ")


def test_a_swallowed_time_limit_still_ends_the_run():
    """The timer's raise can land where Python ignores it (a __del__, a GC callback);
    the limit must still end the run when the body returns."""
    import time

    from tlpsim.plugin_guard import wall_clock_limit

    class Expired(Exception):
        pass

    def expire(frame):
        raise Expired("limit")

    swallowed = []
    with pytest.raises(Expired):
        with wall_clock_limit(0.001, expire):
            try:
                time.sleep(0.05)
            except Expired:   # stands in for "Exception ignored in __del__"
                swallowed.append(True)
    assert swallowed == [True]


def test_a_swallowed_time_limit_fires_again_while_the_body_runs_on():
    """A body that swallows the first raise and keeps running (a runaway loop whose
    first interruption landed in a GC callback) is stopped by the next one."""
    import time

    from tlpsim.plugin_guard import REFIRE_S, wall_clock_limit

    class Expired(Exception):
        pass

    def expire(frame):
        raise Expired("limit")

    swallowed = []
    t0 = time.monotonic()
    with pytest.raises(Expired):
        with wall_clock_limit(0.01, expire):
            while True:
                try:
                    while True:
                        pass
                except Expired:
                    if swallowed:
                        raise
                    swallowed.append(time.monotonic() - t0)
    assert len(swallowed) == 1 and time.monotonic() - t0 < swallowed[0] + 10 * REFIRE_S


def test_a_body_within_the_limit_is_untouched():
    from tlpsim.plugin_guard import wall_clock_limit

    def expire(frame):
        raise AssertionError("fired")

    with wall_clock_limit(30.0, expire):
        total = sum(range(1000))
    assert total == 499500

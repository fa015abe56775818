"""Loading plug-ins from outside the tree (tlpsim.policies.external): files,
modules, entry points, carried sources; reloading an edited file; every failure
a PluginLoadError naming the file and line; the source fingerprint in run keys."""

from __future__ import annotations

import sys
import uuid

import pytest
from plugin_helpers import counting_source, write_plugin

from tlpsim.errors import TlpsimError
from tlpsim.policies import external, registry
from tlpsim.policies.external import PluginLoadError, class_digest, env_specs, load
from tlpsim.sweep.job import RunParams, execute


def _name() -> str:
    return f"t_{uuid.uuid4().hex[:8]}"


def test_file_registers_and_describes_itself(tmp_path):
    name = _name()
    f = write_plugin(tmp_path / "counting.py", name)
    lp = load(str(f))
    assert lp.kind == "file" and lp.spec == str(f.resolve()) and lp.path == str(f.resolve())
    assert lp.registered == (("warp_scheduler", name),) and lp.origin == "--plugin"
    assert len(lp.digest) == 16
    info = next(i for i in registry.describe("warp_scheduler") if i.name == name)
    assert info.summary == "Oldest-first; counts issued instructions and admitted CTAs."
    assert info.events == ("cta_admitted",)
    assert [(c.name, c.unit, c.description) for c in info.counters] == [
        ("issued", "warp instructions", "instructions issued"), ("ctas", "CTAs", "CTAs admitted")]
    assert [(n, e.access_pj, e.leakage_mw, e.source) for n, e in info.energy] == [
        ("pick_table", 1.5, 0.25, "test: 1.5 pJ per pick")]
    assert info.file == str(f.resolve()) and info.origin == "--plugin"
    d = info.to_dict()
    assert d["key"] == f"warp_scheduler.{name}" and d["config_key"] == "sm.warp_scheduler"
    assert d["counters"]["issued"] == {"unit": "warp instructions", "description": "instructions issued"}
    assert d["energy"]["pick_table"]["access_pj"] == 1.5
    # the class resolves like a built-in
    cls, params = registry.resolve("warp_scheduler", name)
    assert cls.__name__ == "Counting" and params is None


def test_relative_paths_resolve_against_base_and_load_once(tmp_path, monkeypatch):
    name = _name()
    write_plugin(tmp_path / "sub" / "p.py", name)
    a = load("sub/p.py", base=tmp_path)
    monkeypatch.chdir(tmp_path / "sub")
    b = load("p.py")
    assert a is b  # unchanged: not executed again
    cls = registry.get("warp_scheduler", name)
    assert load(str(tmp_path / "sub" / "p.py")) is a and registry.get("warp_scheduler", name) is cls


def test_edited_file_is_executed_again_and_replaces_its_registrations(tmp_path):
    a, b = _name(), _name()
    f = tmp_path / "two.py"
    f.write_text(counting_source(a) + counting_source(b).replace("class Counting", "class Other"))
    first = load(str(f))
    assert {n for _, n in first.registered} == {a, b}
    old = registry.get("warp_scheduler", a)
    f.write_text(counting_source(a, "v2"))
    second = load(str(f))
    assert second.registered == (("warp_scheduler", a),) and second.digest != first.digest
    assert registry.get("warp_scheduler", a) is not old
    assert b not in registry.choices("warp_scheduler")  # dropped with the old version


def test_failed_reload_keeps_the_previous_version(tmp_path):
    name = _name()
    f = write_plugin(tmp_path / "p.py", name)
    load(str(f))
    cls = registry.get("warp_scheduler", name)
    f.write_text("def broken(:\n")
    with pytest.raises(PluginLoadError, match=r"p\.py, line 1: SyntaxError"):
        load(str(f))
    assert registry.get("warp_scheduler", name) is cls


def test_module_plugin_and_package(tmp_path, monkeypatch):
    name = _name()
    pkg = tmp_path / f"lab_{name}"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import sched  # noqa: F401\n")
    (pkg / "sched.py").write_text(counting_source(name))
    monkeypatch.syspath_prepend(str(tmp_path))
    lp = load(pkg.name)
    assert lp.kind == "module" and lp.module == pkg.name and lp.registered == (("warp_scheduler", name),)
    assert lp.path == str(pkg / "__init__.py")
    # loading an already imported module finds its registrations again
    assert load(pkg.name).registered == lp.registered
    assert load("tlpsim.policies.warp.gto").registered == (("warp_scheduler", "gto"),)
    assert next(i for i in registry.describe("warp_scheduler") if i.name == "gto").origin == "built-in"


@pytest.mark.parametrize("text, message", [
    ("from tlpsim.policies.registry import register\n\ndef f(:\n    pass\n",
     (r"^cannot load plug-in file (\S+)/bad\.py \(from --plugin\): \1/bad\.py, line 3: SyntaxError: "
      r"invalid syntax\n    def f\(:\n          \^$")),
    ('"""doc"""\nimport os\nimport no_such_package_zz\n',
     r"bad\.py, line 3: ModuleNotFoundError: No module named 'no_such_package_zz'$"),
    ("X = 1\n", r"bad\.py \(from --plugin\) registers no plug-in: decorate a class with @register\(point, name\)"),
    (("from tlpsim.policies.registry import register\nfrom tlpsim.policies.warp.base import WarpScheduler\n\n"
      "@register('warp_scheduler', 'gto')\nclass Mine(WarpScheduler):\n    pass\n"),
     r"bad\.py, line 4: warp_scheduler 'gto' is already registered by tlpsim\.policies\.warp\.gto"),
    ("import helper_zz_{}\n", (r"bad\.py, line 1: ZeroDivisionError: division by zero "
                              r"\(raised in \S+helper_zz_\w+\.py, line 2\)$")),
])
def test_load_errors_name_the_file_and_line(tmp_path, text, message):
    helper = f"helper_zz_{uuid.uuid4().hex[:6]}"
    (tmp_path / f"{helper}.py").write_text("x = 1\ny = 1 / 0\n")
    f = tmp_path / "bad.py"
    f.write_text(text.replace("helper_zz_{}", helper))
    before = registry.registrations()
    with pytest.raises(PluginLoadError, match=message):
        load(str(f))
    assert registry.registrations() == before
    assert not any(m.startswith("tlpsim_plugin_bad_") for m in sys.modules)


def test_missing_files_modules_and_bad_names(tmp_path, monkeypatch):
    with pytest.raises(PluginLoadError, match=r"^plug-in file \S+/nope\.py \(from --plugin\) not found$"):
        load(str(tmp_path / "nope.py"))
    (tmp_path / "d.py").mkdir()
    with pytest.raises(PluginLoadError, match=r"d\.py \(from x\) is not a file"):
        load(str(tmp_path / "d.py"), origin="x")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text("X = 1\n")
    with pytest.raises(PluginLoadError, match=r"plug-in module 'mine' \(from --plugin\) not found: it must be "
                                              r"importable .*write --plugin \./mine\.py"):
        load("mine")
    with pytest.raises(PluginLoadError, match="neither a Python file"):
        load("a b")
    with pytest.raises(PluginLoadError, match="empty plug-in name"):
        load("  ")


def test_carried_source_loads_where_the_file_is_absent_or_differs(tmp_path):
    name, other = _name(), _name()
    path = str(tmp_path / "elsewhere" / "p.py")
    lp = load(path, sources={path: counting_source(name)})
    assert lp.registered == (("warp_scheduler", name),)
    assert external.sources([path]) == {path: counting_source(name)}
    here = write_plugin(tmp_path / "here.py", other, "edited after the sweep started")
    lp = load(str(here), sources={str(here): counting_source(other, "as hashed by the driver")})
    assert external.sources([str(here)]) == {str(here): counting_source(other, "as hashed by the driver")}
    assert lp.digest != load(str(here)).digest  # without carried text the file itself is loaded


def test_env_specs_split_on_pathsep():
    sep = __import__("os").pathsep
    assert env_specs({"TLPSIM_PLUGINS": f"a.py{sep} pkg.mod {sep}{sep}"}) == ["a.py", "pkg.mod"]
    assert env_specs({}) == []


def _fake_distribution(root, dist: str, ep_name: str, module: str, source: str) -> None:
    info = root / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[tlpsim.policies]\n{ep_name} = {module}\n")
    (root / f"{module}.py").write_text(source)


def test_entry_points_load_with_their_origin_and_errors(tmp_path, monkeypatch):
    name = _name()
    good, bad = f"labgood_{name}", f"labbad_{name}"
    _fake_distribution(tmp_path / "a", "labdist", "sched", good, counting_source(name))
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    monkeypatch.setattr(registry, "_LOAD_STATE", "pending")
    registry.load_plugins()
    info = next(i for i in registry.describe("warp_scheduler") if i.name == name)
    assert info.origin == "entry point 'sched' of labdist" and info.module == good
    _fake_distribution(tmp_path / "b", "brokendist", "broken", bad, "import os\nraise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "b"))
    monkeypatch.setattr(registry, "_LOAD_STATE", "pending")
    with pytest.raises(PluginLoadError, match=rf"cannot load plug-in entry point 'broken' of brokendist \({bad}, "
                                              rf"group tlpsim\.policies\): \S+{bad}\.py, line 2: RuntimeError: boom"):
        registry.load_plugins()
    assert registry._LOAD_STATE == "pending"  # every later query reports it again


def test_env_plugins_load_with_the_registry(tmp_path, monkeypatch):
    name = _name()
    f = write_plugin(tmp_path / "env.py", name)
    monkeypatch.setenv("TLPSIM_PLUGINS", str(f))
    monkeypatch.setattr(registry, "_LOAD_STATE", "pending")
    assert name in registry.choices("warp_scheduler")
    assert next(i for i in registry.describe("warp_scheduler") if i.name == name).origin == "TLPSIM_PLUGINS"
    assert [lp.spec for lp in external.activate()] == [str(f)]


# --------------------------------------------------------------------------- fingerprints and keys


def test_key_follows_the_plugin_source(tmp_path):
    name = _name()
    f = write_plugin(tmp_path / "p.py", name)
    spec = load(str(f)).spec

    def params() -> RunParams:
        return RunParams("vecadd", "tiny", "gtx480", {"sm.warp_scheduler": name}, plugins=(spec,))

    a = params()
    assert a.key() == params().key() and a.code["plugins"] == [load(spec).digest]
    f.write_text(counting_source(name, "v2"))  # edited: a fresh RunParams sees new code
    load(spec)
    b = params()
    assert b.key() != a.key() and b.params_key() == a.params_key()
    assert b.code["warp_scheduler"] != a.code["warp_scheduler"] and b.code["plugins"] != a.code["plugins"]
    assert b.code["cta_scheduler"] == a.code["cta_scheduler"]  # the built-in's source did not change
    # the stamped fingerprint travels with the parameters (what a worker receives)
    assert RunParams.from_dict(b.to_dict()).key() == b.key()


def test_class_digest_covers_the_plugin_a_class_extends(tmp_path):
    base_name, sub_name = _name(), _name()
    base = write_plugin(tmp_path / "base_sched.py", base_name)
    load(str(base))
    sub = tmp_path / "sub_sched.py"
    sub.write_text("from tlpsim.policies.registry import register, get\n"
                   f"@register('warp_scheduler', '{sub_name}')\n"
                   f"class Sub(get('warp_scheduler', '{base_name}')):\n    pass\n")
    load(str(sub))
    before = class_digest(registry.get("warp_scheduler", sub_name))
    base.write_text(counting_source(base_name, "v2"))
    load(str(base))
    old_sub = registry.get("warp_scheduler", sub_name)
    assert class_digest(old_sub) == before  # still built on the old base class
    load(str(sub))  # unchanged, but executed again: it may extend what was edited
    new_sub = registry.get("warp_scheduler", sub_name)
    assert new_sub is not old_sub and new_sub.__mro__[1] is registry.get("warp_scheduler", base_name)
    assert class_digest(new_sub) != before


def test_load_all_reexecutes_files_listed_before_an_edited_one(tmp_path):
    base_name, sub_name = _name(), _name()
    base = write_plugin(tmp_path / "base_sched.py", base_name)
    sub = tmp_path / "sub_sched.py"
    sub.write_text("from tlpsim.policies.registry import register, get\n"
                   f"@register('warp_scheduler', '{sub_name}')\n"
                   f"class Sub(get('warp_scheduler', '{base_name}')):\n    pass\n")
    external.load_all([str(base), str(sub)])
    base.write_text(counting_source(base_name, "v2"))
    external.load_all([str(sub), str(base)])  # a worker meets the unchanged file first
    assert registry.get("warp_scheduler", sub_name).__mro__[1] is registry.get("warp_scheduler", base_name)


def test_a_run_whose_code_changed_after_its_key_fails_before_simulating(tmp_path):
    p = RunParams("vecadd", "tiny", "gtx480", {}, code={"warp_scheduler": "0" * 16})
    with pytest.raises(TlpsimError, match=r"plug-in code of this run changed after its key was computed "
                                          r"\(context_switcher, cta_scheduler, .*warp_scheduler"):
        execute(p)


def test_module_errors_name_its_file_and_line(tmp_path, monkeypatch):
    mod = f"broken_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{mod}.py").write_text("import os\nos.environ['NO_SUCH_VAR_ZZ']\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginLoadError, match=rf"^cannot load plug-in module '{mod}' \(from --plugin\): "
                                              rf"\S+/{mod}\.py, line 2: KeyError: 'NO_SUCH_VAR_ZZ'$"):
        load(mod)
    assert mod not in sys.modules

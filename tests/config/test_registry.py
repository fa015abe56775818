"""The plug-in registry: registration rules, resolution of config choices, errors."""

from __future__ import annotations

import dataclasses
import uuid

import pytest
from pydantic import BaseModel, Field

from tlpsim.config import PolicyChoice, load_config
from tlpsim.errors import ConfigError
from tlpsim.policies import registry
from tlpsim.policies.alloc.base import ResourceAllocator
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.cta.base import CTAScheduler
from tlpsim.policies.ctxswitch.base import ContextSwitcher
from tlpsim.policies.monitor.base import Monitor
from tlpsim.policies.operands.base import OperandStorage
from tlpsim.policies.warp.base import WarpScheduler
from tlpsim.policies.registry import (
    EXTENSION_POINTS, PluginRegistrationError, choices, describe, get, register, resolve, resolve_config,
    unregister,
)


# every extension point's interface: implementations must subclass it
BASES = {"warp_scheduler": WarpScheduler, "cta_scheduler": CTAScheduler, "resource_allocator": ResourceAllocator,
         "operand_storage": OperandStorage, "context_switcher": ContextSwitcher, "execution_checker": ExecutionChecker,
         "monitor": Monitor}


@pytest.fixture
def names():
    """Unique throwaway names; unregistered afterwards."""
    made: list[tuple[str, str]] = []

    def make(point: str) -> str:
        name = f"test_{uuid.uuid4().hex[:8]}"
        made.append((point, name))
        return name

    yield make
    for point, name in made:
        unregister(point, name)


def test_extension_points():
    assert set(EXTENSION_POINTS) == {"cta_scheduler", "resource_allocator", "warp_scheduler", "operand_storage",
                                     "context_switcher", "execution_checker", "monitor"}


def test_register_and_resolve_dataclass_params(names):
    n = names("warp_scheduler")

    @register("warp_scheduler", n)
    class TwoLevel(BASES["warp_scheduler"]):
        """Two-level scheduler (test)."""

        @dataclasses.dataclass(frozen=True)
        class Params:
            active_warps: int = 8
            inner: str = "lrr"

    assert n in choices("warp_scheduler")
    assert get("warp_scheduler", n) is TwoLevel
    assert TwoLevel.plugin_name == n and TwoLevel.plugin_point == "warp_scheduler"
    cls, params = resolve("warp_scheduler", PolicyChoice(impl=n, params={"active_warps": "6"}))
    assert cls is TwoLevel and params == TwoLevel.Params(active_warps=6)
    cls, params = resolve("warp_scheduler", n)
    assert params == TwoLevel.Params()
    cls, params = resolve("warp_scheduler", {"impl": n, "inner": "gto"})
    assert params.inner == "gto"


def test_register_pydantic_params(names):
    n = names("cta_scheduler")

    @register("cta_scheduler", n)
    class Lcs(BASES["cta_scheduler"]):
        """Lazy CTA scheduling (test)."""

        class Params(BaseModel):
            model_config = {"extra": "forbid"}
            window: int = Field(100, ge=1, description="cycles")

    _, p = resolve("cta_scheduler", {"impl": n, "window": 50})
    assert p.window == 50
    with pytest.raises(ConfigError) as err:
        resolve("cta_scheduler", {"impl": n, "window": 0})
    assert "gpu.cta_scheduler.window" in str(err.value)


def test_no_params(names):
    n = names("context_switcher")

    @register("context_switcher", n)
    class Nothing(BASES["context_switcher"]):
        """Does nothing (test)."""

    assert resolve("context_switcher", n) == (Nothing, None)
    with pytest.raises(ConfigError, match=f"sm.context_switcher: context_switcher '{n}' takes no parameters"):
        resolve("context_switcher", {"impl": n, "x": 1})


def test_duplicate_name_raises(names):
    n = names("warp_scheduler")

    @register("warp_scheduler", n)
    class A(BASES["warp_scheduler"]):
        pass

    with pytest.raises(PluginRegistrationError, match="already registered"):
        @register("warp_scheduler", n)
        class B(BASES["warp_scheduler"]):
            pass

    assert get("warp_scheduler", n) is A


def test_same_name_under_other_points_is_fine(names):
    n = names("warp_scheduler")
    w = register("warp_scheduler", n)(type("W", (WarpScheduler,), {}))
    m = register("monitor", n)(type("M", (Monitor,), {}))
    try:
        assert get("warp_scheduler", n) is w and get("monitor", n) is m
    finally:
        unregister("monitor", n)


def test_bad_registrations():
    with pytest.raises(PluginRegistrationError, match="unknown extension point 'warp_schedular'.*warp_scheduler"):
        register("warp_schedular", "x")
    with pytest.raises(PluginRegistrationError, match="bad"):
        register("warp_scheduler", "not a name")
    with pytest.raises(PluginRegistrationError, match="Params"):
        @register("warp_scheduler", "test_bad_params")
        class C(BASES["warp_scheduler"]):
            Params = {"a": 1}
    assert "test_bad_params" not in choices("warp_scheduler")


def test_interface_check(names, monkeypatch):
    registry.load_plugins()  # real plug-ins register into the real table first
    monkeypatch.setattr(registry, "_INTERFACES", {})
    monkeypatch.setattr(registry, "_REGISTRY", {p: {} for p in EXTENSION_POINTS})
    n = names("execution_checker")

    @registry.interface("execution_checker")
    class Checker:
        pass

    @register("execution_checker", n)
    class Good(Checker):
        pass

    with pytest.raises(PluginRegistrationError, match="does not subclass .*Checker"):
        @register("execution_checker", names("execution_checker"))
        class Bad(BASES["execution_checker"]):
            pass


def test_unknown_impl_lists_choices(names):
    a, b = names("warp_scheduler"), names("warp_scheduler")
    register("warp_scheduler", a)(type("A", (WarpScheduler,), {}))
    register("warp_scheduler", b)(type("B", (WarpScheduler,), {}))
    with pytest.raises(ConfigError) as err:
        resolve("warp_scheduler", "no_such_scheduler")
    text = str(err.value)
    assert text.startswith("sm.warp_scheduler: unknown warp_scheduler 'no_such_scheduler'")
    assert a in text and b in text and "registered warp_scheduler choices" in text


def test_unknown_impl_suggests(names):
    n = names("operand_storage")
    register("operand_storage", n)(type("O", (OperandStorage,), {}))
    with pytest.raises(ConfigError, match=f"did you mean '{n}'"):
        resolve("operand_storage", n[:-1] + "x")


def test_unknown_param_names_key_and_valid_params(names):
    n = names("warp_scheduler")

    @register("warp_scheduler", n)
    class T(BASES["warp_scheduler"]):
        @dataclasses.dataclass
        class Params:
            active_warps: int = 8

    with pytest.raises(ConfigError) as err:
        resolve("warp_scheduler", {"impl": n, "active_warp": 4})
    text = str(err.value)
    assert "sm.warp_scheduler.active_warp" in text and "did you mean 'active_warps'" in text
    assert "parameters: active_warps" in text


def test_bad_param_value_names_key(names):
    n = names("warp_scheduler")

    @register("warp_scheduler", n)
    class T(BASES["warp_scheduler"]):
        @dataclasses.dataclass
        class Params:
            active_warps: int = 8

    with pytest.raises(ConfigError, match=r"sm\.warp_scheduler\.active_warps: .*integer"):
        resolve("warp_scheduler", {"impl": n, "active_warps": "many"})


def test_missing_required_param(names):
    n = names("resource_allocator")

    @register("resource_allocator", n)
    class Expars(BASES["resource_allocator"]):
        @dataclasses.dataclass
        class Params:
            tau: float

    with pytest.raises(ConfigError, match="sm.resource_allocator.tau"):
        resolve("resource_allocator", n)
    assert resolve("resource_allocator", {"impl": n, "tau": 0.8})[1].tau == 0.8


def test_custom_key_in_errors():
    with pytest.raises(ConfigError, match="^my.key: unknown warp_scheduler"):
        resolve("warp_scheduler", "no_such", key="my.key")


def test_resolve_config_reports_all_problems():
    cfg = load_config("gtx480", ["sm.warp_scheduler=no_such_ws", "gpu.cta_scheduler=no_such_cta"])
    with pytest.raises(ConfigError) as err:
        resolve_config(cfg)
    text = str(err.value)
    assert "sm.warp_scheduler: unknown warp_scheduler 'no_such_ws'" in text
    assert "gpu.cta_scheduler: unknown cta_scheduler 'no_such_cta'" in text


def test_resolve_config_success(monkeypatch):
    registry.load_plugins()
    monkeypatch.setattr(registry, "_REGISTRY", {p: {} for p in EXTENSION_POINTS})
    made = {}
    for point in EXTENSION_POINTS:
        made[point] = register(point, "dummy")(type(f"D_{point}", (BASES[point],), {}))
    cfg = load_config("gtx480", {f"{k}": "dummy" for k in EXTENSION_POINTS.values()})
    out = resolve_config(cfg)
    assert {p: c for p, (c, _) in out.items()} == made


def test_describe(names):
    n = names("monitor")

    @register("monitor", n)
    class Throughput(BASES["monitor"]):
        """Throughput monitor (GPUDuet).

        More text."""

        @dataclasses.dataclass
        class Params:
            period: int = dataclasses.field(default=10000, metadata={"help": "sampling period"})

    info = [i for i in describe("monitor") if i.name == n][0]
    assert info.summary == "Throughput monitor (GPUDuet)."
    assert info.params[0].name == "period" and info.params[0].default == 10000
    assert info.params[0].description == "sampling period"


def test_none_at_optional_points(monkeypatch):
    registry.load_plugins()
    monkeypatch.setattr(registry, "_REGISTRY", {p: {} for p in EXTENSION_POINTS})
    for point in registry.OPTIONAL_POINTS:
        assert resolve(point, "none") == (None, None)
        assert "none" in choices(point)
    with pytest.raises(ConfigError, match="sm.context_switcher: 'none' .*takes no parameters"):
        resolve("context_switcher", {"impl": "none", "x": 1})
    with pytest.raises(ConfigError, match="unknown warp_scheduler 'none'"):
        resolve("warp_scheduler", "none")


def test_registered_none_wins(monkeypatch):
    registry.load_plugins()
    monkeypatch.setattr(registry, "_REGISTRY", {p: {} for p in EXTENSION_POINTS})
    cls = register("monitor", "none")(type("NoMonitor", (Monitor,), {}))
    assert resolve("monitor", "none") == (cls, None)


def test_builtin_baselines_resolve_for_every_preset():
    """Whatever plug-ins exist, every preset's choices either resolve or fail with a ConfigError
    naming the key (never another exception)."""
    from tlpsim.config import list_presets
    for name in list_presets():
        try:
            resolve_config(load_config(name))
        except ConfigError as exc:
            assert any(k in str(exc) for k in EXTENSION_POINTS.values())


def test_any_plugin_can_state_the_configurations_it_cannot_run_under(plugin):
    """`Plugin.config_problems(config, key)`: its messages become one ConfigError when the
    simulator is built."""
    from tlpsim.policies.warp.gto import GreedyThenOldest
    from tlpsim.session import build_gpu

    class NeedsTwoSchedulers(GreedyThenOldest):
        @classmethod
        def config_problems(cls, config, key):
            n = config.sm.n_schedulers
            return [] if n == 2 else [f"{key}: needs sm.n_schedulers = 2, have {n}"]

    name = plugin("warp_scheduler", NeedsTwoSchedulers)
    assert build_gpu(load_config("gtx480", {"sm.warp_scheduler": name})).sms
    with pytest.raises(ConfigError, match=r"^sm\.warp_scheduler: needs sm\.n_schedulers = 2, have 4$"):
        build_gpu(load_config("h200", {"sm.warp_scheduler": name}))

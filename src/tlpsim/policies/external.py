"""Plug-ins from outside the source tree: Python files and importable modules named
with `--plugin` (on `tlpsim run`, `tlpsim sweep`, `tlpsim plugins`), in a sweep
spec (`plugins = [...]`), in the `TLPSIM_PLUGINS` environment variable
(`os.pathsep`-separated) or as entry points of the group `tlpsim.policies`.
Loading one runs its `@register` decorators.

    from tlpsim.policies.external import activate
    loaded = activate(["my_sched.py", "mylab.policies"])   # plus TLPSIM_PLUGINS

A spec ending in `.py` or containing a path separator is a file (relative paths
resolve against `base`, e.g. a sweep spec's directory); anything else is a module
name imported from `sys.path`. A file is imported under a module name derived from
its absolute path, with its directory appended to `sys.path` (so it can import
modules next to it). Loading the same unchanged file again does nothing; an edited
file is executed again and replaces its registrations (long-lived sweep workers
see the new code). A file that cannot be read, does not compile, fails while
importing, or registers nothing raises `PluginLoadError` naming the file and line.

Each loaded plug-in's source is hashed (`LoadedPlugin.digest`); `fingerprint`
combines the hashes of the plug-in classes a config selects and of the loaded
files, for the run key of `tlpsim.sweep.job.RunParams`: editing a plug-in never
reuses a result simulated with the old code.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import linecache
import os
import re
import sys
import traceback
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tlpsim.errors import ConfigError, TlpsimError
from tlpsim.plugin_guard import wall_clock_limit
from tlpsim.policies import registry

__all__ = ["ENV", "RUN_PLUGINS", "LoadedPlugin", "PluginLoadError", "activate", "class_digest", "env_specs",
           "fingerprint", "is_file_spec", "load", "load_all", "load_entry_point", "loaded", "normalize", "sources"]

#: environment variable naming plug-in files/modules to load in every process
ENV = "TLPSIM_PLUGINS"
#: the origin named in errors about the plug-ins a run carries (a sweep worker loads them)
RUN_PLUGINS = "the run's plug-ins"

_MODULE_RE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


class PluginLoadError(ConfigError):
    """A plug-in file or module could not be found, compiled or imported (it raised,
    called sys.exit, or took longer than the import time limit), or it registers no
    plug-in. The message names the file (and line)."""


#: seconds a plug-in's import may take (environment variable; default IMPORT_LIMIT_S)
IMPORT_LIMIT_ENV = "TLPSIM_PLUGIN_IMPORT_LIMIT"
IMPORT_LIMIT_S = 30.0


def import_time_limit() -> float:
    """Wall-clock seconds a plug-in's import may take (`TLPSIM_PLUGIN_IMPORT_LIMIT`, default 30)."""
    raw = os.environ.get(IMPORT_LIMIT_ENV, "").strip()
    if not raw:
        return IMPORT_LIMIT_S
    try:
        v = float(raw)
    except ValueError:
        raise ConfigError(f"environment variable {IMPORT_LIMIT_ENV}={raw!r} is not a number of seconds") from None
    if not v > 0:
        raise ConfigError(f"environment variable {IMPORT_LIMIT_ENV}={raw!r} must be positive")
    return v


class _ImportTimeout(BaseException):
    """Raised inside a plug-in's import that ran past the limit (not an Exception, so the
    plug-in's own `except Exception` does not swallow it)."""


@dataclass(frozen=True)
class LoadedPlugin:
    """One loaded plug-in file or module."""

    spec: str                              # absolute file path, or module name
    kind: str                              # "file" | "module"
    module: str                            # the module name it is imported as
    path: str                              # its source file ("" when unknown)
    digest: str                            # hash of the source that was executed
    registered: tuple[tuple[str, str], ...]  # (extension point, name) it registers
    origin: str                            # "--plugin", "TLPSIM_PLUGINS", a sweep spec's path, ...


_LOADED: dict[str, LoadedPlugin] = {}   # spec -> what it loaded (files by absolute path)
_SOURCES: dict[str, str] = {}           # file spec -> the source text executed (carried to remote workers)
_DIGESTS: dict[str, str] = {}           # module name -> digest of the source it runs
_STALE: set[str] = set()                # files to execute again: a plug-in file they may extend was edited


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def is_file_spec(spec: str) -> bool:
    """Whether a plug-in spec names a file (ends in .py or has a path separator)."""
    return spec.endswith(".py") or "/" in spec or os.sep in spec or bool(os.altsep and os.altsep in spec)


def normalize(spec: str, base: str | os.PathLike | None = None, origin: str = "--plugin") -> str:
    """A file spec as an absolute path (relative to `base`, else the working
    directory); a module name unchanged."""
    spec = str(spec).strip()
    if not spec:
        raise PluginLoadError(f"{origin}: empty plug-in name")
    if is_file_spec(spec):
        p = Path(spec).expanduser()
        if not p.is_absolute() and base is not None:
            p = Path(base) / p
        return str(p.resolve())
    if not _MODULE_RE.fullmatch(spec):
        raise PluginLoadError(f"{origin}: plug-in {spec!r} is neither a Python file (*.py) nor a module name "
                              "(pkg.module)")
    return spec


def env_specs(environ: Mapping[str, str] | None = None) -> list[str]:
    """The plug-ins named in TLPSIM_PLUGINS."""
    text = (os.environ if environ is None else environ).get(ENV, "")
    return [s.strip() for s in text.split(os.pathsep) if s.strip()]


def loaded() -> list[LoadedPlugin]:
    """Every plug-in file/module loaded in this process, in load order."""
    return list(_LOADED.values())


def sources(specs: Iterable[str]) -> dict[str, str]:
    """{file spec: source text} of loaded plug-in files, so a worker on a host
    without the file can still load it (see `load(..., sources=)`)."""
    return {s: _SOURCES[s] for s in specs if s in _SOURCES}


# --------------------------------------------------------------------------- loading


def activate(specs: Sequence[str] = (), *, base: str | os.PathLike | None = None,
             origin: str = "--plugin") -> list[LoadedPlugin]:
    """Load the built-in policies, entry points and TLPSIM_PLUGINS, then `specs`;
    returns the TLPSIM_PLUGINS and `specs` plug-ins (what a run must carry to its
    workers). The entry point for every command that accepts `--plugin`."""
    registry.load_plugins()
    out = load_all(env_specs(), origin=ENV) + load_all(specs, origin=origin, base=base)
    return list({lp.spec: lp for lp in out}.values())


def load_all(specs: Iterable[str], *, origin: str = "--plugin", base: str | os.PathLike | None = None,
             sources: Mapping[str, str] | None = None) -> list[LoadedPlugin]:
    """`load` each spec (duplicates once), in order."""
    specs = list(specs)
    out: dict[str, LoadedPlugin] = {}
    for _ in range(2):  # a second pass re-executes files loaded before a file they extend was edited
        out = {}
        for s in specs:
            lp = load(s, origin=origin, base=base, sources=sources)
            out.setdefault(lp.spec, lp)
        if not _STALE.intersection(out):
            break
    return list(out.values())


def load(spec: str, *, origin: str = "--plugin", base: str | os.PathLike | None = None,
         sources: Mapping[str, str] | None = None) -> LoadedPlugin:
    """Load one plug-in file or module (see the module docstring). `sources`
    ({absolute path: text}) supplies a file's text, used instead of the file: what a
    sweep's driver loaded, for workers on hosts without the file (or with another
    version of it)."""
    spec = normalize(spec, base, origin)
    registry.load_plugins()  # built-ins first: a plug-in may subclass them, and duplicate names are caught
    if is_file_spec(spec):
        return _load_file(spec, origin, (sources or {}).get(spec))
    return _load_module(spec, origin)


def _module_name(path: str) -> str:
    stem = re.sub(r"\W", "_", Path(path).stem) or "plugin"
    return f"tlpsim_plugin_{stem}_{hashlib.sha1(path.encode()).hexdigest()[:10]}"


def _load_file(path: str, origin: str, carried: str | None) -> LoadedPlugin:
    p = Path(path)
    what = f"plug-in file {path} (from {origin})"
    if carried is not None:  # the text the sweep's driver hashed, even if the file changed since
        data = carried.encode("utf-8")
    elif p.is_file():
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise PluginLoadError(f"cannot read {what}: {exc.strerror or exc}") from None
    elif p.exists():
        raise PluginLoadError(f"{what} is not a file")
    else:
        raise PluginLoadError(f"{what} not found")
    digest = _digest(data)
    have = _LOADED.get(path)
    if have is not None and have.digest == digest and path not in _STALE:
        return have
    name = _module_name(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PluginLoadError(f"{what}: not UTF-8 text ({exc})") from None
    folder = str(p.parent)
    if folder not in sys.path:
        sys.path.append(folder)  # modules next to the plug-in are importable, as for a script
    if carried is not None:  # let tracebacks and inspect show the lines that ran
        linecache.cache[path] = (len(text), None, text.splitlines(True), path)

    def run() -> None:
        module = types.ModuleType(name)
        module.__file__ = path
        sys.modules[name] = module  # dataclasses and pydantic look the module up while classes are built
        exec(compile(text, path, "exec", dont_inherit=True), module.__dict__)  # noqa: S102 - loading the plug-in

    registered = _tracked(name, what, path, run, again=have is not None)
    _SOURCES[path] = text
    _STALE.discard(path)
    if have is not None and have.digest != digest:  # edited: files loaded after it may extend its classes
        _STALE.update(s for s, lp in _LOADED.items() if lp.kind == "file" and s != path)
    return _record(LoadedPlugin(path, "file", name, path, digest, registered, origin))


def _load_module(name: str, origin: str) -> LoadedPlugin:
    what = f"plug-in module '{name}' (from {origin})"
    module = sys.modules.get(name)
    # edited since it was loaded here (a long-lived worker): execute it again
    edited = module is not None and _DIGESTS.get(name) not in (None, _file_digest(getattr(module, "__file__", None)))

    def run() -> None:
        nonlocal module
        try:
            if module is None:
                module = importlib.import_module(name)
            elif edited:
                module = importlib.reload(module)
        except ModuleNotFoundError as exc:
            if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
                as_file = name.replace(".", "/") + ".py"
                hint = f"; to load the file ./{as_file}, write --plugin ./{as_file}" if Path(as_file).is_file() \
                    else ""
                raise PluginLoadError(f"{what} not found: it must be importable (installed, or on PYTHONPATH); "
                                      f"give a path ending in .py to load a file{hint}") from None
            raise

    registered = _tracked(name, what, _module_file(name), run, again=edited)
    path = str(getattr(module, "__file__", "") or "")
    digest = _file_digest(path) or ""
    return _record(LoadedPlugin(name, "module", name, path, digest, registered, origin))


def load_entry_point(ep: Any) -> tuple[tuple[str, str], ...]:
    """Load one `tlpsim.policies` entry point (an `importlib.metadata.EntryPoint`);
    returns what it registers."""
    dist = getattr(getattr(ep, "dist", None), "name", None)
    via = f"entry point '{ep.name}'" + (f" of {dist}" if dist else "")
    what = f"plug-in {via} ({ep.value}, group {registry.ENTRY_POINT_GROUP})"
    module = ep.value.split(":", 1)[0].strip()
    registered = _tracked(module, what, _module_file(module), ep.load)
    registry.note_origin(module, via)
    return registered


def _module_file(module: str) -> str:
    """A module's source file without importing it ("" when not found)."""
    try:
        spec = importlib.util.find_spec(module)
    except Exception:  # noqa: BLE001 - a broken parent package: the import reports it
        return ""
    return str(spec.origin or "") if spec is not None else ""


def _record(lp: LoadedPlugin) -> LoadedPlugin:
    _LOADED[lp.spec] = lp
    _DIGESTS[lp.module] = lp.digest
    registry.note_origin(lp.module, lp.origin)
    regs = registry.registrations()
    for key in lp.registered:  # fixed now: the code these classes were built from
        class_digest(regs[key])
    return lp


def _owned(regs: Mapping[tuple[str, str], type], module: str) -> dict[tuple[str, str], type]:
    return {k: c for k, c in regs.items() if c.__module__ == module or c.__module__.startswith(module + ".")}


def _tracked(module: str, what: str, path: str, run: Callable[[], Any], again: bool = False) \
        -> tuple[tuple[str, str], ...]:
    """Run `run` (which imports the plug-in, or finds it imported); return the
    (point, name) pairs its module registers; turn every failure into a
    PluginLoadError naming the file and line. A module executed `again` (edited)
    first drops its earlier registrations (restored on failure)."""
    before = registry.registrations()
    previous = _owned(before, module) if again else {}
    old_module = sys.modules.get(module)
    for point, name in previous:
        registry.unregister(point, name)

    def restore() -> None:
        for (point, name), cls in previous.items():
            registry.register(point, name)(cls)
        if old_module is not None:
            sys.modules[module] = old_module
        elif path:  # a file's half-built module must not stay importable
            sys.modules.pop(module, None)

    limit = import_time_limit()

    def too_slow(frame: Any) -> None:
        at = ""
        while frame is not None:  # the plug-in's own line it was running
            if not _internal(frame.f_code.co_filename):
                at = f" (it was at {frame.f_code.co_filename}, line {frame.f_lineno})"
                break
            frame = frame.f_back
        raise _ImportTimeout(f"cannot load {what}: importing it took longer than {limit:g} s{at}; a plug-in's "
                             f"import must only define and register classes ({IMPORT_LIMIT_ENV} sets the limit)")

    try:
        with wall_clock_limit(limit, too_slow):
            run()
    except PluginLoadError:
        restore()
        raise
    except _ImportTimeout as exc:
        restore()
        raise PluginLoadError(str(exc)) from None
    except SyntaxError as exc:
        restore()
        raise PluginLoadError(f"cannot load {what}: {_syntax(exc)}") from None
    except SystemExit as exc:  # a script's sys.exit() must not end tlpsim as if it had run
        restore()
        raise PluginLoadError(f"cannot load {what}: {_failure(exc, path, f'it called sys.exit({exc.code!r})')} "
                              "while being imported; a plug-in's import must only define and register classes") \
            from None
    except Exception as exc:  # noqa: BLE001 - any failure of user code becomes a clear message
        restore()
        raise PluginLoadError(f"cannot load {what}: {_failure(exc, path)}") from None
    after = registry.registrations()
    regs = {k for k, c in after.items() if before.get(k) is not c} | set(_owned(after, module))
    if not regs:
        restore()
        raise PluginLoadError(
            f"{what} registers no plug-in: decorate a class with @register(point, name) from "
            f"tlpsim.policies.registry (extension points: {', '.join(registry.EXTENSION_POINTS)})")
    return tuple(sorted(regs))


def _syntax(exc: SyntaxError) -> str:
    where = f"{exc.filename or '<plug-in>'}, line {exc.lineno}" if exc.lineno else str(exc.filename or "<plug-in>")
    text = f"{where}: SyntaxError: {exc.msg}"
    if exc.text:
        line = exc.text.rstrip("\n")
        text += "\n    " + line.strip()
        if exc.offset:
            indent = len(line) - len(line.lstrip())
            text += "\n    " + " " * max(exc.offset - 1 - indent, 0) + "^"
    return text


def _failure(exc: BaseException, path: str, msg: str = "") -> str:
    """`file, line N: Type: message` at the plug-in's own line, plus where it was raised
    when that is elsewhere (a module it imports)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not _internal(f.filename)]
    msg = msg or (str(exc) if isinstance(exc, TlpsimError) else f"{type(exc).__name__}: {exc}")
    if not frames:
        return msg
    own = [f for f in frames if f.filename == path] if path else []
    first = own[-1] if own else frames[0]
    text = f"{first.filename}, line {first.lineno}: {msg}"
    last = frames[-1]
    if last is not first:
        text += f" (raised in {last.filename}, line {last.lineno})"
    return text


_TLPSIM = str(Path(__file__).resolve().parents[1]) + os.sep


def _internal(filename: str) -> bool:
    """Frames of the import machinery and of tlpsim (the loader, the registry): not the user's code."""
    return (filename.startswith(("<frozen ", _TLPSIM)) or f"{os.sep}importlib{os.sep}" in filename
            or f"{os.sep}importlib_metadata{os.sep}" in filename)


# --------------------------------------------------------------------------- source fingerprints


_FILE_DIGESTS: dict[tuple[str, int, int], str] = {}


def _file_digest(path: str | None) -> str | None:
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_mtime_ns, st.st_size)
    d = _FILE_DIGESTS.get(key)
    if d is None:
        try:
            d = _FILE_DIGESTS[key] = _digest(Path(path).read_bytes())
        except OSError:
            return None
    return d


def _module_digest(name: str) -> str | None:
    """The digest of the source a module runs: recorded when a plug-in was loaded
    here, else its file's (first time asked)."""
    d = _DIGESTS.get(name)
    if d is None:
        d = _file_digest(getattr(sys.modules.get(name), "__file__", None))
        if d is not None:
            _DIGESTS[name] = d
    return d


_CLASS_DIGESTS: dict[type, str] = {}


def class_digest(cls: type) -> str:
    """Hash of the source files of a plug-in class and of its bases outside the
    standard library and the timing model (a plug-in's own file, the plug-in it
    extends, its extension point's base), as they were when the class was built."""
    d = _CLASS_DIGESTS.get(cls)
    if d is None:
        d = _CLASS_DIGESTS[cls] = _mro_digest(cls)
    return d


def _mro_digest(cls: type) -> str:
    parts: list[str] = []
    for c in cls.__mro__:
        mod = c.__module__
        if mod == "builtins" or mod.split(".")[0] in sys.stdlib_module_names:
            continue
        if mod.startswith("tlpsim.") and not mod.startswith("tlpsim.policies."):
            continue
        d = _module_digest(mod)
        if d is not None and d not in parts:
            parts.append(d)
    if not parts:  # no source to hash (e.g. a compiled module): its qualified name at least
        parts.append(f"{cls.__module__}.{cls.__qualname__}")
    return _digest("\n".join(parts).encode())


def fingerprint(config: Any, plugins: Sequence[str] = ()) -> dict[str, Any]:
    """The code a run depends on beyond tlpsim itself: {extension point: digest of the
    plug-in class the config selects} plus "plugins": the digests of the loaded
    plug-in files/modules `plugins` (loading them when needed). `config` is a
    GPUConfig, or None (functional mode); a config whose choices do not resolve
    contributes nothing (the run fails with that error anyway)."""
    code: dict[str, Any] = {}
    if config is not None:
        try:
            chosen = registry.resolve_config(config)
        except ConfigError:
            chosen = {}
        for point, (cls, _) in chosen.items():
            if cls is not None:
                code[point] = class_digest(cls)
    if plugins:
        code["plugins"] = sorted({_spec_digest(s) for s in plugins})
    return code


def _spec_digest(spec: str) -> str:
    lp = _LOADED.get(spec)
    if lp is None:
        try:
            lp = load(spec, origin=RUN_PLUGINS)
        except PluginLoadError:  # the run fails with this error when it starts
            return f"unloadable:{spec}"
    return lp.digest

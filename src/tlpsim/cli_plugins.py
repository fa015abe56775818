"""Plug-ins on the command line: the `--plugin` option shared by every command that
resolves a config, and `tlpsim plugins`, the listing of every registered plug-in."""

from __future__ import annotations

import json
import os

import click

from tlpsim.cli_errors import friendly as _friendly
from tlpsim.policies.registry import (
    EXTENSION_POINTS,
    OPTIONAL_POINTS,
    PluginInfo,
    type_name,
)

PLUGIN_HELP = ("Load plug-ins from a Python file (FILE.py) or an importable module (pkg.mod) before the config "
               f"resolves (repeatable; TLPSIM_PLUGINS adds more, separated by '{os.pathsep}').")


def plugin_option(fn):
    """`--plugin FILE.py|module` (repeatable), passed to the command as `plugins`."""
    return click.option("--plugin", "plugins", multiple=True, metavar="FILE.py|MODULE", help=PLUGIN_HELP)(fn)


def _default(p) -> str:
    return "required" if p.default is ... else repr(p.default)


def _number(v) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k}: {x:g}" for k, x in v.items())
    return f"{v:g}"


def _lines(info: PluginInfo) -> list[str]:
    """The indented detail lines of one plug-in in the text listing."""
    synthetic = info.module.startswith("tlpsim_plugin_")  # a file's module name says nothing more
    out = [f"source: {info.file or info.module} ({info.origin}" + ("" if synthetic else f"; module {info.module}")
           + ")"]
    for p in info.params:
        out.append(f"param {p.name}: {type_name(p.type)} = {_default(p)}" + (f"  {p.description}" if p.description
                                                                              else ""))
    if info.events:
        out.append("events: " + ", ".join(info.events))
    for c in info.counters:
        out.append(f"counter {c.name} [{c.unit}" + (f", {c.agg}" if c.agg != "sum" else "") + "]"
                   + (f"  {c.description}" if c.description else ""))
    for name, e in info.energy:
        leak = f", leakage {_number(e.leakage_mw)} mW" if e.leakage_mw else ""
        out.append(f"energy {name}: {_number(e.access_pj)} pJ/access{leak}, {e.instances} per SM; source: {e.source}")
    return out


@click.command("plugins")
@click.option("--point", type=click.Choice(list(EXTENSION_POINTS)), default=None,
              help="Only this extension point.")
@click.option("--json", "as_json", is_flag=True, help="Print the listing as JSON.")
@plugin_option
@_friendly
def plugins_cmd(point: str | None, as_json: bool, plugins: tuple[str, ...] = ()) -> None:
    """List every registered plug-in by extension point: parameters (type, default,
    description), first doc line, subscribed events, declared counters and energy
    structures, and where it comes from (built-in, entry point, --plugin file,
    TLPSIM_PLUGINS)."""
    from tlpsim.policies.external import activate
    from tlpsim.policies.registry import describe

    activate(plugins)
    infos = describe(point)
    if as_json:
        click.echo(json.dumps([i.to_dict() for i in infos], indent=2))
        return
    points = [point] if point else list(EXTENSION_POINTS)
    for k, p in enumerate(points):
        mine = [i for i in infos if i.point == p]
        extra = "; 'none' = no plug-in" if p in OPTIONAL_POINTS and all(i.name != "none" for i in mine) else ""
        click.echo(("\n" if k else "") + f"{p} (--set {EXTENSION_POINTS[p]}=NAME{extra})")
        if not mine:
            click.echo("  (none registered)")
        width = max((len(i.name) for i in mine), default=0)
        for i in mine:
            click.echo(f"  {i.name.ljust(width)}  {i.summary}".rstrip())
            for line in _lines(i):
                click.echo(" " * (width + 4) + line)


COMMANDS = (plugins_cmd,)

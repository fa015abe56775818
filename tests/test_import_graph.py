"""The package's layers import each other one way only: no cycle between tlpsim's
subpackages (lazy imports inside functions count too), and the layers DESIGN.md
fixes (timing never imports functional or policies; analysis never imports timing)."""

from __future__ import annotations

import ast
from pathlib import Path

import tlpsim

PKG = Path(tlpsim.__file__).resolve().parent


def _unit(module: str) -> str:
    """The layer a module belongs to: its subpackage, or the top-level module itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _graph() -> dict[str, dict[str, set[str]]]:
    """layer -> imported layer -> the files importing it."""
    edges: dict[str, dict[str, set[str]]] = {}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG.parent).with_suffix("")
        mod = ".".join(rel.parts)
        if mod.endswith(".__init__"):
            mod = mod[: -len(".__init__")]
        src = _unit(mod)
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for name in names:
                if not name.startswith("tlpsim."):
                    continue
                dst = _unit(name)
                is_layer = (PKG / dst).is_dir() or (PKG / f"{dst}.py").exists()
                if dst != src and is_layer:
                    edges.setdefault(src, {}).setdefault(dst, set()).add(str(path.relative_to(PKG)))
    return edges


def _cycles(edges: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """Every elementary cycle's node list, found by DFS from each node (small graph)."""
    found: set[tuple[str, ...]] = set()
    out = []

    def dfs(start: str, node: str, path: list[str]) -> None:
        for nxt in edges.get(node, {}):
            if nxt == start:
                cyc = path[:]
                k = cyc.index(min(cyc))
                key = tuple(cyc[k:] + cyc[:k])
                if key not in found:
                    found.add(key)
                    out.append(list(key))
            elif nxt not in path and nxt > start:
                dfs(start, nxt, path + [nxt])

    for n in sorted(edges):
        dfs(n, n, [n])
    return out


def test_no_import_cycle_between_layers():
    edges = _graph()
    # the graph sees real edges (so an empty one cannot pass), lazy imports included
    assert "analysis" in edges["timing"] and "timing" in edges["session"] and "policies" in edges["session"]
    cycles = _cycles(edges)
    msgs = []
    for cyc in cycles:
        hops = []
        for a, b in zip(cyc, cyc[1:] + cyc[:1]):
            hops.append(f"{a} -> {b} ({', '.join(sorted(edges[a][b])[:3])})")
        msgs.append(" ; ".join(hops))
    assert not cycles, "import cycles between tlpsim layers:\n" + "\n".join(msgs)


def test_layers_import_only_downwards():
    edges = _graph()
    forbidden = {("timing", "functional"), ("timing", "policies"), ("timing", "power"), ("analysis", "timing"),
                 ("functional", "timing"), ("functional", "session"), ("trace", "timing"), ("frontend", "timing")}
    bad = {f"{a} -> {b}: {sorted(edges[a][b])}" for a, b in forbidden if b in edges.get(a, {})}
    assert not bad, "layer violations:\n" + "\n".join(sorted(bad))

"""CUDA graphs (C side: libcudart_graph.c): graphs built node by node or by
stream capture (api_capture.py), instantiated and launched.

A node holds what it does as `run(rt, stream)`, which calls the runtime's own
handler for the operation (the launch, copy, memset or host call), enqueued on
the stream the graph is launched into. Kernel nodes copy their argument values
when they are made, as CUDA does; copy nodes read the source memory when they
run. `cudaGraphInstantiate` fixes a topological order of the nodes (creation
order among independent nodes) and `cudaGraphLaunch` runs them in that order on
the launch stream: independent branches of a graph therefore run one after the
other, not concurrently (results are the same; in timing mode the branches'
kernels do not overlap as they could on a GPU).
"""

from __future__ import annotations

import ctypes
import itertools
from dataclasses import dataclass, field
from typing import Callable

from tlpsim.cudart import errors as E
from tlpsim.cudart.runtime import HANDLERS, api, dim3, put, read, u64
from tlpsim.cudart.streams import stream_of

KERNEL, MEMCPY, MEMSET, HOST, CHILD, EMPTY = 0, 1, 2, 3, 4, 5
KIND_NAMES = {KERNEL: "kernel", MEMCPY: "memcpy", MEMSET: "memset", HOST: "host", CHILD: "child graph", EMPTY: "empty"}
_HANDLES = itertools.count(0x6000)


def original(name: str) -> Callable:
    """The handler registered for `name` before stream capture wrapped it (api_capture)."""
    fn = HANDLERS[name.encode()].fn
    return getattr(fn, "uncaptured", fn)


@dataclass(eq=False)
class Node:
    kind: int
    run: Callable            # run(rt, stream_handle)
    what: str                # for messages: "kernel saxpy", "memcpy of 4096 bytes", ...
    deps: list = field(default_factory=list)
    handle: int = 0
    graph: "Graph | None" = None
    keep: tuple = ()         # buffers the run closure points into


@dataclass(eq=False)
class Graph:
    handle: int
    nodes: list = field(default_factory=list)

    def order(self) -> list[Node]:
        """Topological order (creation order among ready nodes); ValueError on a cycle."""
        pending = {n: len(n.deps) for n in self.nodes}
        users: dict[Node, list[Node]] = {n: [] for n in self.nodes}
        for n in self.nodes:
            for d in n.deps:
                users[d].append(n)
        ready = [n for n in self.nodes if not n.deps]
        out = []
        while ready:
            n = ready.pop(0)
            out.append(n)
            for u in users[n]:
                pending[u] -= 1
                if pending[u] == 0:
                    ready.append(u)
            ready.sort(key=self.nodes.index)
        if len(out) != len(self.nodes):
            raise ValueError("the graph has a cycle")
        return out


@dataclass
class GraphExec:
    handle: int
    nodes: list


def registry(rt) -> dict:
    """The program's graphs, nodes and executable graphs, by handle."""
    return rt.__dict__.setdefault("graph_objects", {"graphs": {}, "nodes": {}, "execs": {}})


def graph_of(rt, handle: int) -> Graph:
    g = registry(rt)["graphs"].get(handle)
    if g is None:
        raise E.CudaError(E.INVALID_VALUE, f"{handle:#x} is not a graph from cudaGraphCreate/cudaStreamEndCapture "
                                           "(or it was destroyed)")
    return g


def node_of(rt, handle: int) -> Node:
    n = registry(rt)["nodes"].get(handle)
    if n is None:
        raise E.CudaError(E.INVALID_VALUE, f"{handle:#x} is not a graph node (or it was destroyed)")
    return n


def new_graph(rt) -> Graph:
    g = Graph(next(_HANDLES))
    registry(rt)["graphs"][g.handle] = g
    return g


def add_node(rt, graph: Graph, node: Node, deps: list[Node]) -> Node:
    for d in deps:
        if d.graph is not graph:
            raise E.CudaError(E.INVALID_VALUE, f"dependency {d.handle:#x} ({d.what}) belongs to another graph")
    node.deps = list(dict.fromkeys(deps))
    node.graph = graph
    node.handle = next(_HANDLES)
    graph.nodes.append(node)
    registry(rt)["nodes"][node.handle] = node
    return node


# ------------------------------------------------------------------ node bodies


def kernel_node(rt, func: int, grid_p: int, block_p: int, shared: int, params_p: int) -> Node:
    """A launch of `func` with the argument values read now (CUDA copies them when the node is made)."""
    entry = rt.kernel(func)
    program = rt.program(entry.module, what=f"kernel {entry.display} ({entry.name})")
    kernel = program.kernel(entry.name)
    if params_p == 0 and kernel.params:
        raise E.CudaError(E.INVALID_VALUE, f"kernel {entry.display}: no argument array for its "
                                           f"{len(kernel.params)} parameter(s)")
    bufs = [ctypes.create_string_buffer(read(u64(params_p + 8 * k), p.size), max(p.size, 1))
            for k, p in enumerate(kernel.params)]
    argv = (ctypes.c_void_p * max(len(bufs), 1))(*[ctypes.addressof(b) for b in bufs])
    grid = (ctypes.c_uint32 * 3)(*dim3(grid_p))
    block = (ctypes.c_uint32 * 3)(*dim3(block_p))
    launch = original("cudaLaunchKernel")
    words = [func, ctypes.addressof(grid), ctypes.addressof(block), ctypes.addressof(argv), int(shared)]

    def run(rt, stream):
        return launch(rt, [*words, stream])

    return Node(KERNEL, run, f"kernel {entry.display}", keep=(bufs, argv, grid, block))


def call_node(kind: int, name: str, words: list[int], stream_at: int, what: str) -> Node:
    """A node that replays runtime call `name` with `words`, the stream word replaced by the launch stream."""
    fn = original(name)

    def run(rt, stream):
        args = list(words)
        args[stream_at] = stream
        return fn(rt, args)

    return Node(kind, run, what)


def memset_node(dst: int, pitch: int, value: int, element: int, width: int, height: int) -> Node:
    import numpy as np

    if element not in (1, 2, 4):
        raise E.CudaError(E.INVALID_VALUE, f"memset node: element size {element} (1, 2 or 4)")
    row = np.full(width, value, dtype={1: np.uint8, 2: np.uint16, 4: np.uint32}[element]).view(np.uint8)

    def run(rt, stream):
        from tlpsim.cudart.api_memory import _device_range

        stream_of(rt, stream)
        if height and width:
            _device_range(rt, dst, pitch * (height - 1) + row.size, "memset node: the destination")
            for r in range(height):
                rt.device.memory.write(dst + r * pitch, row)

    if height > 1 and width * element > pitch:
        raise E.CudaError(E.CODES["cudaErrorInvalidPitchValue"], f"memset node: {width} x {element} bytes exceed "
                                                                 f"the pitch {pitch}")
    return Node(MEMSET, run, f"memset of {height} x {width} x {element} bytes at {dst:#x}")


def host_node(fn: int, user: int) -> Node:
    call = original("cudaLaunchHostFunc")
    return Node(HOST, lambda rt, stream: call(rt, [stream, fn, user]), f"host function {fn:#x}")


def child_node(rt, child: Graph) -> Node:
    order = child.order()
    return Node(CHILD, lambda rt, stream: run_nodes(rt, order, stream), f"child graph {child.handle:#x}")


def run_nodes(rt, nodes: list[Node], stream: int) -> int:
    for k, node in enumerate(nodes):
        try:
            code = node.run(rt, stream) or 0
        except E.CudaError as exc:
            raise E.CudaError(exc.code, f"node {k} ({node.what}): {exc.message}") from None
        if code:
            return code
    return 0


# ------------------------------------------------------------------ the API


def _deps(rt, graph: Graph, address: int, n: int) -> list[Node]:
    if n and not address:
        raise E.CudaError(E.INVALID_VALUE, f"{n} dependencies but a NULL dependency array")
    return [node_of(rt, u64(address + 8 * k)) for k in range(n)]


@api("cudaGraphCreate")
def graph_create(rt, a):
    if a[1]:
        raise E.CudaError(E.INVALID_VALUE, f"flags must be 0, not {a[1]}")
    put(a[0], ctypes.c_uint64, new_graph(rt).handle)


@api("cudaGraphDestroy")
def graph_destroy(rt, a):
    g = graph_of(rt, a[0])
    reg = registry(rt)
    for n in g.nodes:
        reg["nodes"].pop(n.handle, None)
    del reg["graphs"][a[0]]


@api("cudaGraphAddKernelNode", "cudaGraphAddMemcpyNode", "cudaGraphAddMemcpyNode1D", "cudaGraphAddMemsetNode",
     "cudaGraphAddHostNode", "cudaGraphAddEmptyNode", "cudaGraphAddChildGraphNode")
def graph_add(rt, a):
    from tlpsim.cudart.api_texture import copy3d_node

    out, graph_h, deps_p, n_deps, kind = a[:5]
    if kind == 99:
        raise E.CudaError(E.INVALID_VALUE, "a NULL node parameter structure")
    if out == 0:
        raise E.CudaError(E.INVALID_VALUE, "a NULL pointer for the new node")
    graph = graph_of(rt, graph_h)
    deps = _deps(rt, graph, deps_p, n_deps)
    w = a[5:]
    if kind == KERNEL:
        func, grid_p, block_p, shared, params_p, extra = w
        if params_p == 0 and extra:
            raise E.CudaError(E.NOT_SUPPORTED, "kernel node: arguments in the `extra` format are not supported by "
                                               "tlpsim (use kernelParams)")
        node = kernel_node(rt, func, grid_p, block_p, shared, params_p)
    elif kind == MEMCPY and w[0] == 1:
        dst, src, count, ckind = w[1:]
        node = call_node(MEMCPY, "cudaMemcpy", [dst, src, count, ckind, 0, 0], 4, f"memcpy of {count} bytes")
    elif kind == MEMCPY:
        node = copy3d_node(rt, w[1:])
    elif kind == MEMSET:
        node = memset_node(*w)
    elif kind == HOST:
        node = host_node(*w)
    elif kind == CHILD:
        node = child_node(rt, graph_of(rt, w[0]))
    else:
        node = Node(EMPTY, lambda rt, stream: 0, "empty node")
    put(out, ctypes.c_uint64, add_node(rt, graph, node, deps).handle)


@api("cudaGraphAddDependencies")
def graph_add_dependencies(rt, a):
    graph_h, from_p, to_p, _edge, n = a
    graph = graph_of(rt, graph_h)
    froms = _deps(rt, graph, from_p, n)
    tos = _deps(rt, graph, to_p, n)
    for f, t in zip(froms, tos):
        if f.graph is not graph or t.graph is not graph:
            raise E.CudaError(E.INVALID_VALUE, "a node of another graph")
        if f in t.deps:
            raise E.CudaError(E.INVALID_VALUE, f"the edge {f.what} -> {t.what} exists")
        t.deps.append(f)


def _fill(rt, out_p: int, count_p: int, handles: list[int]) -> None:
    if count_p == 0:
        raise E.CudaError(E.INVALID_VALUE, "a NULL pointer for the count")
    if out_p:
        room = ctypes.c_size_t.from_address(count_p).value
        for k in range(room):
            put(out_p + 8 * k, ctypes.c_uint64, handles[k] if k < len(handles) else 0)
    put(count_p, ctypes.c_size_t, len(handles))


@api("cudaGraphGetNodes", "cudaGraphGetRootNodes")
def graph_list(rt, a):
    graph = graph_of(rt, a[0])
    nodes = [n for n in graph.nodes if not a[3] or not n.deps]
    _fill(rt, a[1], a[2], [n.handle for n in nodes])


@api("cudaGraphGetEdges")
def graph_get_edges(rt, a):
    graph_h, from_p, to_p, count_p = a
    graph = graph_of(rt, graph_h)
    edges = [(d, n) for n in graph.nodes for d in n.deps]
    if from_p and to_p:
        _fill(rt, to_p, count_p, [t.handle for _, t in edges])
        room = ctypes.c_size_t(len(edges))
        _fill(rt, from_p, ctypes.addressof(room), [f.handle for f, _ in edges])
    else:
        _fill(rt, 0, count_p, [0] * len(edges))


@api("cudaGraphNodeGetType")
def graph_node_get_type(rt, a):
    put(a[1], ctypes.c_int32, node_of(rt, a[0]).kind)


@api("cudaGraphDestroyNode")
def graph_destroy_node(rt, a):
    node = node_of(rt, a[0])
    graph = node.graph
    graph.nodes.remove(node)
    for n in graph.nodes:
        if node in n.deps:
            n.deps.remove(node)
    del registry(rt)["nodes"][a[0]]


@api("cudaGraphInstantiate")
def graph_instantiate(rt, a):
    out, graph_h, flags = a
    graph = graph_of(rt, graph_h)
    if flags & ~0xF:
        raise E.CudaError(E.INVALID_VALUE, f"unknown flags {flags:#x}")
    try:
        order = graph.order()
    except ValueError as exc:
        raise E.CudaError(E.INVALID_VALUE, f"{exc}") from None
    ex = GraphExec(next(_HANDLES), order)
    registry(rt)["execs"][ex.handle] = ex
    put(out, ctypes.c_uint64, ex.handle)


def exec_of(rt, handle: int) -> GraphExec:
    ex = registry(rt)["execs"].get(handle)
    if ex is None:
        raise E.CudaError(E.INVALID_VALUE, f"{handle:#x} is not an executable graph from cudaGraphInstantiate "
                                           "(or it was destroyed)")
    return ex


@api("cudaGraphLaunch")
def graph_launch(rt, a):
    from tlpsim.cudart.api_capture import capture_of

    ex = exec_of(rt, a[0])
    stream_of(rt, a[1])
    cap = capture_of(rt, a[1])
    if cap is not None:  # launched into a capturing stream: the whole graph becomes one node of the capture
        return cap.add(rt, a[1], Node(CHILD, lambda rt, s: run_nodes(rt, ex.nodes, s), f"graph {a[0]:#x}"))
    return run_nodes(rt, ex.nodes, a[1])


@api("cudaGraphUpload")
def graph_upload(rt, a):
    exec_of(rt, a[0])
    stream_of(rt, a[1])


@api("cudaGraphExecDestroy")
def graph_exec_destroy(rt, a):
    exec_of(rt, a[0])
    del registry(rt)["execs"][a[0]]

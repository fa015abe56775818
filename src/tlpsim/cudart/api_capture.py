"""Stream capture: cudaStreamBeginCapture ... cudaStreamEndCapture records the work
issued to a stream as a graph (api_graph.py) instead of running it.

Importing this module wraps the handlers of the stream-ordered calls (launches,
async copies and memsets, host functions, event record/wait, synchronisation):
on a capturing stream they add a node to the capture's graph, depending on the
stream's last node(s); otherwise they run as before. As in CUDA:

* another stream joins the capture by waiting on an event recorded in a
  capturing stream (fork), and must be joined back into the origin stream before
  cudaStreamEndCapture, else cudaErrorStreamCaptureUnjoined;
* synchronising or querying a capturing stream is cudaErrorStreamCaptureUnsupported
  and invalidates the capture: later work on it returns
  cudaErrorStreamCaptureInvalidated, and so does cudaStreamEndCapture (no graph);
* stream-ordered allocation (cudaMallocAsync/cudaFreeAsync) and
  cudaStreamAddCallback are not captured here (cudaErrorStreamCaptureUnsupported
  in tlpsim; CUDA makes memory nodes of the former).

Not modelled: the capture modes' checks of "unsafe" calls (cudaMalloc,
synchronous copies) made by other threads during a global-mode capture.
"""

from __future__ import annotations

import ctypes
import itertools
from dataclasses import dataclass, field

from tlpsim.cudart import errors as E
from tlpsim.cudart.api_graph import (
    HOST, MEMCPY, MEMSET, Graph, Node, add_node, call_node, kernel_node, new_graph, registry,
)
from tlpsim.cudart.api_texture import ARRAY_COPIES
from tlpsim.cudart.runtime import HANDLERS, api, put
from tlpsim.cudart.streams import LEGACY, PER_THREAD, event_of, stream_of

CAPTURE_UNSUPPORTED = E.CODES["cudaErrorStreamCaptureUnsupported"]
CAPTURE_INVALIDATED = E.CODES["cudaErrorStreamCaptureInvalidated"]
CAPTURE_UNJOINED = E.CODES["cudaErrorStreamCaptureUnjoined"]
CAPTURE_UNMATCHED = E.CODES["cudaErrorStreamCaptureUnmatched"]
CAPTURE_MERGE = E.CODES["cudaErrorStreamCaptureMerge"]
ILLEGAL_STATE = E.CODES["cudaErrorIllegalState"]
_IDS = itertools.count(1)


@dataclass(eq=False)
class Capture:
    origin: int
    graph: Graph
    mode: int
    id: int = field(default_factory=lambda: next(_IDS))
    frontier: dict = field(default_factory=dict)   # stream handle -> its last nodes
    invalidated: str = ""                          # why, once invalidated
    deps_out: object = None                        # cudaStreamGetCaptureInfo's array (kept alive)

    def add(self, rt, stream: int, node: Node) -> int:
        add_node(rt, self.graph, node, self.frontier.get(stream, []))
        self.frontier[stream] = [node]
        return 0


def _state(rt) -> dict:
    return rt.__dict__.setdefault("capture_state", {"streams": {}, "events": {}, "mode": 0})


def capture_of(rt, stream: int) -> Capture | None:
    return _state(rt)["streams"].get(stream)


def _invalidate(rt, cap: Capture, why: str) -> None:
    if not cap.invalidated:
        cap.invalidated = why


# ------------------------------------------------------------------ what a capturing stream does with each call

# call name -> position of its stream argument
_STREAM_ARG = {"cudaLaunchKernel": 5, "cudaMemcpy": 4, "cudaMemcpy2D": 7, "cudaMemset": 5, "cudaMemsetAsync": 5,
               "cudaMemset2D": 5, "cudaMemset2DAsync": 5, "cudaMemcpySymbol": 5,
               **{n: 13 for n in ARRAY_COPIES}, "cudaMemcpy3D": 18, "cudaMemcpy3DAsync": 18, "cudaLaunchHostFunc": 0, "cudaStreamAddCallback": 0, "cudaMalloc": 4,
               "cudaFree": 2, "cudaEventRecord": 1, "cudaStreamWaitEvent": 0, "cudaStreamSynchronize": 0,
               "cudaStreamQuery": 0}
_KINDS = {"cudaMemcpy": MEMCPY, "cudaMemcpy2D": MEMCPY, "cudaMemcpySymbol": MEMCPY,
          **{n: MEMCPY for n in ARRAY_COPIES}, "cudaMemcpy3D": MEMCPY, "cudaMemcpy3DAsync": MEMCPY, "cudaMemset": MEMSET, "cudaMemsetAsync": MEMSET, "cudaMemset2D": MEMSET,
          "cudaMemset2DAsync": MEMSET, "cudaLaunchHostFunc": HOST}


def _record(rt, name: str, cap: Capture, stream: int, a: list[int], orig) -> int:
    if cap.invalidated:
        raise E.CudaError(CAPTURE_INVALIDATED, f"the capture of stream {cap.origin:#x} was invalidated "
                                               f"({cap.invalidated})")
    if name in ("cudaStreamSynchronize", "cudaStreamQuery"):
        _invalidate(rt, cap, f"{name} on a capturing stream")
        raise E.CudaError(CAPTURE_UNSUPPORTED, f"stream {stream:#x} is capturing (the capture is now "
                                               "invalidated)")
    if name in ("cudaMalloc", "cudaFree", "cudaStreamAddCallback"):
        _invalidate(rt, cap, f"{name} on a capturing stream")
        raise E.CudaError(CAPTURE_UNSUPPORTED, "tlpsim does not capture "
                                               f"{'stream callbacks' if name.endswith('Callback') else 'stream-ordered allocation'}"
                                               " (the capture is now invalidated)")
    if name == "cudaEventRecord":  # in a capture an event marks a position (the stream's frontier), no more
        event_of(rt, a[0])
        _state(rt)["events"][a[0]] = (cap, list(cap.frontier.get(stream, [])))
        return 0
    if name == "cudaLaunchKernel":
        func, grid_p, block_p, args_p, dyn, _ = a
        return cap.add(rt, stream, kernel_node(rt, func, grid_p, block_p, dyn, args_p))
    what = f"{name} captured from stream {stream:#x}"
    return cap.add(rt, stream, call_node(_KINDS[name], name, list(a), _STREAM_ARG[name], what))


def _join(rt, cap: Capture | None, stream: int, a: list[int], orig) -> int:
    """cudaStreamWaitEvent while some stream captures: an event recorded in a capture brings its nodes
    into the waiting stream's frontier (a stream not capturing yet joins that capture: a fork)."""
    hit = _state(rt)["events"].get(a[1])
    if hit is None:
        if cap is None:
            return orig(rt, a)
        if cap.invalidated:
            raise E.CudaError(CAPTURE_INVALIDATED, f"the capture was invalidated "
                                                   f"({cap.invalidated})")
        raise E.CudaError(E.NOT_SUPPORTED, f"event {a[1]:#x} was not recorded in this "
                                           "capture (tlpsim does not capture waits on outside events)")
    ecap, nodes = hit
    if cap is not None and cap is not ecap:
        raise E.CudaError(CAPTURE_MERGE, "the event belongs to another capture")
    if ecap.invalidated:
        raise E.CudaError(CAPTURE_INVALIDATED, f"the capture the event belongs to was "
                                               f"invalidated ({ecap.invalidated})")
    stream_of(rt, stream)
    if cap is None:
        _state(rt)["streams"][stream] = ecap
    mine = ecap.frontier.get(stream, [])
    ecap.frontier[stream] = mine + [n for n in nodes if n not in mine]
    return 0


def _wrap(name: str, pos: int) -> None:
    handler = HANDLERS[name.encode()]
    orig = handler.fn

    def captured(rt, a):
        state = rt.__dict__.get("capture_state")
        if not state or not state["streams"]:
            return orig(rt, a)
        if name == "cudaStreamWaitEvent":
            return _join(rt, state["streams"].get(a[0]), a[0], a, orig)
        cap = state["streams"].get(a[pos]) if len(a) > pos else None
        if cap is None:
            return orig(rt, a)
        return _record(rt, name, cap, a[pos], a, orig)

    captured.uncaptured = orig
    handler.fn = captured


for _name, _pos in _STREAM_ARG.items():
    _wrap(_name, _pos)


# ------------------------------------------------------------------ the API


@api("cudaStreamBeginCapture")
def begin_capture(rt, a):
    stream, mode = a
    if stream in (0, LEGACY, PER_THREAD):
        raise E.CudaError(CAPTURE_UNSUPPORTED, "the default stream cannot be captured")
    stream_of(rt, stream)
    if mode > 2:
        raise E.CudaError(E.INVALID_VALUE, f"capture mode {mode} is not one CUDA defines")
    if capture_of(rt, stream) is not None:
        raise E.CudaError(ILLEGAL_STATE, f"stream {stream:#x} is already capturing")
    _state(rt)["streams"][stream] = Capture(stream, new_graph(rt), int(mode))


@api("cudaStreamEndCapture")
def end_capture(rt, a):
    stream, out = a
    stream_of(rt, stream)
    cap = capture_of(rt, stream)
    if cap is None:
        raise E.CudaError(ILLEGAL_STATE, f"stream {stream:#x} is not capturing")
    if cap.origin != stream:
        raise E.CudaError(CAPTURE_UNMATCHED, f"stream {stream:#x} joined the capture begun on "
                                             f"stream {cap.origin:#x}; end it there")
    state = _state(rt)
    for s in [s for s, c in state["streams"].items() if c is cap]:
        del state["streams"][s]
    for e in [e for e, (c, _) in state["events"].items() if c is cap]:
        del state["events"][e]
    if out:
        put(out, ctypes.c_uint64, 0)
    if cap.invalidated:
        _discard(rt, cap.graph)
        raise E.CudaError(CAPTURE_INVALIDATED, f"the capture was invalidated "
                                               f"({cap.invalidated}); no graph")
    reach = _ancestors(cap.frontier.get(stream, []))
    for s, nodes in cap.frontier.items():
        loose = [n for n in nodes if n not in reach]
        if s != stream and loose:
            _discard(rt, cap.graph)
            raise E.CudaError(CAPTURE_UNJOINED, f"stream {s:#x} joined the capture, but its "
                                                f"work ({loose[0].what}) was not joined back into stream "
                                                f"{stream:#x} (record an event there and wait on it)")
    if out == 0:
        _discard(rt, cap.graph)
        raise E.CudaError(E.INVALID_VALUE, "a NULL pointer for the graph")
    put(out, ctypes.c_uint64, cap.graph.handle)


def _ancestors(nodes: list[Node]) -> set:
    seen: set = set()
    todo = list(nodes)
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(n.deps)
    return seen


def _discard(rt, graph: Graph) -> None:
    reg = registry(rt)
    for n in graph.nodes:
        reg["nodes"].pop(n.handle, None)
    reg["graphs"].pop(graph.handle, None)


@api("cudaStreamGetCaptureInfo", "cudaStreamIsCapturing")
def get_capture_info(rt, a):
    stream, status_p, id_p, graph_p, deps_p, ndeps_p, full = a
    if stream not in (0, LEGACY, PER_THREAD):
        stream_of(rt, stream)
    cap = capture_of(rt, stream)
    status = 0 if cap is None else 2 if cap.invalidated else 1
    put(status_p, ctypes.c_int32, status)
    if not full or cap is None:
        return
    if id_p:
        put(id_p, ctypes.c_uint64, cap.id)
    if graph_p:
        put(graph_p, ctypes.c_uint64, cap.graph.handle)
    nodes = cap.frontier.get(stream, [])
    cap.deps_out = (ctypes.c_uint64 * max(len(nodes), 1))(*[n.handle for n in nodes])
    if deps_p:
        put(deps_p, ctypes.c_uint64, ctypes.addressof(cap.deps_out))
    if ndeps_p:
        put(ndeps_p, ctypes.c_size_t, len(nodes))


@api("cudaThreadExchangeStreamCaptureMode")
def exchange_capture_mode(rt, a):
    if a[0] == 0:
        raise E.CudaError(E.INVALID_VALUE, "a NULL pointer for the mode")
    slot = ctypes.c_int32.from_address(a[0])
    if slot.value > 2:
        raise E.CudaError(E.INVALID_VALUE, f"capture mode {slot.value} is not one CUDA defines")
    state = _state(rt)
    state["mode"], slot.value = slot.value, state["mode"]

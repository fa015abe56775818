"""Streams, events and the GPU's clock.

Every kernel executes functionally when it is launched, so results are always up
to date; what streams change is timing. In timing mode, launches on explicit
streams are queued and simulated together when the program synchronises (or
launches on the legacy default stream, which waits for all streams), so kernels
of different streams share the GPU concurrently; launches on the default stream
are simulated alone, after everything before them.

`GpuClock` keeps the simulated time: each simulated batch starts where the last
one ended, a stream's launches in a batch follow each other, and the batch ends
with its longest stream. An event takes the simulated time at which the work
before it on its stream completes, so cudaEventElapsedTime measures simulated
kernel time (copies and host code take no simulated time). In functional mode
there is no simulated time and events take the host's wall-clock time.
"""

from __future__ import annotations

import ctypes
import itertools
import time
from dataclasses import dataclass

from tlpsim.cudart import errors as E
from tlpsim.cudart.runtime import api, put
from tlpsim.host import Stream

LEGACY, PER_THREAD = 0x1, 0x2  # cudaStreamLegacy, cudaStreamPerThread
_HANDLES = itertools.count(0x1000, 0x10)  # opaque cudaStream_t / cudaEvent_t values
EVENT_DISABLE_TIMING = 0x2


@dataclass
class Event:
    flags: int = 0
    ns: float | None = None        # when the work before it completed
    pending: tuple | None = None   # (batch, stream, launches of that stream before it) until simulated
    recorded: bool = False


class GpuClock:
    def __init__(self, rt) -> None:
        self.rt = rt
        self.timing = rt.settings.mode == "timing"
        self.now_ns = 0.0                       # end of the last simulated batch
        self.batch = 0
        self.pending: list[tuple] = []          # (record, stream id, row) of the batch not simulated yet
        self.stream_end: dict[int, float] = {}  # stream id -> when its last simulated launch ended
        self.waiting: list[Event] = []
        self.t0 = time.perf_counter()

    def ns_per_cycle(self) -> float:
        return 1e3 / self.rt.config.gpu.core_clock_mhz

    def launched(self, rec, stream_id: int, row: dict) -> None:
        """A launch just executed functionally; its timing is pending in timing mode."""
        if not self.timing:
            self.rt.record(row)
            return
        self.pending.append((rec, stream_id, row))
        if stream_id == 0:  # the device simulated it already (default stream)
            self.flush()

    def flush(self) -> None:
        """Simulate the pending batch and advance the clock."""
        if not self.timing or not self.pending:
            return
        self.rt.device.synchronize()
        start = self.now_ns
        ends: dict[int, float] = {}
        per_stream: dict[int, list[float]] = {}
        for rec, sid, row in self.pending:
            begin = ends.get(sid, start)
            t = begin + rec.stats.cycles * self.ns_per_cycle()
            ends[sid] = t
            per_stream.setdefault(sid, []).append(t)
            row["stats"] = rec.stats.to_dict()
            row.update(cycles=rec.stats.cycles, ipc=round(rec.stats.ipc, 4), sim_start_ns=round(begin, 3),
                       sim_end_ns=round(t, 3), timing_wall_seconds=round(rec.stats.wall_seconds, 4))
            self.rt.record(row)
        for ev in self.waiting:
            batch, sid, k = ev.pending
            ev.ns = per_stream[sid][k - 1] if batch == self.batch else ev.ns
            ev.pending = None
        self.waiting = []
        self.stream_end.update(ends)
        self.now_ns = max([start, *ends.values()])
        self.pending = []
        self.batch += 1

    def record(self, ev: Event, stream_id: int) -> None:
        ev.recorded = True
        ev.pending = None
        if not self.timing:
            ev.ns = (time.perf_counter() - self.t0) * 1e9
            return
        if stream_id == 0:
            self.flush()  # the default stream waits for every stream
            ev.ns = self.now_ns
            return
        k = sum(1 for p in self.pending if p[1] == stream_id)
        if k:
            ev.pending = (self.batch, stream_id, k)
            self.waiting.append(ev)
        else:  # nothing of its stream is pending: it completes as the current batch starts
            ev.ns = self.now_ns

    def time_of(self, ev: Event) -> float:
        if ev.pending is not None:
            self.flush()
        return ev.ns


# ------------------------------------------------------------------ handles


def stream_of(rt, handle: int) -> Stream | None:
    """The tlpsim Stream of a cudaStream_t (None for the default stream)."""
    if handle in (0, LEGACY, PER_THREAD):
        return None
    s = rt.streams.get(handle)
    if s is None:
        raise E.CudaError(E.INVALID_HANDLE, f"{handle:#x} is not a stream created by cudaStreamCreate "
                                            "(or it was destroyed)")
    return s


def event_of(rt, handle: int) -> Event:
    ev = rt.events.get(handle)
    if ev is None:
        raise E.CudaError(E.INVALID_HANDLE, f"{handle:#x} is not an event created by cudaEventCreate "
                                            "(or it was destroyed)")
    return ev


def synchronize(rt) -> None:
    rt.clock.flush()
    rt.flush_output()


# ------------------------------------------------------------------ streams


@api("cudaStreamCreate")
def stream_create(rt, a):
    handle = next(_HANDLES)
    rt.streams[handle] = Stream(non_blocking=bool(a[1] & 1))
    rt.stream_flags[handle] = int(a[1])
    put(a[0], ctypes.c_uint64, handle)


@api("cudaStreamDestroy")
def stream_destroy(rt, a):
    if a[0] in (0, LEGACY, PER_THREAD):
        raise E.CudaError(E.INVALID_HANDLE, "the default stream cannot be destroyed")
    stream_of(rt, a[0])
    del rt.streams[a[0]]


@api("cudaStreamSynchronize", "cudaDeviceSynchronize")
def stream_synchronize(rt, a):
    if a:
        stream_of(rt, a[0])
    synchronize(rt)


@api("cudaStreamQuery")
def stream_query(rt, a):
    stream_of(rt, a[0])  # work is complete functionally; its timing is simulated on demand


@api("cudaStreamWaitEvent")
def stream_wait_event(rt, a):
    stream_of(rt, a[0])
    event_of(rt, a[1])
    rt.clock.flush()  # the stream's later work starts after the event's work (conservatively: after the batch)


@api("cudaStreamGetFlags")
def stream_get_flags(rt, a):
    stream_of(rt, a[0])
    put(a[1], ctypes.c_uint32, 0 if a[2] else rt.stream_flags.get(a[0], 0))  # priority (a[2]): always 0


# The stream's work before a host function is complete when it is enqueued (kernels run
# functionally at launch; the batch is simulated here), so it runs as soon as the call
# has left the runtime (Runtime.dispatch), on the calling thread, as the driver's thread would.


@api("cudaLaunchHostFunc")
def launch_host_func(rt, a):
    stream_of(rt, a[0])
    rt.clock.flush()
    fn, data = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(a[1]), a[2] or None
    rt.host_calls.append(lambda: fn(data))


@api("cudaStreamAddCallback")
def stream_add_callback(rt, a):
    stream_of(rt, a[0])
    rt.clock.flush()
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)(a[1])
    stream, data = a[0] or None, a[2] or None
    rt.host_calls.append(lambda: fn(stream, 0, data))


# ------------------------------------------------------------------ events


@api("cudaEventCreate")
def event_create(rt, a):
    handle = next(_HANDLES)
    rt.events[handle] = Event(flags=int(a[1]))
    put(a[0], ctypes.c_uint64, handle)


@api("cudaEventDestroy")
def event_destroy(rt, a):
    ev = event_of(rt, a[0])
    if ev in rt.clock.waiting:
        rt.clock.waiting.remove(ev)
    del rt.events[a[0]]


@api("cudaEventRecord")
def event_record(rt, a):
    ev = event_of(rt, a[0])
    s = stream_of(rt, a[1])
    rt.clock.record(ev, 0 if s is None else s.id)


@api("cudaEventSynchronize")
def event_synchronize(rt, a):
    ev = event_of(rt, a[0])
    if ev.recorded:
        rt.clock.time_of(ev)
    rt.flush_output()


@api("cudaEventQuery")
def event_query(rt, a):
    event_of(rt, a[0])


@api("cudaEventElapsedTime")
def event_elapsed(rt, a):
    start, end = event_of(rt, a[1]), event_of(rt, a[2])
    if (start.flags | end.flags) & EVENT_DISABLE_TIMING:
        raise E.CudaError(E.INVALID_HANDLE, "an event created with cudaEventDisableTiming has no time")
    if not (start.recorded and end.recorded):
        raise E.CudaError(E.INVALID_HANDLE, "an event that was never recorded has no time")
    put(a[0], ctypes.c_float, (rt.clock.time_of(end) - rt.clock.time_of(start)) / 1e6)

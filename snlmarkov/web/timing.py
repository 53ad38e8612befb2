"""The server's own time per message, for the load benchmark: off unless asked for.

With the environment variable ``SNLMARKOV_WEB_TIMING`` set to a file name
(``benchmarks/bench_web.py`` does), :func:`~snlmarkov.web.app.create_app`
makes a :class:`Recorder` and the app times every message a WebSocket
brings: from the moment the server has received it (``websocket.receive()``
returned) to the moment the last frame it caused has been sent (the last
``send_text`` of the frames its handling queued, on every connection they
went to; for a message that caused none, the moment its handling returned).
The time the handling spent waiting for the database (the write made before
a turn is broadcast, queueing for the store included, until the write is on
disk) is kept apart (:class:`WriteClock`). The pauses of the cyclic garbage
collector, which stop the event loop, are timed too, by generation
(:meth:`Recorder.watch_collector`, through :data:`gc.callbacks`). At the
app's shutdown the figures are written to that file as JSON
(:meth:`Recorder.write`).

How a frame is tied to its message: :meth:`Recorder.measure` runs the
handling with the message's :class:`Span` in a context variable;
:meth:`Recorder.watch` gives a connection an outbox (:class:`TimedOutbox`)
that wraps every text pushed by that task, while a span is open, in a
:class:`Frame` (a ``str``) that knows its span; the connection calls
:meth:`Frame.sent` once it has sent it (at once, or from its outbox).
Frames pushed by other tasks (timers, the odds) belong to no message, but
what a callback runs for a task (:func:`run_as`: the group commit tells a
turn's players as soon as its write is on disk) is that task's. A span whose
frames are never all sent (a connection that went away) is counted as
unfinished.

Each series keeps at most :data:`RESERVOIR` samples (a uniform reservoir,
seeded), so memory is bounded whatever the run's length. Without the
variable nothing of this module runs but what the database writes call: the
app holds no recorder, and what is left is one context-variable read per
write (:class:`WriteClock`) and, for a write whose players are told by the
commit, a copy of its task's context (:func:`run_as`).

Examples
--------
>>> import asyncio
>>> rec = Recorder()
>>> async def handle():
...     await asyncio.sleep(0)
...     return "roll"
>>> asyncio.run(rec.measure(handle(), received=time.monotonic()))
>>> s = rec.summary()["messages"]["roll"]
>>> s["count"], s["unfinished"], s["total"]["n"]
(1, 0, 1)
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import json
import os
import random
import resource
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

__all__ = []

#: the environment variable naming the file the figures are written to (unset: no timing)
ENV = "SNLMARKOV_WEB_TIMING"
#: most samples one series keeps (beyond, a uniform reservoir of that many)
RESERVOIR = 100_000
#: the series of every message kind: seconds from receipt to the last frame sent, waiting for the
#: database, and the rest of it (total less write)
SERIES = ("total", "write", "rest")
#: the version of the file's format
FORMAT = 1

_CURRENT: contextvars.ContextVar[Span | None] = contextvars.ContextVar("snlmarkov_web_span", default=None)
#: the task a callback is running code for (:func:`run_as`), else None
_RUNNING_AS: asyncio.Task[Any] | None = None
T = TypeVar("T")


def run_as(task: asyncio.Task[Any] | None, context: contextvars.Context, func: Callable[[], T]) -> T:
    """Run ``func()`` in ``context`` (copied in ``task``) as part of ``task``'s work: a callback finishing what
    the task queued (the frames it pushes belong to the message that task is handling).

    Examples
    --------
    >>> async def main():
    ...     task, ctx = asyncio.current_task(), contextvars.copy_context()
    ...     loop = asyncio.get_running_loop()
    ...     fut = loop.create_future()
    ...     loop.call_soon(lambda: fut.set_result(run_as(task, ctx, lambda: _running_task() is task)))
    ...     return await fut
    >>> asyncio.run(main())
    True
    """
    global _RUNNING_AS
    outer, _RUNNING_AS = _RUNNING_AS, task
    try:
        return context.run(func)
    finally:
        _RUNNING_AS = outer


def _running_task() -> asyncio.Task[Any] | None:
    """The task whose work runs now: the one :func:`run_as` runs a callback for, else the current task."""
    return _RUNNING_AS if _RUNNING_AS is not None else asyncio.current_task()


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Reservoir:
    """At most ``size`` samples of a series, uniform over all it was given (algorithm R, seeded)."""

    def __init__(self, size: int = RESERVOIR, seed: int = 0) -> None:
        self.size, self.seen = int(size), 0
        self.samples: list[float] = []
        self._rng = random.Random(seed)

    def add(self, x: float) -> None:
        self.seen += 1
        if len(self.samples) < self.size:
            self.samples.append(x)
            return
        k = self._rng.randrange(self.seen)
        if k < self.size:
            self.samples[k] = x

    def summary(self) -> dict[str, float]:
        """Count, mean, p50, p90, p99 and max of the samples kept, in milliseconds."""
        xs = sorted(self.samples)
        if not xs:
            return {"n": 0}

        def q(p: float) -> float:  # the nearest-rank percentile
            return xs[min(len(xs) - 1, max(0, int(-(-p * len(xs) // 100)) - 1))] * 1e3

        return {
            "n": self.seen,
            "mean": sum(xs) / len(xs) * 1e3,
            "p50": q(50),
            "p90": q(90),
            "p99": q(99),
            "max": xs[-1] * 1e3,
        }


class Span:
    """One message's time on the server: received, handled, and the frames it queued still unsent."""

    __slots__ = ("recorder", "task", "received", "kind", "write", "pending", "frames", "handled", "last", "open")

    def __init__(self, recorder: Recorder, received: float) -> None:
        self.recorder, self.received = recorder, received
        self.task = asyncio.current_task()
        self.kind = "interrupted"  # until the handling returns its kind (it may raise, or be cancelled)
        self.write = 0.0  # seconds spent waiting for database writes
        self.pending = 0  # frames queued and not sent yet
        self.frames = 0  # frames queued in all
        self.handled = False
        self.last = received  # when its last frame so far was sent
        self.open = True  # frames queued now belong to it

    def mine(self) -> bool:
        """Whether what happens now is this message's handling (its own task, or a callback run for it)."""
        return self.open and self.task is _running_task()

    def sent(self) -> None:
        self.pending -= 1
        self.last = time.monotonic()
        if self.pending == 0 and self.handled:
            self.recorder._finish(self)


class Frame(str):
    """A text queued while a message was handled: :meth:`sent` tells its span it went out."""

    span: Span

    def sent(self) -> None:
        self.span.sent()


class TimedOutbox(asyncio.Queue):
    """A connection's outbox whose texts pushed by a message's handling are :class:`Frame` objects of its span
    (:meth:`tag`: the connection tags every text it sends or queues, see :mod:`snlmarkov.web.connection`)."""

    def tag(self, text: str) -> str:
        span = _CURRENT.get()
        if span is None or not span.mine():
            return text
        frame = Frame(text)
        frame.span = span
        span.pending += 1
        span.frames += 1
        return frame


class Recorder:
    """Every message's time on the server, by kind (``roll``, ``hello``, ...; ``refused``: a ProtocolError;
    ``failed``: a bug caught; ``interrupted``: a handling that raised or was cancelled).

    Parameters
    ----------
    path : str or Path, optional
        Where :meth:`write` puts the figures.
    size : int
        Samples kept per series (:data:`RESERVOIR`).
    """

    def __init__(self, path: str | Path | None = None, *, size: int = RESERVOIR) -> None:
        self.path = None if path is None else Path(path)
        self.size = int(size)
        self.kinds: dict[str, dict[str, Reservoir]] = {}
        self.counts: dict[str, list[int]] = {}  # kind -> [messages, unfinished]
        self.first = self.last = 0.0  # monotonic times of the first receipt and of the last frame sent
        self.collector = [Reservoir(self.size, seed=10 + g) for g in range(3)]  # pause seconds, by generation
        self._collecting = 0.0  # when the collection under way started
        self._watching = False

    @classmethod
    def from_environment(cls) -> Recorder | None:
        """A recorder writing to ``$SNLMARKOV_WEB_TIMING``, or None when it is unset or empty."""
        path = os.environ.get(ENV, "")
        return cls(path) if path else None

    def watch_collector(self) -> None:
        """Time every collection of the cyclic garbage collector from now on, by generation (idempotent)."""
        if not self._watching:
            gc.callbacks.append(self._on_collection)
            self._watching = True

    def stop_watching_collector(self) -> None:
        """Stop timing the collector (idempotent)."""
        if self._watching:
            gc.callbacks.remove(self._on_collection)
            self._watching = False

    def _on_collection(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._collecting = time.perf_counter()
        elif self._collecting:
            self.collector[info["generation"]].add(time.perf_counter() - self._collecting)
            self._collecting = 0.0

    def watch(self, conn: Any) -> None:
        """Give a new connection (nothing queued yet) an outbox that ties its frames to their messages."""
        conn.outbox = TimedOutbox()

    async def measure(self, handling: Coroutine[Any, Any, str], received: float) -> None:
        """Await ``handling`` (which returns the message's kind) as the span of a message received at ``received``."""
        if not self.first:
            self.first = received
        span = Span(self, received)
        token = _CURRENT.set(span)
        try:
            span.kind = await handling
        finally:
            _CURRENT.reset(token)
            span.open, span.handled = False, True
            if not span.frames:  # it sent nothing: it ends when its handling does
                span.last = max(span.last, time.monotonic())
            self.counts.setdefault(span.kind, [0, 0])[0] += 1
            self.counts[span.kind][1] += 1  # unfinished until its last frame is sent
            if span.pending == 0:
                self._finish(span)

    def _finish(self, span: Span) -> None:
        series = self.kinds.get(span.kind)
        if series is None:
            series = self.kinds[span.kind] = {name: Reservoir(self.size, seed=i) for i, name in enumerate(SERIES)}
        total = span.last - span.received
        series["total"].add(total)
        series["write"].add(span.write)
        series["rest"].add(total - span.write)
        self.counts[span.kind][1] -= 1
        self.last = max(self.last, span.last)

    def summary(self) -> dict[str, Any]:
        """The figures: per kind its count, unfinished spans and each series' percentiles (ms); the process's
        CPU seconds so far and its peak RSS."""
        messages = {}
        for kind, (count, unfinished) in sorted(self.counts.items()):
            series = self.kinds.get(kind, {})
            messages[kind] = {
                "count": count,
                "unfinished": unfinished,
                **{name: series[name].summary() if name in series else {"n": 0} for name in SERIES},
            }
        return {
            "format": FORMAT,
            "pid": os.getpid(),
            "messages": messages,
            "collector": {f"gen{g}": r.summary() for g, r in enumerate(self.collector)},
            "window_s": max(0.0, self.last - self.first),
            "cpu_s": _cpu(),
            "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        }

    def write(self) -> None:
        """Write :meth:`summary` to :attr:`path` as JSON (through a temporary file: a reader sees all or nothing)."""
        if self.path is None:
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(self.summary(), indent=1))
        os.replace(tmp, self.path)


class WriteClock:
    """The time from now to :meth:`stop` (the first call) is the database's: a span open in this task adds it
    to its ``write``; without one the clock does nothing.

    Examples
    --------
    >>> WriteClock().stop()  # no span open: nothing counted
    """

    __slots__ = ("span", "start")

    def __init__(self) -> None:
        span = _CURRENT.get()
        self.span = span if span is not None and span.mine() else None
        self.start = time.monotonic() if self.span is not None else 0.0

    def stop(self) -> None:
        span, self.span = self.span, None
        if span is not None:
            span.write += time.monotonic() - self.start

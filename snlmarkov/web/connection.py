"""One browser's WebSocket as a room sees it: what it is sent, at once when it can be, else in order later.

A room tells a connection something with :meth:`Connection.push`, which
never blocks. The endpoint (:func:`snlmarkov.web.app._play`) gives the
connection its socket's send (:attr:`Connection.sender`); a text pushed
while nothing is waiting to go out is sent there and then, in the pushing
task: the WebSocket's send writes to the socket without waiting whenever
the socket takes it (uvicorn: its transport is not paused), so a turn's
broadcast needs no pass of the event loop per connection. Otherwise the
text goes into the connection's outbox, which the endpoint's sender task
drains in order (:func:`drain`); a send that did have to wait (a slow
browser) is finished by that task too, before anything queued after it
(:class:`Unsent`). Past :data:`OUTBOX` queued messages the connection is
marked ``dropped`` and the endpoint closes it, so a slow browser cannot
hold up a room.

Examples
--------
>>> import asyncio
>>> got = []
>>> async def send(text):
...     got.append(text)
>>> async def main():
...     conn = Connection()
...     conn.push({"type": "pong"})  # no socket yet: queued
...     conn.sender = send
...     conn.push("now")  # still behind the queued one: queued
...     return conn.outbox.qsize()
>>> asyncio.run(main()), got
(2, [])
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, cast

from .timing import Frame

__all__ = []

#: messages queued for one slow connection before it is dropped
OUTBOX = 1000

Send = Callable[[str], Coroutine[Any, Any, Any]]


class Outbox(asyncio.Queue["str | Unsent | None"]):
    """A connection's queue of texts to send (``None``: close the socket)."""

    def tag(self, text: str) -> str:
        """The text as it is queued or sent (the load benchmark's outbox ties it to its message)."""
        return text


class Unsent:
    """A send started in the pushing task that had to wait: the endpoint's sender task finishes it."""

    __slots__ = ("coro", "text", "waiting")

    def __init__(self, coro: Coroutine[Any, Any, Any], waiting: Any, text: str) -> None:
        self.coro, self.waiting, self.text = coro, waiting, text

    async def finish(self) -> None:
        """Run the send on from where it stopped, in this task, to its end (its exceptions are raised)."""
        coro, waiting = self.coro, self.waiting
        while True:
            try:
                await _wait_for(waiting)
            except BaseException as exc:  # the sender task cancelled: the send is told, as awaiting it would be
                try:
                    waiting = coro.throw(exc)
                except StopIteration:
                    return
                continue
            try:
                waiting = coro.send(None)
            except StopIteration:
                return


def _wait_for(waiting: Any) -> Awaitable[Any]:
    """What a coroutine that suspended on ``waiting`` (a future, or None for a bare yield) waits for.

    A future a coroutine yields is marked as being waited for, and the task
    running it takes the mark off; none ran it here, so that is done here
    before the future is awaited (else awaiting it again is refused).
    """
    if waiting is None:
        return asyncio.sleep(0)
    waiting._asyncio_future_blocking = False
    return cast(Awaitable[Any], waiting)


class Connection:
    """One browser's WebSocket as the room sees it: how to send it a text, and who it is."""

    def __init__(self) -> None:
        self.outbox: Outbox = Outbox()
        self.sender: Send | None = None  # the socket's send, while the endpoint serves it
        self.sending = False  # the endpoint's task is sending a text it took from the outbox
        self.seat: int = -1  # the seat this browser claimed with hello (-1: none)
        self.host = False
        self.greeted = False
        self.dropped = False
        self.closing = False  # the server asked this socket to close
        self.close_code = 1000  # the WebSocket close code it gets
        self.last_sent = time.monotonic()  # when the endpoint last sent it something

    def push(self, message: dict[str, Any] | str) -> None:
        """Send ``message`` (a body, or its JSON text): at once if nothing is waiting to go, else queued."""
        if self.dropped:
            return
        text = self.outbox.tag(message if isinstance(message, str) else json.dumps(message))
        if self.sender is not None and not self.sending and not self.closing and self.outbox.empty():
            self._send_now(self.sender, text)
            return
        if self.outbox.qsize() >= OUTBOX:
            self.dropped = True
            self.outbox.put_nowait(None)
            return
        self.outbox.put_nowait(text)

    def _send_now(self, sender: Send, text: str) -> None:
        coro = sender(text)
        try:
            waiting = coro.send(None)
        except StopIteration:
            self.sent(text)
            return
        except Exception:  # the browser went away: the endpoint's task ends on the None
            self.dropped = True
            self.outbox.put_nowait(None)
            return
        self.outbox.put_nowait(Unsent(coro, waiting, text))

    def sent(self, text: str) -> None:
        """``text`` has gone out on the socket."""
        self.last_sent = time.monotonic()
        if isinstance(text, Frame):  # the load benchmark's timing (snlmarkov/web/timing.py)
            text.sent()

    def close(self) -> None:
        """Ask the endpoint to close this socket once what is queued has been sent."""
        self.closing = True
        self.outbox.put_nowait(None)


async def drain(conn: Connection, send: Send) -> bool:
    """Send what is queued for ``conn`` with ``send``, in order, until a None; False if the socket failed."""
    try:
        while True:
            item = await conn.outbox.get()
            if item is None:
                return True
            conn.sending = True
            if isinstance(item, Unsent):
                await item.finish()
                item = item.text
            else:
                await send(item)
            conn.sending = False
            conn.sent(item)
    except Exception:  # the browser went away
        conn.dropped = True
        return False

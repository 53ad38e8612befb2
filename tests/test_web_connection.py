"""A connection's sends (snlmarkov/web/connection.py) and a room's countdowns (snlmarkov/web/countdown.py)."""

from __future__ import annotations

import asyncio

import pytest

from snlmarkov.web import connection
from snlmarkov.web.connection import OUTBOX, Connection, Unsent
from snlmarkov.web.countdown import later


class Socket:
    """A socket's send: takes a text at once unless ``blocked`` (then it waits until ``open`` is set)."""

    def __init__(self) -> None:
        self.got: list[str] = []
        self.open = asyncio.Event()
        self.open.set()
        self.fail = False

    async def send(self, text: str) -> None:
        await self.open.wait()
        if self.fail:
            raise RuntimeError("the browser went away")
        self.got.append(text)


def _wired(*, blocked: bool = False) -> tuple[Socket, Connection]:
    """A connection served by a fresh socket (one whose buffer is full if ``blocked``)."""
    sock, conn = Socket(), Connection()
    conn.sender = sock.send
    if blocked:
        sock.open.clear()
    return sock, conn


def test_a_text_pushed_with_nothing_queued_is_sent_in_the_pushing_task():
    async def main():
        sock, conn = _wired()
        conn.push({"type": "pong"})
        conn.push("turn")
        assert conn.outbox.empty()
        return sock.got

    assert asyncio.run(main()) == ['{"type": "pong"}', "turn"]


def test_a_send_that_must_wait_is_finished_by_the_drain_before_what_came_after():
    async def main():
        sock, conn = _wired()
        sock.open.clear()  # the socket's buffer is full
        conn.push("one")  # started here, waits: handed to the drain
        assert isinstance(conn.outbox._queue[0], Unsent)
        conn.push("two")  # behind it: queued
        conn.push("three")
        drain = asyncio.ensure_future(connection.drain(conn, sock.send))
        await asyncio.sleep(0.01)
        assert sock.got == []  # nothing overtakes the waiting send
        sock.open.set()
        await asyncio.sleep(0.01)
        conn.push("four")  # the outbox is empty again: sent at once
        assert sock.got == ["one", "two", "three", "four"]
        conn.close()
        assert await drain

    asyncio.run(main())


def test_nothing_is_sent_at_once_while_the_drain_is_sending():
    async def main():
        sock, conn = _wired(blocked=True)
        conn.outbox.put_nowait("queued")
        drain = asyncio.ensure_future(connection.drain(conn, sock.send))
        await asyncio.sleep(0.01)  # the drain took it and waits in its send
        assert conn.sending and conn.outbox.empty()
        conn.push("later")  # must not overtake "queued"
        sock.open.set()
        await asyncio.sleep(0.01)
        conn.close()
        await drain
        return sock.got

    assert asyncio.run(main()) == ["queued", "later"]


def test_a_send_that_fails_at_once_drops_the_connection_and_ends_the_drain():
    async def main():
        sock, conn = _wired()
        sock.fail = True
        drain = asyncio.ensure_future(connection.drain(conn, sock.send))
        conn.push("turn")
        assert conn.dropped
        conn.push("more")  # a dropped connection is sent nothing
        return await drain, sock.got

    assert asyncio.run(main()) == (True, [])


def test_a_waiting_send_that_fails_drops_the_connection():
    async def main():
        sock, conn = _wired(blocked=True)
        conn.push("turn")
        drain = asyncio.ensure_future(connection.drain(conn, sock.send))
        sock.fail = True
        sock.open.set()
        return await drain, conn.dropped

    assert asyncio.run(main()) == (False, True)


def test_cancelling_the_drain_cancels_the_send_it_finishes():
    async def main():
        sock, conn = _wired(blocked=True)
        conn.push("turn")
        drain = asyncio.ensure_future(connection.drain(conn, sock.send))
        await asyncio.sleep(0.01)
        drain.cancel()
        with pytest.raises(asyncio.CancelledError):
            await drain
        return conn.outbox._queue

    assert len(asyncio.run(main())) == 0


def test_a_closing_connection_or_one_without_a_socket_queues_and_a_slow_one_is_dropped():
    async def main():
        sock, conn = Socket(), Connection()
        conn.push("before the socket")
        conn.sender = sock.send
        conn.push("behind it")
        assert sock.got == [] and conn.outbox.qsize() == 2
        closing = Connection()
        closing.sender = sock.send
        closing.close()
        closing.push("after close")
        assert sock.got == [] and list(closing.outbox._queue) == [None, "after close"]
        slow = Connection()
        for i in range(OUTBOX + 5):
            slow.push(str(i))
        assert slow.dropped and slow.outbox.qsize() == OUTBOX + 1 and slow.outbox._queue[-1] is None

    asyncio.run(main())


def test_a_countdown_cancelled_before_it_rings_makes_no_task_and_one_that_rang_is_cancelled():
    ran: list[str] = []

    async def main():
        async def ring(name: str) -> None:
            ran.append(name)
            await asyncio.sleep(10)
            ran.append(f"{name} done")

        quiet = later(0.05, lambda: ring("quiet"))
        loud = later(0.01, lambda: ring("loud"))
        tasks = len(asyncio.all_tasks())
        quiet.cancel()
        quiet.cancel()  # idempotent
        await asyncio.sleep(0.03)
        assert loud.started and not quiet.started and len(asyncio.all_tasks()) == tasks + 1
        loud.cancel()
        with pytest.raises(asyncio.CancelledError):
            await loud.task
        await asyncio.sleep(0.05)

    asyncio.run(main())
    assert ran == ["loud"]


def test_a_countdown_never_cancels_the_task_that_cancels_it():
    async def main():
        box = {}

        async def ring() -> str:
            box["timer"].cancel()  # the countdown's own task stopping its timer (a room's _cancel_timer)
            await asyncio.sleep(0)
            return "went on"

        box["timer"] = later(0.0, ring)
        await asyncio.sleep(0.01)
        return await box["timer"].task

    assert asyncio.run(main()) == "went on"

"""The served app keeps its start-up objects out of the cyclic garbage collector's walks and runs its full
collections on a timer (docs/web.md "The collector")."""

from __future__ import annotations

import asyncio
import gc
import math
import time
import weakref

import pytest

from snlmarkov import SnlError
from snlmarkov.web.collector import FULL_AFTER, FULL_EVERY, MAX_FULL_EVERY, ServedCollector

pytest.importorskip("starlette")
from _webserver import ServerThread, http  # noqa: E402

from snlmarkov.cli import main  # noqa: E402
from snlmarkov.web import app as web_app  # noqa: E402


def test_a_served_app_freezes_what_start_up_left_and_lets_go_at_shutdown():
    assert gc.get_freeze_count() == 0
    server = ServerThread(web_app.create_app(ai_delay=0.0, freeze_gc=True)).start()
    try:
        assert gc.get_freeze_count() > 10_000  # the modules, classes and functions imported: tens of thousands
        assert http(server.base, "/api/config")[0] == 200  # the app serves as before
        garbage: list = [[]]
        garbage[0].append(garbage)  # a cycle made after start-up is still collected
        del garbage
        assert gc.collect() >= 2
    finally:
        server.stop()
    assert gc.get_freeze_count() == 0  # unfrozen once the app has shut down


def test_an_app_leaves_the_collector_alone_by_default():
    server = ServerThread(web_app.create_app(ai_delay=0.0)).start()
    try:
        assert http(server.base, "/api/config")[0] == 200
        assert gc.get_freeze_count() == 0
    finally:
        server.stop()


def test_serve_asks_for_the_freeze(monkeypatch, tmp_path):
    seen = {}
    real = web_app.create_app

    def spy(**kwargs):
        seen.update(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(web_app, "create_app", spy)
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)  # served, and stopped at once
    assert main(["serve", "--port", "0", "--db", str(tmp_path / "g.sqlite")]) == 0
    assert seen["freeze_gc"] is True
    assert seen["full_gc_every"] == FULL_EVERY > 0


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def _full_collections(seen: list[int]):
    def callback(phase: str, info: dict) -> None:
        if phase == "stop" and info["generation"] == 2:
            seen.append(info["collected"])

    return callback


def test_a_served_app_times_its_full_collections_and_gives_the_threshold_back():
    before = gc.get_threshold()
    seen: list[int] = []
    gc.callbacks.append(_full_collections(seen))
    try:
        server = ServerThread(web_app.create_app(ai_delay=0.0, freeze_gc=True, full_gc_every=0.2)).start()
        try:
            assert gc.get_threshold() == (before[0], before[1], FULL_AFTER)  # no full collection on its own trigger
            seen.clear()
            garbage = weakref.ref(_Cycle())  # garbage in a cycle, which only a collection frees
            deadline = time.monotonic() + 10
            while not seen and time.monotonic() < deadline:
                time.sleep(0.05)  # no collection asked here: the server's timer runs it
            assert seen, "no full collection within 10 s of a 0.2 s timer"
            assert garbage() is None
            assert http(server.base, "/api/config")[0] == 200
        finally:
            server.stop()
    finally:
        gc.callbacks.pop()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_timer_collects_on_schedule_and_stops_with_the_app():
    async def run() -> tuple[int, int]:
        collector = ServedCollector(full_every=0.02)
        collector.start()
        await asyncio.sleep(0.25)
        collector.stop()
        collector.stop()  # idempotent
        ran = collector.timed
        await asyncio.sleep(0.1)
        return ran, collector.timed

    before = gc.get_threshold()
    ran, later = asyncio.run(run())
    assert 3 <= ran == later  # on schedule while running, and not once stopped
    assert gc.get_threshold() == before


def test_without_a_period_the_collector_keeps_its_own_trigger():
    async def run() -> tuple[int, int, int]:
        collector = ServedCollector()
        collector.start()
        during = gc.get_threshold()
        await asyncio.sleep(0.05)
        collector.stop()
        return during

    before = gc.get_threshold()
    assert asyncio.run(run()) == before


@pytest.mark.parametrize("bad", [-1, -0.5, math.nan, math.inf, MAX_FULL_EVERY * 2, 10**400, True, "300", None])
def test_a_period_that_is_not_a_number_of_seconds_is_refused(bad):
    with pytest.raises(SnlError, match="full_every must be a number of seconds"):
        ServedCollector(bad)
    with pytest.raises(SnlError, match="full_every must be a number of seconds"):
        web_app.create_app(freeze_gc=True, full_gc_every=bad)


def test_a_period_needs_the_served_policy():
    with pytest.raises(SnlError, match="needs freeze_gc=True"):
        web_app.create_app(full_gc_every=10)

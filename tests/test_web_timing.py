"""The load benchmark's server-side timing (snlmarkov/web/timing.py) and the store's group commit."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import sqlite3
import threading
import time

import numpy as np
import pytest

from snlmarkov.web import connection, persist, timing
from snlmarkov.web.connection import Connection
from snlmarkov.web.store import GameStore, RoomRow
from snlmarkov.web.timing import Frame, Recorder, Reservoir, TimedOutbox


async def drain(conn: Connection, delay: float = 0.0) -> None:
    """What the endpoint does with an outbox: send each text (here: after ``delay``); the connection tells a
    frame it went."""
    sent: list[str] = []

    async def send(text: str) -> None:
        await asyncio.sleep(delay)
        sent.append(text)

    assert await connection.drain(conn, send)


def test_reservoir_percentiles_and_bound():
    r = Reservoir(size=1000, seed=1)
    xs = np.arange(1, 501) / 1000  # 1 ms .. 500 ms
    for x in xs:
        r.add(float(x))
    s = r.summary()
    assert s["n"] == 500 and s["p50"] == pytest.approx(250) and s["p99"] == pytest.approx(495)
    assert s["max"] == pytest.approx(500) and s["mean"] == pytest.approx(250.5)
    big = Reservoir(size=100, seed=2)
    for x in range(10_000):
        big.add(float(x))
    assert len(big.samples) == 100 and big.seen == 10_000
    assert 2_000 < np.median(big.samples) < 8_000  # uniform over all it saw, not the first 100
    assert Reservoir().summary() == {"n": 0}


def test_a_span_ends_with_its_last_frame_and_keeps_the_write_apart(tmp_path):
    rec = Recorder(tmp_path / "t.json")

    async def write():  # the database's time, as persist.written counts it
        clock = timing.WriteClock()
        await asyncio.sleep(0.03)
        clock.stop()

    async def main():
        conns = [Connection() for _ in range(3)]
        for c in conns:
            rec.watch(c)
            assert isinstance(c.outbox, TimedOutbox)
        drains = [asyncio.ensure_future(drain(c, 0.02 * (i + 1))) for i, c in enumerate(conns)]

        async def roll():
            await write()  # the database, before the broadcast
            for c in conns:
                c.push("turn")
            return "roll"

        async def ping():
            conns[0].push("pong")
            return "ping"

        start = time.monotonic()
        await rec.measure(roll(), start)
        await rec.measure(ping(), time.monotonic())
        # a text queued by another task (a timer) is no message's: it stays a plain str
        await asyncio.ensure_future(_push(conns[1], "timer"))
        await write()  # no span open: nothing counted
        for c in conns:
            c.outbox.put_nowait(None)
        await asyncio.gather(*drains)
        return time.monotonic() - start

    elapsed = asyncio.run(main())
    s = rec.summary()["messages"]
    roll = s["roll"]
    assert roll["count"] == 1 and roll["unfinished"] == 0
    # written for 30 ms, then the slowest of three connections sent it 60 ms later
    assert 0.085 <= roll["total"]["max"] / 1e3 <= elapsed
    assert 0.029 <= roll["write"]["max"] / 1e3 < 0.085
    assert roll["rest"]["max"] == pytest.approx(roll["total"]["max"] - roll["write"]["max"])
    assert s["ping"]["count"] == 1 and s["ping"]["write"]["max"] == 0
    rec.write()
    on_disk = json.loads((tmp_path / "t.json").read_text())
    assert on_disk["messages"]["roll"]["count"] == 1 and on_disk["format"] == timing.FORMAT
    assert on_disk["cpu_s"] > 0 and on_disk["maxrss_kb"] > 0


async def _push(conn: Connection, text: str) -> None:
    conn.push(text)
    item = conn.outbox._queue[-1]
    assert type(item) is str


def test_a_span_ends_with_its_last_frame_sent_not_with_its_handling():
    """What a handling does after its last frame keeps no one waiting: the span ends at that frame (a message
    that sends nothing ends when its handling returns)."""
    rec = Recorder()
    got: list[str] = []

    async def send(text: str) -> None:  # a socket that takes it: no wait
        got.append(text)

    async def main():
        conn = Connection()
        rec.watch(conn)
        conn.sender = send

        async def hello():
            conn.push("welcome")
            assert conn.outbox.empty()  # sent in this task, not queued
            await asyncio.sleep(0.05)
            return "hello"

        async def join():
            conn.push("joined")
            await asyncio.sleep(0.02)
            conn.push("room")  # the last frame, 20 ms on
            await asyncio.sleep(0.05)
            return "join"

        async def ping():
            await asyncio.sleep(0.02)
            return "ping"

        for handling in (hello(), join(), ping()):
            await rec.measure(handling, time.monotonic())

    asyncio.run(main())
    assert got == ["welcome", "joined", "room"] and all(isinstance(t, Frame) for t in got)
    s = rec.summary()["messages"]
    assert all(s[k]["count"] == 1 and s[k]["unfinished"] == 0 for k in ("hello", "join", "ping"))
    assert s["hello"]["total"]["max"] < 45  # not the 50 ms its handling went on for
    assert 19 <= s["join"]["total"]["max"] < 65
    assert s["ping"]["total"]["max"] >= 19


def test_a_callback_run_for_a_task_sends_that_tasks_frames():
    """The group commit tells a turn's players from a loop callback (``timing.run_as``): those frames are the
    message's, and a span ends with them, before its task wakes."""
    rec = Recorder()
    got: list[str] = []

    async def send(text: str) -> None:
        got.append(text)

    async def main():
        conn, other = Connection(), Connection()
        for c in (conn, other):
            rec.watch(c)
            c.sender = send
        loop = asyncio.get_running_loop()

        async def roll():
            task, ctx = asyncio.current_task(), contextvars.copy_context()
            fut = loop.create_future()

            def commit():
                timing.run_as(task, ctx, lambda: conn.push("turn"))
                other.push("timer")  # outside run_as: no message's
                loop.call_later(0.05, fut.set_result, None)  # the task wakes 50 ms later

            loop.call_soon(commit)
            await fut
            return "roll"

        await rec.measure(roll(), time.monotonic())

    asyncio.run(main())
    assert got == ["turn", "timer"] and isinstance(got[0], Frame) and type(got[1]) is str
    s = rec.summary()["messages"]["roll"]
    assert s["count"] == 1 and s["unfinished"] == 0 and s["total"]["max"] < 45


def test_frames_never_sent_leave_the_span_unfinished():
    rec = Recorder()

    async def main():
        conn = Connection()
        rec.watch(conn)

        async def hello():
            conn.push("welcome")
            return "hello"

        await rec.measure(hello(), time.monotonic())

    asyncio.run(main())
    s = rec.summary()["messages"]["hello"]
    assert s["count"] == 1 and s["unfinished"] == 1 and s["total"] == {"n": 0}


def test_a_handling_that_raises_is_counted_as_interrupted():
    rec = Recorder()

    async def boom():
        raise RuntimeError("planted")

    async def main():
        with pytest.raises(RuntimeError, match="planted"):
            await rec.measure(boom(), time.monotonic())

    asyncio.run(main())
    s = rec.summary()["messages"]
    assert list(s) == ["interrupted"] and s["interrupted"]["count"] == 1 and s["interrupted"]["total"]["n"] == 1


def test_off_unless_the_variable_names_a_file(monkeypatch, tmp_path):
    monkeypatch.delenv(timing.ENV, raising=False)
    assert Recorder.from_environment() is None
    monkeypatch.setenv(timing.ENV, "")
    assert Recorder.from_environment() is None
    monkeypatch.setenv(timing.ENV, str(tmp_path / "t.json"))
    assert Recorder.from_environment().path == tmp_path / "t.json"

    from snlmarkov.web.app import create_app

    monkeypatch.delenv(timing.ENV)
    assert create_app(ai_delay=0.0).state.timing is None


def test_the_server_times_its_messages(monkeypatch, tmp_path):
    """A real server with the variable set: every roll of a game is timed, and the file is written at the stop."""
    pytest.importorskip("uvicorn")
    from _webserver import ROOMY, Client, ServerThread, create_room

    from snlmarkov import Board, Odds, Rules
    from snlmarkov.state import GameState
    from snlmarkov.web.app import create_app

    out = tmp_path / "timing.json"
    monkeypatch.setenv(timing.ENV, str(out))
    store = GameStore(tmp_path / "games.sqlite")
    board = Board(12, {3: 9, 10: 2})
    app = create_app(store=store, boards={"tiny": board}, ai_delay=0.0, limits=ROOMY, seed=3)
    srv = ServerThread(app).start()
    try:
        room = create_room(srv.base, kind="online", seats=[{"name": "A", "colour": "#e53935", "ai": False}])
        host = Client(srv.base, room["room"])
        host.hello(room["host"])
        guest = Client(srv.base, room["room"])
        guest.hello()
        guest.send(type="join", name="B", colour="#1e88e5")
        secret = {0: room["host"], 1: guest.until(lambda m: m["type"] == "joined")["secret"]}
        host.send(type="start", secret=room["host"])
        state = host.until(lambda m: m["type"] == "room" and m["status"] == "playing")
        rolls, told = 0, []
        while state["status"] != "over":
            seat = state["current"]
            (host if seat == 0 else guest).send(type="roll", seat=seat, secret=secret[seat])
            rolls += 1
            told.append(host.until(lambda m: m["type"] == "turn"))
            state = {**state, **told[-1]}
        guest.until(lambda m: m["type"] == "turn" and m["status"] == "over")
        host.close()
        guest.close()
    finally:
        srv.stop()
        store.close()
    # each turn's odds (read on the loop before the turn was written) are those after it
    odds = Odds(board, Rules(), players=2)
    for turn in told:
        if turn["status"] == "playing":
            after = GameState(tuple(turn["positions"]), to_move=turn["current"], places=tuple(turn["finished"]))
            np.testing.assert_allclose(turn["odds"]["win"], odds.win_probability(after), rtol=0, atol=1e-12)
    figures = json.loads(out.read_text())["messages"]
    assert figures["roll"]["count"] == rolls and figures["roll"]["total"]["n"] == rolls
    assert figures["roll"]["unfinished"] == 0
    assert figures["roll"]["write"]["p50"] > 0  # each turn waited for its write
    assert figures["roll"]["total"]["p50"] >= figures["roll"]["write"]["p50"]
    assert figures["hello"]["count"] == 2 and figures["join"]["count"] == 1 and figures["start"]["count"] == 1


# ------------------------------------------------------------ the store's group commit


def test_writes_queued_together_share_one_commit(tmp_path):
    store = GameStore(tmp_path / "g.sqlite")
    commits: list[str] = []
    store._db.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    rows = [RoomRow(f"r{i}", "playing", json.dumps({"i": i}), ((0, "[]"),)) for i in range(8)]
    with store._lock:  # the database is busy: the eight writes queue behind it
        threads = [threading.Thread(target=store.save_room, args=(row,)) for row in rows]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 10
        while store.status().pending < len(rows) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert store.status().pending == len(rows)
    for t in threads:
        t.join(10)
    assert len(commits) == 1  # one transaction, one fsync, for all eight
    assert sorted(r.id for r in store.open_rooms()) == sorted(r.id for r in rows)
    store.close()


def test_a_failing_write_is_undone_alone(tmp_path):
    store = GameStore(tmp_path / "g.sqlite")
    results: dict[str, object] = {}

    def bad(db: sqlite3.Connection) -> int:
        db.execute("INSERT INTO rooms (id, status, game_id, updated_at, state) VALUES ('bad', 'lobby', 0, 0, '{}')")
        db.execute("INSERT INTO games (room) VALUES ('x')")  # NOT NULL columns missing: IntegrityError
        return 1

    def run(name, call):
        try:
            results[name] = call()
        except Exception as exc:
            results[name] = exc

    with store._lock:
        threads = [
            threading.Thread(target=run, args=("good1", lambda: store.save_room(RoomRow("g1", "lobby", "{}")))),
            threading.Thread(target=run, args=("bad", lambda: store._submit(bad, "room"))),
            threading.Thread(target=run, args=("good2", lambda: store.save_room(RoomRow("g2", "lobby", "{}")))),
        ]
        for t in threads:
            t.start()
            while store.status().pending < threads.index(t) + 1:
                time.sleep(0.005)
    for t in threads:
        t.join(10)
    assert results["good1"] is None and results["good2"] is None
    assert "NOT NULL" in str(results["bad"])
    assert sorted(r.id for r in store.open_rooms()) == ["g1", "g2"]  # the bad write's first row undone too
    assert store.status().pending == 0
    store.close()


class _Manager:
    def __init__(self, store: GameStore) -> None:
        self.store = store


class _Room:
    """What ``persist.written`` reads of a room: its manager's store, ``saving`` and ``broadcast``."""

    def __init__(self, store: GameStore) -> None:
        self.manager, self.saving, self.told = _Manager(store), "", []

    def broadcast(self, message: dict) -> None:
        self.told.append(message)


@pytest.fixture
def one_group(monkeypatch):
    """Every write queued in one pass of the loop goes in one group commit, however slow the machine."""
    monkeypatch.setattr(persist, "GROUP_WAIT", 3600.0)


def test_rooms_writing_in_one_pass_of_the_loop_share_one_commit_on_the_loop(tmp_path, one_group):
    store = GameStore(tmp_path / "g.sqlite")
    commits: list[str] = []  # the thread of each commit
    store._db.set_trace_callback(
        lambda sql: commits.append(threading.current_thread().name) if sql == "COMMIT" else None
    )
    rooms = [_Room(store) for _ in range(6)]
    rows = [RoomRow(f"r{i}", "playing", json.dumps({"i": i}), ((0, "[]"),)) for i in range(6)]

    async def main() -> list[int]:
        return await asyncio.gather(
            *(persist.written(room, lambda row=row: store.save_room_later(row)) for room, row in zip(rooms, rows))
        )

    assert asyncio.run(main()) == [0] * 6
    assert commits == [threading.current_thread().name]  # six rooms, one transaction, on the loop's own thread
    assert sorted(r.id for r in store.open_rooms()) == [r.id for r in rows]
    assert all(room.saving == "ok" and not room.told for room in rooms)
    store.close()


def test_flush_now_never_waits_for_a_held_database(tmp_path):
    path = tmp_path / "g.sqlite"
    store = GameStore(path, timeout=5.0)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's write in progress
    item = store.save_room_later(RoomRow("r1", "playing", "{}"))
    start = time.monotonic()
    assert store.flush_now() is False
    assert time.monotonic() - start < 1.0  # not SQLite's 5 s busy timeout
    assert store.status().pending == 1 and not item.done.is_set()
    other.execute("ROLLBACK")
    assert store.wait_for(item) == 0 and [r.id for r in store.open_rooms()] == ["r1"]
    with store._lock:  # a thread holds the store's connection: the loop does not wait for it either
        store.save_room_later(RoomRow("r2", "playing", "{}"))
        assert store.flush_now() is False
    assert store.flush_now() is True and store.status().pending == 0
    other.close()
    store.close()


def _held_for_a_while(path, seconds: float = 0.3) -> sqlite3.Connection:
    """Another connection holding the database ``path``, which lets go after ``seconds``."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    threading.Timer(seconds, lambda: other.execute("ROLLBACK")).start()
    return other


def test_a_write_the_loop_cannot_make_is_waited_for_in_a_thread(tmp_path):
    path = tmp_path / "g.sqlite"
    store = GameStore(path, timeout=5.0)
    other = _held_for_a_while(path)
    room = _Room(store)

    async def main() -> int:
        return await persist.written(room, lambda: store.save_room_later(RoomRow("r1", "playing", "{}")))

    assert asyncio.run(main()) == 0
    assert room.saving == "ok" and [r.id for r in store.open_rooms()] == ["r1"]
    other.close()
    store.close()


def test_a_commit_left_pending_by_a_closed_loop_is_not_awaited_by_the_next(tmp_path):
    store = GameStore(tmp_path / "g.sqlite")
    old = asyncio.new_event_loop()
    persist._GROUPS[store] = persist._Group(old)  # a loop closed before its commit ran
    old.close()
    room = _Room(store)

    async def main() -> int:
        return await persist.written(room, lambda: store.save_room_later(RoomRow("r1", "playing", "{}")))

    assert asyncio.run(main()) == 0
    assert room.saving == "ok" and [r.id for r in store.open_rooms()] == ["r1"]
    store.close()


def test_a_group_a_closed_loop_never_committed_does_not_keep_its_store_alive(tmp_path):
    import gc
    import weakref

    store = GameStore(tmp_path / "g.sqlite")
    old = asyncio.new_event_loop()
    persist._GROUPS[store] = persist._Group(old)
    old.close()
    store.close()
    gone = weakref.ref(store)
    del store
    gc.collect()
    assert gone() is None


def test_a_write_cancelled_while_it_waits_for_the_commit_leaves_the_others_theirs(tmp_path, one_group):
    store = GameStore(tmp_path / "g.sqlite")
    rooms = [_Room(store), _Room(store)]

    async def main() -> tuple[bool, int]:
        first = asyncio.ensure_future(
            persist.written(rooms[0], lambda: store.save_room_later(RoomRow("r1", "playing", "{}")))
        )
        second = asyncio.ensure_future(
            persist.written(rooms[1], lambda: store.save_room_later(RoomRow("r2", "playing", "{}")))
        )
        await asyncio.sleep(0)  # both queued, one commit scheduled for both
        first.cancel()
        out = await second
        with contextlib.suppress(asyncio.CancelledError):
            await first
        return first.cancelled(), out

    cancelled, out = asyncio.run(main())
    assert cancelled and out == 0
    assert sorted(r.id for r in store.open_rooms()) == ["r1", "r2"]  # the commit ran for both
    store.close()


def test_each_writes_then_runs_in_the_commit_in_order_before_any_task_wakes(tmp_path, one_group):
    """What a turn tells is sent by the commit that wrote it, a pass of the loop before its task wakes."""
    store = GameStore(tmp_path / "g.sqlite")
    rooms = [_Room(store) for _ in range(4)]
    log: list[tuple] = []

    async def one(i: int) -> int:
        def then() -> None:  # the write is on disk and the room says so
            log.append(("then", i, rooms[i].saving, [r.id for r in store.open_rooms()].count(f"r{i}")))

        out = await persist.written(rooms[i], lambda: store.save_room_later(RoomRow(f"r{i}", "playing", "{}")), then)
        log.append(("woke", i))
        return out

    async def main() -> list[int]:
        return await asyncio.gather(*(one(i) for i in range(4)))

    assert asyncio.run(main()) == [0] * 4
    assert log[:4] == [("then", i, "ok", 1) for i in range(4)]  # in the order queued, each once
    assert sorted(log[4:]) == [("woke", i) for i in range(4)]
    store.close()


def test_a_then_that_raises_is_raised_by_its_write_alone(tmp_path, one_group):
    store = GameStore(tmp_path / "g.sqlite")
    rooms = [_Room(store), _Room(store)]
    told: list[int] = []

    def boom() -> None:
        raise RuntimeError("planted")

    async def main() -> tuple[BaseException | int, ...]:
        return await asyncio.gather(
            persist.written(rooms[0], lambda: store.save_room_later(RoomRow("r0", "playing", "{}")), boom),
            persist.written(
                rooms[1], lambda: store.save_room_later(RoomRow("r1", "playing", "{}")), lambda: told.append(1)
            ),
            return_exceptions=True,
        )

    first, second = asyncio.run(main())
    assert isinstance(first, RuntimeError) and "planted" in str(first) and second == 0 and told == [1]
    assert rooms[0].saving == "ok"  # the write was made: its failure is not the store's
    assert sorted(r.id for r in store.open_rooms()) == ["r0", "r1"]
    store.close()


def test_a_write_queued_long_after_its_groups_first_commits_the_group_at_once(tmp_path):
    """A pass of the loop that handles much work makes several commits: no write waits for the whole pass."""
    store = GameStore(tmp_path / "g.sqlite")
    commits: list[str] = []
    store._db.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    log: list[tuple] = []

    async def main() -> None:
        first = store.save_room_later(RoomRow("r0", "playing", "{}"))
        persist._commit_soon(store, first, lambda: log.append(("then", 0, len(commits))))
        second = store.save_room_later(RoomRow("r1", "playing", "{}"))
        persist._commit_soon(store, second, lambda: log.append(("then", 1, len(commits))))  # within GROUP_WAIT
        assert not first.done.is_set() and commits == []
        time.sleep(2 * persist.GROUP_WAIT)  # a long handling in the same pass
        third = store.save_room_later(RoomRow("r2", "playing", "{}"))
        told = persist._commit_soon(store, third, lambda: log.append(("then", 2, len(commits))))
        # the three in one commit, made by the third write's caller before it returns
        assert third.done.is_set() and commits == ["COMMIT"] and told.done() and told.result() is True
        assert log == [("then", 0, 1), ("then", 1, 1), ("then", 2, 1)]
        fourth = store.save_room_later(RoomRow("r3", "playing", "{}"))  # a new group, committed after the pass
        assert await persist._commit_soon(store, fourth) is False and fourth.done.is_set()
        await asyncio.sleep(0)

    asyncio.run(main())
    assert commits == ["COMMIT", "COMMIT"]
    assert sorted(r.id for r in store.open_rooms()) == ["r0", "r1", "r2", "r3"]
    store.close()


def test_then_waits_for_a_write_made_in_a_thread_and_is_not_called_for_a_failed_one(tmp_path):
    path = tmp_path / "g.sqlite"
    store = GameStore(path, timeout=5.0)
    other = _held_for_a_while(path)
    room = _Room(store)
    seen: list[list[str]] = []

    async def main() -> int:
        return await persist.written(
            room,
            lambda: store.save_room_later(RoomRow("r1", "playing", "{}")),
            lambda: seen.append([r.id for r in store.open_rooms()]),
        )

    assert asyncio.run(main()) == 0
    assert seen == [["r1"]] and room.saving == "ok"  # called once, with the write on disk
    other.close()

    def bad(db: sqlite3.Connection) -> int:
        db.execute("INSERT INTO games (room) VALUES ('x')")  # NOT NULL columns missing
        return 1

    async def failing() -> int:
        return await persist.written(room, lambda: store._enqueue(bad, "room"), lambda: seen.append(["called"]))

    with pytest.raises(Exception, match="NOT NULL"):
        asyncio.run(failing())
    assert seen == [["r1"]] and room.saving == "failed"
    store.close()


def test_the_recorder_times_the_collector_by_generation_while_it_watches():
    import gc

    rec = Recorder()
    rec.watch_collector()
    rec.watch_collector()  # idempotent: one callback
    try:
        assert gc.callbacks.count(rec._on_collection) == 1
        gc.collect(0)
        gc.collect()
    finally:
        rec.stop_watching_collector()
    rec.stop_watching_collector()
    assert rec._on_collection not in gc.callbacks
    pauses = rec.summary()["collector"]
    assert pauses["gen0"]["n"] >= 1 and pauses["gen2"]["n"] >= 1
    assert 0 < pauses["gen2"]["max"] < 60_000  # milliseconds
    gc.collect()  # no longer watched: nothing more is counted
    assert rec.summary()["collector"]["gen2"]["n"] == pauses["gen2"]["n"]

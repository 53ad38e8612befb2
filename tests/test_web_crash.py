"""An online game survives its server: ``snlmarkov serve`` killed with SIGKILL at random points (in the lobby,
at the start, between turns, inside a turn's write transaction), restarted on the same database, resumed by
both players from their links, played to the end; the stored record verifies and is signed, the database
passes ``PRAGMA integrity_check``. Plus the rooms' round trip through the store, in-process."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("websockets")

from _webserver import START_WAIT, Client, create_room, free_port, http  # noqa: E402

from snlmarkov import Board, verify_game  # noqa: E402
from snlmarkov.web.store import GameStore, load_key  # noqa: E402

RED, BLUE = "#e53935", "#1e88e5"
#: seconds each write sleeps inside its transaction when a kill must land there (the store's test hook)
HOOK = 0.4
#: seconds between a player's rolls: under the per-connection limit of 10 messages a second
PACE = 0.06
COUNTDOWN = 30


class Serve:
    """``snlmarkov serve`` as a subprocess on 127.0.0.1 and a free port; its stderr read by a thread."""

    def __init__(self, db: Path, *, port: int = 0) -> None:
        self.port = port or free_port()
        self.hook = Path(f"{db}.hook")  # while this file exists, every write sleeps HOOK s inside its transaction
        self.hook.unlink(missing_ok=True)
        env = {**os.environ, "SNLMARKOV_STORE_HOOK_SLEEP": str(HOOK), "SNLMARKOV_STORE_HOOK_FILE": str(self.hook)}
        cmd = [sys.executable, "-m", "snlmarkov", "serve", "--port", str(self.port), "--db", str(db)]
        cmd += ["--ai-delay", "0", "--countdown", str(COUNTDOWN)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
        self.inside = threading.Semaphore(0)  # released at each "inside a write" line of the hook
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + START_WAIT
        while True:
            try:
                if http(self.base, "/api/config")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.kill()
                raise RuntimeError("the server did not start: " + "".join(self.lines[-20:]))
            time.sleep(0.05)

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line)
            if "snlmarkov-store: inside a write" in line:
                self.inside.release()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)  # no shutdown, no flush
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()


class Table:
    """The two players of one online room (the host on seat 0, a guest on seat 1) and what they have seen."""

    def __init__(self) -> None:
        self.secrets: dict[int, str] = {}
        self.host_secret = ""
        self.room = ""
        self.turns: dict[int, list[dict]] = {}  # every turn either player was told of: its events (no texts)
        self.last: dict = {}  # the room as last told
        self.clients: list[Client] = []

    def open(self, base: str) -> None:
        room = create_room(base, kind="online", seats=[{"name": "Ann", "colour": RED, "ai": False}])
        self.room, self.host_secret = room["room"], room["host"]
        self.secrets[0] = room["seats"][0]
        host, guest = Client(base, self.room), Client(base, self.room)
        self.clients = [host, guest]
        self.last = host.hello(self.host_secret)
        guest.hello()
        guest.send(type="join", name="Bob", colour=BLUE)
        self.secrets[1] = guest.until(lambda m: m["type"] == "joined")["secret"]
        host.until(lambda m: m["type"] == "room" and len(m["seats"]) == 2)

    def reconnect(self, base: str) -> list[dict]:
        """Both players back with their own links' secrets; their welcomes."""
        self.clients = [Client(base, self.room), Client(base, self.room)]
        return [self.clients[0].hello(self.host_secret), self.clients[1].hello(self.secrets[1])]

    def start(self) -> None:
        self.clients[0].send(type="start", secret=self.host_secret)

    def roll(self) -> None:
        seat = self.last["current"]
        time.sleep(PACE)
        self.clients[seat].send(type="roll", seat=seat, secret=self.secrets[seat])

    def told(self, timeout: float = 20.0) -> dict:
        """The next turn, as both players are told it (the same to each)."""
        msgs = [c.until(lambda m: m["type"] in ("turn", "error"), timeout) for c in self.clients]
        assert msgs[0]["type"] == "turn", msgs[0]
        assert {json.dumps({**m, "seq": 0}, sort_keys=True) for m in msgs} == {
            json.dumps({**msgs[0], "seq": 0}, sort_keys=True)
        }
        turn = msgs[0]
        self.turns[turn["turn"]] = [{k: v for k, v in e.items() if k != "text"} for e in turn["events"]]
        self.last = {**self.last, **turn}
        return turn

    def close(self) -> None:
        for c in self.clients:
            try:
                c.close()
            except Exception:
                pass


def _ok(db: Path) -> None:
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()


def _check_resumed(table: Table, welcomes: list[dict], seen_before: int) -> None:
    """The restarted room is where the players left it (or one turn on: written, killed before it was told)."""
    host, guest = welcomes
    assert host["you"] == {"seat": 0, "host": True} and guest["you"] == {"seat": 1, "host": False}
    assert host["restored"] and host["status"] in ("playing", "over")
    turn = host["turn"]
    assert turn in (seen_before, seen_before + 1), (turn, seen_before)
    if turn == seen_before and seen_before:
        for key in ("positions", "current", "finished", "round"):
            assert host[key] == table.last[key], key
    assert "The server restarted; the game is back where it was." in host["log"]
    table.last = {**table.last, **host}


def _play_until(table: Table, turns: int) -> None:
    while table.last["status"] == "playing" and len(table.turns) < turns:
        table.roll()
        table.told()


def _run(tmp_path: Path, seed: int, kills: int) -> None:
    rng = random.Random(seed)
    db = tmp_path / "games.sqlite"
    table = Table()
    srv = Serve(db)
    try:
        table.open(srv.base)
        if rng.random() < 0.5:  # killed in the lobby: the room and both seats come back
            srv.kill()
            _ok(db)
            srv = Serve(db)
            welcomes = table.reconnect(srv.base)
            assert welcomes[0]["status"] == "lobby" and [s["name"] for s in welcomes[0]["seats"]] == ["Ann", "Bob"]
            assert welcomes[1]["you"]["seat"] == 1
        table.start()
        table.last = table.clients[0].until(lambda m: m["type"] == "room" and m["status"] == "playing")
        done = 0  # kill points in the game (fewer if the dice end it first)
        for _ in range(kills):
            _play_until(table, len(table.turns) + rng.randint(0, 4))
            if table.last["status"] == "over":
                break
            done += 1
            inside = rng.random() < 0.5
            if inside:  # the hook on: the kill lands inside the next turn's write transaction
                srv.hook.touch()
                table.roll()
                assert srv.inside.acquire(timeout=20), "no write began"
            else:  # a roll sent, the kill at a random moment of its handling
                table.roll()
                time.sleep(rng.uniform(0, 0.03))
            seen = len(table.turns)
            srv.kill()
            _ok(db)
            srv = Serve(db)
            welcomes = table.reconnect(srv.base)
            _check_resumed(table, welcomes, seen)
            if inside:
                assert welcomes[0]["turn"] == seen  # the turn being written when killed is not there
            if table.last["turn"] > seen:  # written, not told before the kill: its events come with the record
                table.turns[seen] = []
            # a fair countdown: the seat to move has a full one (or more) from its return
            assert (
                welcomes[0]["status"] == "over"
                or welcomes[0]["remaining"] == 0
                or welcomes[0]["remaining"] > COUNTDOWN - 5
            )
        _play_until(table, 10**6)
        assert table.last["status"] == "over" and table.last["game_id"] > 0
        assert done >= min(kills, 2), done
        game_id = table.last["game_id"]
    finally:
        table.close()
        srv.stop()
    _ok(db)
    store = GameStore(db, create_key=False)
    try:
        record = store.record(game_id)
        assert store.count() == 1  # one game, never an abandoned copy
    finally:
        store.close()
    report = verify_game(record, key=load_key(db))
    assert report.passed and report.signature == "signed by this server", report
    # every turn of the record was told to the players, or written just before a kill and marked so; counted
    # from table.turns, not table.last["turn"]: a turn message gives the index of the turn just played, a
    # welcome the number played, and the game can end in a turn written but not told before the last kill
    assert record.is_over and record.online and sorted(table.turns) == list(range(len(record.turns())))
    by_turn: dict[int, list[dict]] = {}
    for e in record.log:
        by_turn.setdefault(e.turn, []).append(e.to_dict())
    for turn, events in table.turns.items():  # the same dice and log the players were told
        if events:
            assert by_turn[turn] == events, turn


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])  # more kill points: -m slow
def test_an_online_game_survives_sigkill(tmp_path, seed):
    """Two games, four kill points each (eight in all), lobby and write-transaction kills included."""
    _run(tmp_path, seed, kills=4)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 8))
def test_an_online_game_survives_many_sigkills(tmp_path, seed):
    _run(tmp_path, seed, kills=10)


# ------------------------------------------------------------ the rooms' round trip, in-process
TINY = Board(25, {3: 11, 17: 4, 20: 24}, name="tiny")


def test_rooms_round_trip_through_the_store(tmp_path):
    """Lobby, playing and over rooms written by one manager and rebuilt by another: the same state,
    no secret on disk (only hashes), the seats' secrets open the same seats, the game goes on."""
    from snlmarkov.web.rooms import RoomManager

    path = tmp_path / "g.sqlite"
    seats = [{"name": "Ann", "colour": RED, "ai": False}, {"name": "Bot", "colour": BLUE, "ai": True}]

    async def first() -> dict:
        store = GameStore(path)
        manager = RoomManager({"tiny": TINY}, store=store, seed=3, ai_delay=0.0)
        lobby = manager.create("online", seats[:1], board="tiny", countdown=7)
        await lobby.save()
        playing = manager.create("local", seats, board="tiny")
        await playing.start()
        async with playing.lock:
            for _ in range(3):
                await playing._play(skip=False)
        over = manager.create("local", seats, board="tiny", mode="classic")
        await over.start()
        async with over.lock:
            while over.status == "playing":
                await over._play(skip=False)
        out = {r.id: (r.snapshot(), r.seats[0].secret, r.host_secret) for r in (lobby, playing, over)}
        for room in manager.rooms.values():
            room._cancel_timer()
        manager.odds.shutdown()
        store.close()
        return out

    async def second(before: dict) -> None:
        store = GameStore(path)
        manager = RoomManager({"tiny": TINY}, store=store, seed=4, ai_delay=0.0)
        manager.start()
        try:
            assert set(manager.rooms) == set(before)
            for room_id, (snap, seat_secret, host_secret) in before.items():
                room = manager.rooms[room_id]
                again = room.snapshot()
                for key in ("kind", "status", "board", "rules", "mode", "countdown", "seats", "positions", "current"):
                    assert again[key] == snap[key], (room_id, key)
                assert again["turn"] == snap["turn"] and again["finished"] == snap["finished"]
                assert again["log"][:-1] == snap["log"] and again["restored"]
                assert room.host_secret == "" and room.seats[0].secret == ""  # not on disk
                assert room._is_host(host_secret) and room.seats[0].opens(seat_secret)
                assert not room._is_host(seat_secret) and not room.seats[0].opens(host_secret)
                assert room.seats[0].secret == seat_secret  # learned back for the rematch
            raw = (
                path.read_bytes() + Path(f"{path}-wal").read_bytes()
                if Path(f"{path}-wal").exists()
                else path.read_bytes()
            )
            for _snap, seat_secret, host_secret in before.values():
                assert seat_secret.encode() not in raw and host_secret.encode() not in raw
            playing = next(r for r in manager.rooms.values() if r.status == "playing")
            async with playing.lock:
                while playing.status == "playing":
                    await playing._play(skip=False)
            assert playing.game_id > 0 and verify_game(store.record(playing.game_id), key=load_key(path)).passed
        finally:
            await manager.shutdown()
            store.close()

    before = asyncio.run(first())
    asyncio.run(second(before))


def test_an_old_database_gets_the_room_tables_and_keeps_its_games(tmp_path):
    from snlmarkov import Game

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE games (id INTEGER PRIMARY KEY AUTOINCREMENT, room TEXT NOT NULL, status TEXT NOT NULL "
        "CHECK (status IN ('finished', 'abandoned')), mode TEXT NOT NULL, players INTEGER NOT NULL, "
        "turns INTEGER NOT NULL, finished_at REAL NOT NULL, record TEXT NOT NULL)"
    )
    record = Game(players=2, rng=1).play()
    con.execute(
        "INSERT INTO games (room, status, mode, players, turns, finished_at, record) VALUES (?,?,?,?,?,?,?)",
        ("r", "finished", record.mode, 2, len(record.turns()), 1.0, record.to_json()),
    )
    con.commit()
    con.close()
    store = GameStore(path)
    assert store.count() == 1 and store.record(1) == record and store.open_rooms() == []
    store.close()
    con = sqlite3.connect(path)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"games", "rooms", "room_turns"} <= tables and con.execute("PRAGMA user_version").fetchone()[0] == 2
    con.close()


def test_a_busy_database_holds_the_turn_back_and_says_so(tmp_path):
    """A database held by another connection: the turn waits for its write (it is not told before), the
    players are told writing is behind, and once the lock goes the turn is told and on disk."""
    from snlmarkov.web.rooms import Connection, RoomManager

    path = tmp_path / "g.sqlite"
    seats = [{"name": "Ann", "colour": RED, "ai": False}, {"name": "Bob", "colour": BLUE, "ai": False}]

    async def run() -> None:
        store = GameStore(path, timeout=0.05, wait=30)
        manager = RoomManager({"tiny": TINY}, store=store, seed=1)
        room = manager.create("local", seats, board="tiny")
        await room.start()
        conn = Connection()
        room.conns.add(conn)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        task = asyncio.ensure_future(room.handle(conn, _roll(room)))
        await asyncio.sleep(1.5)
        told = [json.loads(conn.outbox.get_nowait()) for _ in range(conn.outbox.qsize())]
        assert [m["type"] for m in told] == ["saving"] and told[0]["saving"] == "behind"
        assert not task.done()
        holder.execute("COMMIT")
        holder.close()
        await asyncio.wait_for(task, 20)
        turn = json.loads(conn.outbox.get_nowait())
        assert turn["type"] == "turn" and turn["saving"] == "ok"
        (row,) = [r for r in store.open_rooms() if r.id == room.id]
        assert [t for t, _ in row.turns] == [0]
        room._cancel_timer()
        manager.odds.shutdown()
        store.close()

    asyncio.run(run())


def test_a_turn_is_told_by_the_commit_that_writes_it_and_after_a_failed_write_too(tmp_path):
    """The turn goes out from the group commit, with the turn on disk, before the rolling task wakes; a write
    that fails is logged and the turn still told, saying so."""
    from snlmarkov.web.rooms import Connection, RoomManager

    path = tmp_path / "g.sqlite"
    seats = [{"name": "Ann", "colour": RED, "ai": False}, {"name": "Bob", "colour": BLUE, "ai": False}]

    async def run() -> None:
        store = GameStore(path)
        manager = RoomManager({"tiny": TINY}, store=store, seed=1)
        room = manager.create("local", seats, board="tiny")
        await room.start()
        conn = Connection()
        room.conns.add(conn)
        on_disk: list[list[int]] = []
        push = conn.push

        def spy(message):  # what is on disk when the turn is told
            on_disk.append([t for r in store.open_rooms() if r.id == room.id for t, _ in r.turns])
            push(message)

        conn.push = spy
        task = asyncio.ensure_future(room.handle(conn, _roll(room)))
        while conn.outbox.empty():
            assert not task.done()  # told before the task that rolled has woken from its write
            await asyncio.sleep(0)
        await task
        turn = json.loads(conn.outbox.get_nowait())
        assert turn["type"] == "turn" and turn["turn"] == 0 and turn["saving"] == "ok" and on_disk == [[0]]

        def fail(row):  # the write fails (not a busy database): the turn is still told, saying so
            def bad(db):
                raise sqlite3.OperationalError("disk I/O error (planted)")

            return store._enqueue(bad, "room")

        store.save_room_later = fail
        await room.handle(conn, _roll_seat(room, room.game.current_seat))
        turn = json.loads(conn.outbox.get_nowait())
        assert turn["type"] == "turn" and turn["turn"] == 1 and turn["saving"] == "failed"
        room._cancel_timer()
        manager.odds.shutdown()
        store.close()

    asyncio.run(run())


def test_a_room_reaped_while_the_database_is_busy_is_stored_once(tmp_path):
    """The reaper closes an idle room while another connection holds the database past the store's wait:
    its game stays queued in the store (written when the lock goes), the room leaves memory, and the
    next sweeps do not queue the same game again: one abandoned game, not one a sweep."""
    from snlmarkov.web.rooms import RoomManager

    path = tmp_path / "g.sqlite"
    seats = [{"name": "Ann", "colour": RED, "ai": False}, {"name": "Bob", "colour": BLUE, "ai": False}]

    async def run() -> None:
        store = GameStore(path, timeout=0.05, wait=0.3)
        manager = RoomManager({"tiny": TINY}, store=store, seed=1, idle_timeout=0.0)
        room = manager.create("local", seats, board="tiny")
        await room.start()
        async with room.lock:
            for _ in range(3):
                await room._play(skip=False)
        room.idle_since = 0.0
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            for _ in range(3):  # three sweeps while the database is held
                await manager.reap()
            dropped, behind = room.id not in manager.rooms, store.status().behind
        finally:
            holder.execute("COMMIT")
            holder.close()
        manager.odds.shutdown()
        store.close()  # writes what is queued
        again = GameStore(path)
        try:
            assert [g.status for g in again.games()] == ["abandoned"]
            assert dropped and behind
            assert verify_game(again.record(1), key=load_key(path)).rules_verdict == "unfinished"
            assert room.id not in {r.id for r in again.open_rooms()}
        finally:
            again.close()

    asyncio.run(run())


def test_a_game_finished_while_the_database_is_busy_is_told_its_id_once_written(tmp_path):
    """The last turn's write waits past the store's wait: the result is told with no id yet and "behind";
    the game stays queued, and once the lock goes it is written and the room tells its id, saving "ok"."""
    from snlmarkov.web.rooms import Connection, RoomManager

    path = tmp_path / "g.sqlite"
    seats = [{"name": "Ann", "colour": RED, "ai": False}, {"name": "Bob", "colour": BLUE, "ai": False}]

    async def run() -> None:
        store = GameStore(path, timeout=0.05, wait=0.3)
        manager = RoomManager({"two": Board(2)}, store=store, seed=1)
        room = manager.create("local", seats, board="two")
        await room.start()
        conn = Connection()
        room.conns.add(conn)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            async with room.lock:
                while room.status == "playing":
                    await room._play(skip=False)
            told = [json.loads(conn.outbox.get_nowait()) for _ in range(conn.outbox.qsize())]
            over = [m for m in told if m["type"] == "turn" and m["status"] == "over"]
            assert len(over) == 1 and over[0]["game_id"] == 0 and over[0]["saving"] == "behind"
            assert store.count() == 0 and store.status().behind
        finally:
            holder.execute("COMMIT")
            holder.close()
        for _ in range(200):
            if room.game_id:
                break
            await asyncio.sleep(0.05)
        late = json.loads(conn.outbox.get_nowait())
        assert late["type"] == "room" and late["game_id"] == room.game_id == 1 and late["saving"] == "ok"
        assert store.count() == 1 and verify_game(store.record(1), key=load_key(path)).whole_game
        room._cancel_timer()
        manager.odds.shutdown()
        store.close()

    asyncio.run(run())


def _roll(room):
    return _roll_seat(room, 0)


def _roll_seat(room, seat):
    from snlmarkov.web.protocol import parse_message

    return parse_message(json.dumps({"type": "roll", "seat": seat, "secret": room.seats[seat].secret}))


def test_the_countdown_after_a_restart_is_a_fresh_full_one(tmp_path):
    """An online room with an AI still racing, restarted on a human's turn: that seat gets a full countdown
    and the reconnection grace, then a full countdown again from its return (once: not on a second return)."""
    from snlmarkov.web.rooms import RESTORE_GRACE, Connection, RoomManager

    path = tmp_path / "g.sqlite"
    countdown = 5.0

    async def first() -> tuple[str, str]:
        store = GameStore(path)
        manager = RoomManager({"tiny": TINY}, store=store, seed=2, ai_delay=60.0)
        room = manager.create(
            "online", [{"name": "Ann", "colour": RED, "ai": False}], board="tiny", countdown=countdown
        )
        room._add_seat("Bot", BLUE, ai=True)
        await room.start()
        async with room.lock:
            while room.game.current_seat != 0 or room.game.total_turns == 0:
                await room._play(skip=False)
        room._cancel_timer()
        manager.odds.shutdown()
        store.close()
        return room.id, room.host_secret

    async def second(room_id: str, host_secret: str) -> None:
        store = GameStore(path)
        manager = RoomManager({"tiny": TINY}, store=store, ai_delay=60.0)
        manager.start()
        try:
            room = manager.rooms[room_id]
            assert room.game.current_seat == 0 and not room.paused  # the AI races: the countdown runs
            assert countdown + RESTORE_GRACE - 1 < room.remaining() <= countdown + RESTORE_GRACE
            await asyncio.sleep(0.3)
            conn = Connection()
            room.conns.add(conn)
            room._hello(conn, {"secret": host_secret})
            assert conn.seat == 0 and countdown - 0.2 < room.remaining() <= countdown  # full, from now
            await asyncio.sleep(0.3)
            room.disconnect(conn)
            again = Connection()
            room._hello(again, {"secret": host_secret})
            assert room.remaining() < countdown - 0.2  # only once
        finally:
            await manager.shutdown()
            store.close()

    asyncio.run(second(*asyncio.run(first())))

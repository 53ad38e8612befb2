"""The web server under hostile clients: every client's cost is bounded, and one client cannot stall another.

Servers bind to 127.0.0.1; a hostile client connects from 127.0.0.2 (still
loopback) so that the server counts it apart from the well-behaved one.
Every flood is bounded in count and time and stops by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import Future
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("websockets")

from _webserver import Client, ServerThread, create_room, http  # noqa: E402

from snlmarkov import Board, Rules  # noqa: E402
from snlmarkov.errors import LimitError  # noqa: E402
from snlmarkov.web import odds as live  # noqa: E402
from snlmarkov.web import serving  # noqa: E402
from snlmarkov.web.app import create_app  # noqa: E402
from snlmarkov.web.limits import ServerLimits, Throttle, client_key  # noqa: E402
from snlmarkov.web.store import GameStore  # noqa: E402

TINY = Board(25, {3: 11, 17: 4, 20: 24}, name="tiny")
LONG = Board(400, name="long")  # a game that lasts: about 115 turns a seat
RED, BLUE, GREEN = "#e53935", "#1e88e5", "#43a047"
TWO = [{"name": "Ann", "colour": RED}, {"name": "Bob", "colour": BLUE}]


def _loopback_alias_works() -> bool:
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.2", 0))
        return True
    except OSError:
        return False


needs_alias = pytest.mark.skipif(not _loopback_alias_works(), reason="127.0.0.2 is not a loopback address here")


@pytest.fixture
def serve():
    started = []

    def start(**kw):
        srv = ServerThread(create_app(**{"boards": {"tiny": TINY, "long": LONG}, "ai_delay": 0.01, **kw})).start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()


def request(base, path, *, body=b"", headers=None, method="POST", source=None):
    """(status, headers, decoded JSON or text) of one raw HTTP request."""
    import http.client

    port = int(base.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0) if source else None)
    try:
        conn.request(method, path, body, headers or {})
        r = conn.getresponse()
        text = r.read().decode()
        try:
            return r.status, dict(r.getheaders()), json.loads(text)
        except ValueError:
            return r.status, dict(r.getheaders()), text
    finally:
        conn.close()


JSON = {"Content-Type": "application/json"}
ROOM = json.dumps({"kind": "local", "seats": TWO})


# ------------------------------------------------------------------ request checks
def test_host_origin_and_content_type(serve):
    srv = serve()
    ok = request(srv.base, "/", method="GET")
    assert ok[0] == 200
    csp = ok[1]["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert ok[1]["x-frame-options"] == "DENY" and ok[1]["x-content-type-options"] == "nosniff"
    # DNS rebinding: a foreign name in Host is not served; IP addresses and localhost are
    assert request(srv.base, "/", method="GET", headers={"Host": "evil.example"})[0] == 400
    assert request(srv.base, "/api/config", method="GET", headers={"Host": f"localhost:{srv.port}"})[0] == 200
    # a POST must be JSON (a cross-site form cannot send that) and come from this server's pages
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        status, _, data = request(srv.base, "/api/rooms", body=ROOM, headers={"Content-Type": kind})
        assert (status, data["error"]) == (415, "bad_content_type"), kind
    status, _, data = request(srv.base, "/api/rooms", body=ROOM, headers={**JSON, "Origin": "http://evil.example"})
    assert (status, data["error"]) == (403, "bad_origin")
    own = {**JSON, "Origin": f"http://127.0.0.1:{srv.port}"}
    assert request(srv.base, "/api/rooms", body=ROOM, headers=own)[0] == 200
    assert len(srv.rooms.rooms) == 1  # only the last one made a room
    # a WebSocket from another site's page is never accepted; from this server's page it is
    room = create_room(srv.base, kind="local", seats=TWO)
    from websockets.sync.client import connect

    url = f"ws://127.0.0.1:{srv.port}/ws/{room['room']}"
    with pytest.raises(Exception, match="403"):
        connect(url, origin="http://evil.example", open_timeout=5)
    with pytest.raises(Exception, match="403"), socket.create_connection(("127.0.0.1", srv.port)) as sock:
        connect(url.replace("127.0.0.1", "evil.example"), sock=sock, open_timeout=5)  # Host: evil.example
    with connect(url, origin=f"http://127.0.0.1:{srv.port}", open_timeout=5) as ws:
        ws.send(json.dumps({"type": "hello"}))
        assert json.loads(ws.recv(timeout=5))["type"] == "welcome"


def test_allowed_host_and_origin_behind_a_proxy(serve):
    srv = serve(allowed_hosts=["snl.example.org"], allowed_origins=["https://snl.example.org"])
    assert request(srv.base, "/", method="GET", headers={"Host": "snl.example.org"})[0] == 200
    proxied = {**JSON, "Host": "127.0.0.1", "Origin": "https://snl.example.org"}
    assert request(srv.base, "/api/rooms", body=ROOM, headers=proxied)[0] == 200
    assert request(srv.base, "/", method="GET", headers={"Host": "other.example.org"})[0] == 400


def test_deep_or_broken_bodies_are_400(serve):
    srv = serve()
    for body, code in (
        ("[" * 4000 + "]" * 4000, "too_deep"),
        ('{"kind": "local", "seats": ' + "[" * 50 + "]" * 50 + "}", "too_deep"),
        (b"\xff\xfe{}", "bad_json"),
        ("{not json", "bad_json"),
    ):
        status, _, data = request(srv.base, "/api/rooms", body=body, headers=JSON)
        assert (status, data["error"]) == (400, code), body[:20]


# ------------------------------------------------------------------ per-address limits
def test_throttles_count_an_ipv6_network_as_one_client_and_limits_are_checked():
    t = Throttle(rate=1e-9, burst=2)  # no refill within the test
    assert [t.wait("2001:db8::1"), t.wait("2001:db8::ffff")] == [0.0, 0.0]  # one /64: one client
    assert t.wait("2001:db8:0:0:1::7") > 0  # the same /64, past its burst
    assert t.wait("2001:db8:0:1::1") == 0.0  # another /64 is another client
    assert client_key("::ffff:10.0.0.1") == client_key("10.0.0.1") == "10.0.0.1"
    assert client_key("2001:db8::1") != client_key("2001:db8:0:1::1")
    for bad in ({"room_rate": 0}, {"room_burst": -1.0}, {"rooms_per_address": 2.5}, {"max_connections": True}):
        with pytest.raises(LimitError, match=next(iter(bad))):
            ServerLimits(**bad)


@needs_alias
def test_room_creation_is_throttled_per_address(serve):
    srv = serve(limits=ServerLimits(room_rate=0.5, room_burst=5, rooms_per_address=8))
    answers = [request(srv.base, "/api/rooms", body=ROOM, headers=JSON, source="127.0.0.2") for _ in range(12)]
    statuses = [a[0] for a in answers]
    assert statuses[:5] == [200] * 5 and set(statuses[5:]) == {429}
    assert all(1 <= int(a[1]["retry-after"]) <= 3 for a in answers[5:])
    assert answers[-1][2]["error"] == "rate_limited"
    # another address is not affected
    assert request(srv.base, "/api/rooms", body=ROOM, headers=JSON, source="127.0.0.1")[0] == 200


@needs_alias
def test_rooms_per_address_are_capped(serve):
    srv = serve(limits=ServerLimits(room_rate=1000, room_burst=1000, rooms_per_address=3))
    online = json.dumps({"kind": "online", "seats": TWO[:1]})
    statuses = [request(srv.base, "/api/rooms", body=online, headers=JSON, source="127.0.0.2")[0] for _ in range(5)]
    assert statuses == [200, 200, 200, 429, 429]
    status, headers, data = request(srv.base, "/api/rooms", body=online, headers=JSON, source="127.0.0.2")
    assert data["error"] == "too_many_rooms" and "retry-after" in headers
    assert request(srv.base, "/api/rooms", body=online, headers=JSON, source="127.0.0.1")[0] == 200


@needs_alias
def test_messages_are_throttled_per_address(serve):
    srv = serve(rate=1000, burst=1000, limits=ServerLimits(message_rate=5, message_burst=10))
    room = create_room(srv.base, kind="local", seats=TWO)
    from websockets.sync.client import connect

    flooders, stack = [], contextlib.ExitStack()
    for _ in range(3):  # three connections of one address share its budget
        sock = socket.create_connection(("127.0.0.1", srv.port), source_address=("127.0.0.2", 0))
        ws = stack.enter_context(connect(f"ws://127.0.0.1:{srv.port}/ws/{room['room']}", sock=sock, open_timeout=5))
        ws.send(json.dumps({"type": "hello"}))
        ws.recv(timeout=5)
        flooders.append(ws)
    for _ in range(10):
        for ws in flooders:
            ws.send('{"type": "ping"}')
    codes, said = [], set()
    for ws in flooders:
        try:
            while True:
                msg = json.loads(ws.recv(timeout=1))
                codes.append(msg.get("code", "pong"))
                said.add(msg.get("message", ""))
        except TimeoutError:
            pass
    stack.close()
    assert codes.count("pong") <= 12 and "rate_limited" in codes
    assert any("from your address" in m for m in said), said  # it names the limit hit
    # the other address plays on
    c = Client(srv.base, room["room"])
    c.hello(room["host"])
    c.send(type="roll", seat=0, secret=room["seats"][0])
    assert c.until(lambda m: m["type"] == "turn")["seat"] == 0
    c.close()


@needs_alias
def test_slow_and_silent_sockets_are_closed_and_capped(serve):
    srv = serve(limits=ServerLimits(header_timeout=1.0, connections_per_address=10))
    socks = []
    for k in range(15):
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=5, source_address=("127.0.0.2", 0))
        if k % 2:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # a request that never ends
        socks.append(s)
    time.sleep(0.3)
    # past the cap of 10 an address's connections are answered 503 and closed at once
    refused = 0
    for s in socks[10:]:
        s.settimeout(2)
        refused += s.recv(100).startswith(b"HTTP/1.1 503")
    assert refused == 5
    # another address is served meanwhile
    assert http(srv.base, "/api/config")[0] == 200
    # the first ten (silent, or stuck in their headers) are closed after the header timeout
    t0 = time.monotonic()
    for s in socks[:10]:
        s.settimeout(5)
        assert s.recv(100) == b""
    assert time.monotonic() - t0 < 4
    # trickling a header a byte at a time does not hold a connection either
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=5, source_address=("127.0.0.2", 0))
    t0, closed = time.monotonic(), False
    while time.monotonic() - t0 < 4 and not closed:
        try:
            s.send(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: "[int(10 * (time.monotonic() - t0)) % 40 :][:1] or b"a")
            closed = s.recv(100, socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed = True
        time.sleep(0.1)
    assert closed and time.monotonic() - t0 < 3
    for s in socks:
        s.close()
    time.sleep(0.2)
    # the address may connect again, and a complete request is served
    assert request(srv.base, "/api/config", method="GET", source="127.0.0.2")[0] == 200


def test_a_websocket_must_greet_and_not_idle(serve):
    srv = serve(limits=ServerLimits(hello_timeout=0.5, idle_timeout=1.0))
    room = create_room(srv.base, kind="local", seats=TWO)
    silent = Client(srv.base, room["room"])
    assert silent.error(5)["code"] == "timeout"
    with pytest.raises(Exception):
        silent.recv(5)
    assert silent.ws.close_code == 4401
    idle = Client(srv.base, room["room"])
    assert idle.hello()["type"] == "welcome"
    t0 = time.monotonic()
    assert idle.error(5)["code"] == "timeout" and time.monotonic() - t0 >= 0.9
    with pytest.raises(Exception):
        idle.recv(5)
    assert idle.ws.close_code == 4408


# ------------------------------------------------------------------ the odds pool
def test_odds_solves_are_shared_bounded_and_kept_within_their_memory(monkeypatch):
    gate = threading.Event()
    calls = []

    class SlowOdds:
        def __init__(self, board, rules, players, mode):
            calls.append(rules.bump_to)
            gate.wait(10)
            self.table = bytearray(1000)

    monkeypatch.setattr(live, "Odds", SlowOdds)
    solver = live.OddsSolver(workers=1, queue=2, cache_bytes=2500)
    b = Board(30)
    a1 = solver.submit(b, Rules(bump=True, bump_to=1), 2, "classic")
    a2 = solver.submit(b, Rules(bump=True, bump_to=1), 2, "classic")
    assert a1 is a2  # one solve for the same table in flight
    queued = [solver.submit(b, Rules(bump=True, bump_to=k), 2, "classic") for k in (2, 3)]
    assert all(isinstance(f, Future) for f in queued)
    assert solver.submit(b, Rules(bump=True, bump_to=4), 2, "classic") is None  # pool full: refused at once
    assert (
        solver.win_odds(b, Rules(bump=True, bump_to=1), "classic", positions=(0, 0), finished=(), current=0).method
        == "pending"
    )
    gate.set()
    for f in (a1, *queued):
        f.result(10)
    assert calls == [1, 2, 3]
    assert solver.held_bytes <= 2500 and not solver.is_prepared(b, Rules(bump=True, bump_to=1), 2, "classic")
    assert solver.is_prepared(b, Rules(bump=True, bump_to=3), 2, "classic")  # the most recent kept
    done = solver.submit(b, Rules(bump=True, bump_to=3), 2, "classic")
    assert done.done() and calls == [1, 2, 3]  # a kept table is not solved again
    solver.shutdown()


def test_nbytes_sees_a_real_table():
    odds = live.Odds(TINY, Rules(bump=True), players=3)
    assert live.nbytes(odds) > live.nbytes(live.Odds(TINY, Rules(), players=3)) > 1000


def test_a_busy_odds_pool_does_not_stall_games_or_the_store(tmp_path, serve, monkeypatch):
    """Slow odds solves fill their pool; new games start without odds and finished games are stored at once."""
    gate = threading.Event()

    class BlockedOdds:
        def __init__(self, *a, **k):
            gate.wait(20)
            raise live.SnlError("never mind")

    monkeypatch.setattr(live, "Odds", BlockedOdds)
    store = GameStore(tmp_path / "g.sqlite")
    srv = serve(
        store=store,
        odds_wait=0.05,
        rate=1000,
        burst=1000,
        limits=ServerLimits(odds_workers=1, odds_queue=1, message_rate=1000, message_burst=1000),
    )
    try:
        methods = []
        for k in (1, 2, 5, 6):
            rules = {"bump": True, "bump_to": k}
            room = create_room(srv.base, kind="local", board="tiny", rules=rules, seats=TWO)
            methods.append(http(srv.base, f"/api/rooms/{room['room']}")[1]["odds"]["method"])
        assert methods == ["pending", "pending", "busy", "busy"]
        # a game plays to its end and is stored while the odds threads are all stuck
        c = Client(srv.base, room["room"])
        state = c.hello(room["host"])
        assert "without them" in " ".join(state["log"])
        t0 = time.monotonic()
        while state["status"] != "over":
            c.send(type="roll", seat=state["current"], secret=room["seats"][state["current"]])
            state = {**state, **c.until(lambda m: m["type"] == "turn")}
        assert time.monotonic() - t0 < 30 and state["game_id"] > 0 and store.count() == 1
        c.close()
    finally:
        gate.set()
        store.close()


# ------------------------------------------------------------------ rooms
def test_host_secret_rolls_only_for_the_host_seat(serve):
    srv = serve(countdown=30, limits=ServerLimits(room_rate=100, room_burst=100))
    room = create_room(srv.base, kind="online", seats=TWO[:1])
    host = Client(srv.base, room["room"])
    host.hello(room["host"])
    bea = Client(srv.base, room["room"])
    bea.hello()
    bea.send(type="join", name="Bea", colour=GREEN)
    bea_secret = bea.until(lambda m: m["type"] == "joined")["secret"]
    host.send(type="start", secret=room["host"])
    host.until(lambda m: m["type"] == "room" and m["status"] == "playing")
    host.send(type="roll", seat=0, secret=room["host"])  # the host's own seat: yes
    assert host.until(lambda m: m["type"] == "turn")["seat"] == 0
    host.send(type="roll", seat=1, secret=room["host"])  # Bea's seat, on her turn: no
    assert host.error()["code"] == "bad_secret"
    bea.send(type="roll", seat=1, secret=bea_secret)
    assert bea.until(lambda m: m["type"] == "turn" and m["seat"] == 1)["skipped"] is False
    host.close()
    bea.close()


def test_nobody_racing_present_pauses_the_game(serve):
    """Last one standing, short countdown: once the AI seats are out, an absent host is not skipped for ever."""
    srv = serve(countdown=30, limits=ServerLimits(room_rate=100, room_burst=100))
    room = create_room(srv.base, kind="online", seats=TWO[:1], board="tiny")
    host = Client(srv.base, room["room"])
    host.hello(room["host"])
    host.send(type="configure", secret=room["host"], countdown=0.05, mode="last_one_standing")
    for name in ("R1", "R2"):
        host.send(type="add_ai", secret=room["host"], name=name, colour=GREEN)
    host.send(type="start", secret=room["host"])
    host.until(lambda m: m["type"] == "room" and m["status"] == "playing")
    host.close()  # the host leaves; the AI seats race on, the host's turns are skipped
    the_room = srv.rooms.rooms[room["room"]]
    deadline = time.monotonic() + 60
    while not the_room.paused and the_room.status == "playing" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert the_room.paused or the_room.status == "over"
    if the_room.status == "over":  # the host's seat came last anyway: nothing to pause
        return
    assert set(the_room.game.finishing_order) == {1, 2}
    turns = the_room.game.total_turns
    time.sleep(0.5)  # ten countdowns
    assert the_room.game.total_turns == turns  # no skip while paused
    back = Client(srv.base, room["room"])
    welcome = back.hello(room["host"])
    assert welcome["paused"] is False and "is back" in welcome["log"][-1]
    assert back.until(lambda m: m["type"] == "turn")["skipped"]  # the countdown runs again
    back.close()


def test_the_reaper_stores_a_game_before_dropping_its_room(tmp_path, serve):
    store = GameStore(tmp_path / "g.sqlite")
    srv = serve(store=store, idle_timeout=0.3)
    try:
        room = create_room(srv.base, kind="local", board="tiny", seats=TWO)
        c = Client(srv.base, room["room"])
        c.hello(room["host"])
        c.send(type="roll", seat=0, secret=room["seats"][0])
        c.until(lambda m: m["type"] == "turn")
        c.close()
        deadline = time.monotonic() + 10
        while room["room"] in srv.rooms.rooms and time.monotonic() < deadline:
            time.sleep(0.05)
        assert room["room"] not in srv.rooms.rooms
        games = store.games()
        assert [(g.status, g.turns, g.room) for g in games] == [("abandoned", 1, room["room"])]
        assert len(store.record(games[0].id).turns()) == 1  # with its log
    finally:
        store.close()


def test_the_reaper_keeps_a_room_whose_game_could_not_be_stored(tmp_path):
    from snlmarkov.web.rooms import RoomManager

    class BrokenStore:
        def add(self, *a, **k):
            raise OSError("disk full")

    async def run():
        manager = RoomManager({"tiny": TINY}, store=BrokenStore(), idle_timeout=0.0)
        room = manager.create("local", TWO, board="tiny")
        await room.start()
        await room._play(skip=False)
        room.idle_since -= 1
        assert await manager.reap() == 0 and room.id in manager.rooms
        manager.store = None  # the store is back (here: none needed)
        assert await manager.reap() == 1 and room.id not in manager.rooms
        await manager.shutdown()

    logging.getLogger("snlmarkov.web").disabled = True
    try:
        asyncio.run(run())
    finally:
        logging.getLogger("snlmarkov.web").disabled = False


# ------------------------------------------------------------------ logs and the command
def test_running_out_of_files_is_logged_once_in_a_while():
    def record():
        exc = OSError(24, "Too many open files")
        return logging.LogRecord(
            "asyncio", logging.ERROR, "", 0, "socket.accept() out of system resource", (), (OSError, exc, None)
        )

    quiet = serving._Quiet(every=60)
    passed = [quiet.filter(r) for r in [record() for _ in range(1000)]]
    assert sum(passed) == 1
    other = logging.LogRecord("asyncio", logging.ERROR, "", 0, "something else", (), None)
    assert quiet.filter(other)


def test_serve_checks_the_port_before_anything(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        db = tmp_path / "games.sqlite"
        r = subprocess.run(
            [sys.executable, "-m", "snlmarkov", "serve", "--port", str(busy.getsockname()[1]), "--db", str(db)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert r.returncode != 0 and "port is in use" in r.stderr and "open http" not in r.stdout
    assert not db.exists()
    r = subprocess.run(
        [sys.executable, "-m", "snlmarkov", "serve", "--host", "999.999.999.999", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0 and "not an address" in r.stderr and r.stdout == "" and not db.exists()


# ------------------------------------------------------------------ the flood
def _roll_latencies(srv, count: int) -> list[float]:
    """Seconds from each roll sent to its turn received, for ``count`` rolls of a pass & play game."""
    out: list[float] = []
    while len(out) < count:
        room = create_room(srv.base, kind="local", board="long", seats=TWO)
        c = Client(srv.base, room["room"])
        state = c.hello(room["host"])
        while len(out) < count and state["status"] == "playing":
            time.sleep(0.12)  # a player's pace, within the limit of 10 messages a second
            t0 = time.perf_counter()
            c.send(type="roll", seat=state["current"], secret=room["seats"][state["current"]])
            state = {**state, **c.until(lambda m: m["type"] == "turn")}
            out.append(time.perf_counter() - t0)
        c.close()
    return out


@needs_alias
def test_a_flood_from_one_client_leaves_another_clients_game_alone(serve):
    """Rooms, messages and slow headers from 127.0.0.2 at once; 127.0.0.1 plays at its usual pace."""
    srv = serve(limits=ServerLimits(header_timeout=2.0))
    base = statistics.median(_roll_latencies(srv, 25))
    flood = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("_flood.py")), str(srv.port), "127.0.0.2", "8", "60"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.5)  # the flood is under way
        during = _roll_latencies(srv, 25)
        out, _ = flood.communicate(timeout=60)
    finally:
        flood.kill()
    counts = json.loads(out.strip().splitlines()[-1])
    # the flood was refused: room creation throttled (429) or its connections capped (503), the message
    # flood's connections closed, the slow sockets capped and timed out
    assert counts.get("rooms_429", 0) > 10 and counts.get("rooms_200", 0) <= 20
    assert counts.get("closed", 0) > 0 and counts.get("sent", 0) > 100
    assert counts.get("slow_open", 99) == 0
    assert len(srv.rooms.rooms) <= 20 + 4
    assert statistics.median(during) <= max(10 * base, base + 0.25), (base, statistics.median(during), counts)
    assert urllib.request.urlopen(srv.base + "/api/config", timeout=10).status == 200

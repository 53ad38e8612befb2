"""The web game's API against a real uvicorn server on a loopback port, with WebSocket clients."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("websockets")

from _webserver import ROOMY, Client, ServerThread, create_room, http  # noqa: E402

from snlmarkov import Board, verify_game  # noqa: E402
from snlmarkov.web.app import create_app  # noqa: E402
from snlmarkov.web.store import GameStore  # noqa: E402

TINY = Board(25, {3: 11, 17: 4, 20: 24}, name="tiny")
RED, BLUE, GREEN, YELLOW = "#e53935", "#1e88e5", "#43a047", "#fdd835"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    store = GameStore(tmp_path_factory.mktemp("web") / "games.sqlite")
    app = create_app(
        store=store,
        boards={"tiny": TINY, "jungle": Board.builtin()},
        countdown=5,
        ai_delay=0.01,
        rate=500,
        burst=500,
        limits=ROOMY,
    )
    srv = ServerThread(app).start()
    srv.store = store
    yield srv
    srv.stop()
    store.close()


def seats(*spec):
    return [{"name": n, "colour": c, "ai": ai} for n, c, ai in spec]


def play_out(client: Client, state: dict, secrets: dict[int, str], limit: int = 3000) -> dict:
    """Roll for the seats in ``secrets`` whenever it is their turn, until the game is over; the last turn."""
    last = state
    for _ in range(limit):
        if last["status"] == "over":
            return last
        cur = last["current"]
        if cur in secrets and last["status"] == "playing":
            client.send(type="roll", seat=cur, secret=secrets[cur])
        msg = client.until(lambda m: m["type"] in ("turn", "room"))
        last = {**last, **msg}
    raise AssertionError("the game did not end")


def turns_of(client: Client) -> list[dict]:
    return [m for m in client.messages if m["type"] == "turn"]


def test_pages_and_config(server):
    for path in ("/", "/room/anything", "/static/room.js", "/static/board.js", "/static/style.css"):
        status, _ = http(server.base, path)
        assert status == 200, path
    status, cfg = http(server.base, "/api/config")
    assert status == 200 and list(cfg["boards"]) == ["tiny", "jungle"]
    assert {f["name"] for f in cfg["rules_fields"]} >= {"finish", "bonus_on_six", "max_sixes", "bump"}
    assert http(server.base, "/api/rooms/nope")[0] == 404


@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_pass_and_play(server, mode):
    room = create_room(
        server.base,
        kind="local",
        mode=mode,
        seats=seats(("Ann", RED, False), ("Bob", BLUE, False), ("Cy", GREEN, False)),
    )
    c = Client(server.base, room["room"])
    welcome = c.hello(room["host"])
    assert welcome["type"] == "welcome" and welcome["status"] == "playing" and welcome["you"]["host"]
    assert welcome["odds"]["method"] == "exact" and abs(sum(welcome["odds"]["win"]) - 1) < 1e-9
    last = play_out(c, welcome, dict(enumerate(room["seats"])))
    assert c.seq_ok()
    turns = turns_of(c)
    assert [t["turn"] for t in turns] == list(range(len(turns)))  # none lost, none twice
    assert len(last["finished"]) == (1 if mode == "classic" else 3)
    for t in turns:
        assert abs(sum(t["odds"]["win"]) - 1) < 1e-9
    record = server.store.record(last["game_id"])  # stored before the result was broadcast
    assert record.is_over and record.mode == mode and [s.name for s in record.seats] == ["Ann", "Bob", "Cy"]
    assert list(record.finishing_order) == last["finished"]
    assert verify_game(record).passed
    c.close()


@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_play_with_ai(server, mode):
    room = create_room(
        server.base,
        kind="local",
        mode=mode,
        rules={"finish": "bounce", "bonus_on_six": False},
        seats=seats(("Ann", RED, False), ("Robot 1", BLUE, True), ("Robot 2", GREEN, True)),
    )
    assert room["seats"][1:] == ["", ""]  # the server plays those seats: no secrets
    c = Client(server.base, room["room"])
    welcome = c.hello(room["host"])
    assert welcome["rules"]["finish"] == "bounce"
    last = play_out(c, welcome, {0: room["seats"][0]})
    assert c.seq_ok() and last["status"] == "over"
    assert sum(t["seat"] != 0 for t in turns_of(c)) > 0  # the AI seats played
    assert verify_game(server.store.record(last["game_id"])).passed
    # the AI seats cannot be rolled for, even with the host's secret
    c2 = Client(server.base, room["room"])
    c2.hello()
    c2.send(type="roll", seat=1, secret=room["host"])
    assert c2.error()["code"] in ("not_playing", "bad_secret")
    c.close()
    c2.close()


def online_room(server, *names):
    """A started-lobby online room: the host and one joined client per name."""
    room = create_room(server.base, kind="online", seats=seats(("Host", RED, False)))
    host = Client(server.base, room["room"])
    assert host.hello(room["host"])["you"] == {"seat": 0, "host": True}
    players = []
    for i, name in enumerate(names):
        p = Client(server.base, room["room"])
        assert p.hello()["you"] == {"seat": -1, "host": False}
        p.send(type="join", name=name, colour=[BLUE, GREEN, YELLOW][i])
        joined = p.until(lambda m: m["type"] == "joined")
        assert joined["seat"] == i + 1
        players.append((p, joined["secret"]))
    return room, host, players


@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_online_room(server, mode):
    room, host, players = online_room(server, "Bea", "Cal")
    spectator = Client(server.base, room["room"])
    assert spectator.hello()["status"] == "lobby"
    (bea, bea_secret), (cal, cal_secret) = players
    # only the host configures and starts
    bea.send(type="start", secret=bea_secret)
    assert bea.error()["code"] == "not_host"
    bea.send(type="configure", secret=bea_secret, mode=mode)
    assert bea.error()["code"] == "not_host"
    host.send(type="configure", secret=room["host"], mode=mode, rules={"max_sixes": 1}, board="tiny")
    room_msg = spectator.until(lambda m: m["type"] == "room" and m["mode"] == mode)
    assert room_msg["rules"]["max_sixes"] == 1 and len(room_msg["seats"]) == 3
    host.send(type="start", secret=room["host"])
    state = spectator.until(lambda m: m["type"] == "room" and m["status"] == "playing")
    clients = {0: (host, room["host"]), 1: (bea, bea_secret), 2: (cal, cal_secret)}
    # a player cannot roll for another seat, nor out of turn
    cur = state["current"]
    other = (cur + 1) % 3
    clients[other][0].send(type="roll", seat=cur, secret=clients[other][1])
    assert clients[other][0].error()["code"] == "bad_secret"
    clients[other][0].send(type="roll", seat=other, secret=clients[other][1])
    assert clients[other][0].error()["code"] == "not_your_turn"
    # every player rolls from their own connection; the spectator sees every turn
    last = state
    for _ in range(3000):
        if last["status"] == "over":
            break
        cur = last["current"]
        c, secret = clients[cur]
        c.send(type="roll", seat=cur, secret=secret)
        last = {**last, **spectator.until(lambda m: m["type"] == "turn")}
    assert last["status"] == "over" and spectator.seq_ok()
    assert not any(t["skipped"] for t in turns_of(spectator))
    record = server.store.record(last["game_id"])
    assert [s.name for s in record.seats] == ["Host", "Bea", "Cal"] and verify_game(record).passed
    # the other clients saw the same turns
    for c, _ in clients.values():
        c.until(lambda m: m.get("status") == "over")
        assert c.seq_ok()
        c.close()
    spectator.close()


def test_countdown_skips_a_stalled_player_and_reconnection(server):
    room, host, [(bea, bea_secret)] = online_room(server, "Bea")
    host.send(type="configure", secret=room["host"], countdown=0.3)
    host.send(type="start", secret=room["host"])
    state = host.until(lambda m: m["type"] == "room" and m["status"] == "playing")
    assert state["current"] == 0 and state["countdown"] == 0.3
    # the host rolls; Bea stalls: her turn is skipped, no roll is made for her
    host.send(type="roll", seat=0, secret=room["host"])
    t0 = host.until(lambda m: m["type"] == "turn")
    assert t0["seat"] == 0 and 0 < t0["remaining"] <= 0.3
    skip = host.until(lambda m: m["type"] == "turn")
    assert skip["seat"] == 1 and skip["skipped"] and [e["kind"] for e in skip["events"]] == ["skip"]
    assert skip["positions"][1] == 0
    # Bea goes away; after the countdown the host's own turn is skipped too if he stalls
    bea.close()
    gone = host.until(lambda m: m["type"] == "room")
    assert gone["seats"][1]["connected"] is False
    skip2 = host.until(lambda m: m["type"] == "turn")
    assert skip2["seat"] == 0 and skip2["skipped"]
    # Bea comes back with her link: her seat again, and she can roll
    again = Client(server.base, room["room"])
    welcome = again.hello(bea_secret)
    assert welcome["you"] == {"seat": 1, "host": False}
    assert welcome["seats"][1]["connected"] is True
    if welcome["current"] == 1:
        again.send(type="roll", seat=1, secret=bea_secret)
        turn = again.until(lambda m: m["type"] == "turn")
        assert turn["seat"] == 1 and not turn["skipped"]
    record = server.rooms.rooms[room["room"]].game.record()
    assert all(not t.rolls for t in record.turns() if t.skipped)
    host.close()
    again.close()


def test_lobby_host_rights(server):
    room, host, [(bea, bea_secret)] = online_room(server, "Bea")
    # name taken, bad colour, full room
    p = Client(server.base, room["room"])
    p.hello()
    p.send(type="join", name="Bea", colour=GREEN)
    assert p.error()["code"] == "name_taken"
    p.send(type="join", name="Dee", colour="red; background:url(x)")
    assert p.error()["code"] == "bad_field"
    bea.send(type="join", name="Bea2", colour=GREEN)
    assert bea.error()["code"] == "already_seated"
    bea.send(type="add_ai", secret=bea_secret, name="Robot", colour=GREEN)
    assert bea.error()["code"] == "not_host"
    bea.send(type="remove_seat", secret=bea_secret, seat=1)
    assert bea.error()["code"] == "not_host"
    host.send(type="configure", secret=room["host"], rules={"faces": 1000})
    assert host.error()["code"] == "bad_rules"
    host.send(type="configure", secret=room["host"], rules={"teleport": True})
    assert host.error()["code"] == "bad_rules"
    host.send(type="configure", secret=room["host"], board="../../etc/passwd")
    assert host.error()["code"] == "bad_field"
    for k in range(4):
        host.send(type="add_ai", secret=room["host"], name=f"Robot {k}", colour=GREEN)
    full = host.until(lambda m: m["type"] == "room" and len(m["seats"]) == 6)
    assert [s["ai"] for s in full["seats"]] == [False, False, True, True, True, True]
    p.send(type="join", name="Dee", colour=GREEN)
    assert p.error()["code"] == "room_full"
    host.send(type="remove_seat", secret=room["host"], seat=5)
    host.until(lambda m: m["type"] == "room" and len(m["seats"]) == 5)
    host.send(type="remove_seat", secret=room["host"], seat=0)
    assert host.error()["code"] == "bad_seat"  # the host's own seat stays
    host.send(type="remove_seat", secret=room["host"], seat=1)  # Bea is told she has no seat now
    assert bea.until(lambda m: m["type"] == "you") == {"type": "you", "seat": -1, "host": False}
    bea.send(type="join", name="Bea", colour=BLUE)  # and may join again
    assert bea.until(lambda m: m["type"] == "joined")["seat"] == 4
    host.send(type="start", secret=room["host"])
    host.until(lambda m: m["type"] == "room" and m["status"] == "playing")
    p.send(type="join", name="Late", colour=GREEN)
    assert p.error()["code"] == "not_in_lobby"
    host.send(type="configure", secret=room["host"], mode="classic")
    assert host.error()["code"] == "not_in_lobby"
    for c in (host, bea, p):
        c.close()


def test_refused_messages_change_nothing(server):
    room = create_room(server.base, kind="local", seats=seats(("Ann", RED, False), ("Bob", BLUE, False)))
    c = Client(server.base, room["room"])
    welcome = c.hello(room["host"])
    before = http(server.base, f"/api/rooms/{room['room']}")[1]
    bad = [
        ("not json at all", "bad_json"),
        ("[1, 2, 3]", "bad_message"),
        ('{"type": 7}', "bad_message"),
        ('{"type": "teleport", "seat": 0}', "unknown_type"),
        ('{"type": "roll", "seat": 0}', "bad_message"),
        ('{"type": "roll", "seat": "0", "secret": "abcdefghij"}', "bad_field"),
        ('{"type": "roll", "seat": 9, "secret": "abcdefghij"}', "bad_field"),
        (json.dumps({"type": "roll", "seat": 0, "secret": "x" * 30}), "bad_secret"),
        (json.dumps({"type": "roll", "seat": 0, "secret": room["seats"][1]}), "bad_secret"),
        (json.dumps({"type": "roll", "seat": 1, "secret": room["seats"][1]}), "not_your_turn"),
        (json.dumps({"type": "roll", "seat": 0, "secret": "bad secret!"}), "bad_secret"),
        (json.dumps({"type": "hello"}), "bad_message"),  # already greeted
        (json.dumps({"type": "join", "name": "Eve", "colour": RED}), "not_online"),
        (json.dumps({"type": "start", "secret": room["host"]}), "not_in_lobby"),
        (json.dumps({"type": "roll", "seat": 0, "secret": room["seats"][0], "pad": "x" * 5000}), "too_big"),
        ('{"type": "roll", "seat": 0, "secret": ' + "[" * 2000 + "]" * 2000 + "}", "too_deep"),
        # 2,125 characters but 4,225 bytes of UTF-8: the limit counts bytes
        ('{"type": "ping", "pad": "' + "\u00e9" * 2100 + '"}', "too_big"),
    ]
    for text, code in bad:
        c.send_raw(text)
        assert c.error()["code"] == code, text
    c.send_raw(b"\x00\x01binary")
    assert c.error()["code"] == "bad_message"
    after = http(server.base, f"/api/rooms/{room['room']}")[1]
    assert after == before and after["seq"] == welcome["seq"]  # nothing changed, nothing broadcast
    # a frame over the server's hard limit closes that connection only
    big = Client(server.base, room["room"])
    big.send_raw("x" * 100_000)
    with pytest.raises(Exception):
        big.recv(5)
    # the room still plays
    c.send(type="roll", seat=0, secret=room["seats"][0])
    assert c.until(lambda m: m["type"] == "turn")["seat"] == 0
    c.close()


def test_refused_http(server):
    assert http(server.base, "/api/rooms", raw=b"{not json")[0] == 400
    assert http(server.base, "/api/rooms", raw=b"x" * 20000)[0] == 413
    for body in (
        {"kind": "local", "seats": seats(("Ann", RED, False))},  # one seat
        {"kind": "local", "seats": seats(("A", RED, True), ("B", BLUE, True))},  # nobody human
        {"kind": "local", "seats": seats(("A", RED, False), ("A", BLUE, False))},  # same name
        {"kind": "local", "seats": seats(*[(f"P{i}", RED, False) for i in range(7)])},
        {"kind": "online", "seats": seats(("A", RED, False), ("B", BLUE, False))},
        {"kind": "party", "seats": []},
        {"kind": "local", "seats": seats(("A", RED, False), ("B", BLUE, False)), "board": "nope"},
        {"kind": "local", "seats": seats(("A", RED, False), ("B", BLUE, False)), "mode": "sudden_death"},
        {"kind": "local", "seats": seats(("A", RED, False), ("B", BLUE, False)), "rules": {"faces": 10**9}},
        {"kind": "local", "seats": seats(("A", RED, False), ("<script>" * 9, BLUE, False))},
        {"kind": "local", "seats": [{"name": "A", "colour": RED, "admin": True}, {"name": "B", "colour": BLUE}]},
        {"kind": "local", "seats": seats(("A", RED, False), ("B", BLUE, False)), "secret": "mine"},
    ):
        status, data = http(server.base, "/api/rooms", body)
        assert status == 400 and data["error"], body
    status, _ = http(server.base, "/")
    assert status == 200


def test_flooding_is_limited(tmp_path):
    app = create_app(boards={"tiny": TINY}, rate=5, burst=5, ai_delay=0.01)
    srv = ServerThread(app).start()
    try:
        room = create_room(srv.base, kind="local", seats=seats(("Ann", RED, False), ("Bob", BLUE, False)))
        c = Client(srv.base, room["room"])
        c.hello(room["host"])
        sent = 0
        try:
            while sent < 150:
                c.send(type="ping")
                sent += 1
        except Exception:  # the server closed the flooding connection before all were sent
            pass
        assert sent > 100
        codes = set()
        try:
            while True:
                msg = c.recv(5)
                if msg["type"] == "error":
                    codes.add(msg["code"])
        except Exception:  # closed after too many refused messages
            pass
        assert codes == {"rate_limited"}
        # others are not affected
        d = Client(srv.base, room["room"])
        assert d.hello(room["host"])["status"] == "playing"
        d.send(type="roll", seat=0, secret=room["seats"][0])
        assert d.until(lambda m: m["type"] == "turn")["seat"] == 0
        d.close()
    finally:
        srv.stop()


def test_a_graceful_stop_leaves_the_rooms_to_be_resumed(tmp_path):
    """A stopped server stores no game as abandoned: its rooms come back on the next start, where they were."""
    from snlmarkov.web.store import load_key

    path = tmp_path / "g.sqlite"
    store = GameStore(path)
    srv = ServerThread(
        create_app(store=store, boards={"jungle": Board.builtin()}, ai_delay=0.01, rate=500, burst=500)
    ).start()
    room = create_room(srv.base, kind="local", seats=seats(("Ann", RED, False), ("Bob", BLUE, False)))
    c = Client(srv.base, room["room"])
    c.hello(room["host"])
    for seat in (0, 1, 0):
        c.send(type="roll", seat=seat, secret=room["seats"][seat])
        c.until(lambda m: m["type"] == "turn")
    before = srv.rooms.rooms[room["room"]].snapshot()
    dice = [e["value"] for m in turns_of(c) for e in m["events"] if e["kind"] == "roll"]
    srv.stop()
    store.close()
    store = GameStore(path)
    assert store.count() == 0 and [r.status for r in store.open_rooms()] == ["playing"]
    srv = ServerThread(
        create_app(store=store, boards={"jungle": Board.builtin()}, ai_delay=0.01, rate=500, burst=500, limits=ROOMY)
    ).start()
    try:
        c = Client(srv.base, room["room"])
        back = c.hello(room["host"])
        assert back["restored"] and back["status"] == "playing" and back["saving"] == "ok"
        for key in ("positions", "current", "turn", "round", "finished", "seats", "rules", "board"):
            assert back[key] == before[key], key
        assert back["log"][: len(before["log"])] == before["log"]
        assert back["log"][len(before["log"])] == "The server restarted; the game is back where it was."
        last = play_out(c, back, {0: room["seats"][0], 1: room["seats"][1]})
        assert last["game_id"] > 0
        record = store.record(last["game_id"])
        assert list(record.dice[: len(dice)]) == dice and len(record.turns()) == last["turn"] + 1
        report = verify_game(record, key=load_key(path))
        assert report.passed and report.signature == "signed by this server"
        assert [(r.status, r.game_id) for r in store.open_rooms()] == [("over", last["game_id"])]
        c.close()
    finally:
        srv.stop()
        store.close()


def test_no_message_crashes_a_room(server, monkeypatch):
    """A bug inside a room answers 'internal' and the server goes on."""
    room = create_room(server.base, kind="local", seats=seats(("Ann", RED, False), ("Bob", BLUE, False)))
    c = Client(server.base, room["room"])
    c.hello(room["host"])
    the_room = server.rooms.rooms[room["room"]]

    def boom(*a, **k):
        raise RuntimeError("planted bug")

    monkeypatch.setattr(the_room, "_roll", boom)
    c.send(type="roll", seat=0, secret=room["seats"][0])
    assert c.error()["code"] == "internal"
    monkeypatch.undo()
    c.send(type="roll", seat=0, secret=room["seats"][0])
    assert c.until(lambda m: m["type"] == "turn")["seat"] == 0
    c.close()
    time.sleep(0)


def test_odds_that_take_long_follow_the_start(tmp_path):
    """A table whose odds are not solved at once starts anyway; an 'odds' message brings them."""
    srv = ServerThread(create_app(boards={"tiny": TINY}, odds_wait=0.0, ai_delay=0.01)).start()
    try:
        room = create_room(
            srv.base, kind="local", rules={"faces": 5}, seats=seats(("Ann", RED, False), ("Bob", BLUE, False))
        )
        c = Client(srv.base, room["room"])
        welcome = c.hello(room["host"])
        assert welcome["status"] == "playing"
        odds = welcome["odds"]
        if odds["method"] == "pending":
            odds = c.until(lambda m: m["type"] == "odds")["odds"]
        assert odds["method"] == "exact" and abs(sum(odds["win"]) - 1) < 1e-9
        c.send(type="roll", seat=0, secret=room["seats"][0])
        assert c.until(lambda m: m["type"] == "turn")["odds"]["method"] == "exact"
        assert c.seq_ok()
        c.close()
    finally:
        srv.stop()

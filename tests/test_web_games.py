"""The game pages' API: the archive, a stored game's analysis, uploads and rematch.

Against the real app served by uvicorn on 127.0.0.1 (``tests/_webserver.py``;
Starlette's TestClient needs httpx, which the project does not depend on). Every
figure of an analysis is compared with the library called directly in the test
(``Odds.timeline``, ``Odds.swings``, ``GameRecord.states``, ``verify_game``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import urllib.error
import urllib.request

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("websockets")
from _webserver import Client, ServerThread, create_room, http  # noqa: E402

from snlmarkov import Board, Game, GameRecord, Odds, Rules, verify_game  # noqa: E402
from snlmarkov.errors import LimitError  # noqa: E402
from snlmarkov.web import analysis as analysis_module  # noqa: E402
from snlmarkov.web import games as games_module  # noqa: E402
from snlmarkov.web.app import create_app  # noqa: E402
from snlmarkov.web.archive import PAGE_SIZE  # noqa: E402
from snlmarkov.web.games import MAX_UPLOAD_BYTES  # noqa: E402
from snlmarkov.web.store import GameStore, load_key  # noqa: E402

JUNGLE = Board.builtin()
TINY = Board(25, {3: 11, 17: 4, 20: 24}, name="tiny")
RED, BLUE, GREEN = "#e53935", "#1e88e5", "#43a047"


class _Response:
    def __init__(self, status: int, text: str, headers: dict) -> None:
        self.status_code, self.text, self.headers = status, text, headers

    def json(self):
        return json.loads(self.text)


class _Site:
    """GET and POST against a running server: status, text and headers of each answer."""

    def __init__(self, srv: ServerThread) -> None:
        self.srv = srv

    def _call(self, path: str, data: bytes | None) -> _Response:
        req = urllib.request.Request(self.srv.base + path, data=data, method="GET" if data is None else "POST")
        req.add_header("Content-Type", "application/json")  # as the pages send it (the server's Guard asks)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return _Response(r.status, r.read().decode(), {k.lower(): v for k, v in r.headers.items()})
        except urllib.error.HTTPError as e:
            return _Response(e.code, e.read().decode(), {k.lower(): v for k, v in e.headers.items()})

    def get(self, path: str) -> _Response:
        return self._call(path, None)

    def post(self, path: str, content: bytes) -> _Response:
        return self._call(path, content)


@contextlib.contextmanager
def serving(**kwargs):
    srv = ServerThread(create_app(**kwargs)).start()
    try:
        yield _Site(srv)
    finally:
        srv.stop()


def _games():
    """(record, status) of the stored games, oldest first."""
    out = [
        (Game(JUNGLE, Rules(), players=["Ann", "Bob"], rng=29).play(), "finished"),
        (Game(JUNGLE, Rules.preset("family"), players=["Ann", "Robot 1", "Robot 2"], rng=3).play(), "finished"),
        (Game(JUNGLE, Rules(), players=["Cy", "Dee", "Eve"], mode="last_one_standing", rng=5).play(), "finished"),
    ]
    g = Game(JUNGLE, Rules.preset("plain"), players=["Dee", "Eve"], rng=8)
    for _ in range(12):
        g.take_turn()
    out.append((g.record(), "abandoned"))
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    store = GameStore(tmp_path_factory.mktemp("games") / "games.sqlite")
    games = _games()
    ids = [store.add(r, room=f"r{i}", status=s) for i, (r, s) in enumerate(games)]
    with serving(store=store, ai_delay=0.0) as client:
        client.records = {i: store.record(i) for i in ids}  # as stored: signed with the store's key
        client.key = load_key(store.path)
        yield client
    store.close()


def test_pages_are_served(site):
    for path in ("/games", "/games/1", "/games/upload", "/static/games.js", "/static/game.js", "/static/chart.js"):
        assert site.get(path).status_code == 200, path
    assert "games.js" in site.get("/games").text and "game.js" in site.get("/games/3").text
    assert site.get("/games/nope").status_code == 404


def test_archive_newest_first_with_winner_length_and_date(site):
    data = site.get("/api/games").json()
    assert data["stored"] and data["total"] == 4 and data["pages"] == 1
    assert [g["id"] for g in data["games"]] == [4, 3, 2, 1]
    by_id = {g["id"]: g for g in data["games"]}
    for gid, record in site.records.items():
        g = by_id[gid]
        assert g["players"] == [s.name for s in record.seats] and g["turns"] == len(record.turns())
        assert g["winner"] == (record.seats[record.winner].name if record.has_winner else "")
        assert g["finished_at"] > 1.7e9 and g["board"] == "jungle"
    assert by_id[4]["status"] == "abandoned" and by_id[2]["rules"] == "family" and by_id[4]["rules"] == "plain"


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        ("mode=last_one_standing", [3]),
        ("mode=classic", [4, 2, 1]),
        ("rules=family", [2]),
        ("rules=app", [3, 1]),
        ("rules=custom", []),
        ("player=EVE", [4, 3]),
        ("player=robot%202", [2]),
        ("status=abandoned", [4]),
        ("status=finished&player=ann", [2, 1]),
        ("player=nobody", []),
    ],
)
def test_archive_filters(site, query, ids):
    assert [g["id"] for g in site.get(f"/api/games?{query}").json()["games"]] == ids


@pytest.mark.parametrize(
    "query",
    [
        "mode=chess",
        "rules=house",
        "status=lost",
        "page=0",
        "page=x",
        "page=1000001",
        "colour=red",
        "player=" + "x" * 25,
    ],
)
def test_archive_refuses_bad_filters(site, query):
    r = site.get(f"/api/games?{query}")
    assert r.status_code == 400 and r.json()["error"] == "bad_filter" and r.json()["message"]


def test_archive_pages(tmp_path):
    store = GameStore(tmp_path / "g.sqlite")
    for i in range(PAGE_SIZE + 5):
        store.add(Game(TINY, Rules.preset("plain"), players=2, rng=i).play())
    with serving(store=store) as client:
        first, second = client.get("/api/games").json(), client.get("/api/games?page=2").json()
        assert (first["pages"], second["page"], len(first["games"]), len(second["games"])) == (2, 2, PAGE_SIZE, 5)
        assert [g["id"] for g in first["games"] + second["games"]] == list(range(PAGE_SIZE + 5, 0, -1))
        assert client.get("/api/games?page=3").json()["games"] == []
    store.close()
    with serving() as client:  # a server that keeps no games
        assert client.get("/api/games").json() == {"games": [], "total": 0, "page": 1, "pages": 1, "stored": False}
        assert client.get("/api/games/1/analysis").status_code == 404


def _check_analysis(data: dict, record: GameRecord, key: bytes | None) -> None:
    """Every figure of an analysis against the library called here."""
    states = record.states()
    assert [s["positions"] for s in data["states"]] == [list(s.positions) for s in states]
    assert [s["to_move"] for s in data["states"]] == [s.to_move for s in states]
    assert [s["places"] for s in data["states"]] == [list(s.places) for s in states]
    assert [(t["seat"], t["start"], t["end"], t["rolls"]) for t in data["turns"]] == [
        (t.seat, t.start, t.end, list(t.rolls)) for t in record.turns()
    ]
    odds = Odds(record.board, record.rules, players=len(record.seats), mode=record.mode)
    timeline = odds.timeline(record)
    assert data["odds"]["method"] == "exact"
    np.testing.assert_allclose(np.array(data["odds"]["win"]), timeline.win, rtol=0, atol=1e-12)
    classic = record.mode == "classic"
    if not classic:
        np.testing.assert_allclose(
            np.array(data["odds"]["expected_place"]), timeline.expected_place, rtol=0, atol=1e-12
        )
    swings = odds.swings(record, top=3, timeline=timeline)
    assert [s["story"] for s in data["swings"]] == [s.story(record.mode) for s in swings]
    assert [(s["turn"], s["seat"]) for s in data["swings"]] == [(s.turn, s.seat) for s in swings]
    figure = timeline.win if classic else timeline.expected_place
    for seat, luck in enumerate(data["luck"]):
        own = sum(
            figure[t.turn + 1, seat] - figure[t.turn, seat] for t in record.turns() if t.seat == seat and not t.skipped
        )
        assert luck["own"] == pytest.approx(own, abs=1e-12)
        assert luck["own"] + luck["others"] == pytest.approx(figure[-1, seat] - figure[0, seat], abs=1e-12)
    report = verify_game(record, key=key)
    assert data["verification"]["passed"] is report.passed and data["verification"]["verdict"] == report.rules_verdict
    assert data["verification"]["log_probability"] == pytest.approx(report.log_probability)
    assert data["verification"]["signature"] == report.signature
    assert key is None or key.hex() not in json.dumps(data)


@pytest.mark.parametrize("game_id", [1, 2, 3, 4])
def test_analysis_equals_the_library(site, game_id):
    data = site.get(f"/api/games/{game_id}/analysis").json()
    record = site.records[game_id]
    assert data["id"] == game_id and data["stored"] and data["mode"] == record.mode
    assert data["winner"] == (record.winner if record.has_winner else -1) and data["over"] is record.is_over
    _check_analysis(data, record, site.key)
    assert data["verification"]["signature"] == "signed by this server"
    assert data["verification"]["verdict"] == ("follows the rules" if record.is_over else "unfinished")


def test_story_of_a_swing(site):
    swing = site.get("/api/games/1/analysis").json()["swings"][0]
    assert swing["story"] == "the 99 snake on turn 27 cost Ann 29 points (63% -> 34%)"


def test_analysis_is_kept_per_game(site, monkeypatch):
    site.get("/api/games/1/analysis")
    calls = []
    monkeypatch.setattr(analysis_module, "_odds_data", lambda record: calls.append(1) or ({}, [], []))
    assert site.get("/api/games/1/analysis").json()["odds"]["method"] == "exact"
    assert calls == []


def test_kept_analyses_are_bounded_in_turns(site, monkeypatch):
    calls = []
    real = games_module.analyse
    monkeypatch.setattr(games_module, "analyse", lambda record, **kw: calls.append(1) or real(record, **kw))
    monkeypatch.setattr(games_module, "TURNS_KEPT", 1)  # one analysis at a time
    a, b = (Game(TINY, Rules.preset("plain"), players=2, rng=seed).play().to_json().encode() for seed in (70, 71))
    for text in (a, b, a, a):
        assert site.post("/api/games/analysis", content=text).status_code == 200
    assert len(calls) == 3  # a was let go when b came in, then kept


def test_record_download(site):
    r = site.get("/api/games/2/record")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert r.headers["content-disposition"] == 'attachment; filename="snl-game-2.json"'
    assert GameRecord.from_json(r.text) == site.records[2]
    assert site.get("/api/games/99/record").status_code == 404
    assert site.get("/api/games/99/analysis").json()["error"] == "no_game"


def test_upload_shows_the_same_analysis_without_storing(site):
    record = site.records[3]
    r = site.post("/api/games/analysis", content=record.to_json().encode())
    assert r.status_code == 200
    data = r.json()
    assert data["stored"] is False and data["id"] == 0
    _check_analysis(data, record, site.key)
    assert data["verification"]["signature"] == "signed by this server"  # this server's own record, sent back
    forged = dataclasses.replace(record, seats=tuple(dataclasses.replace(s, name="Zed") for s in record.seats))
    data = site.post("/api/games/analysis", content=forged.to_json().encode()).json()
    assert data["verification"]["signature"] == "signature does not match" and data["verification"]["passed"]
    plain = Game(JUNGLE, Rules(), players=["Ann", "Bob"], rng=4).play()
    assert site.post("/api/games/analysis", content=plain.to_json().encode()).json()["verification"]["signature"] == (
        "not signed"
    )
    assert site.get("/api/games").json()["total"] == 4


def test_upload_of_a_record_that_does_not_hold(site):
    record = Game(JUNGLE, Rules(), players=["Ann", "Bob"], rng=4).play()
    moved = dataclasses.replace(record, board=Board(100, {2: 50}))  # the same log on another board
    data = site.post("/api/games/analysis", content=moved.to_json().encode()).json()
    assert data["verification"]["passed"] is False and data["verification"]["failures"]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (b"[1, 2", 400, "must be JSON"),
        (b"\xff\xfe{}", 400, "UTF-8"),
        (b'{"format": 1}', 400, "missing"),
        (b"[" * 100_000 + b"]" * 100_000, 400, "JSON"),
    ],
)
def test_upload_refuses_hostile_files(site, body, status, words):
    r = site.post("/api/games/analysis", content=body)
    assert r.status_code == status and words in r.json()["message"], r.json()


def test_upload_refuses_files_over_the_size_limit(site, monkeypatch):
    text = site.records[1].to_json().encode()
    monkeypatch.setattr(games_module, "MAX_UPLOAD_BYTES", len(text) - 1)  # read at every upload
    r = site.post("/api/games/analysis", content=text)
    assert r.status_code == 413 and "over the limit" in r.json()["message"]
    monkeypatch.setenv("SNLMARKOV_MAX_RECORD_BYTES", str(len(text) - 1))  # the record limit holds too
    monkeypatch.setattr(games_module, "MAX_UPLOAD_BYTES", 10 * len(text))
    assert site.post("/api/games/analysis", content=text).status_code == 413
    # the page refuses a larger file before sending it, with the same limit
    page = site.get("/games/upload").text
    assert f'data-max-bytes="{MAX_UPLOAD_BYTES}"' in page


def test_upload_refuses_records_past_the_analysis_limits(site):
    game = Game(Board(analysis_module.MAX_ANALYSIS_SQUARES + 1), Rules.preset("plain"), players=1, dice=[3])
    game.take_turn()
    big = game.record()
    r = site.post("/api/games/analysis", content=big.to_json().encode())
    assert r.status_code == 413 and "MAX_ANALYSIS_SQUARES" in r.json()["message"]
    with pytest.raises(LimitError, match="die moves up to 101"):
        analysis_module.check_analysable(Game(TINY, Rules(faces=101), players=1, dice=[5]).record())


def test_no_exact_odds_is_said(site):
    record = Game(TINY, Rules(bump=True), players=4, rng=1).play()  # exact bump odds: up to 3 seats
    data = site.post("/api/games/analysis", content=record.to_json().encode()).json()
    assert data["odds"]["method"] == "none" and "3 players" in data["odds"]["reason"]
    assert data["swings"] == [] and data["luck"] == [] and data["verification"]["passed"]


# ---------------------------------------------------------------- rematch (a real server)
@pytest.fixture(scope="module")
def server(tmp_path_factory):
    store = GameStore(tmp_path_factory.mktemp("rematch") / "games.sqlite")
    app = create_app(store=store, boards={"tiny": TINY}, countdown=20, ai_delay=0.0, rate=500, burst=500)
    srv = ServerThread(app).start()
    yield srv
    srv.stop()
    store.close()


def _play_out(client, state, secrets):
    last = state
    for _ in range(3000):
        if last["status"] == "over":
            return last
        if last["current"] in secrets and last["status"] == "playing":
            client.send(type="roll", seat=last["current"], secret=secrets[last["current"]])
        last = {**last, **client.until(lambda m: m["type"] in ("turn", "room"))}
    raise AssertionError("the game did not end")


def _post(server, path, body):
    return http(server.base, path, body)


def test_rematch_of_a_local_room(server):
    seats = [{"name": "Ann", "colour": RED, "ai": False}, {"name": "Robot 1", "colour": BLUE, "ai": True}]
    room = create_room(server.base, kind="local", seats=seats, mode="last_one_standing", rules={"finish": "bounce"})
    c = Client(server.base, room["room"])
    welcome = c.hello(room["host"])
    assert _post(server, f"/api/rooms/{room['room']}/rematch", {"secret": room["host"]})[1]["error"] == "not_over"
    _play_out(c, welcome, {0: room["seats"][0]})
    assert _post(server, f"/api/rooms/{room['room']}/rematch", {"secret": "x" * 20})[0] == 403
    assert _post(server, f"/api/rooms/{room['room']}/rematch", {"secret": room["host"], "more": 1})[0] == 400
    assert _post(server, "/api/rooms/nope/rematch", {"secret": room["host"]})[0] == 404
    status, new = _post(server, f"/api/rooms/{room['room']}/rematch", {"secret": room["host"]})
    assert status == 200 and new["room"] != room["room"] and new["seats"][1] == "" and new["seats"][0]
    assert c.until(lambda m: m["type"] == "rematch")["room"] == new["room"]
    fresh = server.rooms.rooms[new["room"]]
    old = server.rooms.rooms[room["room"]]
    assert [(s.name, s.colour, s.ai) for s in fresh.seats] == [(s.name, s.colour, s.ai) for s in old.seats]
    assert (fresh.rules, fresh.board_name, fresh.mode, fresh.status) == (old.rules, "tiny", old.mode, "playing")
    assert _post(server, f"/api/rooms/{room['room']}/rematch", {"secret": room["host"]})[1]["room"] == new["room"]
    c.close()


def test_rematch_online_needs_every_seat(server):
    room = create_room(server.base, kind="online", seats=[{"name": "Hosty", "colour": RED, "ai": False}])
    host = Client(server.base, room["room"])
    host.hello(room["host"])
    guest = Client(server.base, room["room"])
    guest.hello()
    guest.send(type="join", name="Guest", colour=BLUE)
    secret = guest.until(lambda m: m["type"] == "joined")["secret"]
    host.send(type="add_ai", secret=room["host"], name="Robot 1", colour=GREEN)
    host.until(lambda m: m["type"] == "room" and len(m["seats"]) == 3)
    watcher = Client(server.base, room["room"])
    watcher.hello()
    host.send(type="start", secret=room["host"])
    state = host.until(lambda m: m["type"] == "room" and m["status"] == "playing")
    _play_out(host, state, {0: room["host"], 1: secret})
    path = f"/api/rooms/{room['room']}/rematch"
    status, first = _post(server, path, {"secret": room["host"]})
    assert status == 200 and first == {"accepted": [0, 2], "waiting": [1], "room": "", "url": ""}
    assert guest.until(lambda m: m["type"] == "rematch")["waiting"] == [1]
    assert _post(server, path, {"secret": room["host"]})[1]["waiting"] == [1]  # asking twice counts once
    status, last = _post(server, path, {"secret": secret})
    assert status == 200 and last["waiting"] == [] and last["url"].startswith(f"/room/{last['room']}#s=")
    ready = {
        name: c.until(lambda m: m["type"] == "rematch_ready")["url"] for name, c in (("host", host), ("guest", guest))
    }
    assert ready["guest"] == last["url"] and ready["host"] == f"/room/{last['room']}#h=" + ready["host"].split("#h=")[1]
    assert watcher.until(lambda m: m["type"] == "rematch" and m["room"])["room"] == last["room"]
    assert not any(m["type"] == "rematch_ready" for m in watcher.messages)  # no secrets for spectators
    fresh = server.rooms.rooms[last["room"]]
    assert [(s.name, s.ai) for s in fresh.seats] == [("Hosty", False), ("Guest", False), ("Robot 1", True)]
    assert fresh.status == "playing" and fresh.kind == "online"
    new_guest = Client(server.base, last["room"])
    assert new_guest.hello(last["url"].split("#s=")[1])["you"] == {"seat": 1, "host": False}
    for c in (host, guest, watcher, new_guest):
        c.close()

"""The web game's room setup takes a die: named dice and a custom text form, read back from the API.

The API is driven over HTTP and WebSocket against a real uvicorn server on a
loopback port (``tests/_webserver.py``, as the other web API tests; Starlette's
``TestClient`` would need ``httpx``, which is not a dependency of the project).
"""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("websockets")

from _webserver import Client, ServerThread, create_room, http  # noqa: E402

from snlmarkov import Board, Die, Rules  # noqa: E402
from snlmarkov.web.app import create_app  # noqa: E402
from snlmarkov.web.limits import ServerLimits  # noqa: E402
from snlmarkov.web.protocol import ProtocolError  # noqa: E402
from snlmarkov.web.rooms import MAX_DIE_TEXT, ROOM_DICE, rules_fields, rules_from_data  # noqa: E402

RED, BLUE = "#e53935", "#1e88e5"
PLAIN = {"bonus_on_six": False, "max_sixes": None, "finish": "none"}  # every named die can finish the jungle board


@pytest.fixture(scope="module")
def server():
    roomy = ServerLimits(  # one address makes every room and rolls fast
        message_rate=5000, message_burst=5000, room_rate=1000, room_burst=1000, rooms_per_address=1000
    )
    app = create_app(boards={"jungle": Board.builtin(), "tiny": Board(25, {3: 11, 17: 4})}, ai_delay=0.01, limits=roomy)
    srv = ServerThread(app).start()
    yield srv
    srv.stop()


def host_room(server, rules):
    return create_room(server.base, kind="online", seats=[{"name": "Host", "colour": RED, "ai": False}], rules=rules)


def read_rules(server, room) -> Rules:
    status, state = http(server.base, f"/api/rooms/{room['room']}")
    assert status == 200
    return Rules(**state["rules"])


def test_the_form_offers_named_dice_and_a_custom_one(server):
    status, cfg = http(server.base, "/api/config")
    assert status == 200
    fields = {f["name"]: f for f in cfg["rules_fields"]}
    assert "faces" not in fields
    die = fields["die"]
    assert die["kind"] == "die" and die["default"] == "d6" and die["max_length"] == MAX_DIE_TEXT
    labels = " ".join(c["label"] for c in die["choices"])
    for word in ("1-6", "1-4", "1-8", "Two dice summed", "Spinner", "Efron's die C", "Efron's die D", "cowrie"):
        assert word in labels, word
    for choice in die["choices"]:  # each choice's spec is the canonical text form the room state speaks
        assert (
            Die.parse(choice["spec"]) == Die.parse(choice["value"])
            and Die.parse(choice["value"]).spec == choice["spec"]
        )


@pytest.mark.parametrize("text", [t for t, _ in ROOM_DICE])
def test_every_named_die_makes_a_room_and_reads_back(server, text):
    room = host_room(server, {**PLAIN, "die": text})
    assert read_rules(server, room) == Rules(**PLAIN, die=Die.parse(text))


def test_a_custom_die_reads_back_in_its_canonical_form(server):
    room = host_room(server, {"die": "faces:1,1,2,3,5,8"})
    status, state = http(server.base, f"/api/rooms/{room['room']}")
    assert state["rules"]["die"] == "weights:1=2,2=1,3=1,5=1,8=1"
    assert Rules(**state["rules"]).die == Die.faces(1, 1, 2, 3, 5, 8)
    fair = host_room(server, {"die": "spinner:8"})  # a fair die is written as faces, as before
    status, state = http(server.base, f"/api/rooms/{fair['room']}")
    assert state["rules"]["faces"] == 8 and "die" not in state["rules"]


def test_the_host_changes_the_die_in_the_lobby(server):
    room = host_room(server, {})
    host = Client(server.base, room["room"])
    try:
        assert host.hello(room["host"])["rules"]["faces"] == 6
        host.send(type="configure", secret=room["host"], rules={"die": "cowries:4"})
        msg = host.until(lambda m: m["type"] == "room" and "die" in m["rules"])  # after the presence update
        assert Rules(**msg["rules"]).die == Die.cowries(4)
        host.send(type="configure", secret=room["host"], rules={"die": "spinner:15"})
        err = host.error()
        assert err["code"] == "bad_rules" and "die" in err["message"] and "12 values" in err["message"]
    finally:
        host.close()
    assert read_rules(server, room).die == Die.cowries(4)


@pytest.mark.parametrize(
    "rules, code, message",
    [
        ({"die": "bogus"}, "bad_rules", "cannot read the die 'bogus'"),
        ({"die": "d1"}, "bad_rules", "faces must be an integer 2..1000; got 1"),
        ({"die": "faces:0,0"}, "bad_rules", "only value is 0"),
        ({"die": "x" * (MAX_DIE_TEXT + 1)}, "bad_field", f"die: a custom die is at most {MAX_DIE_TEXT} characters"),
        ({"die": "d20"}, "bad_rules", "a room's die shows at most 12 values"),
        ({"die": "cowries:4:1000"}, "bad_rules", "each at most 100"),
        ({"die": "efron-b"}, "bad_rules", "single value"),  # the app rules redeal after the cap
        ({"die": "efron-a"}, "bad_rules", "the finish 100 cannot be reached"),  # moves of 0 and 4 only
        ({"die": "efron-c", "board": "tiny"}, "bad_rules", "the finish 25 cannot be reached"),  # 2 and 6 only
        ({"die": ["d6"]}, "bad_field", "rule values are"),
        ({"die": "2d6", "faces": 4}, "bad_rules", "give the die once"),
    ],
)
@pytest.mark.parametrize("kind", ["online", "local"])
def test_a_bad_die_is_refused_naming_it(server, rules, code, message, kind):
    rules = dict(rules)
    board = rules.pop("board", "jungle")
    seats = [{"name": "Host", "colour": RED, "ai": False}, {"name": "Bot", "colour": BLUE, "ai": True}]
    body = {"kind": kind, "seats": seats[: 1 if kind == "online" else 2], "rules": rules, "board": board}
    status, data = http(server.base, "/api/rooms", body)
    assert status == 400 and data["error"] == code and message in data["message"], data
    assert len(data["message"]) <= 300


@pytest.mark.parametrize("text", ["d4", "cowries:4", "efron-d", "weights:1=1,2=1,6=4"])
def test_a_local_room_plays_with_its_die(server, text):
    die = Die.parse(text)
    room = create_room(
        server.base,
        kind="local",
        board="tiny",
        seats=[{"name": "Ann", "colour": RED, "ai": False}, {"name": "Bob", "colour": BLUE, "ai": True}],
        rules={"die": text},
    )
    c = Client(server.base, room["room"])
    try:
        state = c.hello(room["host"])
        assert Rules(**state["rules"]).die == die
        rolls: list[int] = []
        for _ in range(2000):
            if state["status"] == "over":
                break
            if state["current"] == 0 and state["status"] == "playing":
                c.send(type="roll", seat=0, secret=room["seats"][0])
            msg = c.until(lambda m: m["type"] in ("turn", "room"), timeout=30)
            rolls += [e["value"] for e in msg.get("events", []) if e.get("kind") == "roll"]
            state = {**state, **msg}
        assert state["status"] == "over" and rolls and set(rolls) <= set(die.values)
    finally:
        c.close()


def test_a_die_too_large_for_the_board_under_bounce():
    with pytest.raises(ProtocolError, match="at least 12 squares"):
        rules_from_data({"die": "2d6", "finish": "bounce"}, Board(10))
    assert rules_from_data({"die": "2d6", "finish": "bounce"}, Board(12)).die.top == 12


def test_rules_fields_lists_the_die_once():
    assert [f["name"] for f in rules_fields()].count("die") == 1

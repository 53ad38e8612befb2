"""The web game under a choice rule: house rules, AI strengths, the mover's choices, the coach, accuracy.

Against a real uvicorn server on a loopback port, with the WebSocket test client;
the coach's and the accuracy's figures against hand computations on a 3-square board.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

pytest.importorskip("starlette")
pytest.importorskip("websockets")

from _webserver import ROOMY, Client, ServerThread, create_room, http  # noqa: E402

from snlmarkov import Board, Game, Rules, Seat, verify_game  # noqa: E402
from snlmarkov.errors import LimitError  # noqa: E402
from snlmarkov.web.app import create_app  # noqa: E402
from snlmarkov.web.coach import accuracy, check_solvable, solve_table  # noqa: E402
from snlmarkov.web.protocol import ProtocolError, parse_message  # noqa: E402
from snlmarkov.web.rooms import rules_from_data  # noqa: E402
from snlmarkov.web.store import GameStore  # noqa: E402

TINY = Board(25, {3: 11, 17: 4, 20: 24}, name="tiny")
#: three squares: the hand computations below
THREE = Board(3, name="three")
HAND = {"bonus_on_six": False, "max_sixes": None}
RED, BLUE, GREEN = "#e53935", "#1e88e5", "#43a047"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    store = GameStore(tmp_path_factory.mktemp("web") / "games.sqlite")
    app = create_app(
        store=store,
        boards={"tiny": TINY, "three": THREE},
        countdown=0.3,
        ai_delay=0.01,
        rate=500,
        burst=500,
        limits=ROOMY,
        seed=11,
    )
    srv = ServerThread(app).start()
    srv.store = store
    yield srv
    srv.stop()
    store.close()


def seats(*spec):
    return [{"name": n, "colour": c, "ai": ai, **({"strength": st} if st else {})} for n, c, ai, st in spec]


# ------------------------------------------------------------------ hand figures
def test_the_coach_against_a_hand_computation():
    # Board(3), no bonus: from s a die's value v goes to s+v if s+v <= 3, else stays.
    # Optimal: E3 = 0; E2 = 2 (d2: 1 + E2/2), E1 = 2 (d2: 1 + E2/2), E0 = 7/3 (d3: 1 + (E1 + E2)/3).
    # Q(0, d2) = 1 + (E1 + E2)/2 = 3; Q(1, d3) = 1 + (E2 + E1)/3 = 7/3; Q(2, d3) = 1 + 2 E2/3 = 7/3.
    solved = solve_table(THREE, Rules(choose_die=(2, 3), **HAND), 1)
    want = {(0, 0): Fraction(2, 3), (0, 1): 0, (1, 0): 0, (1, 1): Fraction(1, 3), (2, 0): 0, (2, 1): Fraction(1, 3)}
    for (square, die), cost in want.items():
        v = solved.judge(square, 0, square, die)
        assert abs(v.cost - float(cost)) < 1e-12 and v.is_best == (cost == 0)
    assert solved.choose(0, 0, 0) == 1 and solved.choose(1, 0, 1) == 0
    assert solved.judge(0, 0, 0, 0).text("Ann") == "Picking the d2 on 0 cost Ann 0.67 expected turns (best: the d3)"
    # choose_move with two d3: moving v from s costs 1 + E(after); E(0) after moving 3 is 1 turn, after 1: 1 + E1
    # with E1 = E2 = 1/(1 - 4/9)... every square's best value is the one that finishes: Q = 1 there
    move = solve_table(THREE, Rules(choose_move=2, die=3, **HAND), 1)
    v = move.judge(0, 0, 0, 1, rolled=(1, 3))
    assert v.best == 3 and abs(v.cost - (move.q[0, 0] - 1.0)) < 1e-12 and move.q[0, 2] == 1.0
    assert v.text("Ann").startswith("Moving 1 on 0 cost Ann") and v.text("Ann").endswith("(best: moving 3)")


def hand_game() -> Game:
    """Three seats (one token's policy judges them): Ann loses 2/3 of a turn in her 2 choices, the others nothing."""
    rules = Rules(choose_die=(2, 3), **HAND)
    game = Game(THREE, rules, [Seat("Ann", "red"), Seat("Bob", "blue"), Seat("Cy", "green")], dice=[1, 1, 1, 2])
    # Ann: the d2 on 0 (costs 3 - 7/3 = 2/3), rolls 1; Bob, Cy: the d3 on 0 (best), roll 1; Ann: the d2 on 1 (best), home
    for die in (0, 1, 1, 0):
        game.take_turn()
        game.choose(die)
    assert game.is_over
    return game


def test_accuracy_against_a_hand_computation():
    acc = accuracy(hand_game().record())
    ann, bob, cy = acc["seats"]
    assert acc["unit"] == "turns" and (ann["choices"], bob["choices"], cy["choices"]) == (2, 1, 1)
    assert abs(ann["lost"] - 2 / 3) < 1e-12 and abs(ann["per_choice"] - 1 / 3) < 1e-12 and ann["best"] == 1
    assert bob["lost"] == cy["lost"] == 0 and bob["best"] == 1
    assert accuracy(Game(THREE, Rules(), players=2, rng=1).play()) == {}  # a plain game: nothing


def test_the_race_coach_against_a_hand_computation():
    """Two seats race on Board(2), each choosing a die that always shows 1 or a fair d2 (no bonus).

    From 1 the one-die finishes: W(1, y) = 1. From 0, the other on 1: the d2 wins at once with 1/2, else the
    other (on 1) wins: W = 1/2; the one-die leaves the other to win: 0. From 0, the other on 0: the d2 gives
    1/2 + 1/2 (1 - W(0, 1)) = 3/4, the one-die 1 - W(0, 1) = 1/2.
    """
    rules = Rules(choose_die=("faces:1", 2), bonus_on_six=False, max_sixes=None)
    solved = solve_table(Board(2), rules, 2)
    assert solved.unit == "win" and solved.choose(0, 0, 0, others=(0,)) == 1
    for other, cost in ((0, Fraction(1, 4)), (1, Fraction(1, 2))):
        v = solved.judge(0, 0, 0, 0, others=(other,))
        assert abs(v.cost - float(cost)) < 1e-12 and v.names == ("weights:1=1", "d2")
    assert solved.judge(1, 0, 1, 0, others=(0,)).is_best and solved.judge(1, 0, 1, 0, others=(2,)) is None
    assert solved.judge(0, 0, 0, 0, others=(0,)).text("Ann") == (
        "Picking the weights:1=1 on 0 cost Ann 25.0 points of win chance (best: the d2)"
    )


def test_a_table_too_big_is_refused_with_the_limit_named():
    with pytest.raises(LimitError, match="MAX_COACH_STATES"):
        check_solvable(Board(70_000), Rules(choose_die=(4, 6)))
    # a race of two too big to solve as a game (the origins of forfeit): coached by one token's policy, and said so
    solved = solve_table(Board(60), Rules(choose_die=(4, 6), on_cap="forfeit"), 2)
    assert solved.unit == "turns" and "MAX_RACE_STATES" in solved.note


# ------------------------------------------------------------------ the rules and the messages
def test_house_rules_take_a_choice_rule():
    assert rules_from_data({"choose_die": ["d4", "d6"]}, TINY).choose_die[1].spec == "d6"
    assert rules_from_data({"choose_die": []}, TINY).choice == ""
    assert rules_from_data({"choose_move": 3}, TINY).choose_move == 3
    bad = [
        {"choose_die": ["d4"] * 9},
        {"choose_die": ["d4", "x" * 200]},
        {"choose_die": [4, 6]},
        {"choose_die": ["d4", "d4"]},
        {"choose_die": ["d4", "nonsense"]},
        {"choose_die": "d4,d6"},
        {"choose_die": ["d4", "d6"], "choose_move": 2},
        {"choose_move": 5},
        {"choose_move": 1},
        {"choose_move": True},
        {"choose_die": ["d4", "spinner:200"]},
        {"choose_die": [["d4"], ["d6"]]},
    ]
    for data in bad:
        with pytest.raises(ProtocolError):
            rules_from_data(data, TINY)


def test_choice_messages_are_checked():
    assert parse_message('{"type": "choose", "seat": 0, "secret": "abcdefgh", "die": 1}').fields["die"] == 1
    assert parse_message('{"type": "roll", "seat": 0, "secret": "abcdefgh", "die": 0}').fields["die"] == 0
    bad = [
        ('{"type": "choose", "seat": 0, "secret": "abcdefgh"}', "bad_message"),
        ('{"type": "choose", "seat": 0, "secret": "abcdefgh", "die": 1, "value": 2}', "bad_message"),
        ('{"type": "choose", "seat": 0, "secret": "abcdefgh", "die": -1}', "bad_field"),
        ('{"type": "choose", "seat": 0, "secret": "abcdefgh", "die": 8}', "bad_field"),
        ('{"type": "choose", "seat": 0, "secret": "abcdefgh", "die": 1.0}', "bad_field"),
        ('{"type": "choose", "seat": 0, "secret": "abcdefgh", "die": true}', "bad_field"),
        ('{"type": "choose", "seat": 0, "secret": "abcdefgh", "value": "3"}', "bad_field"),
        ('{"type": "choose", "seat": 0, "secret": "abcdefgh", "value": 101}', "bad_field"),
        ('{"type": "choose", "seat": 0, "secret": "abcdefgh", "value": [3]}', "bad_field"),
        ('{"type": "choose", "seat": 0, "secret": "abcdefgh", "value": 3, "why": 1}', "bad_message"),
        ('{"type": "roll", "seat": 0, "secret": "abcdefgh", "die": "d6"}', "bad_field"),
        ('{"type": "add_ai", "secret": "abcdefgh", "name": "R", "colour": "#fff", "strength": "godlike"}', "bad_field"),
    ]
    for text, code in bad:
        with pytest.raises(ProtocolError) as err:
            parse_message(text)
        assert err.value.code == code, text


def test_config_lists_the_choice_rules(server):
    status, cfg = http(server.base, "/api/config")
    fields = {f["name"]: f for f in cfg["rules_fields"]}
    assert fields["choose_die"]["kind"] == "dice" and len(fields["choose_die"]["choices"]) >= 4
    assert fields["choose_move"]["kind"] == "int_or_none" and fields["choose_move"]["min"] == 2
    status, data = http(
        server.base,
        "/api/rooms",
        {"kind": "local", "seats": seats(("Ann", RED, False, "greedy"), ("Bot", BLUE, True, "")), "board": "tiny"},
    )
    assert status == 400 and "only an AI seat" in data["message"]


# ------------------------------------------------------------------ playing
def play_choices(client: Client, state: dict, secret: str, pick, limit: int = 4000) -> tuple[dict, list[dict]]:
    """Play seat 0 by ``pick(decision) -> message fields`` until the game is over; the last turn and every coach line."""
    coach, last = [], state
    for _ in range(limit):
        if last.get("status") == "over":
            return last, coach
        decision = last.get("decision")
        if last.get("status") == "playing" and last["current"] == 0 and (decision or {}).get("seat", 0) == 0:
            client.send(type="choose" if decision else "roll", seat=0, secret=secret, **pick(decision))
        msg = client.until(lambda m: m["type"] in ("turn", "choice", "room"))
        coach += msg.get("coach", [])
        last = {**last, **msg, "decision": msg.get("decision") if msg["type"] == "choice" else None}
    raise AssertionError("the game did not end")


def test_choose_the_die_against_an_optimal_ai_with_the_coach(server):
    rules = {"choose_die": ["d4", "d6"]}
    room = create_room(
        server.base,
        kind="local",
        board="tiny",
        rules=rules,
        seats=seats(("Ann", RED, False, ""), ("Bot", BLUE, True, "optimal")),
    )
    c = Client(server.base, room["room"])
    welcome = c.hello(room["host"])
    assert welcome["rules"]["choose_die"] == ["d4", "d6"] and welcome["seats"][1]["strength"] == "optimal"
    # Ann always names the d4 with her roll (bonus rolls: a choose message)
    last, coach = play_choices(c, welcome, room["seats"][0], lambda d: {"die": 0})
    assert c.seq_ok() and last["status"] == "over"
    solved = solve_table(TINY, Rules().replace(choose_die=("d4", "d6")), 2)
    bots = [v for v in coach if v["seat"] == 1]
    assert bots and all(v["is_best"] and v["cost"] == 0 for v in bots)  # the optimal seat's choices cost nothing
    anns = [v for v in coach if v["seat"] == 0]
    assert anns and all(v["names"][0] == "d4" for v in anns)
    for v in anns:  # each verdict is the solved table's, decision state by decision state
        want = solved.judge(v["square"], v["sixes"], v["origin"], 0, others=v["others"])
        assert v["cost"] == pytest.approx(want.cost, abs=1e-12) and v["unit"] == solved.unit
    assert any(not v["is_best"] for v in anns) and any("cost Ann" in v["text"] for v in anns)
    record = server.store.record(last["game_id"])
    assert verify_game(record).passed
    # the game's page and its accuracy: the same choices, summed
    status, data = http(server.base, f"/api/games/{last['game_id']}/analysis")
    assert status == 200
    acc = {s["name"]: s for s in data["accuracy"]["seats"]}
    assert acc["Bot"]["lost"] == 0 and acc["Bot"]["choices"] == len(bots)
    assert acc["Ann"]["choices"] == len(anns) and acc["Ann"]["lost"] == pytest.approx(sum(v["cost"] for v in anns))
    c.close()


def test_choose_the_move_and_refused_choices(server):
    room = create_room(
        server.base,
        kind="local",
        board="tiny",
        rules={"choose_move": 2},
        seats=seats(("Ann", RED, False, ""), ("Rand", BLUE, True, "random"), ("Greedy", GREEN, True, "greedy")),
    )
    c = Client(server.base, room["room"])
    welcome = c.hello(room["host"])
    secret = room["seats"][0]
    before = http(server.base, f"/api/rooms/{room['room']}")[1]
    for msg, code in [
        ({"type": "choose", "seat": 0, "secret": secret, "value": 3}, "not_choosing"),  # roll first
        ({"type": "roll", "seat": 0, "secret": secret, "die": 0}, "bad_choice"),  # no die to choose
        ({"type": "choose", "seat": 1, "secret": secret, "value": 3}, "bad_secret"),
    ]:
        c.send(**msg)
        assert c.error()["code"] == code
    assert http(server.base, f"/api/rooms/{room['room']}")[1] == before
    c.send(type="roll", seat=0, secret=secret)
    asked = c.until(lambda m: m["type"] == "choice")
    d = asked["decision"]
    assert d["kind"] == "move" and len(d["options"]) == 2 and asked["events"][0]["kind"] == "rolled_dice"
    not_rolled = next(v for v in range(1, 7) if v not in d["options"])
    for msg, code in [
        ({"value": not_rolled}, "bad_choice"),
        ({"die": 0}, "bad_choice"),
    ]:
        c.send(type="choose", seat=0, secret=secret, **msg)
        assert c.error()["code"] == code
    c.send(type="roll", seat=0, secret=secret)
    assert c.error()["code"] == "not_your_turn"  # the turn has begun
    state = http(server.base, f"/api/rooms/{room['room']}")[1]
    assert state["decision"] == d  # a page that comes now is asked the same
    c.send(type="choose", seat=0, secret=secret, value=max(d["options"]))
    msg = c.until(lambda m: m["type"] in ("turn", "choice"))
    first = msg["coach"]
    state = {**welcome, **msg, "decision": msg.get("decision") if msg["type"] == "choice" else None}
    last, coach = play_choices(c, state, secret, lambda d: {"value": d["options"][0]} if d else {})
    coach = first + coach
    assert last["status"] == "over" and c.seq_ok()
    assert {v["seat"] for v in coach} >= {1, 2}
    assert all(v["is_best"] or v["cost"] > 0 for v in coach)
    assert verify_game(server.store.record(last["game_id"])).passed
    status, data = http(server.base, f"/api/games/{last['game_id']}/analysis")
    for row in data["accuracy"]["seats"]:  # every choice of the game, as the coach judged it when it was made
        mine = [v for v in coach if v["seat"] == row["seat"]]
        assert row["choices"] == len(mine) and row["lost"] == pytest.approx(sum(v["cost"] for v in mine), abs=1e-12)
    c.close()


def test_an_idle_players_choice_is_the_greedy_one(server):
    room = create_room(server.base, kind="online", seats=seats(("Host", RED, False, "")))
    host = Client(server.base, room["room"])
    host.hello(room["host"])
    host.send(type="configure", secret=room["host"], rules={"choose_move": 2}, board="tiny", countdown=5)
    host.until(lambda m: m["type"] == "room" and m["rules"].get("choose_move") == 2)
    host.send(type="add_ai", secret=room["host"], name="Bot", colour=BLUE, strength="greedy")
    host.until(lambda m: m["type"] == "room" and len(m["seats"]) == 2)
    host.send(type="configure", secret=room["host"], countdown=0.3)
    host.send(type="start", secret=room["host"])
    host.until(lambda m: m["type"] == "room" and m["status"] == "playing")
    host.send(type="roll", seat=0, secret=room["host"])
    asked = host.until(lambda m: m["type"] == "choice")
    assert asked["remaining"] > 0
    # nobody answers: past the countdown the server moves the greedy value, and says so
    done = host.until(lambda m: m["type"] in ("turn", "choice") and m.get("coach"), timeout=10)
    assert done["coach"][0]["idle"] and done["coach"][0]["seat"] == 0
    room_now = http(server.base, f"/api/rooms/{room['room']}")[1]
    assert any("took too long" in t and "greedy" in t for t in room_now["log"])
    host.close()


def test_a_plain_room_says_nothing_of_choices(server):
    room = create_room(
        server.base, kind="local", board="tiny", seats=seats(("Ann", RED, False, ""), ("Bot", BLUE, True, ""))
    )
    c = Client(server.base, room["room"])
    welcome = c.hello(room["host"])
    assert welcome["decision"] is None
    c.send(type="choose", seat=0, secret=room["seats"][0], die=0)
    assert c.error()["code"] == "bad_choice"
    c.send(type="roll", seat=0, secret=room["seats"][0], die=0)
    assert c.error()["code"] == "bad_choice"
    c.send(type="roll", seat=0, secret=room["seats"][0])
    turn = c.until(lambda m: m["type"] == "turn")
    assert "coach" not in turn
    c.close()
    text = json.dumps(welcome)
    assert "strength" in text  # an AI seat's strength is listed (it plays only under a choice rule)


def test_the_games_command_prints_each_players_accuracy(tmp_path, capsys):
    from snlmarkov.cli import main

    store = GameStore(tmp_path / "g.sqlite")
    store.add(Game(THREE, Rules(), players=["Cy", "Di"], rng=1).play(), room="plain")
    store.add(hand_game().record(), room="choice")  # as in the hand computation above
    store.close()
    assert main(["games", "--db", str(tmp_path / "g.sqlite")]) == 0
    out = capsys.readouterr().out.splitlines()
    at = out.index(
        "accuracy under a choice rule (what each player's choices lost, per choice, against the optimal policy):"
    )
    assert out[at + 1 :] == [
        "    2  expected turns: Ann 0.33 (2 choices, 1 best); Bob 0.00 (1 choice, 1 best); Cy 0.00 (1 choice, 1 best)"
    ]  # the plain game: nothing


def test_a_choice_room_survives_a_restart(tmp_path):
    """A room under choose_die written by one manager, rebuilt by another: the seats' strengths, then the game goes on."""
    import asyncio

    from snlmarkov.web import turns
    from snlmarkov.web.rooms import RoomManager
    from snlmarkov.web.store import load_key

    path = tmp_path / "g.sqlite"
    spec = seats(("Ann", RED, False, ""), ("Bot", BLUE, True, "random"))

    async def drive(room, secret: str, turns_left: int) -> None:
        async with room.lock:
            while room.status == "playing" and turns_left > 0:
                game, before = room.game, room.game.total_turns
                if game.waiting:
                    await turns.answer(room, 0, None)
                elif room.seats[game.current_seat].ai:
                    await room._play(skip=False)
                else:
                    await room._roll(game.current_seat, secret, 1)
                turns_left -= game.total_turns - before

    async def first() -> tuple[str, str]:
        store = GameStore(path)
        manager = RoomManager({"tiny": TINY}, store=store, seed=3, ai_delay=0.0)
        room = manager.create("local", spec, board="tiny", rules={"choose_die": ["d4", "d6"]})
        await room.start()
        await drive(room, room.seats[0].secret, 4)
        room._cancel_timer()
        await manager.shutdown()
        store.close()
        return room.id, room.seats[0].secret

    async def second(room_id: str, secret: str) -> None:
        store = GameStore(path)
        manager = RoomManager({"tiny": TINY}, store=store, seed=4, ai_delay=0.0)
        manager.start()
        try:
            room = manager.rooms[room_id]
            assert [s.strength for s in room.seats] == ["", "random"] and room.rules.choice == "die"
            for _ in range(200):  # the tables are prepared off the event loop
                if room.play is not None:
                    break
                await asyncio.sleep(0.02)
            assert room.play is not None and room.play.solved is not None
            assert room.seats[0].opens(secret)
            await drive(room, secret, 10_000)
            assert room.game_id > 0
            record = store.record(room.game_id)
            assert verify_game(record, key=load_key(path)).passed and record.choices()
        finally:
            await manager.shutdown()
            store.close()

    asyncio.run(second(*asyncio.run(first())))


def test_the_policy_solver_keeps_few_tables_and_bytes():
    from snlmarkov.web.coach import PolicySolver

    tables = [(Board(n), Rules(choose_die=(2, 3), **HAND)) for n in (5, 6, 7)]
    for solver, kept in ((PolicySolver(kept=2), 2), (PolicySolver(cache_bytes=1), 1)):
        futures = [solver.submit(b, r, 1) for b, r in tables]
        for f in futures:
            f.result()
        solver.submit(*tables[-1], 1)  # a new ask evicts down to the bound
        assert len(solver._futures) == kept and solver.submit(*tables[-1], 1) is futures[-1]  # the newest stays
        solver.shutdown()

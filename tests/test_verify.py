"""verify_game: real games pass, tampered records fail naming the turn."""

import json
import math

import pytest

import snlmarkov as snl
from snlmarkov import Board, Game, GameRecord, Rules, verify_game

RULE_SETS = [
    Rules(),
    Rules.preset("family"),
    Rules.preset("plain"),
    Rules(on_cap="forfeit", start_on_six=True, bump=True, finish="none", max_sixes=1),
    Rules(finish="bounce", max_sixes=None, bump=True, bump_to=5),
]


# ids by position: hash() of a Rules varies from process to process (string hashing is salted),
# and pytest-xdist's workers must collect the same names
@pytest.mark.parametrize("rules", RULE_SETS, ids=[f"{r.preset_name}{i}" for i, r in enumerate(RULE_SETS)])
@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_played_games_verify(rules, mode):
    for seed in range(4):
        record = Game(Board.builtin(), rules, players=3, mode=mode, rng=seed).play()
        report = verify_game(record)
        assert report.passed, str(report)
        assert len(report.turns) == len(record.turns())
        assert report.log_probability == pytest.approx(sum(t.log_probability for t in report.turns))
        assert all(t.ok and t.problem == "" for t in report.turns)
        assert (
            report.rolls_log_probability <= report.log_probability + 1e-9
        )  # a roll sequence is one way to a turn's end


def test_readme_example():
    game = snl.Game(players=["Ann", "Bob"], rng=7)
    record = game.play()
    report = snl.verify_game(record)
    assert report.passed and "PASSED" in str(report)


def test_turn_log_probability_is_the_matrix_entry():
    record = Game(Board(10, {3: 8}), Rules.preset("plain"), players=2, dice=[3, 4, 2]).play()
    report = verify_game(record)
    assert [round(t.probability, 12) for t in report.turns] == [round(1 / 6, 12)] * 3
    assert report.log_probability == pytest.approx(3 * math.log(1 / 6))
    assert report.rolls_log_probability == pytest.approx(3 * math.log(1 / 6))


def tamper(record, change):
    data = record.to_dict()
    change(data)
    return GameRecord.from_dict(data)


def test_tampered_roll_fails_naming_the_turn():
    record = Game(Board(10, {3: 8}), Rules.preset("plain"), players=2, dice=[3, 4, 2]).play()

    def change(d):  # seat 1 rolled 4 but the log now says 5, with the move left as it was
        for e in d["log"]:
            if e["kind"] == "roll" and e["turn"] == 1:
                e["value"] = 5
        d["dice"][1] = 5

    report = verify_game(tamper(record, change))
    assert not report.passed
    assert report.failures[0].startswith("turn 1 ")
    assert "event 1: the rules give Move(seat=1, turn=1, start=0, end=5)" in report.failures[0]
    assert not report.turns[1].ok and report.turns[0].ok


def test_impossible_move_fails():
    record = Game(Board(10, {3: 8}), Rules.preset("plain"), players=2, dice=[3, 4, 2]).play()

    def change(d):  # the ladder now leads to 9: a move no roll can make
        for e in d["log"]:
            if e["kind"] == "ladder":
                e["end"] = 9
        for e in d["log"]:
            if e["kind"] == "move" and e["turn"] == 2:
                e["start"] = 9
                e["end"] = 10
        d["dice"][2] = 1
        for e in d["log"]:
            if e["kind"] == "roll" and e["turn"] == 2:
                e["value"] = 1

    report = verify_game(tamper(record, change))
    assert not report.passed
    assert report.failures[0].startswith("turn 0 ")
    assert "event 2: the rules give Ladder(seat=0, turn=0, start=3, end=8)" in report.failures[0]


def test_six_after_cap_under_redeal_fails():
    record = Game(Board(30), Rules(), players=1, dice=[6, 6, 3] + [5] * 10).play()

    def change(d):  # the capped roll now shows a six, which redeal never deals
        for e in d["log"]:
            if e["kind"] == "roll" and e["turn"] == 0 and e["value"] == 3:
                e["value"] = 6
            if e["kind"] == "move" and e["turn"] == 0 and e["end"] == 15:
                e["end"] = 18
        d["dice"][2] = 6

    try:
        bad = tamper(record, change)
    except snl.GameError:
        pytest.skip("the record itself refuses this tampering")
    report = verify_game(bad)
    assert not report.passed and "cannot be dealt after the cap" in report.failures[0]


def test_missing_bump_fails():
    rules = Rules(bump=True)
    game = Game(Board(20), rules, players=2, dice=[3, 3])
    game.take_turn()
    game.take_turn()
    record = game.record()
    assert verify_game(record).passed
    assert record.turns()[1].bumped

    no_bump = Game(Board(20), rules.replace(bump=False), players=2, dice=[3, 3])
    no_bump.take_turn()
    no_bump.take_turn()
    data = no_bump.record().to_dict()
    data["rules"] = rules.to_dict()
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed
    assert (
        "event 2: the rules give Bump(seat=1, turn=1, from_square=3, to_square=1), the log has no more"
        in (report.failures[0])
    )


def test_verify_takes_a_record():
    with pytest.raises(snl.SnlError, match="GameRecord"):
        verify_game({"log": []})


def test_record_json_round_trip_still_verifies():
    record = Game(players=2, rules=Rules.preset("family"), rng=3).play()
    again = GameRecord.from_json(json.dumps(json.loads(record.to_json())))
    assert verify_game(again).passed


def _turn_of(record, turn):
    return [i for i, e in enumerate(record.log) if e.turn == turn]


@pytest.mark.parametrize(
    "kind, field, value",
    [
        ("move", "end", 0),  # "Ann moves from 0 to 0" after a roll
        ("move", "start", 1),
        ("finish", "place", 2),
        ("ladder", "end", 99),
        ("snake", "end", 1),
        ("roll", "capped", True),
        ("overshoot", "value", 1),
        ("bounce", "target", 90),
    ],
)
def test_every_event_field_is_compared(kind, field, value):
    rules = Rules.preset("plain").replace(finish="bounce") if kind == "bounce" else Rules()
    for seed in range(200):
        record = Game(Board.builtin(), rules, players=2, rng=seed).play()
        data = record.to_dict()
        hits = [i for i, e in enumerate(data["log"]) if e["kind"] == kind and e[field] != value]
        if hits:
            break
    i = hits[0]
    data["log"][i][field] = value
    try:
        edited = GameRecord.from_dict(data)
    except snl.SnlError:  # a summary field now disagrees: the person editing fixes it
        from snlmarkov.game.events import event_from_dict
        from snlmarkov.game.record import _summarise

        _, pos, fin = _summarise(tuple(event_from_dict(e) for e in data["log"]), 2, snl.GameState.initial(2))
        data["positions"], data["finishing_order"] = list(pos), list(fin)
        edited = GameRecord.from_dict(data)
    report = verify_game(edited)
    turn = data["log"][i]["turn"]
    index = _turn_of(record, turn).index(i)
    assert not report.passed
    assert report.failures[0].startswith(f"turn {turn} ")
    assert f"event {index}:" in report.failures[0]


def test_empty_log_is_refused():
    record = Game(players=2, dice=[]).record()
    with pytest.raises(snl.GameError, match="empty"):
        verify_game(record)


def test_skip_of_the_wrong_seat_fails():
    game = Game(Board(20), Rules(), players=2, dice=[3, 4])
    game.take_turn()
    game.skip_turn()
    data = game.record().to_dict()
    data["log"][-1]["seat"] = 0  # seat 0 "skipped" turn 1, where seat 1 was due
    report = verify_game(GameRecord.from_dict({**data, "positions": [3, 0]}))
    assert not report.passed and "seat 0 played where seat 1 was due" in report.failures[0]


def test_turn_matrix_check_catches_a_model_that_disagrees(monkeypatch):
    """The turn-matrix check is not dead code: a model giving the turn probability 0 fails it."""
    import snlmarkov.checks.verify as verify_module

    real = verify_module.turn_model

    def broken(board, rules):
        model = real(board, rules)
        m = model.matrix.tolil(copy=True) if hasattr(model.matrix, "tolil") else model.matrix.copy()
        m[0, 3] = 0.0
        return type("M", (), {"matrix": m})()

    monkeypatch.setattr(verify_module, "turn_model", broken)
    record = Game(Board(10), Rules.preset("plain"), players=1, dice=[3, 4, 3]).play()
    report = verify_game(record)
    assert not report.passed and "probability 0 in the turn matrix" in report.failures[0]


def test_log_probability_is_independent_of_the_code():
    """Two plain turns of 1/6 each, a six-then-3 turn of 1/36 (hand values)."""
    record = Game(Board(20), Rules(), players=1, dice=[2, 6, 3, 5, 4]).play()
    report = verify_game(record)
    assert report.passed
    assert [t.rolls_log_probability for t in report.turns] == pytest.approx(
        [math.log(1 / 6), math.log(1 / 36), math.log(1 / 6), math.log(1 / 6)]
    )


def test_a_game_started_from_a_state_verifies_from_that_state():
    state = snl.GameState((90, 30, 0), to_move=1)
    for seed in range(5):
        record = Game(Board.builtin(), Rules(), players=3, rng=seed, state=state).play()
        assert verify_game(record).passed
    data = record.to_dict()
    data["start"]["positions"] = [91, 30, 0]  # the log no longer follows from where it says it began
    try:
        edited = GameRecord.from_dict(data)
    except snl.SnlError:
        return
    assert not verify_game(edited).passed


# ------------------------------------------------------------ the checks forgeries need
KEY = bytes(range(32))


def _with_a_skip():
    """Seat 0 rolls 3, seat 1's turn is skipped, seat 0 rolls 4: a record only a countdown makes."""
    game = Game(Board(20), Rules(), players=2, dice=[3, 4])
    game.take_turn()
    game.skip_turn()
    game.take_turn()
    return game.record()


def test_a_skip_is_legal_only_in_a_record_signed_as_online():
    record = _with_a_skip()
    online = record.signed(KEY, online=True)
    assert verify_game(online, key=KEY).passed
    for bad, key in [
        (record, None),  # not signed
        (record, KEY),
        (online, None),  # signed, but nothing to check it with
        (online, bytes(32)),  # another server's key
        (record.signed(KEY), KEY),  # signed as a local game: no countdown skips there
    ]:
        report = verify_game(bad, key=key)
        assert not report.passed, (bad.online, bad.signature, key)
        assert report.failures[0].startswith("turn 1 ") and "legal only in a record this server signed" in str(report)
        assert report.turns[1].skipped and not report.turns[1].ok and report.turns[0].ok and report.turns[2].ok


def test_a_record_cut_short_verifies_as_unfinished_never_as_a_whole_game():
    record = Game(Board.builtin(), Rules(), players=2, rng=4).play()
    assert verify_game(record).rules_verdict == snl.checks.verify.FOLLOWS_RULES and record.finished
    data = record.to_dict()
    last = data["log"][-1]["turn"]
    data["log"] = [e for e in data["log"] if e["turn"] < last]  # cut at a turn boundary
    data["dice"] = [e["value"] for e in data["log"] if e["kind"] == "roll"]
    data["positions"][record.winner] = record.turns()[-1].start
    data["finishing_order"] = []
    with pytest.raises(snl.GameError, match="says it is finished, but its log does not end with the game over"):
        GameRecord.from_dict(data)
    cut = GameRecord.from_dict({**data, "finished": False})
    assert cut.to_dict()["finished"] is False and not cut.finished
    report = verify_game(cut)
    assert report.passed and not report.finished and not report.whole_game
    assert report.rules_verdict == "unfinished" and str(report).startswith("UNFINISHED:")
    with pytest.raises(snl.GameError, match="says it is unfinished"):
        GameRecord.from_dict({**record.to_dict(), "finished": False})


def test_an_edited_signed_record_no_longer_matches_its_signature():
    record = Game(Board.builtin(), Rules(), players=2, rng=4).play().signed(KEY)
    assert verify_game(record, key=KEY).signed
    assert verify_game(GameRecord.from_json(record.to_json()), key=KEY).signature == "signed by this server"
    data = record.to_dict()
    data["seats"][0]["name"] = "Mallory"  # a legal change: only the signature sees it
    report = verify_game(GameRecord.from_dict(data), key=KEY)
    assert report.passed and report.signature == "signature does not match" and not report.signed
    cut = {**data, "log": data["log"][:2], "dice": data["dice"][:1], "finished": False}
    cut["positions"], cut["finishing_order"] = [cut["log"][-1]["end"], 0], []
    assert verify_game(GameRecord.from_dict(cut), key=KEY).signature == "signature does not match"
    assert verify_game(record).signature == "signature not checked (no key given)"
    assert verify_game(Game(Board(10), players=1, dice=[4, 6]).play(), key=KEY).signature == "not signed"


def test_a_bump_must_send_the_token_to_bump_to_not_where_the_log_says():
    game = Game(Board(20), Rules(bump=True), players=2, dice=[3, 3])
    game.take_turn()
    game.take_turn()
    data = game.record().to_dict()
    (bump,) = [e for e in data["log"] if e["kind"] == "bump"]
    assert bump["to_square"] == 1
    bump["to_square"] = 7  # the log now sends the bumped token to 7
    data["positions"][1] = 7
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed
    assert "the rules give Bump(seat=1, turn=1, from_square=3, to_square=1)" in report.failures[0]


def test_events_appended_after_a_turns_events_are_reported():
    game = Game(Board(30), Rules.preset("plain"), players=2, dice=[3, 4, 2, 5])
    for _ in range(4):
        game.take_turn()
    data = game.record().to_dict()
    at = max(i for i, e in enumerate(data["log"]) if e["turn"] == 1) + 1
    data["log"].insert(at, {"kind": "overshoot", "seat": 1, "turn": 1, "square": 4, "value": 5})
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed and report.failures[0].startswith("turn 1 ")
    assert (
        "event 2: the log has Overshoot(seat=1, turn=1, square=4, value=5) where the rules give no more"
        in (report.failures[0])
    )


def test_events_after_a_skip_are_not_trusted():
    record = _with_a_skip()
    data = record.to_dict()
    at = [e["kind"] for e in data["log"]].index("skip") + 1
    data["log"].insert(at, {"kind": "overshoot", "seat": 1, "turn": 1, "square": 0, "value": 3})
    forged = GameRecord.from_dict(data).signed(KEY, online=True)  # even signed, the skip's turn breaks the rules
    report = verify_game(forged, key=KEY)
    assert not report.passed and report.failures[0].startswith("turn 1 ")
    assert "where the rules give no more events" in report.failures[0]


# ---------------------------------------------------------------- every check of verify_game fires (from the planted-bug audit, benchmarks/mutation_audit.py)
def _data(record):
    return record.to_dict()


def test_verify_roll_that_cannot_be_dealt():
    record = Game(Board(30), Rules(), players=1, dice=[6, 6, 3] + [5] * 10).play()
    data = _data(record)
    for e in data["log"]:
        if e["kind"] == "roll" and e["turn"] == 0 and e["value"] == 3:
            e["value"] = 6
    data["dice"][2] = 6
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed and "roll 3 (6) cannot be dealt after the cap" in report.failures[0]


def test_verify_rolls_after_the_turn_ended():
    record = Game(Board(30), Rules.preset("plain"), players=1, dice=[3, 4, 5, 6, 6, 6]).play()
    data = _data(record)
    turn0 = [e for e in data["log"] if e["turn"] == 0]
    extra = {"kind": "roll", "seat": 0, "turn": 0, "value": 2, "capped": False}
    data["log"].insert(len(turn0), extra)
    data["dice"].insert(1, 2)
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed and "rolls go on after roll 1 ended the turn" in report.failures[0]


def test_verify_turn_that_stops_while_a_roll_is_due():
    game = Game(Board(30), Rules(), players=1, dice=[6, 2])
    game.take_turn()
    data = _data(game.record())
    # turn 0 is 6 then 2: drop the bonus roll and its move, so the turn ends on the six
    data["log"] = [e for e in data["log"] if not (e["turn"] == 0 and e["kind"] in ("bonus_roll",))]
    turn0 = [i for i, e in enumerate(data["log"]) if e["turn"] == 0]
    del data["log"][turn0[2] : turn0[-1] + 1]
    data["dice"] = [e["value"] for e in data["log"] if e["kind"] == "roll"]
    from snlmarkov.game.events import event_from_dict
    from snlmarkov.game.record import _summarise

    _, pos, fin = _summarise(tuple(event_from_dict(e) for e in data["log"]), 1, snl.GameState.initial(1))
    data["positions"], data["finishing_order"] = list(pos), list(fin)
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed and "the turn stopped while another roll was due" in report.failures[0]


def test_verify_turn_without_rolls():
    game = Game(Board(30), Rules.preset("plain"), players=2, dice=[3, 4])
    game.take_turn(), game.take_turn()
    data = game.record().to_dict()
    data["log"] = [e for e in data["log"] if not (e["turn"] == 1 and e["kind"] == "roll")]
    data["dice"] = [3]
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed and "no rolls in a turn that was not skipped" in report.failures[0]


def test_verify_turn_after_the_game_was_over():
    game = Game(Board(10), Rules.preset("plain"), players=2, dice=[4, 1, 6, 2])
    game.take_turn(), game.take_turn(), game.take_turn()  # seat 0 reaches 10: game over
    data = game.record().to_dict()
    data["log"] = [e for e in data["log"] if e["kind"] != "game_over"]
    data["log"] += [
        {"kind": "roll", "seat": 1, "turn": 3, "value": 2, "capped": False},
        {"kind": "move", "seat": 1, "turn": 3, "start": 1, "end": 3},
    ]
    data["dice"] = [4, 1, 6, 2]
    data["positions"] = [10, 3]
    data["finished"] = False  # the editor says so too
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed
    assert any("a turn after the game was over" in f for f in report.failures)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("positions", (3, 1), "positions (3, 1) differ from the replay's"),
        ("finishing_order", (1,), "finishing order (1,) differs from the replay's"),
        ("dice", (1, 1, 1), "the record's dice are not the rolls of its log"),
    ],
)
def test_verify_summary_fields_of_a_tampered_object(field, value, message):
    """A record object altered after it was built (bypassing its own checks) still fails."""
    record = Game(Board(10), Rules.preset("plain"), players=2, dice=[4, 1, 6]).play()
    object.__setattr__(record, field, value)
    report = verify_game(record)
    assert not report.passed and any(message in f for f in report.failures)


def test_verify_log_probability_of_a_forfeit_turn():
    """Forfeit: 6, 6 (cap), then a 6 voids the turn: three fair rolls, (1/6)^3; back where it began."""
    rules = Rules(on_cap="forfeit")
    record = Game(Board(30), rules, players=1, dice=[6, 6, 6] + [5] * 10).play()
    report = verify_game(record)
    assert report.passed
    assert report.turns[0].rolls_log_probability == pytest.approx(3 * math.log(1 / 6))
    assert report.turns[0].end == 0

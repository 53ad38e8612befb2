"""Game records: consistency checks, JSON round trips, replays and the turn summaries."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snlmarkov import Board, BoardError, Game, GameError, GameRecord, RuleError, Rules, Seat
from snlmarkov.game.events import EVENT_TYPES, Bump, Move, Roll, Skip, event_from_dict
from snlmarkov.game.record import TurnSummary


def family_game():
    """A short family-rules game with an entry, a failed entry, a bounce, bumps, a skip and a finish."""
    board = Board(12, {4: 9, 11: 2})
    g = Game(
        board,
        Rules.preset("family"),
        players=["Ann", "Bob"],
        mode="last_one_standing",
        dice=[6, 4, 2, 6, 5, 5, 3, 6, 3, 1, 2, 6, 3],
    )
    g.take_turn()  # Ann: enters, 4 -> ladder 9
    g.take_turn()  # Bob: 2, fails to enter
    g.take_turn()  # Ann: 9 + 6 = 15 bounces to 9
    g.skip_turn()  # Bob is stalled
    g.take_turn()  # Ann: 9 + 5 = 14 bounces to 10
    g.take_turn()  # Bob: 5, fails to enter
    g.take_turn()  # Ann: 10 + 3 = 13 bounces to 11 -> snake 2
    g.take_turn()  # Bob: enters, 3 -> 3
    g.take_turn()  # Ann: 2 + 1 = 3, where Bob stands: bumped to 1
    g.take_turn()  # Bob: 3 + 2 = 5
    g.take_turn()  # Ann: 1 + 6 = 7
    g.take_turn()  # Bob: 5 + 3 = 8
    return g


def test_turn_summaries_of_a_family_game():
    g = family_game()
    summary = [(t.seat, t.start, t.end_before_bump, t.end, t.rolls, t.bumped, t.skipped) for t in g.record().turns()]
    assert summary == [
        (0, 0, 9, 9, (6, 4), False, False),
        (1, 0, 0, 0, (2,), False, False),
        (0, 9, 9, 9, (6,), False, False),
        (1, 0, 0, 0, (), False, True),
        (0, 9, 10, 10, (5,), False, False),
        (1, 0, 0, 0, (5,), False, False),
        (0, 10, 2, 2, (3,), False, False),
        (1, 0, 3, 3, (6, 3), False, False),
        (0, 2, 3, 1, (1,), True, False),
        (1, 3, 5, 5, (2,), False, False),
        (0, 1, 7, 7, (6,), False, False),
        (1, 5, 8, 8, (3,), False, False),
    ]
    assert [t.turn for t in g.record().turns()] == list(range(12))
    assert g.positions == (7, 8)


def test_turn_summaries_with_cap_and_forfeit():
    rules = Rules(on_cap="forfeit", start_on_six=True)
    g = Game(Board(40), rules, players=1, dice=[6, 6, 6, 6, 2, 6, 6, 1])
    g.take_turn()  # enters, 6 -> 6, capped six: forfeit back to 0
    g.take_turn()  # enters, 2 -> 2
    g.take_turn()  # 6 -> 8, 6 -> 14, capped 1 -> 15
    t = g.record().turns()
    assert [(s.start, s.end, s.rolls) for s in t] == [(0, 0, (6, 6, 6)), (0, 2, (6, 2)), (2, 15, (6, 6, 1))]
    rules = Rules(max_sixes=1)
    g = Game(Board(40), rules, players=1, dice=[6, 5, 6, 1])
    g.take_turn(), g.take_turn()
    assert [(s.start, s.end, s.rolls) for s in g.record().turns()] == [(0, 11, (6, 5)), (11, 18, (6, 1))]


def test_json_round_trip():
    record = family_game().record()
    text = record.to_json(indent=2)
    again = GameRecord.from_json(text)
    assert again == record and again.turns() == record.turns() and again.to_json(indent=2) == text
    assert GameRecord.from_dict(json.loads(record.to_json())) == record
    finished = Game(players=["Ann", "Bob", "Cy"], mode="last_one_standing", rng=5).play()
    assert GameRecord.from_json(finished.to_json()) == finished
    assert finished.is_over and not record.is_over and finished.has_winner


def test_board_name_survives_the_round_trip():
    record = Game(Board.builtin("milton_bradley"), players=1, rng=1).play()
    assert GameRecord.from_json(record.to_json()).board.name == "milton_bradley"


def test_every_event_kind_round_trips():
    forfeit = Game(Board(30), Rules(on_cap="forfeit"), players=1, dice=[6, 6, 6])
    forfeit.take_turn()
    restart = Game(Board(30), Rules(on_cap="restart"), players=1, dice=[6, 6, 6])
    restart.take_turn()
    finished = Game(Board(4), Rules(), players=1, dice=[5, 4]).play()
    die = Game(Board(30), Rules(choose_die=(4, 6)), [Seat("G", "red", policy="greedy")], dice=[2])
    move = Game(Board(30), Rules(choose_move=2), [Seat("G", "red", policy="greedy")], dice=[2, 3])
    die.take_turn(), move.take_turn()
    log = family_game().log + forfeit.log + restart.log + finished.log + die.log + move.log
    assert {e.kind for e in log} == set(EVENT_TYPES)
    for event in log:
        assert event_from_dict(json.loads(json.dumps(event.to_dict()))) == event


def test_replay_reproduces_the_game_including_skips():
    g = family_game()
    again = Game.replay(g.record())
    assert again.log == g.log and again.positions == g.positions and again.record() == g.record()
    assert again.turns_taken == g.turns_taken and again.rolls_taken == g.rolls_taken and again.round == g.round
    finished = Game(players=4, mode="last_one_standing", rng=9).play()
    assert Game.replay(finished).record() == finished
    assert Game.replay(GameRecord.from_json(finished.to_json())).is_over


def test_replay_refuses_an_edited_record():
    record = family_game().record()
    # change the first roll and its die consistently: the record itself still looks consistent ...
    log = list(record.log)
    log[2] = dataclasses.replace(log[2], value=3)
    dice = (6, 3) + record.dice[2:]
    edited = dataclasses.replace(record, log=tuple(log), dice=dice)
    # ... but the game those dice give differs
    with pytest.raises(GameError, match="does not replay"):
        Game.replay(edited)
    with pytest.raises(GameError, match="needs a GameRecord"):
        Game.replay(record.to_dict())


def test_replay_refuses_extra_dice():
    g = Game(Board(20), Rules(), players=1, dice=[3])
    g.take_turn()
    record = g.record()
    data = record.to_dict()
    data["log"].append({"kind": "roll", "seat": 0, "turn": 0, "value": 2, "capped": False})
    data["dice"].append(2)
    with pytest.raises(GameError, match="does not replay|more dice"):
        Game.replay(GameRecord.from_dict(data))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(dice=d["dice"][:-1]), "dice are not the rolls"),
        (lambda d: d.update(positions=[1, 1]), "positions"),
        (lambda d: d.update(positions=[7]), "1 entries for 2 seats"),
        (lambda d: d.update(finishing_order=[0]), "finishing_order"),
        (lambda d: d.update(mode="battle"), "mode"),
        (lambda d: d.update(format=2), "format 2"),
        (lambda d: d.update(extra=1), "unexpected \\['extra'\\]"),
        (lambda d: d.pop("dice"), "missing \\['dice'\\]"),
        (lambda d: d.update(seats=[]), "non-empty"),
        (lambda d: d.update(seats=[{"name": "Ann"}, {"name": "Bob", "colour": "blue"}]), "name and a colour"),
        (lambda d: d["log"].__setitem__(0, {"kind": "warp", "seat": 0, "turn": 0}), "unknown event kind"),
        (lambda d: d["log"][0].update(turn=5), "expected turn 0"),
        (lambda d: d["log"][0].update(seat=1), "mixes seats"),
        (lambda d: d["log"][0].pop("value"), "missing \\['value'\\]"),
        (lambda d: d.update(log={}), "'log' must be a list"),
    ],
)
def test_inconsistent_records_are_refused(change, message):
    data = family_game().record().to_dict()
    change(data)
    with pytest.raises(GameError, match=message):
        GameRecord.from_dict(data)


def test_bad_board_or_rules_in_a_record():
    data = family_game().record().to_dict()
    data["rules"]["finish"] = "exact"
    with pytest.raises(RuleError):
        GameRecord.from_dict(data)
    data = family_game().record().to_dict()
    data["board"]["ladders"] = {"4": 11}
    with pytest.raises(BoardError, match="game record board"):
        GameRecord.from_dict(data)


def test_from_json_refuses_what_is_not_a_record():
    with pytest.raises(GameError, match="must be JSON"):
        GameRecord.from_json("{")
    with pytest.raises(GameError, match="must be a mapping"):
        GameRecord.from_json("[]")


def test_records_are_frozen_and_checked():
    record = family_game().record()
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.mode = "classic"
    with pytest.raises(GameError, match="seats"):
        dataclasses.replace(record, seats=("Ann", "Bob"))
    with pytest.raises(GameError, match="no one finished"):
        record.winner
    with pytest.raises(GameError, match="without a bump"):
        TurnSummary(turn=0, seat=0, start=0, end=3, end_before_bump=4, rolls=(4,), bumped=False, skipped=False)
    with pytest.raises(GameError, match="skipped turn"):
        TurnSummary(turn=0, seat=0, start=0, end=0, end_before_bump=0, rolls=(4,), bumped=False, skipped=True)
    # the same check on a record's log, whose turns are summarised without the type checks
    board, rules = Board(10), Rules()
    roll, skip = Roll(seat=0, turn=0, value=4, capped=False), Skip(seat=0, turn=0)
    with pytest.raises(GameError, match="skipped turn"):
        GameRecord(board, rules, (Seat("Ann", "red"),), "classic", (roll, skip), (4,), (0,), ())
    plain = GameRecord(
        board, rules, (Seat("Ann", "red"),), "classic", (roll, Move(seat=0, turn=0, start=0, end=4)), (4,), (4,), ()
    )
    assert plain.turns() == (
        TurnSummary(turn=0, seat=0, start=0, end=4, end_before_bump=4, rolls=(4,), bumped=False, skipped=False),
    )


# ---------------------------------------------------------------- every game, checked turn by turn
def reference_turn(board: Board, rules: Rules, start: int, rolls: tuple[int, ...]) -> int:
    """Where RULES.md puts a lone token after these rolls, asserting the turn uses exactly them.

    Written apart from the engine (as a check of it): walks the rolls list and
    asserts that the turn goes on after every roll but the last.
    """
    size, top, jumps = board.size, rules.faces, dict(board.jumps)
    square, sixes, waiting = start, 0, rules.start_on_six and start == 0
    assert rolls, "a turn that is not skipped has at least one roll"
    for i, r in enumerate(rolls):
        goes_on = i < len(rolls) - 1
        capped = rules.max_sixes is not None and sixes >= rules.max_sixes
        assert 1 <= r <= (top - 1 if capped and rules.on_cap == "redeal" else top)
        if capped and r == top:
            assert not goes_on
            return 0 if rules.on_cap == "restart" else start
        sixes += r == top
        if waiting:
            if r != top:
                assert not goes_on
                return start
            assert goes_on
            waiting = False
            continue
        if square + r > size and rules.finish == "stay":
            assert not goes_on
            return square
        bounced = square + r > size and rules.finish == "bounce"
        target = square + r if square + r <= size else (2 * size - square - r if bounced else size)
        square = target
        if not (bounced and not rules.jump_after_bounce):  # a bounce without the jump stays on its square
            square = jumps.get(target, target)
            while board.chain and square in jumps:
                square = jumps[square]
        assert goes_on == (r == top and rules.bonus_on_six and square != size)
    return square


BOARDS = [
    Board.builtin(),
    Board.builtin("milton_bradley"),
    Board(12, {4: 9, 11: 2}),
    Board(8, {7: 3}),
    Board(6),
    Board(12, {2: 6, 6: 9, 9: 3, 11: 6}, chain=True),
]


@st.composite
def games(draw):
    board = draw(st.sampled_from(BOARDS))
    faces = draw(st.sampled_from([2, 4, 6]))
    rules = Rules(
        finish=draw(st.sampled_from(["stay", "bounce", "none"])),
        bonus_on_six=draw(st.booleans()),
        max_sixes=draw(st.sampled_from([None, 1, 2, 3])),
        on_cap=draw(st.sampled_from(["redeal", "forfeit", "restart"])),
        start_on_six=draw(st.booleans()),
        bump=draw(st.booleans()),
        bump_to=draw(st.integers(1, 5)),
        faces=faces,
        jump_after_bounce=draw(st.booleans()),
    )
    players = draw(st.integers(1, 4))
    mode = draw(st.sampled_from(["classic", "last_one_standing"]))
    skips = draw(st.sets(st.integers(0, 60), max_size=5))
    return board, rules, players, mode, skips, draw(st.integers(0, 2**32 - 1))


@settings(max_examples=120, deadline=None)
@given(games())
def test_every_turn_of_random_games_follows_the_rules(case):
    board, rules, players, mode, skips, seed = case
    g = Game(board, rules, players=players, mode=mode, rng=seed)
    while not g.is_over and g.total_turns < 3000:
        if g.total_turns in skips:
            g.skip_turn()
        else:
            g.take_turn()
    record = g.record()
    positions = [0] * players
    for t in record.turns():
        assert t.start == positions[t.seat]
        if t.skipped:
            assert t.rolls == () and t.end == t.start
            continue
        assert t.end_before_bump == reference_turn(board, rules, t.start, t.rolls)
        others = [p for i, p in enumerate(positions) if i != t.seat]
        should_bump = rules.bump and 0 < t.end_before_bump < board.size and t.end_before_bump in others
        assert t.bumped == should_bump
        assert t.end == (rules.bump_to if should_bump else t.end_before_bump)
        positions[t.seat] = t.end
    assert tuple(positions) == g.positions == record.positions
    assert sum(len(t.rolls) for t in record.turns()) == len(record.dice) == sum(g.rolls_taken)
    assert [sum(t.seat == s for t in record.turns()) for s in range(players)] == list(g.turns_taken)
    if g.is_over:
        finished = [s for s in range(players) if g.positions[s] == board.size]
        assert sorted(g.finishing_order) == finished
        assert len(finished) == (1 if mode == "classic" else players)
    assert Game.replay(record).record() == record
    assert GameRecord.from_json(record.to_json()) == record


def test_event_registry_is_complete():
    assert set(EVENT_TYPES) == {
        "roll",
        "choose_die",
        "rolled_dice",
        "choose_move",
        "enter",
        "failed_enter",
        "move",
        "bounce",
        "overshoot",
        "ladder",
        "snake",
        "bonus_roll",
        "cap_reached",
        "forfeit",
        "restart",
        "bump",
        "skip",
        "finish",
        "game_over",
    }
    assert Roll(seat=0, turn=0, value=2, capped=False).kind == "roll"
    with pytest.raises(GameError, match="Move.end must be an integer >= 0"):
        Move(seat=0, turn=0, start=1, end=-2)
    assert Roll(seat=0, turn=0, value=0, capped=False).value == 0  # a die may have a 0 face
    with pytest.raises(GameError, match="Roll.value must be an integer >= 0"):
        Roll(seat=0, turn=0, value=-1, capped=False)
    with pytest.raises(GameError, match="capped must be True or False"):
        Roll(seat=0, turn=0, value=2, capped=1)
    assert Bump(seat=1, turn=2, from_square=5, to_square=1).to_dict() == {
        "kind": "bump",
        "seat": 1,
        "turn": 2,
        "from_square": 5,
        "to_square": 1,
    }
    assert Seat("Ann", "red").to_dict() == {"name": "Ann", "colour": "red"}

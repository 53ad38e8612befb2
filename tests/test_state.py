"""Game states: validation, the engine and the simulator started from one, record states."""

from __future__ import annotations

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov import Board, Game, GameError, GameRecord, GameState, Rules

JUNGLE = Board.builtin()
FAMILY = Rules.preset("family")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"positions": ()}, "at least one seat"),
        ({"positions": (3, -1)}, r"positions\[1\] = -1"),
        ({"positions": (3, 2.5)}, r"positions\[1\] must be an integer"),
        ({"positions": "12"}, "sequence of integers"),
        ({"positions": 12}, "sequence of integers"),
        ({"positions": (3, 4), "to_move": 2}, "to_move must be a seat 0..1"),
        ({"positions": (3, 4), "to_move": True}, "to_move must be an integer"),
        ({"positions": (3, 4), "places": (5,)}, r"places\[0\] = 5"),
        ({"positions": (10, 10), "places": (0, 0)}, "lists a seat twice"),
    ],
)
def test_bad_states_are_refused_naming_the_field(kwargs, message):
    with pytest.raises(GameError, match=message):
        GameState(**kwargs)


@pytest.mark.parametrize(
    "state, rules, mode, message",
    [
        (GameState((101, 0)), Rules(), "classic", r"positions\[0\] = 101 is off the board"),
        (GameState((100, 100), places=(0, 1)), Rules(), "classic", "both home"),
        (GameState((100, 3), to_move=1), Rules(), "last_one_standing", "not in places"),
        (GameState((50, 3), places=(0,), to_move=1), Rules(), "last_one_standing", "not the finish"),
        (GameState((100, 3), places=(0,), to_move=0), Rules(), "last_one_standing", "to_move = 0 has finished"),
        (GameState((16, 3)), Rules(), "classic", r"positions\[0\] = 16 is the start of a jump to 6"),
        (GameState((12, 12)), FAMILY, "classic", "share square 12"),
    ],
)
def test_states_are_checked_against_board_rules_and_mode(state, rules, mode, message):
    with pytest.raises(GameError, match=message):
        state.validate(JUNGLE, rules, mode)


def test_states_the_rules_allow():
    # two tokens on bump_to, on 0 or home share a square; a bumped token rests on bump_to even if a jump starts there
    assert GameState((1, 1, 0, 0)).validate(JUNGLE, FAMILY, "classic")
    assert GameState((100, 100, 5), to_move=2, places=(1, 0)).validate(JUNGLE, FAMILY, "last_one_standing")
    assert GameState((100, 30), to_move=0).validate(JUNGLE, Rules(), "classic").is_over(JUNGLE, "classic")
    assert GameState((100, 30), to_move=0, places=(0,)).validate(JUNGLE, Rules(), "classic")
    # without bump any number of tokens share a square
    assert GameState((12, 12)).validate(JUNGLE, Rules(), "classic")


def test_game_state_follows_the_game_and_record_states_match():
    for mode in ("classic", "last_one_standing"):
        game = Game(JUNGLE, FAMILY, players=3, mode=mode, rng=11)
        seen = [game.state]
        while not game.is_over:
            game.take_turn()
            seen.append(game.state)
        record = game.record()
        assert record.states() == tuple(seen)
        assert len(record.states()) == len(record.turns()) + 1
        for s in seen:
            s.validate(JUNGLE, FAMILY, mode)
        assert [s.to_move for s in seen[:-1]] == [t.seat for t in record.turns()]


def test_a_game_started_from_a_state_records_and_replays_it():
    start = GameState((100, 95 - 20, 30), to_move=2, places=(0,))
    game = Game(JUNGLE, Rules(), players=["Ann", "Bob", "Cy"], mode="last_one_standing", state=start, rng=3)
    assert game.state == start and game.finishing_order == (0,)
    record = game.play()
    assert record.start == start and record.states()[0] == start
    assert record.finishing_order[0] == 0 and sorted(record.finishing_order) == [0, 1, 2]
    assert record.turns()[0].seat == 2
    again = GameRecord.from_json(record.to_json())
    assert again == record and again.start == start
    assert Game.replay(record).record() == record
    # a record from the beginning keeps its JSON as before (no "start")
    assert "start" not in Game(JUNGLE, Rules(), players=2, rng=1).play().to_dict()


def test_a_game_cannot_start_from_a_bad_or_finished_state():
    with pytest.raises(GameError, match="players has 3 seats, but the state has 2 tokens"):
        Game(JUNGLE, Rules(), players=3, state=GameState((0, 0)))
    with pytest.raises(GameError, match="over"):
        Game(JUNGLE, Rules(), players=2, state=GameState((100, 0)))
    with pytest.raises(GameError, match="must be a GameState"):
        Game(JUNGLE, Rules(), players=2, state=(0, 0))
    with pytest.raises(GameError, match="share square"):
        Game(JUNGLE, FAMILY, players=2, state=GameState((5, 5)))


def test_record_with_a_bad_start_is_refused():
    data = Game(JUNGLE, Rules(), players=2, rng=1, state=GameState((90, 30), to_move=1)).play().to_dict()
    data["start"] = {"positions": [90, 30], "to_move": 1, "bonus": 2}
    with pytest.raises(GameError, match="'start' must be a mapping"):
        GameRecord.from_dict(data)
    data["start"] = {"positions": [90, 30], "to_move": 0}
    with pytest.raises(GameError):  # the log's first turn is seat 1's: positions no longer agree
        Game.replay(GameRecord.from_dict(data))


def test_simulate_from_a_state():
    # one roll from the end on a 2-faced die: seat 1 to move on 9 of 10 finishes with a roll of 1 (plain, stay)
    board, rules = Board(10), Rules.preset("plain").replace(faces=2)
    start = GameState((9, 9), to_move=1)
    sim = snl.simulate(board, rules, 4000, players=2, start=start, rng=5)
    assert sim.turns.min() == 1 and sim.rounds.min() == 1
    # seat 1 wins on the first turn with probability 1/2, else seat 0 next (round 2) with 1/2, ...: 2/3 for seat 1
    assert abs(sim.win_frequencies()[1] - 2 / 3) < 5 * np.sqrt(2 / 9 / 4000)
    # a won game under last one standing keeps the place of the finished seat
    sim = snl.simulate(
        board, rules, 500, players=3, mode="last_one_standing", start=GameState((10, 9, 0), 1, (0,)), rng=2
    )
    assert (sim.place[:, 0] == 1).all() and sim.finished.all() and (sim.winner == 0).all()
    with pytest.raises(GameError, match="over"):
        snl.simulate(board, rules, 10, players=2, start=GameState((10, 3)))
    with pytest.raises(GameError, match="players=3, but the state has 2 tokens"):
        snl.simulate(board, rules, 10, players=3, start=GameState((1, 3)))
    # one player started from a square counts its turns from there
    solo = snl.simulate(board, rules, 1000, start=GameState((9,)), rng=1)
    assert solo.turns.min() == 1 and solo.finished.all()


@pytest.mark.parametrize("finish", ["stay", "none"])
def test_a_token_on_a_jump_start_is_refused_unless_a_bounce_can_leave_it_there(finish):
    """Only a bounce with jump_after_bounce off ends a turn on a jump's start: under stay or none the
    switch is irrelevant and such a state is refused whatever its value."""
    rules = Rules(finish=finish, jump_after_bounce=False)
    with pytest.raises(GameError, match=r"positions\[0\] = 16 is the start of a jump to 6"):
        GameState((16, 3)).validate(JUNGLE, rules, "classic")
    assert GameState((16, 3)).validate(JUNGLE, rules.replace(finish="bounce"), "classic")
    with pytest.raises(GameError, match="start of a jump"):
        GameState((16, 3)).validate(JUNGLE, rules.replace(finish="bounce", jump_after_bounce=True), "classic")

"""The playable engine: every rule of RULES.md alone and combined, with scripted dice."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import snlmarkov as snl
from snlmarkov import Board, DiceError, Game, GameError, RuleError, Rules, Seat
from snlmarkov.game.events import (
    Bounce,
    Bump,
    CapReached,
    Enter,
    FailedEnter,
    Finish,
    Forfeit,
    GameOver,
    Ladder,
    Move,
    Overshoot,
    Roll,
    Skip,
    Snake,
)

APP = Rules()
PLAIN = Rules.preset("plain")


def kinds(events):
    return [e.kind for e in events]


def rolls(events):
    return [(e.value, e.capped) for e in events if isinstance(e, Roll)]


def game(board, rules=APP, dice=(), players=1, mode="classic"):
    return Game(board, rules, players=players, mode=mode, dice=list(dice))


def turns(g, n):
    """Play n turns, return the events of the last one."""
    events = []
    for _ in range(n):
        events = g.take_turn()
    return events


# ---------------------------------------------------------------- one roll
def test_plain_move_ladder_and_snake():
    g = game(Board(20, {3: 12, 15: 2}), PLAIN, [3, 3])
    assert g.take_turn() == [
        Roll(seat=0, turn=0, value=3, capped=False),
        Move(seat=0, turn=0, start=0, end=3),
        Ladder(seat=0, turn=0, start=3, end=12),
    ]
    assert g.take_turn() == [
        Roll(seat=0, turn=1, value=3, capped=False),
        Move(seat=0, turn=1, start=12, end=15),
        Snake(seat=0, turn=1, start=15, end=2),
    ]
    assert g.positions == (2,)


def test_landing_on_a_jump_end_does_nothing():
    g = game(Board(20, {3: 12, 15: 2}), PLAIN, [2, 6, 4])
    assert kinds(g.take_turn()) == ["roll", "move"]  # tail of the snake
    assert kinds(g.take_turn()) == ["roll", "move"]
    assert kinds(g.take_turn()) == ["roll", "move"]  # top of the ladder
    assert g.positions == (12,)


def test_overshoot_under_stay_keeps_the_token_and_ends_the_turn_even_on_a_six():
    g = game(Board(10), APP, [5, 3, 6, 2])
    turns(g, 2)
    assert g.positions == (8,)
    assert g.take_turn() == [
        Roll(seat=0, turn=2, value=6, capped=False),
        Overshoot(seat=0, turn=2, square=8, value=6),
    ]
    assert g.positions == (8,) and g.rolls_taken == (3,)
    assert kinds(g.take_turn()) == ["roll", "move", "finish", "game_over"]


def test_bounce_counts_back_and_a_snake_there_acts():
    g = game(Board(10, {8: 2}), PLAIN.replace(finish="bounce"), [4, 3, 5])
    turns(g, 2)
    assert g.take_turn() == [
        Roll(seat=0, turn=2, value=5, capped=False),
        Bounce(seat=0, turn=2, target=8),
        Move(seat=0, turn=2, start=7, end=8),
        Snake(seat=0, turn=2, start=8, end=2),
    ]
    assert g.positions == (2,)


def test_bounce_behind_the_start_square_onto_a_snake():
    g = game(Board(10, {6: 3}), PLAIN.replace(finish="bounce"), [4, 4, 6])
    events = turns(g, 3)  # 8 + 6 = 14 counts back to 6, below 8
    assert kinds(events) == ["roll", "bounce", "move", "snake"]
    assert events[2] == Move(seat=0, turn=2, start=8, end=6) and g.positions == (3,)


def test_a_bounced_six_still_earns_its_bonus_roll():
    g = game(Board(10), APP.replace(finish="bounce"), [4, 3, 6, 3])
    turns(g, 2)
    assert kinds(g.take_turn()) == ["roll", "bounce", "move", "bonus_roll", "roll", "move", "finish", "game_over"]
    assert g.positions == (10,)


def test_finish_none_reaches_the_finish_on_any_overshoot():
    g = game(Board(10), PLAIN.replace(finish="none"), [4, 3, 5])
    events = turns(g, 3)
    assert events[:2] == [Roll(seat=0, turn=2, value=5, capped=False), Move(seat=0, turn=2, start=7, end=10)]
    assert g.is_over and g.positions == (10,)


# ---------------------------------------------------------------- bonus and cap
def test_bonus_roll_after_a_six_jump_included():
    g = game(Board(30, {6: 15}), APP, [6, 2])
    assert kinds(g.take_turn()) == ["roll", "move", "ladder", "bonus_roll", "roll", "move"]
    assert g.positions == (17,) and g.rolls_taken == (2,) and g.turns_taken == (1,)


def test_no_bonus_when_bonus_on_six_is_off():
    g = game(Board(30), PLAIN, [6, 6])
    assert kinds(g.take_turn()) == ["roll", "move"]
    assert kinds(g.take_turn()) == ["roll", "move"]
    assert g.positions == (12,) and g.rolls_taken == (2,)


@pytest.mark.parametrize("board", [Board(6), Board(10, {6: 10})])
def test_a_six_that_reaches_the_finish_ends_the_turn(board):
    g = game(board, APP, [6])  # a further roll would run out of dice
    events = g.take_turn()
    assert kinds(events)[-2:] == ["finish", "game_over"] and "bonus_roll" not in kinds(events)
    assert g.is_over and g.rolls_taken == (1,)


def test_cap_with_redeal():
    g = game(Board(30), APP, [6, 6, 5])
    events = g.take_turn()
    assert kinds(events) == ["roll", "move", "bonus_roll", "roll", "move", "bonus_roll", "cap_reached", "roll", "move"]
    assert rolls(events) == [(6, False), (6, False), (5, True)]
    assert CapReached(seat=0, turn=0, sixes=2) in events
    assert g.positions == (17,)


def test_scripted_six_after_the_cap_under_redeal_is_a_dice_error_and_changes_nothing():
    g = game(Board(30), APP, [6, 6, 6, 1])
    with pytest.raises(DiceError, match="impossible.*redealt from 1..5"):
        g.take_turn()
    assert g.positions == (0,) and g.log == () and g.total_turns == 0 and g.rolls_taken == (0,)
    assert g.record().dice == ()


@pytest.mark.parametrize("max_sixes", [1, 3])
def test_cap_counts_exactly_max_sixes(max_sixes):
    rules = APP.replace(max_sixes=max_sixes)
    g = game(Board(60), rules, [6] * max_sixes + [1])
    events = g.take_turn()
    assert rolls(events) == [(6, False)] * max_sixes + [(1, True)]
    assert g.positions == (6 * max_sixes + 1,)
    with pytest.raises(DiceError):
        game(Board(60), rules, [6] * (max_sixes + 1)).take_turn()


def test_no_cap_lets_sixes_run():
    g = game(Board(60), APP.replace(max_sixes=None), [6, 6, 6, 6, 2])
    assert rolls(g.take_turn()) == [(6, False)] * 4 + [(2, False)]
    assert g.positions == (26,)


def test_redeal_with_other_faces():
    rules = APP.replace(faces=4, max_sixes=1)
    g = game(Board(30), rules, [4, 3, 4, 4])
    assert rolls(g.take_turn()) == [(4, False), (3, True)]
    with pytest.raises(DiceError, match="redealt from 1..3"):
        g.take_turn()


def test_forfeit_voids_the_whole_turn():
    rules = APP.replace(on_cap="forfeit")
    g = game(Board(40), rules, [3, 6, 6, 6])
    g.take_turn()
    events = g.take_turn()
    assert kinds(events) == [
        "roll",
        "move",
        "bonus_roll",
        "roll",
        "move",
        "bonus_roll",
        "cap_reached",
        "roll",
        "forfeit",
    ]
    assert events[-1] == Forfeit(seat=0, turn=1, back_to=3)
    assert rolls(events)[-1] == (6, True)
    assert g.positions == (3,) and g.rolls_taken == (4,)


def test_forfeit_capped_roll_that_is_not_a_six_moves_without_bonus():
    g = game(Board(40), APP.replace(on_cap="forfeit"), [6, 6, 2])
    assert rolls(g.take_turn()) == [(6, False), (6, False), (2, True)]
    assert g.positions == (14,)


def test_forfeit_sends_the_token_back_across_a_ladder_and_snake():
    g = game(Board(40, {6: 20, 26: 4}), APP.replace(on_cap="forfeit"), [6, 6, 6])
    events = g.take_turn()
    assert [e.kind for e in events if e.kind in ("ladder", "snake", "forfeit")] == ["ladder", "snake", "forfeit"]
    assert g.positions == (0,)


# ---------------------------------------------------------------- six to start
SIX_TO_START = APP.replace(start_on_six=True)


def test_failed_entry_is_a_roll_and_ends_the_turn():
    g = game(Board(20), SIX_TO_START, [3])
    assert g.take_turn() == [Roll(seat=0, turn=0, value=3, capped=False), FailedEnter(seat=0, turn=0)]
    assert g.positions == (0,) and g.rolls_taken == (1,) and g.turns_taken == (1,)


def test_entry_then_move_from_zero():
    g = game(Board(20, {4: 11}), SIX_TO_START, [6, 4, 5])
    assert g.take_turn() == [
        Roll(seat=0, turn=0, value=6, capped=False),
        Enter(seat=0, turn=0),
        Roll(seat=0, turn=0, value=4, capped=False),
        Move(seat=0, turn=0, start=0, end=4),
        Ladder(seat=0, turn=0, start=4, end=11),
    ]
    assert kinds(g.take_turn()) == ["roll", "move"]  # no six needed any more
    assert g.positions == (16,)


def test_entering_six_counts_towards_the_cap():
    g = game(Board(30), SIX_TO_START, [6, 6, 2])
    events = g.take_turn()
    assert kinds(events) == ["roll", "enter", "roll", "move", "bonus_roll", "cap_reached", "roll", "move"]
    assert rolls(events) == [(6, False), (6, False), (2, True)]
    assert g.positions == (8,)
    with pytest.raises(DiceError):
        game(Board(30), SIX_TO_START, [6, 6, 6]).take_turn()


def test_max_sixes_one_makes_the_roll_after_entry_capped():
    rules = SIX_TO_START.replace(max_sixes=1)
    g = game(Board(30), rules, [6, 5])
    assert kinds(g.take_turn()) == ["roll", "enter", "cap_reached", "roll", "move"]
    assert g.positions == (5,)
    with pytest.raises(DiceError):
        game(Board(30), rules, [6, 6]).take_turn()
    g = game(Board(30), rules.replace(on_cap="forfeit"), [6, 6, 2])
    assert kinds(g.take_turn()) == ["roll", "enter", "cap_reached", "roll", "forfeit"]
    assert g.positions == (0,)
    assert kinds(g.take_turn()) == ["roll", "failed_enter"]  # the entry was voided


def test_bonus_off_entry_gives_exactly_one_more_roll():
    rules = SIX_TO_START.replace(bonus_on_six=False, max_sixes=None)
    g = game(Board(30), rules, [6, 6, 6])
    assert kinds(g.take_turn()) == ["roll", "enter", "roll", "move"]  # the six after entry earns nothing
    assert g.positions == (6,)
    assert kinds(g.take_turn()) == ["roll", "move"]
    assert g.positions == (12,) and g.rolls_taken == (3,)


def test_forfeit_back_to_zero_voids_the_entry():
    rules = SIX_TO_START.replace(on_cap="forfeit")
    g = game(Board(40), rules, [6, 6, 6, 5])
    events = g.take_turn()
    assert kinds(events) == ["roll", "enter", "roll", "move", "bonus_roll", "cap_reached", "roll", "forfeit"]
    assert events[-1].back_to == 0 and g.positions == (0,) and g.rolls_taken == (3,)
    assert kinds(g.take_turn()) == ["roll", "failed_enter"]
    assert g.positions == (0,)


def test_entry_without_six_to_start_is_not_needed():
    g = game(Board(20), APP, [1])
    assert kinds(g.take_turn()) == ["roll", "move"]


# ---------------------------------------------------------------- bump
BUMP = APP.replace(bump=True)


def test_bump_on_the_final_square():
    g = game(Board(30), BUMP, [4, 4], players=2)
    g.take_turn()
    events = g.take_turn()
    assert events[-1] == Bump(seat=1, turn=1, from_square=4, to_square=1)
    assert g.positions == (4, 1)


def test_passing_over_or_pausing_on_an_occupied_square_is_harmless():
    g = game(Board(30), BUMP, [5, 1, 2, 6, 3, 4], players=2)
    turns(g, 3)
    assert g.positions == (7, 1)
    events = g.take_turn()  # seat 1 pauses on 7 (seat 0's square), then moves on to 10
    assert kinds(events) == ["roll", "move", "bonus_roll", "roll", "move"]
    assert g.positions == (7, 10)
    events = g.take_turn()  # seat 0 passes over 10 to 11
    assert kinds(events) == ["roll", "move"]
    assert g.positions == (11, 10) and not any(isinstance(e, Bump) for e in g.log)


def test_bump_uses_the_square_after_a_jump():
    g = game(Board(30, {4: 16}), BUMP, [6, 6, 4, 4], players=2)
    g.take_turn()  # seat 0: 6, 12, then a capped 4: 16
    assert g.positions == (16, 0)
    events = g.take_turn()  # seat 1: 4 -> ladder 16, occupied
    assert kinds(events) == ["roll", "move", "ladder", "bump"]
    assert g.positions == (16, 1)


def test_bump_to_on_a_ladder_foot_does_not_climb_and_sharing_it_is_allowed():
    rules = BUMP.replace(bump_to=2)
    g = game(Board(30, {2: 20}), rules, [5, 5, 5], players=3)
    turns(g, 3)
    assert g.positions == (5, 2, 2)
    assert not any(isinstance(e, Ladder) for e in g.log)
    assert [e for e in g.log if isinstance(e, Bump)] == [
        Bump(seat=1, turn=1, from_square=5, to_square=2),
        Bump(seat=2, turn=2, from_square=5, to_square=2),
    ]


def test_tokens_on_zero_or_on_the_finish_occupy_nothing():
    rules = BUMP.replace(on_cap="forfeit")
    g = game(Board(30), rules, [6, 6, 6], players=2)  # seat 0 forfeits back to 0 where seat 1 stands
    assert kinds(g.take_turn())[-1] == "forfeit"
    assert g.positions == (0, 0)
    g = game(Board(6), rules.replace(bonus_on_six=False), [6, 6], players=2, mode="last_one_standing")
    turns(g, 2)
    assert g.positions == (6, 6) and not any(isinstance(e, Bump) for e in g.log)


def test_bump_applies_however_the_turn_ended():
    # both tokens come to share bump_to = 5; then a forfeit and an overshoot leave a token there
    rules = BUMP.replace(bump_to=5, on_cap="forfeit")
    g = game(Board(8), rules, [3, 3, 2, 4], players=2)
    turns(g, 3)
    assert g.positions == (5, 5)
    assert g.log[-1] == Bump(seat=0, turn=2, from_square=5, to_square=5)
    events = g.take_turn()  # seat 1 overshoots and stays on 5, where seat 0 stands
    assert kinds(events) == ["roll", "overshoot", "bump"]
    assert g.positions == (5, 5)
    g = game(Board(30), rules, [3, 3, 2, 6, 6, 6], players=2)
    turns(g, 3)
    events = g.take_turn()  # seat 1 forfeits back to 5, where seat 0 stands
    assert events[-2:] == [Forfeit(seat=1, turn=3, back_to=5), Bump(seat=1, turn=3, from_square=5, to_square=5)]


def test_a_bumped_token_needs_no_six_again():
    rules = SIX_TO_START.replace(bump=True)
    g = game(Board(30), rules, [6, 3, 6, 3, 2, 2], players=2)
    turns(g, 2)
    assert g.positions == (3, 1)
    turns(g, 2)
    assert kinds(g.log[-2:]) == ["roll", "move"] and g.positions == (5, 3)


def test_family_preset_combined():
    rules = Rules.preset("family")
    board = Board(12, {4: 9, 11: 2})
    g = game(board, rules, [6, 4, 6, 6, 5, 3, 6, 2], players=2, mode="last_one_standing")
    # seat 0: enters, 0 -> 4 -> ladder 9
    assert kinds(g.take_turn()) == ["roll", "enter", "roll", "move", "ladder"]
    # seat 1: enters, the six after entry earns nothing: 0 -> 6
    assert kinds(g.take_turn()) == ["roll", "enter", "roll", "move"]
    # seat 0: 9 + 5 = 14 bounces to 10
    assert kinds(g.take_turn()) == ["roll", "bounce", "move"]
    # seat 1: 6 + 3 = 9, free; seat 0: 10 + 6 = 16 bounces to 8; seat 1: 9 + 2 = 11 -> snake 2
    turns(g, 3)
    assert g.positions == (8, 2)
    assert [e.target for e in g.log if isinstance(e, Bounce)] == [10, 8]


# ---------------------------------------------------------------- modes and turns
def test_classic_mode_ends_at_the_first_finisher():
    g = game(Board(4), PLAIN, [3, 4], players=["Ann", "Bob"])
    with pytest.raises(GameError, match="no one has finished"):
        g.winner
    assert not g.has_winner
    turns(g, 2)
    assert g.is_over and g.winner == 1 and g.finishing_order == (1,)
    assert g.log[-2:] == (Finish(seat=1, turn=1, place=1), GameOver(seat=1, turn=1, finishing_order=(1,)))
    with pytest.raises(GameError, match="game is over"):
        g.take_turn()
    with pytest.raises(GameError, match="game is over"):
        g.skip_turn()
    with pytest.raises(GameError, match="game is over"):
        g.play()


def test_last_one_standing_skips_finished_seats():
    g = game(Board(4), PLAIN, [1, 4, 1, 3, 1, 1, 1], players=3, mode="last_one_standing")
    seen = []
    while not g.is_over:
        seen.append((g.current_seat, g.round))
        g.take_turn()
    # seat 1 finishes in turn 1, seat 0 in turn 3, seat 2 last
    assert seen == [(0, 1), (1, 1), (2, 1), (0, 2), (2, 2), (2, 3), (2, 4)]
    assert g.finishing_order == (1, 0, 2) and g.winner == 1
    assert [e.place for e in g.log if isinstance(e, Finish)] == [1, 2, 3]
    assert g.log[-1] == GameOver(seat=2, turn=6, finishing_order=(1, 0, 2))
    assert g.turns_taken == (2, 1, 4) and g.rolls_taken == (2, 1, 4)
    assert g.positions == (4, 4, 4) and g.total_turns == 7


def test_skip_turn():
    g = game(Board(10), PLAIN, [2, 3], players=3)
    assert g.skip_turn() == [Skip(seat=0, turn=0)]
    g.take_turn()
    assert g.skip_turn() == [Skip(seat=2, turn=2)]
    assert g.current_seat == 0 and g.round == 2
    g.take_turn()
    assert g.positions == (3, 2, 0)
    assert g.turns_taken == (2, 1, 1) and g.rolls_taken == (1, 1, 0)


def test_play_returns_the_record_and_guards_against_endless_games():
    g = game(Board(4), PLAIN, [1, 2, 1])
    record = g.play()
    assert record.finishing_order == (0,) and record.positions == (4,) and record == g.record()
    with pytest.raises(GameError, match="not over after 50 turns"):
        game(Board(4), PLAIN, [5] * 100).play(max_turns=50)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(GameError, match="max_turns"):
            game(Board(4), PLAIN, [4]).play(max_turns=bad)


def test_random_die_plays_a_full_game_reproducibly():
    a = Game(players=4, mode="last_one_standing", rng=11).play()
    b = Game(players=4, mode="last_one_standing", rng=np.random.default_rng(11)).play()
    assert a == b and sorted(a.finishing_order) == [0, 1, 2, 3]
    assert Game(players=4, mode="last_one_standing", rng=12).play() != a


@pytest.mark.slow  # a long statistical run
def test_random_redeal_is_uniform_on_one_to_five():
    # 1 seat, max_sixes=1: every six is followed by a capped roll; count faces with chi-square (alpha 1e-6)
    g = Game(Board(400_000), Rules(max_sixes=1), players=1, rng=20240601)
    free, capped = np.zeros(7, int), np.zeros(7, int)
    for _ in range(30_000):
        for e in g.take_turn():
            if isinstance(e, Roll):
                (capped if e.capped else free)[e.value] += 1
    assert free[0] == capped[0] == 0 and capped[6] == 0
    assert stats.chisquare(free[1:]).pvalue > 1e-6
    assert capped[1:6].sum() == free[6] and stats.chisquare(capped[1:6]).pvalue > 1e-6


# ---------------------------------------------------------------- scripted dice
@pytest.mark.parametrize("bad", [0, 7, 2.5, True, "3", None])
def test_scripted_dice_outside_the_faces_are_refused(bad):
    with pytest.raises(DiceError, match="is not a face 1..6"):
        game(Board(20), APP, [bad]).take_turn()


def test_running_out_of_scripted_dice_names_the_turn():
    g = game(Board(20), APP, [2, 6], players=["Ann", "Bob"])
    g.take_turn()
    with pytest.raises(DiceError, match=r"ran out in turn 1 \(Bob, seat 1\)"):
        g.take_turn()


def test_scripted_dice_accept_numpy_integers_and_generators():
    g = Game(Board(20), PLAIN, players=1, dice=(v for v in np.array([3, 4])))
    turns(g, 2)
    assert g.positions == (7,)
    g = Game(Board(20), PLAIN, players=1, dice=np.array([5]))
    g.take_turn()
    assert g.positions == (5,) and g.record().dice == (5,)


# ---------------------------------------------------------------- construction
def test_defaults():
    g = Game(dice=[])
    assert g.board == Board.builtin() and g.rules == Rules() and g.mode == "classic"
    assert g.seats == (Seat("Player 1", "red"), Seat("Player 2", "blue"))
    assert g.positions == (0, 0) and g.current_seat == 0 and g.round == 1 and g.log == ()


def test_seats_from_names_and_seats():
    g = Game(players=["Ann", Seat("Bob", "teal"), "Cy"], dice=[])
    assert g.seats == (Seat("Ann", "red"), Seat("Bob", "teal"), Seat("Cy", "green"))
    assert [s.colour for s in Game(players=8, dice=[]).seats][6:] == ["red", "blue"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"players": 0}, "at least 1"),
        ({"players": True}, "count or a list"),
        ({"players": "Ann"}, "count or a list"),
        ({"players": []}, "at least one seat"),
        ({"players": ["Ann", "Ann"]}, "distinct"),
        ({"players": ["Ann", 3]}, r"players\[1\]"),
        ({"players": [""]}, "non-empty"),
        ({"mode": "battle"}, "mode must be one of"),
        ({"rng": 1, "dice": [1]}, "not both"),
    ],
)
def test_invalid_games_are_refused(kwargs, message):
    with pytest.raises(GameError, match=message):
        Game(**kwargs)


def test_a_wrong_board_or_rules_raises_the_error_of_its_kind():
    with pytest.raises(snl.BoardError, match="board must be a Board"):
        Game(board="jungle")
    with pytest.raises(snl.RuleError, match="rules must be a Rules"):
        Game(rules="app")


def test_rules_that_do_not_fit_the_board_are_refused():
    with pytest.raises(RuleError, match="bounce"):
        Game(Board(4), Rules(finish="bounce"))
    with pytest.raises(RuleError, match="bump_to"):
        Game(Board(10), Rules(bump=True, bump_to=10))
    with pytest.raises(DiceError, match="iterable"):
        Game(Board(10), dice=5)


def test_str_and_repr():
    g = game(Board(9), PLAIN, [4], players=["Ann", "Bob"])
    g.take_turn()
    text = str(g)
    assert "(1)" in text and "1 Ann (red): square 4" in text and text.endswith("Turn 2, round 1: Bob (blue) to play.")
    assert "Game(board=Board(size=9" in repr(g) and "positions=(4, 0)" in repr(g)

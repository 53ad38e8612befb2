"""One resolver for the arguments entry points share: the same error class for the same mistake.

Every entry point that takes a board, rules or a mode refuses a wrong one with the error of its
kind (BoardError, RuleError, GameError), and a state gives the number of players when none is given.
"""

from __future__ import annotations

import pytest

import snlmarkov as snl
from snlmarkov.sim.core import simulate

JUNGLE = snl.Board.builtin()
ENTRY_POINTS = {
    "analyze": lambda **k: snl.analyze(**k),
    "expected_turns": lambda board=JUNGLE, **k: snl.expected_turns(board, **k),
    "exact_expected_turns": lambda **k: snl.exact_expected_turns(**k),
    "turn_model": lambda board=JUNGLE, **k: snl.turn_model(board, **k),
    "roll_model": lambda board=JUNGLE, **k: snl.roll_model(board, **k),
    "simulate": lambda board=None, rules=None, **k: simulate(board, rules, 10, **k),
    "Game": lambda **k: snl.Game(**k),
    "race": lambda **k: snl.race(**k),
    "Odds": lambda **k: snl.Odds(**k),
}
WITH_MODE = {"simulate", "Game", "race", "Odds"}


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_a_wrong_board_is_a_board_error(name):
    with pytest.raises(snl.BoardError, match="board must be a Board; got str"):
        ENTRY_POINTS[name](board="jungle")


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_wrong_rules_are_a_rule_error(name):
    with pytest.raises(snl.RuleError, match="rules must be a Rules; got str"):
        ENTRY_POINTS[name](rules="family")


@pytest.mark.parametrize("name", sorted(WITH_MODE))
def test_a_wrong_mode_is_a_game_error(name):
    with pytest.raises(snl.GameError, match="mode must be one of 'classic', 'last_one_standing'"):
        ENTRY_POINTS[name](mode="battle")


def test_sweep_refuses_a_wrong_mode_and_players_with_the_same_errors():
    with pytest.raises(snl.GameError, match="mode must be one of"):
        snl.sweep([JUNGLE], snl.Rules(), mode="battle")
    with pytest.raises(snl.GameError, match="players must be an integer 1..6"):
        snl.sweep([JUNGLE], snl.Rules(), players=9)


def test_a_state_gives_the_number_of_players():
    state = snl.GameState(positions=(81, 30, 5), to_move=1)
    game = snl.Game(state=state, rng=1)
    assert len(game.seats) == 3
    result = simulate(None, None, 50, state=state, rng=1)
    assert result.players == 3
    with pytest.raises(snl.GameError, match="players=2, but the state has 3 tokens"):
        simulate(None, None, 50, players=2, state=state, rng=1)
    assert snl.race(snl.Board.builtin(), snl.Rules(), state=state).players == 3


def test_simulate_takes_state_and_still_its_former_name_start():
    state = snl.GameState(positions=(81, 30), to_move=0)
    a = simulate(None, None, 200, state=state, rng=3)
    b = simulate(None, None, 200, start=state, rng=3)
    assert (a.turns == b.turns).all()
    with pytest.raises(snl.GameError, match="give the starting state once"):
        simulate(None, None, 10, state=state, start=state)

"""Classic bump races from a state: the geometric tail against iterating every round.

``SETTLE_TOL = -1`` never settles, so every round is iterated to the tail:
the reference. The shortcut must move far fewer turns and give the same
figures to 1e-10 (probabilities absolute, expectations relative; each pmf
entry to 1e-14).
"""

import numpy as np
import pytest
from _tails import assert_same_race, race_counting

from snlmarkov import Board, GameState, Rules

FAMILY = Rules.preset("family")
SMALL = Board(40, {3: 21, 12: 30, 38: 9, 27: 2, 35: 16})
NEVER_SETTLES = (Board(6, {4: 3}), Rules.preset("plain").replace(faces=2, finish="stay", bump=True))


@pytest.mark.parametrize(
    ("board", "state"),
    [
        (Board.builtin(), GameState((37, 12), to_move=1)),
        pytest.param(Board.builtin(), GameState((0, 5, 66), to_move=2), marks=pytest.mark.slow),
        (SMALL, GameState((30, 18, 21), to_move=1)),
    ],
    ids=["jungle-2", "jungle-3", "small-3"],
)
def test_classic_from_a_state_extrapolates_like_the_full_iteration(monkeypatch, board, state):
    fast, n_fast = race_counting(monkeypatch, 1e-12, board, FAMILY, players=state.players, state=state, mode="classic")
    slow, n_slow = race_counting(monkeypatch, -1.0, board, FAMILY, players=state.players, state=state, mode="classic")
    assert fast.method == slow.method == "exact: joint chain (bump)"
    assert n_fast < 0.5 * n_slow
    assert_same_race(fast, slow)


def test_a_chain_that_never_settles_is_iterated_every_round(monkeypatch):
    board, rules = NEVER_SETTLES
    state = GameState((1, 2), to_move=1)
    fast, n_fast = race_counting(monkeypatch, 1e-12, board, rules, players=state.players, state=state, mode="classic")
    slow, n_slow = race_counting(monkeypatch, -1.0, board, rules, players=state.players, state=state, mode="classic")
    assert n_fast == n_slow
    np.testing.assert_array_equal(fast.win_probability, slow.win_probability)

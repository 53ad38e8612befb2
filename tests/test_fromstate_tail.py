"""Classic bump races from a state: the geometric tail against iterating every round.

``SETTLE_TOL = -1`` never settles, so every round is iterated to the tail:
the reference. The shortcut must move far fewer turns and give the same
figures to 1e-10 (probabilities absolute, expectations relative; each pmf
entry to 1e-14).
"""

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov import Board, GameState, Rules
from snlmarkov.races import bump

FAMILY = Rules.preset("family")
SMALL = Board(40, {3: 21, 12: 30, 38: 9, 27: 2, 35: 16})
NEVER_SETTLES = (Board(6, {4: 3}), Rules.preset("plain").replace(faces=2, finish="stay", bump=True))


def _race(monkeypatch, settle, board, rules, state):
    monkeypatch.setattr(bump, "SETTLE_TOL", settle)
    calls = []
    move = bump.JointMover.move

    def counted(self, x, m):
        calls.append(m)
        return move(self, x, m)

    monkeypatch.setattr(bump.JointMover, "move", counted)
    r = snl.race(board, rules, players=state.players, state=state)
    monkeypatch.undo()
    return r, len(calls)


@pytest.mark.parametrize(
    ("board", "state"),
    [
        (Board.builtin(), GameState((37, 12), to_move=1)),
        (Board.builtin(), GameState((0, 5, 66), to_move=2)),
        (SMALL, GameState((30, 18, 21), to_move=1)),
    ],
    ids=["jungle-2", "jungle-3", "small-3"],
)
def test_classic_from_a_state_extrapolates_like_the_full_iteration(monkeypatch, board, state):
    fast, n_fast = _race(monkeypatch, 1e-12, board, FAMILY, state)
    slow, n_slow = _race(monkeypatch, -1.0, board, FAMILY, state)
    assert fast.method == slow.method == "exact: joint chain (bump)"
    assert n_fast < 0.5 * n_slow
    np.testing.assert_allclose(fast.win_probability, slow.win_probability, rtol=0, atol=1e-10)
    assert fast.expected_rounds == pytest.approx(slow.expected_rounds, rel=1e-10)
    assert fast.expected_total_turns == pytest.approx(slow.expected_total_turns, rel=1e-10)
    for a, b in (
        (fast.rounds_distribution, slow.rounds_distribution),
        (fast.turns_distribution, slow.turns_distribution),
    ):
        assert a.horizon == b.horizon
        k = np.arange(b.horizon + 1)
        np.testing.assert_allclose(a.pmf(k), b.pmf(k), rtol=0, atol=1e-14)
        assert a.tail_mass == pytest.approx(b.tail_mass, rel=1e-6)


def test_a_chain_that_never_settles_is_iterated_every_round(monkeypatch):
    board, rules = NEVER_SETTLES
    state = GameState((1, 2), to_move=1)
    fast, n_fast = _race(monkeypatch, 1e-12, board, rules, state)
    slow, n_slow = _race(monkeypatch, -1.0, board, rules, state)
    assert n_fast == n_slow
    np.testing.assert_array_equal(fast.win_probability, slow.win_probability)

"""The geometric tail of the classic bump race equals the fully iterated chain."""

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov.races import bump


def _race(monkeypatch, settle, board, players):
    monkeypatch.setattr(bump, "SETTLE_TOL", settle)
    calls = []
    move = bump.JointMover.move

    def counted(self, x, m):
        calls.append(1)
        return move(self, x, m)

    monkeypatch.setattr(bump.JointMover, "move", counted)
    r = snl.race(board, snl.Rules.preset("family"), players=players)
    monkeypatch.undo()
    return r, len(calls)


@pytest.mark.parametrize("players", [2, 3])
def test_geometric_tail_agrees_with_iterating_every_round(monkeypatch, players):
    board = snl.Board.builtin() if players == 2 else snl.Board(40, {3: 21, 12: 30, 38: 9, 27: 2, 35: 16})
    fast, n_fast = _race(monkeypatch, 1e-12, board, players)
    slow, n_slow = _race(monkeypatch, -1.0, board, players)  # never settles: every round iterated
    assert n_fast < 0.6 * n_slow  # the tail was summed, not iterated
    np.testing.assert_allclose(fast.win_probability, slow.win_probability, rtol=1e-10, atol=1e-14)
    assert fast.expected_rounds == pytest.approx(slow.expected_rounds, rel=1e-10)
    assert fast.expected_total_turns == pytest.approx(slow.expected_total_turns, rel=1e-10)
    k = np.arange(slow.rounds_distribution.horizon + 1)
    np.testing.assert_allclose(fast.rounds_distribution.pmf(k), slow.rounds_distribution.pmf(k), rtol=0, atol=1e-14)
    assert fast.rounds_distribution.horizon == slow.rounds_distribution.horizon
    assert fast.rounds_distribution.tail_mass == pytest.approx(slow.rounds_distribution.tail_mass, rel=1e-6)


# recorded from the code before the geometric tail (every round iterated), jungle board, family rules, classic
RECORDED = {
    2: ([0.5030715092585534, 0.49692849074133943], 59.648417695080795, 118.79376388090306),
    3: ([0.3371430971734265, 0.33331763270378517, 0.3295392701226818], 48.08694336749066, 143.25322627542133),
}


@pytest.mark.parametrize("players", [2, 3])
def test_recorded_jungle_figures(players):
    r = snl.race(snl.Board.builtin(), snl.Rules.preset("family"), players=players)
    win, rounds, turns = RECORDED[players]
    np.testing.assert_allclose(r.win_probability, win, rtol=1e-10, atol=0)
    assert r.expected_rounds == pytest.approx(rounds, rel=1e-10)
    assert r.expected_total_turns == pytest.approx(turns, rel=1e-10)

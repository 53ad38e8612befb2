"""The live odds of the web game: hand-derived values on a tiny board, and the race figures at the start."""

from __future__ import annotations

import numpy as np
import pytest

from snlmarkov import Board, Rules, race
from snlmarkov.web import odds as live


def win_odds(board, rules, mode, **state):
    live.prepare(board, rules, len(state["positions"]), mode)
    return live.win_odds(board, rules, mode, **state)


COIN = Rules.preset("plain").replace(faces=2)  # a two-faced die, no bonus, exact finish (stay)


def test_hand_derived_two_square_board():
    # Board(2), faces 2: from 0 a 2 finishes, from 1 a 1 finishes: every turn finishes with probability 1/2,
    # so the seat to move wins with probability (1/2) / (1 - 1/4) = 2/3.
    board = Board(2)
    o = win_odds(board, COIN, "classic", positions=(0, 0), finished=(), current=0)
    assert o.method == "exact"
    np.testing.assert_allclose(o.win_probability, [2 / 3, 1 / 3], atol=1e-12)
    o = win_odds(board, COIN, "classic", positions=(1, 0), finished=(), current=1)
    np.testing.assert_allclose(o.win_probability, [1 / 3, 2 / 3], atol=1e-12)
    # three seats, seat 2 to move: 4/7, then seat 0 2/7, then seat 1 1/7
    o = win_odds(board, COIN, "last_one_standing", positions=(0, 1, 1), finished=(), current=2)
    np.testing.assert_allclose(o.win_probability, [2 / 7, 1 / 7, 4 / 7], atol=1e-12)


def test_three_square_board_by_hand():
    # Board(3), faces 2, stay: from 0 -> 1 or 2; from 1 -> 2 or 3; from 2 -> 3 or stay.
    # P(finish in one turn) from 1 and from 2 is 1/2, from 0 it is 0.
    # Seat 0 on 2 moves first against seat 1 on 0: seat 1 cannot finish in its first turn, then
    # finishes with probability 1/2 a turn, like seat 0. Seat 0 wins in its first turn (1/2), or in its
    # second (1/4), or later: both fail one more turn each (1/8) and seat 0, moving first, wins 2/3 of the
    # rest: 1/2 + 1/4 + 1/8 * 2/3 = 5/6.
    o = win_odds(Board(3), COIN, "classic", positions=(2, 0), finished=(), current=0)
    np.testing.assert_allclose(o.win_probability, [5 / 6, 1 / 6], atol=1e-12)


@pytest.mark.parametrize("players", [2, 3, 4, 6])
@pytest.mark.parametrize("board", ["jungle", "milton_bradley"])
def test_start_equals_the_race(board, players):
    b, rules = Board.builtin(board), Rules()
    o = win_odds(b, rules, "classic", positions=(0,) * players, finished=(), current=0)
    np.testing.assert_allclose(o.win_probability, race(b, rules, players=players).win_probability, atol=1e-10)


def test_decided_and_unavailable():
    b = Board.builtin()
    o = win_odds(b, Rules(), "last_one_standing", positions=(100, 40, 100), finished=(2, 0), current=1)
    assert o.win_probability == (0.0, 0.0, 1.0)
    o = win_odds(b, Rules.preset("family"), "classic", positions=(0, 0, 0, 0), finished=(), current=0)
    assert o.method == "none" and o.win_probability == () and o.to_dict() == {"win": [], "method": "none"}
    o = live.win_odds(Board(7), Rules(), "classic", positions=(0, 0), finished=(), current=0)
    assert o.method == "none"  # never solved inside win_odds


def test_a_tables_key_is_kept_by_identity_and_equal_by_value(monkeypatch):
    """The same board and rules objects give the same key object (hashed once); equal copies the same one too
    (a table's lookup then finds it by identity, without comparing boards and rules)."""
    board, rules = Board(6, {2: 5}), Rules()
    k = live._key(board, rules, 2, "classic")
    assert live._key(board, rules, 2, "classic") is k
    twin = live._key(Board(6, {2: 5}), Rules(), 2, "classic")  # other objects, the same table
    assert twin is k
    assert live._key(board, rules, 3, "classic") != k
    assert live._key(board, rules, 2, "last_one_standing") != k
    assert live._key(Board(6), rules, 2, "classic") != k
    monkeypatch.setattr(live, "_KEYS_KEPT", 2)  # past the bound the remembered keys start again
    for n in range(5, 10):
        live._key(Board(n), rules, 2, "classic")
    assert len(live._KEYS) <= 2 and len(live._EQUAL) <= 2
    again = live._key(board, rules, 2, "classic")
    assert again == k and hash(again) == hash(k)


def test_a_solver_answers_for_equal_board_and_rules_objects():
    solver = live.OddsSolver(queue=1)
    try:
        solver.prepare(Board(6, {2: 5}), Rules(), 2, "classic")
        got = solver.win_odds(Board(6, {2: 5}), Rules(), "classic", positions=(0, 0), finished=(), current=0)
        assert got.method == "exact" and sum(got.win_probability) == pytest.approx(1.0, abs=1e-12)
        assert solver.is_prepared(Board(6, {2: 5}), Rules(), 2, "classic")
        assert not solver.is_prepared(Board(6, {2: 5}), Rules(), 3, "classic")
    finally:
        solver.shutdown()

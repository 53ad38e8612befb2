"""Exact transition models: hand-derived rows for every rule, composition, refusals."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov import Board, RuleError, Rules, UnwinnableBoardError, roll_model, turn_model
from snlmarkov.chain.exact import exact_turn_row

TWO = dict(faces=2)  # a two-faced die: "six" is the 2; small enough to derive by hand


def rows(board, rules):
    m = turn_model(board, rules).matrix.toarray()
    return [{j: m[i, j] for j in np.flatnonzero(m[i])} for i in range(board.size)]


def approx_rows(got, want):
    assert len(got) >= len(want)
    for i, row in enumerate(want):
        if row is None:
            continue
        assert set(got[i]) == set(row), (i, got[i], row)
        for j, p in row.items():
            assert got[i][j] == pytest.approx(p, abs=1e-15), (i, j)


def test_plain_stay():
    approx_rows(
        rows(Board(3), Rules.preset("plain").replace(**TWO)), [{1: 0.5, 2: 0.5}, {2: 0.5, 3: 0.5}, {3: 0.5, 2: 0.5}]
    )


def test_plain_finish_none_and_bounce():
    b = Board(4, {2: 1})
    plain = Rules.preset("plain").replace(faces=3)
    third = 1 / 3
    approx_rows(rows(b, plain.replace(finish="stay")), [None, None, None, {4: third, 3: 2 * third}])
    approx_rows(rows(b, plain.replace(finish="none")), [None, None, None, {4: 1.0}])
    # bounce: 3+2 counts back to 3; 3+3 counts back to 2, a snake's head: down to 1
    approx_rows(rows(b, plain.replace(finish="bounce")), [None, None, None, {4: third, 3: third, 1: third}])


def test_jump_start_rows_exist():
    approx_rows(
        rows(Board(4, {1: 3}), Rules.preset("plain").replace(**TWO)),
        [{3: 0.5, 2: 0.5}, {2: 0.5, 3: 0.5}, {3: 0.5, 4: 0.5}, {4: 0.5, 3: 0.5}],
    )


def test_bonus_without_cap():
    r = Rules(max_sixes=None, **TWO)
    approx_rows(rows(Board(3), r), [{1: 0.5, 2: 0.25, 3: 0.25}, {2: 0.5, 3: 0.5}, {3: 0.5, 2: 0.5}])


def test_bonus_with_cap_redeal():
    r = Rules(max_sixes=1, on_cap="redeal", **TWO)
    # after one "six" the next roll is redealt from 1..faces-1 = {1}
    approx_rows(
        rows(Board(5), r), [{1: 0.5, 3: 0.5}, {2: 0.5, 4: 0.5}, {3: 0.5, 5: 0.5}, {4: 0.5, 5: 0.5}, {5: 0.5, 4: 0.5}]
    )


def test_bonus_with_cap_forfeit():
    r = Rules(max_sixes=1, on_cap="forfeit", **TWO)
    # the roll after the cap is fair; a "six" voids the turn: back to where it began
    approx_rows(
        rows(Board(5), r),
        [
            {1: 0.5, 3: 0.25, 0: 0.25},
            {2: 0.5, 4: 0.25, 1: 0.25},
            {3: 0.5, 5: 0.25, 2: 0.25},
            {4: 0.5, 5: 0.5},
            {5: 0.5, 4: 0.5},
        ],
    )


def test_cap_of_two_on_six_faces():
    r = Rules()
    m = turn_model(Board(30), r).matrix
    # 6, 6, then a redealt 1..5: squares 13..17, each 1/36 * 1/5
    for sq in range(13, 18):
        assert m[0, sq] == pytest.approx(1 / 36 / 5, abs=1e-15)
    assert m[0, 1] == pytest.approx(1 / 6) and m[0, 7] == pytest.approx(1 / 36)
    forfeit = turn_model(Board(30), r.replace(on_cap="forfeit")).matrix
    assert forfeit[0, 0] == pytest.approx(1 / 216, abs=1e-15)
    assert forfeit[0, 13] == pytest.approx(1 / 216, abs=1e-15)


def test_start_on_six_plain():
    r = Rules.preset("plain").replace(start_on_six=True, **TWO)
    # fail (stay on 0), or enter and move exactly one more roll from 0 (no bonus)
    approx_rows(rows(Board(3), r), [{0: 0.5, 1: 0.25, 2: 0.25}, {2: 0.5, 3: 0.5}])


def test_start_on_six_with_bonus_and_caps():
    base = Rules(start_on_six=True, **TWO)
    approx_rows(rows(Board(3), base.replace(max_sixes=None)), [{0: 0.5, 1: 0.25, 2: 0.125, 3: 0.125}])
    # the entering six counts towards the cap
    approx_rows(rows(Board(3), base.replace(max_sixes=1, on_cap="redeal")), [{0: 0.5, 1: 0.5}])
    # forfeit back to 0 voids the entry too
    approx_rows(rows(Board(3), base.replace(max_sixes=1, on_cap="forfeit")), [{0: 0.75, 1: 0.25}])


def test_overshoot_under_stay_ends_turn_even_on_six():
    r = Rules(max_sixes=None, **TWO)
    # from 2 on a board of 3: a 2 overshoots; the turn ends (no bonus), the token stays
    approx_rows(rows(Board(3), r), [None, None, {3: 0.5, 2: 0.5}])


def test_six_onto_finish_ends_turn():
    m = turn_model(Board(6), Rules()).matrix
    assert m[0, 6] == pytest.approx(1 / 6)  # no bonus roll after reaching the finish


ALL_RULES = [
    Rules(finish=f, bonus_on_six=b, max_sixes=c, on_cap=o, start_on_six=s)
    for f, b, c, o, s in itertools.product(
        ["stay", "bounce", "none"], [True, False], [None, 1, 2, 3], ["redeal", "forfeit"], [True, False]
    )
]
BOARDS = [Board.builtin(), Board.builtin("milton_bradley"), Board(12, {3: 9, 11: 2, 6: 1, 10: 12})]


def compose(model):
    """Turn-level matrix from the roll-level chain: A + B (I - C)^-1 D."""
    m = model.matrix.toarray()
    ts = model.turn_start
    a, b, c, d = m[np.ix_(ts, ts)], m[np.ix_(ts, ~ts)], m[np.ix_(~ts, ~ts)], m[np.ix_(~ts, ts)]
    return a + b @ np.linalg.solve(np.eye(c.shape[0]) - c, d)


@pytest.mark.parametrize("board", BOARDS, ids=["jungle", "mb", "small"])
def test_roll_level_composes_to_turn_level_for_every_rule_combination(board):
    worst = 0.0
    for rules in ALL_RULES:
        turn = turn_model(board, rules)
        roll = roll_model(board, rules)
        worst = max(worst, np.abs(compose(roll) - turn.matrix.toarray()).max())
        # expected rolls and landings per turn agree too
        m = roll.matrix.toarray()
        ts = roll.turn_start
        c = m[np.ix_(~ts, ~ts)]
        visits_mid = m[np.ix_(ts, ~ts)] @ np.linalg.inv(np.eye(c.shape[0]) - c)
        rolls = roll.rolls[ts] + visits_mid @ roll.rolls[~ts]
        rolls[board.size] = 0.0
        np.testing.assert_allclose(rolls, turn.rolls, atol=1e-12)
        land = roll.landings.toarray()
        np.testing.assert_allclose(land[ts] + visits_mid @ land[~ts], turn.landings.toarray(), atol=1e-12)
    assert worst < 1e-12


@pytest.mark.parametrize("rules", ALL_RULES[::3], ids=str)
def test_float_turn_rows_equal_exact_fraction_rows(rules):
    board = Board(12, {3: 9, 11: 2, 6: 1, 10: 12})
    m = turn_model(board, rules).matrix.toarray()
    for p in range(board.size):
        exact = exact_turn_row(board, rules, p)
        row = np.zeros(board.size + 1)
        for q, prob in exact.items():
            assert isinstance(prob, Fraction)
            row[q] = float(prob)
        np.testing.assert_allclose(m[p], row, atol=1e-15)


def test_labels_and_states():
    t = turn_model(Board(10))
    assert t.labels == tuple(range(11)) and t.absorbing == 10 and t.start == 0 and t.kind == "turn"
    r = roll_model(Board(20), Rules(on_cap="forfeit"))
    assert r.labels[0] == (0, 0, 0) and r.kind == "roll"
    assert {lab.sixes for lab in r.labels} == {0, 1, 2}
    assert all(lab.origin >= 0 for lab in r.labels)
    r = roll_model(Board(10), Rules(max_sixes=None))
    assert {lab.sixes for lab in r.labels} == {0, 1}


def test_large_board_is_sparse():
    b = Board.random(20_000, rng=5)
    m = turn_model(b, Rules())
    assert m.matrix.nnz < 20 * (b.size + 1)


def trap_board():
    # from 1 and 2 every move (faces 2) lands on a snake back into {1, 2}
    return Board(6, {3: 1, 4: 2})


def test_unwinnable_board_names_a_square():
    with pytest.raises(UnwinnableBoardError) as err:
        turn_model(trap_board(), Rules.preset("plain").replace(faces=2))
    assert err.value.square in (0, 1, 2)
    assert f"square {err.value.square}" in str(err.value)
    with pytest.raises(UnwinnableBoardError, match="cannot be reached from square"):
        roll_model(trap_board(), Rules.preset("plain").replace(faces=2))


def test_unwinnable_trap_partly_reachable():
    # a 2 from 0 or 1 climbs straight to the finish; from 3 on every path ends in the trap {5, 6}
    board = Board(9, {2: 9, 7: 5, 8: 6})
    rules = Rules.preset("plain").replace(faces=2)
    with pytest.raises(UnwinnableBoardError) as err:
        turn_model(board, rules)
    assert err.value.square == 3
    assert "square 3" in str(err.value) and "3, 4, 5, 6" in str(err.value)


def test_bounce_needs_board_as_large_as_die():
    with pytest.raises(RuleError, match="bounce"):
        turn_model(Board(4), Rules(finish="bounce"))


# ---------------------------------------------------------------- the exact fraction path (from the planted-bug audit, benchmarks/mutation_audit.py)
def test_exact_path_returns_a_fraction_not_a_float():
    value = snl.exact_expected_turns(Board(3), Rules.preset("plain").replace(faces=2))
    assert isinstance(value, Fraction) and value == Fraction(3)  # hand: E0 = 1 + E1/2, E1 = 2 ...
    mb = snl.exact_expected_turns(Board.builtin("milton_bradley"), Rules.preset("plain"))
    assert isinstance(mb, Fraction) and mb.denominator > 1

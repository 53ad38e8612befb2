"""The batched evaluator against the general sparse model, hand derivations and analyze (to 1e-10)."""

import itertools

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov.chain.model import turn_model
from snlmarkov.search import batch
from snlmarkov.search.batch import destinations, evaluate, turn_matrices

BOARDS = [snl.Board.builtin(), snl.Board.builtin("milton_bradley")] + [snl.Board.random(100, rng=i) for i in range(3)]

ALL_RULES = [
    snl.Rules(finish=f, bonus_on_six=b, max_sixes=m, on_cap=c, start_on_six=s)
    for f, b, m, c, s in itertools.product(
        ["stay", "bounce", "none"], [True, False], [None, 1, 2], ["redeal", "forfeit"], [False, True]
    )
]


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: repr(r.to_dict()))
def test_turn_matrices_equal_the_sparse_model(rules):
    q, ascends = turn_matrices(destinations(BOARDS), rules)
    assert ascends.all()
    for i, board in enumerate(BOARDS):
        m = turn_model(board, rules).matrix.toarray()
        np.testing.assert_allclose(q[i, :, : board.size + 1], m[: board.size], rtol=0, atol=1e-14)
        assert not q[i, :, -1].any()  # no second absorbing state asked for


@pytest.mark.parametrize(
    "rules",
    [snl.Rules(), snl.Rules.preset("family"), snl.Rules.preset("plain"), snl.Rules(on_cap="forfeit", max_sixes=1)],
    ids=["app", "family", "plain", "forfeit1"],
)
def test_mean_and_variance_agree_with_analyze(rules):
    boards = BOARDS + [snl.Board.random(100, jump_fraction=0.2, rng=i) for i in range(10, 15)]
    fig = evaluate(destinations(boards), rules)
    for i, board in enumerate(boards):
        a = snl.analyze(board, rules)
        assert abs(fig.mean[i] - a.expected_turns) < 1e-10 * a.expected_turns
        assert abs(fig.var[i] - a.var_turns) < 1e-10 * a.var_turns
        assert fig.winnable[i]


def test_a_hand_derived_board():
    # Board(3), plain rules, a 2-faced die: from 2 the game is Geometric(1/2) (mean 2, variance 2);
    # by first-step analysis the game from 0 has mean 3 and E[T^2] = 11, so variance 2.
    fig = evaluate(destinations([snl.Board(3)]), snl.Rules.preset("plain").replace(faces=2), horizon=3)
    assert fig.mean[0] == pytest.approx(3.0, abs=1e-12)
    assert fig.var[0] == pytest.approx(2.0, abs=1e-12)
    # one turn never reaches 3; two turns finish by 0-1-3 or 0-2-3 (1/4 each); three by 0-1-2-3 or 0-2-2-3 (1/8 each)
    assert fig.survival[0].tolist() == pytest.approx([1.0, 1.0, 0.5, 0.25], abs=1e-15)


def test_distribution_figures_agree_with_the_length_distribution():
    rules = snl.Rules()
    fig = evaluate(destinations(BOARDS), rules, horizon=150, tail=1e-13)
    for i, board in enumerate(BOARDS):
        a = snl.analyze(board, rules)
        for t in (10, 40, 100, 150):
            assert abs(fig.longer_than(t)[i] - a.length.sf(t)) < 1e-12
        for q in (0.1, 0.5, 0.9, 0.99):
            assert fig.quantile(q)[i] == a.length.ppf(q)
        for k in (2, 4):
            r = snl.race(board, rules, players=k)
            assert abs(fig.first_seat_win(k)[i] - r.win_probability[0]) < 1e-10


def test_jump_shares_are_hit_probabilities():
    rules = snl.Rules.preset("family")
    board = snl.Board.builtin()
    squares = list(board.jumps)
    fig = evaluate(destinations([board, board]), rules, shares=squares)
    a = snl.analyze(board, rules)
    np.testing.assert_allclose(fig.jump_share[1], a.hit_probability[squares], rtol=0, atol=1e-10)


def test_unwinnable_and_stuck_but_unreachable_boards():
    rules = snl.Rules.preset("plain").replace(faces=2)
    stuck = snl.Board(9, {2: 9, 7: 5, 8: 6})  # squares 5 and 6 trap the token, and 0 reaches them
    aside = snl.Board(9, {3: 9, 4: 9, 7: 5, 8: 6})  # the same trap, out of reach of square 0
    fig = evaluate(destinations([stuck, aside, snl.Board(9)]), rules, horizon=5)
    assert fig.winnable.tolist() == [False, True, True]
    assert fig.mean[0] == np.inf
    for i, board in ((1, aside), (2, snl.Board(9))):
        a = snl.analyze(board, rules)
        assert fig.mean[i] == pytest.approx(a.expected_turns, abs=1e-12)
        assert fig.var[i] == pytest.approx(a.var_turns, abs=1e-12)


def test_rules_the_builder_does_not_know_use_the_general_model(monkeypatch):
    rules = snl.Rules()
    fast = evaluate(destinations(BOARDS[:2]), rules, horizon=30, shares=[28, 87])
    monkeypatch.setattr(batch, "_fast", lambda r: False)
    slow = evaluate(destinations(BOARDS[:2]), rules, horizon=30, shares=[28, 87])
    np.testing.assert_allclose(slow.mean, fast.mean, rtol=1e-12)
    np.testing.assert_allclose(slow.var, fast.var, rtol=1e-10)
    np.testing.assert_allclose(slow.survival, fast.survival, atol=1e-14)
    np.testing.assert_allclose(slow.jump_share, fast.jump_share, atol=1e-10)


def test_boards_of_different_sizes_are_refused():
    with pytest.raises(snl.SnlError, match="one size"):
        destinations([snl.Board(10), snl.Board(12)])


def _exact_moments(q):
    """Mean and variance from state 0 by Gauss-Jordan elimination in fractions (no floating point, no LAPACK)."""
    from fractions import Fraction

    n = len(q)
    a = [[Fraction(int(i == j)) - Fraction(q[i][j]) for j in range(n)] for i in range(n)]

    def solve(b):
        m = [row[:] + [b[i]] for i, row in enumerate(a)]
        for col in range(n):
            pivot = next(r for r in range(col, n) if m[r][col] != 0)
            m[col], m[pivot] = m[pivot], m[col]
            for r in range(n):
                if r != col and m[r][col] != 0:
                    f = m[r][col] / m[col][col]
                    m[r] = [x - f * y for x, y in zip(m[r], m[col])]
        return [m[i][n] / m[i][i] for i in range(n)]

    mean = solve([Fraction(1)] * n)
    second = solve([2 * x - 1 for x in mean])
    return mean[0], second[0] - mean[0] ** 2


def test_moments_agree_with_an_exact_elimination():
    gen = np.random.default_rng(7)
    qs = []
    for size in (1, 2, 5, 9):
        for _ in range(3):
            # rows of eighths that keep some mass for the finish: I - Q invertible
            w = gen.integers(0, 4, size=(size, size + 1)).astype(float)
            w[:, -1] += 1
            qs.append((w / w.sum(axis=1, keepdims=True))[:, :size])
    for q in qs:
        mean, var = batch.moments(q[None])
        exact_mean, exact_var = _exact_moments(q.tolist())
        assert abs(mean[0] - float(exact_mean)) <= 1e-12 * float(exact_mean)
        assert abs(var[0] - float(exact_var)) <= 1e-12 * max(1.0, float(exact_var))


def test_moments_of_a_stack_are_each_blocks_own():
    q, _ = turn_matrices(destinations(BOARDS), snl.Rules())
    c = q.shape[1]
    mean, var = batch.moments(q[:, :, :c])
    for i in range(len(BOARDS)):
        alone = batch.moments(q[i : i + 1, :, :c])
        assert (alone[0][0], alone[1][0]) == (mean[i], var[i])  # to the bit: the batch does not matter


def test_moments_refuse_a_state_that_never_finishes():
    with pytest.raises(snl.ModelError, match="singular"):
        batch.moments(np.array([[[1.0, 0.0], [0.5, 0.5]]]))

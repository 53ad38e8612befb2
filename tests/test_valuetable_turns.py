"""The classic bump value table solved a turn at a time (shifted BiCGSTAB), against independent values."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov import Board, GameState, Odds, Rules, turn_model
from snlmarkov.races import valuetable
from snlmarkov.races.bump import JointMover
from snlmarkov.races.shifted import shifted_bicgstab
from snlmarkov.races.valuetable import build_value_table

FAMILY = Rules.preset("family")
SMALL = Board(30, {3: 12, 8: 20, 17: 4, 26: 9, 22: 28})
TWO_BUMP = Rules.preset("plain").replace(faces=2, bump=True)


# ------------------------------------------------------------------ the solver


@pytest.mark.parametrize("b_kind", ["random", "ones"])
def test_shifted_bicgstab_matches_dense_solves(b_kind):
    # a substochastic chain's I - Q (the constant vector nearly an eigenvector, as for the joint chain),
    # with the complex shifts of the classic table and a real one
    rng = np.random.default_rng(3)
    size = 120
    q = rng.random((size, size)) * (rng.random((size, size)) < 0.08)
    q = 0.97 * q / np.maximum(q.sum(axis=1, keepdims=True), 1e-300)
    a = np.eye(size) - q
    b = rng.random(size) if b_kind == "random" else np.ones(size)
    shifts = (np.exp(2j * np.pi / 3) - 1.0, -2.0, 0.3 + 0.1j)

    def apply(src, out):
        out[:] = a @ src

    sol = shifted_bicgstab(apply, b, shifts, rtol=1e-14, maxiter=500)
    assert sol.converged and sol.steps < 500
    np.testing.assert_allclose(sol.x, np.linalg.solve(a, b), rtol=0, atol=1e-11)
    for s, x in zip(shifts, sol.shifted):
        np.testing.assert_allclose(x, np.linalg.solve(a + s * np.eye(size), b.astype(complex)), rtol=0, atol=1e-11)


def test_shifted_bicgstab_reports_no_convergence():
    a = np.diag(np.linspace(0.01, 2.0, 50))

    def apply(src, out):
        out[:] = a @ src

    sol = shifted_bicgstab(apply, np.ones(50), (0.5j,), rtol=1e-14, maxiter=2)
    assert not sol.converged and sol.steps == 2


# ------------------------------------------------------------------ a tiny board by brute force


def _brute_force_classic(size, k, bump_to=1):
    """Win chances, expected turns and rounds left for every state of a 2-faced die race on Board(size).

    Written from the rules alone (finish 'stay'; a token ending its turn on an occupied square
    ``1..size-1`` goes back to ``bump_to``), with absolute seats and a dense solve: no joint mover, no
    relabelling, no Krylov solver.
    """
    squares = range(size)  # 0..size-1 (size is the finish)
    states = [(pos, j) for pos in itertools.product(squares, repeat=k) for j in range(k)]
    index = {st: i for i, st in enumerate(states)}
    n = len(states)
    m = np.zeros((n, n))
    win_now = np.zeros((n, k))
    wrap = np.zeros(n)  # chance of passing play from the last seat back to seat 0 without finishing
    for (pos, j), i in index.items():
        for roll in (1, 2):
            new = pos[j] + roll
            if new == size:
                win_now[i, j] += 0.5
                continue
            if new > size:
                new = pos[j]  # overshoot: stay
            if new != 0 and any(o != j and pos[o] == new for o in range(k)):
                new = bump_to  # the token that just moved goes back (RULES.md)
            after = list(pos)
            after[j] = new
            nxt = (j + 1) % k
            m[i, index[(tuple(after), nxt)]] += 0.5
            if j == k - 1:
                wrap[i] += 0.5
    lhs = np.eye(n) - m
    win = np.linalg.solve(lhs, win_now)
    turns = np.linalg.solve(lhs, np.ones(n))
    rounds = 1.0 + np.linalg.solve(lhs, wrap)
    return index, win, turns, rounds


@pytest.mark.parametrize("k", [2, 3])
def test_classic_table_equals_brute_force_on_a_tiny_board(k):
    board = Board(5)
    index, win, turns, rounds = _brute_force_classic(5, k)
    odds = Odds(board, TWO_BUMP, players=k)
    checked = 0
    for (pos, j), i in index.items():
        held = [p for p in pos if p not in (0, 1)]
        if len(held) != len(set(held)):  # two tokens never share a bumpable square
            continue
        r = odds(GameState(pos, to_move=j))
        np.testing.assert_allclose(r.win_probability, win[i], rtol=0, atol=1e-12)
        assert r.expected_total_turns == pytest.approx(turns[i], rel=1e-12)
        assert r.expected_rounds == pytest.approx(rounds[i], rel=1e-12)
        checked += 1
    assert checked >= 40


# ------------------------------------------------------------------ against the forward chain


def _states(board, rules, players, seeds):
    out = []
    for seed in seeds:
        record = snl.Game(board, rules, players=players, rng=seed).play()
        out.extend(s for s in record.states() if not s.is_over(board, "classic"))
    return out


def test_classic_three_bumping_players_equal_the_forward_chain_from_states():
    odds = Odds(SMALL, FAMILY, players=3)
    states = _states(SMALL, FAMILY, 3, seeds=[4, 5])
    rng = np.random.default_rng(1)
    for i in rng.choice(len(states), size=5, replace=False):
        got = odds(states[i])
        want = snl.race(SMALL, FAMILY, players=3, state=states[i], tail=1e-15)
        np.testing.assert_allclose(got.win_probability, want.win_probability, rtol=0, atol=1e-12)
        assert got.expected_total_turns == pytest.approx(want.expected_total_turns, rel=1e-11)
        assert got.expected_rounds == pytest.approx(want.expected_rounds, rel=1e-11)


def test_turn_level_and_round_level_tables_agree():
    rules = FAMILY
    mover = JointMover.of(turn_model(SMALL, rules), rules)
    by_turns = build_value_table(mover, 3, "classic")
    by_rounds = build_value_table(mover, 3, "classic", turn_level=False)
    assert by_turns.iterations != by_rounds.iterations
    a, b = by_turns.chains[3], by_rounds.chains[3]
    assert a.names == b.names
    for j in range(3):
        np.testing.assert_allclose(a.values[j][:-1], b.values[j][:-1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(a.values[j][-1], b.values[j][-1], rtol=1e-11)


def test_a_turn_level_run_that_falls_short_falls_back_to_rounds(monkeypatch):
    rules = FAMILY
    mover = JointMover.of(turn_model(SMALL, rules), rules)
    want = build_value_table(mover, 3, "classic")
    real = valuetable.shifted_bicgstab

    def short(apply, b, shifts, *, rtol, maxiter):
        return real(apply, b, shifts, rtol=rtol, maxiter=3)

    monkeypatch.setattr(valuetable, "shifted_bicgstab", short)
    monkeypatch.setattr(valuetable, "_classic_series_values", lambda *args, **kwargs: None)
    got = build_value_table(mover, 3, "classic")
    assert got.iterations != want.iterations  # solved by rounds
    for j in range(3):
        np.testing.assert_allclose(got.chains[3].values[j], want.chains[3].values[j], rtol=1e-11, atol=1e-12)


# ------------------------------------------------------------------ the settled series


@pytest.mark.parametrize(
    ("board", "k"), [(SMALL, 3), (Board.builtin(), 2), (SMALL, 2)], ids=["small-3", "jungle-2", "small-2"]
)
def test_series_values_equal_the_krylov_values(board, k):
    """The series summed to its geometric tail and the shifted Krylov run: two solvers of the same equations."""
    mover = JointMover.of(turn_model(board, FAMILY), FAMILY)
    series = valuetable._classic_series_values(mover, k)
    krylov = valuetable._classic_turn_values(mover, k, 5000)
    assert series is not None and krylov is not None
    # Both are accepted at a relative residual of about TURN_RTOL per entry (the Krylov run is asked for it;
    # the series is checked against a looser goal). An error e in a solution of (I - T) x = b leaves the
    # residual (I - T) e, so |e| <= ||(I - T)^-1|| |residual|; the infinity norm of that non-negative inverse
    # is max E (it maps 1 to E), and the shifted systems of the win chances (I - w T, |w| = 1) are bounded
    # by the same Neumann series. Two solvers: twice that (8.7e-12 for small-3, whose E is at most 44).
    # Within that bound the difference follows the summation order, which changes with the number of BLAS
    # threads: a fixed 1e-12 sat at its edge and failed with two threads.
    atol = 2 * valuetable.TURN_RTOL * float(krylov[1].max())
    for a, b in zip(series[0], krylov[0]):
        np.testing.assert_allclose(a, b, rtol=0, atol=atol)
    np.testing.assert_allclose(series[1], krylov[1], rtol=1e-12)
    np.testing.assert_allclose(sum(series[0]), 1.0, rtol=0, atol=1e-12)  # somebody wins


def test_series_is_the_path_the_table_takes():
    mover = JointMover.of(turn_model(SMALL, FAMILY), FAMILY)
    table = build_value_table(mover, 3, "classic")
    series = valuetable._classic_series_values(mover, 3)
    assert series is not None and table.iterations == series[2]


def test_a_series_stopped_too_early_is_refused_by_its_residuals(monkeypatch):
    """A planted mistake: the tail summed long before the series has settled; the residual check rejects it."""
    mover = JointMover.of(turn_model(SMALL, FAMILY), FAMILY)
    monkeypatch.setattr(valuetable, "SWITCH_TOL", 1e-2)
    monkeypatch.setattr(valuetable, "POWER_SETTLE_TOL", 1e-3)
    assert valuetable._classic_series_values(mover, 3) is None
    assert valuetable._classic_series_values(mover, 3, max_turns=10) is None
    monkeypatch.setattr(valuetable, "POWER_SETTLE_TOL", 1e-13)
    assert valuetable._classic_series_values(mover, 3, max_turns=10) is None  # not settled in 10 turns
    table = build_value_table(mover, 3, "classic")  # the Krylov run takes over: the figures stay right
    want = snl.race(SMALL, FAMILY, players=3)
    np.testing.assert_allclose(table.chains[3].values[0][:-1, 0], want.win_probability[:-1], rtol=0, atol=1e-12)

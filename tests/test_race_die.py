"""Races with dice other than the fair six: against a brute-force joint chain of two tokens.

The brute force is written from docs/rules.md alone, on top of the single-token turn matrix
(``snl.turn_model(board, rules).matrix``, which the die enters through the exact kernel): every
pair of squares and the seat to move is a state; a turn moves the mover by a row of the turn
matrix; under ``bump`` a token ending its turn on a square 1..N-1 where the other token stands
goes back to ``bump_to``; the first token home wins (classic) or the other plays on alone (last one
standing). Its value equations are solved densely with numpy: no joint tensor, no forward run.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import snlmarkov as snl

BOARD = snl.Board(24, {3: 14, 9: 20, 22: 5, 17: 8, 23: 11})  # 23 a snake: 2d6 (no 1) can still finish


def _brute_force(board, rules, mode):
    """Seat 0's chance of finishing first, the expected rounds and total turns of a 2-player race."""
    n = board.size
    turn = np.asarray(snl.turn_model(board, rules).matrix.todense())
    q = turn[:n, :n]
    alone = np.linalg.solve(np.eye(n) - q, np.ones(n))  # one token's expected turns to finish, per square
    states = [(p, j) for p in itertools.product(range(n), repeat=2) for j in (0, 1)]
    index = {s: i for i, s in enumerate(states)}
    size = len(states)
    step = np.zeros((size, size))
    win0 = np.zeros(size)  # seat 0 finishes now
    turns = np.ones(size)  # every turn counts one
    wraps = np.zeros(size)  # rounds begun after this one
    for (pos, j), i in index.items():
        other = pos[1 - j]
        for dest in np.flatnonzero(turn[pos[j]]):
            p = turn[pos[j], dest]
            if dest == n:  # home
                win0[i] += p * (j == 0)
                if mode == "last_one_standing":  # the other plays on alone
                    turns[i] += p * alone[other]
                    # seat 1 still plays in this round and every turn after its first begins a round;
                    # after seat 1 finishes, each of seat 0's turns begins one
                    wraps[i] += p * (alone[other] - 1.0 if j == 0 else alone[other])
                continue
            if rules.bump and 1 <= dest <= n - 1 and dest == other:
                dest = rules.bump_to
            after = list(pos)
            after[j] = int(dest)
            step[i, index[(tuple(after), 1 - j)]] += p
            if j == 1:
                wraps[i] += p
    lhs = np.eye(size) - step
    start = index[((0, 0), 0)]
    win = np.linalg.solve(lhs, win0)[start]
    return win, 1.0 + np.linalg.solve(lhs, wraps)[start], np.linalg.solve(lhs, turns)[start]


@pytest.mark.parametrize("die", ["2d6", "faces:0,1,1,2,5"])
@pytest.mark.parametrize("bump", [False, True])
@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_a_race_with_another_die_equals_the_brute_force_joint_chain(die, bump, mode):
    rules = snl.Rules(die=die, bump=bump)
    assert not rules.die.is_fair
    r = snl.race(BOARD, rules, players=2, mode=mode, tail=1e-15)
    assert r.exact and r.method == ("exact: joint chain (bump)" if bump else "exact: independent players")
    win, rounds, turns = _brute_force(BOARD, rules, mode)
    np.testing.assert_allclose(r.win_probability, [win, 1.0 - win], rtol=0, atol=1e-10)
    assert r.expected_rounds == pytest.approx(rounds, rel=1e-10)
    assert r.expected_total_turns == pytest.approx(turns, rel=1e-10)
    if mode == "last_one_standing":  # two seats: the winner's order
        assert r.order_probability[(0, 1)] == pytest.approx(win, abs=1e-10)


@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_odds_with_another_die_equal_the_race_from_the_state(mode):
    rules = snl.Rules(die="2d6", bump=True)
    state = snl.GameState((13, 6), to_move=1)
    got = snl.Odds(BOARD, rules, players=2, mode=mode)(state)
    want = snl.race(BOARD, rules, mode=mode, state=state, tail=1e-15)  # players from the state
    np.testing.assert_allclose(got.place_probability, want.place_probability, rtol=0, atol=1e-12)
    assert got.expected_total_turns == pytest.approx(want.expected_total_turns, rel=1e-11)

"""The exact solutions of a choice rule against an independent model (tests/_choice_brute.py).

- The optimal policy for one token equals, at every square, the least expected
  turns over every deterministic policy, found by brute force and confirmed
  in exact fractions, under every rule toggle.
- Under ``choose_move`` an order of the values per state loses nothing against
  every mapping from the values rolled to the value moved.
- The policy solved is a fixed point of the Bellman equation of the
  independent model, and no change of one state's choice improves it.
- ``objective="within"`` equals an exact dynamic programme over the turns left.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import inf

import numpy as np
import pytest
from _choice_brute import ChoiceModel, _action_rows, brute_force, exact_values, within_values

import snlmarkov as snl
from snlmarkov import Board, Die, Rules

#: (board, rules): tiny cases covering every rule toggle, each with at most ~50,000 policies.
BRUTE_CASES = {
    "redeal cap 1": (Board(5, {2: 4}), Rules(choose_die=(2, 3), max_sixes=1)),
    "redeal cap 2": (Board(4, {1: 3}), Rules(choose_die=(2, 3), max_sixes=2)),
    "forfeit": (Board(5, {4: 1}), Rules(choose_die=(2, 3), max_sixes=2, on_cap="forfeit")),
    "restart, zero faces": (
        Board(4, {3: 1}),
        Rules(choose_die=(2, 3, Die.faces(0, 1, 1)), max_sixes=1, on_cap="restart"),
    ),
    "no cap": (Board(5, {1: 3, 4: 2}), Rules(choose_die=(2, 3), max_sixes=None)),
    "start on six": (Board(4, {3: 1}), Rules(choose_die=(2, 3), start_on_six=True, max_sixes=1)),
    "forfeit, start on six": (
        Board(4, {3: 1}),
        Rules(choose_die=(2, 3), start_on_six=True, max_sixes=1, on_cap="forfeit"),
    ),
    "start on six, no cap": (Board(4, {2: 3}), Rules(choose_die=(2, 3), start_on_six=True, max_sixes=None)),
    "bounce": (Board(5, {2: 4, 3: 1}), Rules(choose_die=(2, 3), finish="bounce", max_sixes=1)),
    "bounce, no jump after": (
        Board(5, {3: 1}),
        Rules(choose_die=(2, 3), finish="bounce", jump_after_bounce=False, max_sixes=1),
    ),
    "finish none": (Board(5, {2: 1}), Rules(choose_die=(2, 3), finish="none", max_sixes=1)),
    "chained": (Board(6, {1: 3, 3: 5, 4: 2}, chain=True), Rules(choose_die=(2, 3), bonus_on_six=False)),
    "weighted dice, plain": (
        Board(6, {2: 5, 4: 1}),
        Rules(choose_die=(Die.weighted({1: 1, 3: 2}), Die.faces(0, 2, 2)), bonus_on_six=False, max_sixes=None),
    ),
    "move: no bonus": (Board(5, {2: 4}), Rules(choose_move=2, die=3, bonus_on_six=False)),
    "move: three dice, cap": (Board(4, {1: 3}), Rules(choose_move=3, die=2, max_sixes=1)),
    "move: forfeit": (Board(4, {3: 1}), Rules(choose_move=2, die=2, max_sixes=1, on_cap="forfeit")),
    "move: restart": (Board(4, {3: 1}), Rules(choose_move=2, die=2, max_sixes=1, on_cap="restart")),
    "move: start on six": (Board(4, {2: 3}), Rules(choose_move=2, die=3, start_on_six=True, bonus_on_six=False)),
    "move: bounce, zero": (
        Board(4, {3: 1}),
        Rules(choose_move=2, die=Die.faces(0, 1, 3), finish="bounce", bonus_on_six=False),
    ),
}


def _starts(model: ChoiceModel) -> list[int]:
    return [model.index[model.start(p)] for p in range(model.n)]


@pytest.mark.parametrize("name", list(BRUTE_CASES))
def test_optimal_policy_is_the_brute_force_minimum(name):
    board, rules = BRUTE_CASES[name]
    model = ChoiceModel(board, rules)
    best, searched = brute_force(model)
    assert searched >= 2
    p = snl.optimal_policy(board, rules)
    solved = exact_values(model, model.policy_of_table(p.table))
    for sq, i in enumerate(_starts(model)):
        assert solved[i] == best[i], (name, sq)  # exactly the least over every deterministic policy
        if best[i] == inf:
            assert p.values[sq] == inf
        else:
            assert abs(p.values[sq] - float(best[i])) <= 1e-12 * float(best[i]), (name, sq)
    assert p.values[board.size] == 0.0
    # the policy's every state reachable: its values are the least there too
    assert all(s == b for s, b in zip(solved, best))


def test_orders_lose_nothing_against_every_choice_rule():
    """Under choose_move the best of all mappings (values rolled -> value moved) is an order's value."""
    board, rules = Board(4, {2: 3}), Rules(choose_move=2, die=3, bonus_on_six=False)
    orders, maps = ChoiceModel(board, rules, kind="order"), ChoiceModel(board, rules, kind="map")
    assert len(maps.move_actions) == 8 and len(orders.move_actions) == 6
    best_orders, n_orders = brute_force(orders)
    best_maps, n_maps = brute_force(maps)
    assert n_maps > n_orders
    assert best_orders == best_maps
    p = snl.optimal_policy(board, rules)
    assert exact_values(maps, maps.policy_of_table(p.table)) == best_maps


def test_choose_move_law_is_the_enumeration_of_the_rolls():
    """The law of the value moved under an order, against every ordered roll of the k dice."""
    from snlmarkov.chain.choice import _process

    board, rules = Board(6, {3: 5}), Rules(choose_move=3, die=Die.weighted({1: 1, 2: 2, 4: 3}), max_sixes=1)
    dp = _process(board, rules)
    rng = np.random.default_rng(5)
    ranks = np.argsort(rng.random((dp.n_states, 3)), axis=1).astype(np.int16)
    law = dp.move_law(ranks)
    model = ChoiceModel(board, rules, roots="all")
    values = list(rules.die.values)
    for i in range(dp.n_states):
        st = (int(dp.square[i]), int(dp.sixes[i]), 0)
        order = [values[j] for j in np.argsort(ranks[i])]
        want = dict.fromkeys(values, Fraction(0))
        pmf = model.die_law(rules.die, st)
        for roll in itertools.product(pmf, repeat=3):
            pr = Fraction(1)
            for _, q in roll:
                pr *= q
            want[next(v for v in order if v in {x for x, _ in roll})] += pr
        assert np.allclose(law[i], [float(want[v]) for v in values], rtol=0, atol=1e-15)


# ------------------------------------------------------------------ Bellman
BELLMAN_CASES = {
    "jungle d4/d6": (Board.builtin(), Rules(choose_die=(4, 6))),
    "jungle move 2 of d3, bounce": (Board.builtin(), Rules(choose_move=2, die=3, finish="bounce")),
    "forfeit, 3 dice": (
        Board(24, {3: 17, 9: 2, 15: 21, 20: 6, 23: 11}),
        Rules(choose_die=(3, 4, Die.faces(0, 2, 5)), on_cap="forfeit"),
    ),
    "no cap, start on six": (
        Board(30, {2: 20, 12: 4, 25: 5, 28: 14}),
        Rules(choose_die=(4, 6), max_sixes=None, start_on_six=True),
    ),
    "restart, move 3": (Board(20, {5: 15, 18: 3}), Rules(choose_move=3, die=3, on_cap="restart", max_sixes=1)),
    # every state, those no turn reaches included (the solver fills them level by level)
    "forfeit, every state": (Board(10, {2: 7, 9: 4}), Rules(choose_die=(2, 3, 4), on_cap="forfeit")),
    "forfeit, move, every state": (Board(9, {3: 6, 8: 1}), Rules(choose_move=2, die=3, on_cap="forfeit")),
}


@pytest.mark.parametrize("name", list(BELLMAN_CASES))
def test_policy_iteration_is_a_bellman_fixed_point(name):
    board, rules = BELLMAN_CASES[name]
    model = ChoiceModel(board, rules, roots="all" if "every state" in name else "starts")
    p = snl.optimal_policy(board, rules)
    assert np.all(np.isfinite(p.values))
    policy = np.array(model.policy_of_table(p.table))
    rows, ends = _action_rows(model)
    ids = np.arange(policy.size)
    inv = np.linalg.inv(np.eye(policy.size) - rows[ids, policy])
    v = inv @ ends[ids, policy]
    assert np.allclose(v[_starts(model)], p.values[:-1], rtol=1e-12, atol=0)
    q = np.where(np.isnan(ends), np.inf, ends + rows @ v)  # (S, A): choose a now, then follow the policy
    scale = 1e-12 * np.abs(v)
    assert np.all(np.abs(q[ids, policy] - v) <= scale)
    assert np.all(v <= q.min(axis=1) + scale)  # no choice is better now
    # no change of one state's choice improves any state: each change re-evaluated exactly (Sherman-Morrison)
    changes = 0
    for i in range(v.size):
        for a in np.flatnonzero(~np.isnan(ends[i])):
            if a == policy[i]:
                continue
            w = rows[i, a] - rows[i, policy[i]]  # I - P changes by -e_i w^T
            y = v + inv[:, i] * (ends[i, a] - ends[i, policy[i]])
            denom = 1.0 - w @ inv[:, i]
            if denom <= 1e-12:  # the change makes the chain improper: it never finishes from i
                continue
            changed = y + inv[:, i] * (w @ y) / denom
            assert np.all(changed >= v - scale), (name, model.states[i], a)
            changes += 1
    assert changes >= v.size


# ------------------------------------------------------------------ within n
WITHIN_CASES = {
    "redeal": (Board(6, {2: 5, 4: 1}), Rules(choose_die=(2, 3), max_sixes=2)),
    "forfeit": (Board(6, {4: 1}), Rules(choose_die=(2, 3), max_sixes=1, on_cap="forfeit")),
    "start on six, restart": (
        Board(5, {3: 1}),
        Rules(choose_die=(2, Die.faces(0, 3)), start_on_six=True, on_cap="restart", max_sixes=1),
    ),
    "move, bounce": (Board(6, {4: 2}), Rules(choose_move=2, die=3, finish="bounce", max_sixes=1)),
    "move, plain": (Board(7, {2: 6, 5: 3}), Rules(choose_move=3, die=3, bonus_on_six=False, max_sixes=None)),
}


@pytest.mark.parametrize("name", list(WITHIN_CASES))
def test_within_equals_an_exact_dynamic_programme(name):
    board, rules = WITHIN_CASES[name]
    model = ChoiceModel(board, rules)
    turns = 5
    exact = within_values(model, turns)
    p = snl.optimal_policy(board, rules, objective="within", turns=turns)
    assert len(p.stages) == turns
    assert p.table.ranks.tobytes() == p.stages[-1].table.ranks.tobytes()
    for sq in range(board.size):
        assert abs(p.values[sq] - float(exact[-1][model.start(sq)])) <= 1e-12, (name, sq)
    assert p.values[board.size] == 1.0
    for t in (1, 3):  # a shorter horizon's value, from its own solve
        q = snl.optimal_policy(board, rules, objective="within", turns=t)
        assert abs(q.value - float(exact[t - 1][model.start(0)])) <= 1e-12
        # the stage policies of the long solve are the short solves' first turns
        assert q.table.ranks.tobytes() == p.stages[t - 1].table.ranks.tobytes()


def test_within_without_a_cap_matches_value_iteration():
    """No cap and a bonus: a turn's sixes never end; the in-turn chance found by iterating to its fixed point."""
    board, rules = Board(6, {2: 5, 4: 1}), Rules(choose_die=(2, 3), max_sixes=None)
    model = ChoiceModel(board, rules)
    idx = model.index
    w_prev = {s: 0.0 for s in model.states}
    for _ in range(4):
        w = dict.fromkeys(model.states, 0.0)
        for _ in range(200):  # Gauss-Seidel over the in-turn states: a six at most (1/2)^200 away
            for st in model.states:
                best = 0.0
                for law in model.laws[st]:
                    val = 0.0
                    for (what, target), pr in law.items():
                        if what == "go":
                            val += float(pr) * w[target]
                        elif target == model.n:
                            val += float(pr)
                        else:
                            val += float(pr) * w_prev[model.start(target)]
                    best = max(best, val)
                w[st] = best
        w_prev = w
    p = snl.optimal_policy(board, rules, objective="within", turns=4)
    assert idx
    for sq in range(board.size):
        assert abs(p.values[sq] - w_prev[model.start(sq)]) <= 1e-12


def test_within_is_monotone_and_tends_to_one():
    board, rules = Board.builtin(), Rules(choose_die=(4, 6))
    values = [snl.optimal_policy(board, rules, objective="within", turns=t).value for t in (1, 5, 10, 20, 40, 80)]
    assert all(b >= a for a, b in zip(values, values[1:]))
    assert 0.0 <= values[0] < values[-1]
    long = snl.optimal_policy(board, rules, objective="within", turns=2000)
    assert 1 - 1e-9 < long.value <= 1.0 + 1e-12
    assert np.all(np.diff([s.table.ranks.shape for s in long.stages[:3]], axis=0) == 0)

"""Playing a policy under a choice rule: fixed dice equal the plain rules, greedy and random policies, the gain, traps."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov import Board, Die, Policy, Rules
from snlmarkov.errors import PolicyError, RuleError, UnwinnableBoardError

#: (board, rules with a choice): a fixed die's figures must equal the plain rules' with that die.
FIXED_CASES = {
    "jungle, app": (Board.builtin(), Rules(choose_die=(4, 6))),
    "milton bradley, family": (
        Board.builtin("milton_bradley"),
        Rules.preset("family").replace(bump=False, choose_die=(Die(6), Die.faces(0, 2, 2, 5))),
    ),
    "forfeit, start on six": (
        Board(30, {3: 22, 8: 16, 25: 5, 29: 12}),
        Rules(choose_die=(Die(3), Die(5)), on_cap="forfeit", start_on_six=True),
    ),
    "restart, cap 1, none": (
        Board(25, {4: 14, 20: 2}),
        Rules(choose_die=(Die(6), Die.weighted({1: 2, 4: 1})), on_cap="restart", max_sixes=1, finish="none"),
    ),
    "chained, bounce no jump": (
        Board(30, {2: 9, 9: 20, 20: 26, 27: 4, 4: 1}, chain=True),
        Rules(choose_die=(Die(4), Die(6)), finish="bounce", jump_after_bounce=False, max_sixes=None),
    ),
}


def _figures(a) -> dict:
    return {
        "expected_turns": a.expected_turns,
        "expected_turns_from": a.expected_turns_from,
        "var_turns": a.var_turns,
        "expected_rolls": a.expected_rolls,
        "occupancy": a.occupancy,
        "landings": a.landings,
        "jump_uses": np.array([a.jump_uses[s] for s in sorted(a.jump_uses)]),
        "length": a.length.pmf(np.arange(a.length.horizon + 1)),
        "hit_probability": a.hit_probability,
        "positions": a.position_distributions(30),
    }


@pytest.mark.parametrize("name", list(FIXED_CASES))
def test_a_fixed_die_plays_as_the_plain_rules(name):
    board, rules = FIXED_CASES[name]
    for i, die in enumerate(rules.choose_die):
        try:
            plain = snl.analyze(board, rules.option_rules(i))
        except UnwinnableBoardError:
            with pytest.raises(UnwinnableBoardError):
                snl.analyze(board, rules, policy=Policy.fixed(die))
            continue
        chosen = snl.analyze(board, rules, policy=Policy.fixed(die))
        want, got = _figures(plain), _figures(chosen)
        for key in want:
            w, g = np.asarray(want[key], dtype=float), np.asarray(got[key], dtype=float)
            assert w.shape == g.shape, (name, die, key)
            finite = np.isfinite(w)
            assert np.array_equal(finite, np.isfinite(g)), (name, die, key)
            scale = max(1.0, float(np.max(np.abs(w[finite]), initial=0.0)))
            assert np.max(np.abs(w[finite] - g[finite]), initial=0.0) <= 1e-10 * scale, (name, die, key)
        assert snl.expected_turns(board, rules, policy=Policy.fixed(die)) == pytest.approx(
            plain.expected_turns, rel=1e-12
        )


def test_greedy_and_random_resolve_and_analyze():
    board, rules = Board.builtin(), Rules(choose_die=(4, 6, 8))
    best = snl.optimal_policy(board, rules)
    for p in (Policy.greedy(), Policy.random(7), Policy.random(np.random.default_rng(3))):
        a = snl.analyze(board, rules, policy=p)
        assert a.expected_turns >= best.value - 1e-9
        assert abs(a.occupancy.sum() - a.expected_turns) < 1e-9
    g = snl.analyze(board, rules, policy=Policy.greedy())
    from snlmarkov.chain.choice import resolve

    t = resolve(Policy.greedy(), board, rules)
    jumps = board.jumps
    for sq in range(0, 90):  # far from the finish: the die of the furthest mean square, jumps taken
        means = [np.mean([jumps.get(sq + v, sq + v) for v in d.values]) for d in rules.choose_die]
        assert t.die_index(sq, 0, 0) == int(np.argmax(means)), sq
    assert g.expected_turns > best.value
    # a random policy is fixed by its seed
    r1, r2 = resolve(Policy.random(11), board, rules), resolve(Policy.random(11), board, rules)
    assert np.array_equal(r1.ranks, r2.ranks)
    move = Rules(choose_move=2)
    assert snl.analyze(board, move, policy=Policy.greedy()).expected_turns == pytest.approx(13.9496, abs=1e-4)
    assert snl.analyze(board, move, policy=Policy.random(1)).expected_turns > 13.4458


def test_policy_gain_is_never_negative_and_its_fixed_dice_are_the_plain_rules():
    board, rules = Board.builtin(), Rules(choose_die=(4, 6, Die.faces(0, 0, 4, 4, 4, 4)))
    g = snl.policy_gain(board, rules)
    assert set(g.against) == {f"always {d.spec}" for d in rules.choose_die}
    for key, gain in g.gain.items():
        finite = np.isfinite(gain)
        assert np.all(gain[finite] >= -1e-9), key
    assert np.isinf(g.against[f"always {rules.choose_die[2].spec}"][0])  # that die alone never finishes from 0
    for i, d in enumerate(rules.choose_die[:2]):
        plain = snl.analyze(board, rules.option_rules(i)).expected_turns_from
        assert np.allclose(g.against[f"always {d.spec}"], plain, rtol=1e-12)
    assert np.allclose(g.optimal, g.policy.values, rtol=1e-12)
    assert np.all(g.spread >= 0) and g.spread[-1] == 0
    s = g.summary()
    assert s["optimal"] == pytest.approx(g.policy.value) and s["gain"]["always d6"] > 0
    move = snl.policy_gain(board, Rules(choose_move=2))
    assert set(move.against) == {"first die", "greedy"}
    assert np.allclose(move.against["first die"], snl.analyze(board, Rules()).expected_turns_from, rtol=1e-12)
    assert all(np.all(v[np.isfinite(v)] >= -1e-9) for v in move.gain.values())


def test_policy_gain_of_a_policy_that_traps_elsewhere():
    """A policy proper from 0 whose choice on a square it never reaches never finishes from there."""
    # the d2 climbs 1 or 2 -> 10 and never sees 7; on 7 it slides back for ever (8, 9 -> 7), the d3 escapes
    board = Board(12, {1: 10, 2: 10, 8: 7, 9: 7})
    rules = Rules(choose_die=(Die(2), Die.faces(3)), bonus_on_six=False, max_sixes=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = snl.policy_gain(board, rules, policy=Policy.fixed(2))
        h = snl.analyze(board, rules, policy=Policy.fixed(2)).hit_probability
    assert np.isfinite(g.optimal[0]) and np.isinf(g.optimal[7])
    assert np.isnan(g.gain["always d2"][7]) and g.gain["always d2"][0] == 0.0
    assert g.spread[7] == 0.0 and np.all(g.spread >= 0)  # on 7 only the d3 finishes: nothing to compare
    assert h[7] == 0.0 and h[1] == h[2] == 0.5 and h[12] == 1.0
    assert np.allclose(h, snl.analyze(board, rules.option_rules(0)).hit_probability, rtol=0, atol=1e-12)
    assert snl.optimal_policy(board, rules).table.die_index(7, 0, 0) == 1


def test_unwinnable_choices():
    # every die can roll a 1 from 0, and square 1 is a trap: every roll from it slides back to 1
    board = Board(6, {2: 1, 3: 1, 4: 1})
    rules = Rules(choose_die=(Die.faces(1, 2), Die.faces(1, 3)), bonus_on_six=False, max_sixes=None)
    with pytest.raises(UnwinnableBoardError, match="with any choice"):
        snl.optimal_policy(board, rules)
    with pytest.raises(UnwinnableBoardError):
        snl.optimal_policy(board, rules, objective="within", turns=3)
    # only one die traps: a 3 on 7 overshoots for ever; the policy avoids it there
    board = Board(8, {3: 1})
    rules = Rules(choose_die=(Die(2), Die.faces(3)), bonus_on_six=False, max_sixes=None)
    with pytest.raises(UnwinnableBoardError):
        snl.analyze(board, rules.option_rules(1))
    p = snl.optimal_policy(board, rules)
    assert np.all(np.isfinite(p.values))
    assert p.table.die_index(7, 0, 0) == 0
    assert snl.analyze(board, rules, policy=p).expected_turns == pytest.approx(p.value, rel=1e-12)
    with pytest.raises(UnwinnableBoardError):
        snl.analyze(board, rules, policy=Policy.fixed(Die.faces(3)))


def test_solver_refusals():
    board = Board.builtin()
    with pytest.raises(PolicyError, match="choice"):
        snl.optimal_policy(board, Rules())
    with pytest.raises(RuleError, match="needs a policy"):
        snl.analyze(board, Rules(choose_die=(4, 6)))
    for bad in (0, -1, 10**9, 2.5, True, "3", None):
        with pytest.raises(PolicyError, match="turns"):
            snl.optimal_policy(board, Rules(choose_move=2), objective="within", turns=bad)
    with pytest.raises(PolicyError, match="objective"):
        snl.optimal_policy(board, Rules(choose_move=2), objective="fastest")
    with pytest.raises(PolicyError):
        snl.optimal_policy(board, Rules(choose_move=2), turns=3)
    with pytest.raises(PolicyError, match="no such die"):
        snl.analyze(board, Rules(choose_die=(4, 6)), policy=Policy.fixed(8))
    other = snl.optimal_policy(Board(10), Rules(choose_die=(4, 6)))
    with pytest.raises(PolicyError, match="another board"):
        snl.analyze(board, Rules(choose_die=(4, 6)), policy=other)


@pytest.mark.parametrize(
    ("board", "rules"),
    [
        (Board(7, {2: 5, 6: 1}), Rules(choose_die=(2, 3), max_sixes=1)),
        (
            Board(7, {1: 3, 3: 6, 5: 2}, chain=True),
            Rules(choose_die=(2, Die.faces(0, 3)), on_cap="forfeit", max_sixes=1),
        ),
        (Board(6, {4: 1}), Rules(choose_move=2, die=3, finish="bounce", jump_after_bounce=False, max_sixes=1)),
        (
            Board(6, {2: 4}),
            Rules(choose_move=2, die=3, finish="none", start_on_six=True, on_cap="restart", max_sixes=1),
        ),
    ],
)
def test_hits_and_landings_under_the_optimal_policy_match_the_independent_model(board, rules, monkeypatch):
    """The chance of landing on each square, and the landings, under a solved policy, exactly (both solvers)."""
    from _choice_brute import ChoiceModel, hit_and_landings

    from snlmarkov.chain import choice

    p = snl.optimal_policy(board, rules)
    a = snl.analyze(board, rules, policy=p)
    model = ChoiceModel(board, rules)
    policy = model.policy_of_table(p.table)
    monkeypatch.setattr(choice, "DENSE_HIT_STATES", 0)  # one sparse solve per square
    sparse = choice.policy_hit_probabilities(board, rules, p)
    for sq in range(1, board.size + 1):
        hit, landings = hit_and_landings(model, policy, sq)
        assert abs(a.hit_probability[sq] - float(hit)) <= 1e-12, sq
        assert abs(sparse[sq] - float(hit)) <= 1e-12, sq
        assert abs(a.landings[sq] - float(landings)) <= 1e-12 * max(1.0, float(landings)), sq


def test_the_two_hit_solvers_agree_on_the_jungle_board(monkeypatch):
    from snlmarkov.chain import choice

    board, rules = Board.builtin(), Rules(choose_die=(4, 6, 8), on_cap="restart")
    p = snl.optimal_policy(board, rules)
    dense = choice.policy_hit_probabilities(board, rules, p)
    monkeypatch.setattr(choice, "DENSE_HIT_STATES", 0)
    assert np.allclose(dense, choice.policy_hit_probabilities(board, rules, p), rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "rules",
    [
        Rules(choose_die=(4, 6, 8), max_sixes=None),
        Rules(choose_die=(Die.weighted({1: 1, 6: 3}), 4), max_sixes=None, start_on_six=True),
        Rules(choose_move=2, max_sixes=None, start_on_six=True),
        Rules(choose_move=3, on_cap="forfeit", start_on_six=True),
        Rules(choose_die=(3, 5), on_cap="restart", finish="bounce", max_sixes=1),
    ],
)
def test_the_solvers_values_are_those_of_the_turn_chain_it_induces(rules):
    """The decision states' exact solve against the turn-level chain of analyze(policy=): two paths, one figure."""
    board = Board.builtin()
    p = snl.optimal_policy(board, rules)
    a = snl.analyze(board, rules, policy=p)
    assert np.allclose(a.expected_turns_from, p.values, rtol=1e-12, atol=0)

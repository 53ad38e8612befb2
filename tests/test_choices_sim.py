"""Choice rules in the simulator (issue 19): simulate(policy=), its agreement with the exact model, planted
mistakes caught, the engine's AI seats against it, and the tournament of strengths."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import stats

import snlmarkov as snl
from snlmarkov import Board, Die, Game, Policy, PolicyError, RuleError, Rules, Seat, UnwinnableBoardError
from snlmarkov.checks.crosschecking import crosscheck
from snlmarkov.policy import decision_shape
from snlmarkov.sim.core import policy_ranks

SMALL = Board(30, {3: 22, 5: 8, 11: 26, 20: 29, 17: 4, 19: 7, 21: 9, 27: 1})
DIE = Rules(choose_die=(4, 6))
MOVE = Rules(choose_move=2)
#: one-valued dice, no bonus: every game under a policy is a known sequence of moves
STEPS = Rules.preset("plain").replace(choose_die=(Die.weighted({1: 1}), Die.weighted({2: 1})))


@functools.cache
def optimal(board, rules):
    return snl.optimal_policy(board, rules)


def reversed_greedy(board, rules):
    """The greedy policy with its order reversed: a planted mistake."""
    ranks = policy_ranks(board, rules, Policy.greedy(), 1)[0]
    return Policy.from_table(board, rules, ranks.shape[-1] - 1 - ranks)


# ------------------------------------------------------------ arguments
def test_without_a_policy_a_choice_rule_is_refused_by_the_kernel():
    for rules in (DIE, MOVE, Rules(choose_die=(Die.faces(0, 0, 4, 4, 4, 4), 6))):
        with pytest.raises(RuleError, match="the play kernel rolls one die: .* needs a policy: pass policy="):
            snl.simulate(SMALL, rules, 10)


def test_bad_policies_are_refused():
    with pytest.raises(PolicyError, match="no choice"):
        snl.simulate(SMALL, Rules(), 10, policy=Policy.greedy())
    with pytest.raises(PolicyError, match="one Policy per seat"):
        snl.simulate(SMALL, DIE, 10, players=3, policy=(Policy.greedy(), Policy.greedy()))
    with pytest.raises(PolicyError, match="must be a Policy"):
        snl.simulate(SMALL, DIE, 10, players=2, policy=(Policy.greedy(), "greedy"))
    race = Policy.from_table(SMALL, DIE, np.zeros(decision_shape(SMALL, DIE, others=1), np.int16) + [0, 1])
    with pytest.raises(PolicyError, match="race of 2 tokens; the games have 3 seats"):
        snl.simulate(SMALL, DIE, 10, players=3, policy=race)
    with pytest.raises(PolicyError, match="other rules"):
        snl.simulate(SMALL, MOVE, 10, policy=optimal(SMALL, DIE))


def test_a_policy_that_traps_the_token_is_refused_up_front_as_the_exact_side_does():
    rules = Rules(choose_die=(4, 6, Die.faces(0, 0, 4, 4, 4, 4)), on_cap="forfeit")
    board = Board.builtin()
    for policy in (Policy.greedy(), Policy.random(3)):
        with pytest.raises(UnwinnableBoardError, match="never finishes") as play_side:
            snl.simulate(board, rules, 10, policy=policy)
        with pytest.raises(UnwinnableBoardError) as exact_side:
            snl.analyze(board, rules, policy=policy)
        assert play_side.value.square == exact_side.value.square  # the same lowest trap, found by each kernel
    snl.simulate(board, rules, 10, policy=Policy.fixed(6), rng=0)


# ------------------------------------------------------------ the mechanics, exactly
def test_a_race_policy_reads_the_other_seat_in_simulate_and_in_the_engine():
    board = Board(10)
    ranks = np.empty(decision_shape(board, STEPS, others=1), dtype=np.int16)
    ranks[..., :3, :] = [0, 1]  # move 1 while the other token is below 3, else 2
    ranks[..., 3:, :] = [1, 0]
    race = Policy.from_table(board, STEPS, ranks)
    result = snl.simulate(board, STEPS, 20, players=2, policy=race, rng=0)
    assert set(result.turns.tolist()) == {12} and set(result.winner.tolist()) == {1}
    record = Game(board, STEPS, [Seat("A", "red", policy=race), Seat("B", "blue", policy=race)]).play()
    assert [t.end for t in record.turns()] == [1, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    one = Policy.from_table(board, STEPS, ranks[..., 0, :])  # a one-token policy: always move 1 (home in 10 turns)
    mixed = snl.simulate(board, STEPS, 5, players=2, policy=(one, race), rng=0)
    assert set(mixed.winner.tolist()) == {1} and set(mixed.turns.tolist()) == {12}  # 1, 1, 2, 2, 2, 2: home in 6


def test_bump_and_last_one_standing_under_a_policy():
    rules = DIE.replace(bump=True)
    r = snl.simulate(SMALL, rules, 3000, players=3, mode="last_one_standing", policy=Policy.greedy(), rng=2)
    assert r.n_truncated == 0 and (np.sort(r.place, axis=1) == [1, 2, 3]).all()
    assert int(r.landings[SMALL.size]) == 3 * r.games  # every token lands on the finish once


def test_summary_and_streams_take_a_policy():
    games = snl.simulate(SMALL, MOVE, 2000, policy=Policy.greedy(), rng=4)
    summary = snl.simulate(SMALL, MOVE, 2000, policy=Policy.greedy(), rng=4, keep="summary")
    assert summary.games == 2000 and summary.mean_turns() == pytest.approx(games.mean_turns())
    split = snl.simulate(SMALL, MOVE, 2000, policy=Policy.greedy(), rng=4, streams=4)
    assert split.games == 2000 and np.array_equal(
        split.turns, snl.simulate(SMALL, MOVE, 2000, policy=Policy.greedy(), rng=4, streams=4).turns
    )


# ------------------------------------------------------------ against the exact model
ALPHA = 1e-5  # the cross-checks' standard: a correct model fails less than once in 10^5 runs


@pytest.mark.parametrize("rules", [DIE, MOVE], ids=["choose_die", "choose_move"])
def test_simulate_under_a_policy_agrees_with_the_exact_model(rules):
    for policy in (optimal(SMALL, rules), Policy.greedy()):
        report = crosscheck(SMALL, rules, 20_000, rng=11, alpha=ALPHA, policy=policy)
        assert report.passed, str(report)


@pytest.mark.parametrize("rules", [DIE, MOVE], ids=["choose_die", "choose_move"])
def test_the_cross_check_catches_a_planted_policy_mistake(rules):
    board = SMALL
    wrong_model = crosscheck(board, rules, 20_000, rng=11, alpha=ALPHA, policy=Policy.greedy(),
                             exact_policy=optimal(board, rules))  # fmt: skip
    assert not wrong_model.passed
    reversed_order = crosscheck(board, rules, 10_000, rng=11, alpha=ALPHA, policy=Policy.greedy(),
                                exact_policy=reversed_greedy(board, rules))  # fmt: skip
    assert not reversed_order.passed


@pytest.mark.slow
@pytest.mark.parametrize(
    "rules",
    [
        DIE,
        MOVE,
        Rules(choose_die=(4, 6, Die.faces(0, 0, 4, 4, 4, 4)), on_cap="forfeit"),
        Rules(choose_move=3, start_on_six=True, on_cap="restart", finish="bounce"),
        Rules(choose_die=(6, 8), max_sixes=None, finish="none"),
        Rules(choose_move=2, max_sixes=1, on_cap="redeal"),
    ],
    ids=str,
)
def test_simulate_agrees_with_the_exact_model_on_the_default_board(rules):
    board = Board.builtin()
    for policy in (optimal(board, rules), Policy.greedy(), Policy.random(5)):
        try:
            snl.analyze(board, rules, policy=policy)
        except UnwinnableBoardError:
            continue  # a policy that traps the token (both sides refuse it)
        report = crosscheck(board, rules, 200_000, rng=12, alpha=ALPHA, policy=policy)
        assert report.passed, str(report)


def test_the_engines_ai_seats_play_as_the_exact_model_says():
    """Games played by Game with an AI seat, against the exact mean (z-test, alpha 1e-5)."""
    rules, n = DIE, 300
    seat = Seat("Opt", "red", policy=optimal(SMALL, rules))
    turns = np.array([len(Game(SMALL, rules, [seat], rng=seed).play().turns()) for seed in range(n)])
    exact = snl.analyze(SMALL, rules, policy=seat.policy)
    z = (turns.mean() - exact.expected_turns) / math.sqrt(exact.var_turns / n)
    assert 2 * stats.norm.sf(abs(z)) > ALPHA
    planted = snl.analyze(SMALL, rules, policy=reversed_greedy(SMALL, rules))  # the same test catches another policy
    z_wrong = (turns.mean() - planted.expected_turns) / math.sqrt(planted.var_turns / n)
    assert 2 * stats.norm.sf(abs(z_wrong)) <= ALPHA


# ------------------------------------------------------------ the tournament of strengths
def _strength(board, rules, name):
    return Seat(name, "red", policy=optimal(board, rules) if name == "optimal" else name).policy


def _head_to_head(board, rules, strong, weak, games, seed):
    """The stronger seat's win rate over ``games`` races, half of them with each seat first."""
    p_strong, p_weak = _strength(board, rules, strong), _strength(board, rules, weak)
    half = games // 2
    first = snl.simulate(board, rules, half, players=2, policy=(p_strong, p_weak), rng=seed)
    second = snl.simulate(board, rules, half, players=2, policy=(p_weak, p_strong), rng=seed + 1)
    return (int((first.winner == 0).sum()) + int((second.winner == 1).sum())) / (2 * half)


@pytest.mark.parametrize("rules", [DIE, MOVE], ids=["choose_die", "choose_move"])
def test_each_ai_strength_beats_the_weaker_one(rules):
    """random < greedy < optimal: each stronger seat's win rate, with a 1 - 1e-6 confidence interval above 1/2."""
    board, games = Board.builtin(), 40_000
    z = stats.norm.isf(1e-6 / 2)
    for seed, (strong, weak) in enumerate([("greedy", "random"), ("optimal", "greedy"), ("optimal", "random")]):
        rate = _head_to_head(board, rules, strong, weak, games, 100 + 2 * seed)
        low = rate - z * math.sqrt(rate * (1 - rate) / games)
        assert low > 0.5, f"{strong} against {weak}: win rate {rate:.4f}, interval from {low:.4f}"

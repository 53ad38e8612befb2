"""Exact race figures against the Monte Carlo simulator, by chi-square tests.

For every case the simulator plays a fixed-seed batch of games and each
exact distribution is tested by a chi-square goodness-of-fit test (bins
pooled so every expected count is at least 5) at ``ALPHA = 2.5e-7`` (about
100 such tests run, so a correct model fails the file with probability
below 3e-5):

- the winner (seat of the first finisher);
- under last one standing, the whole finishing order (all ``k!`` orders);
- the number of rounds and the total number of turns.

Under classic the total number of turns also encodes the winner's seat
(``(rounds - 1) * k + seat + 1``), so a wrong seat order fails it too. Cases
cover both modes and 2 to 6 players, without ``bump`` (independent players,
jungle board, app rules) and with it (the jungle board under family rules for
2 and 3 players; a small board solved with ``method="exact"`` for 4 to 6).
Planted mistakes (the bump ignored, the seats reversed) must be rejected, so
the batches are large enough to matter.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from scipy.stats import chi2

from snlmarkov import Board, LengthDistribution, Rules
from snlmarkov.races.core import RaceResult, race
from snlmarkov.sim.core import SimulationResult, simulate

ALPHA = 2.5e-7

SMALL_BOARD = Board(10, {2: 7, 6: 3, 8: 4})


# ------------------------------------------------------------- statistics
def chi_square_ordered(observed: np.ndarray, expected: np.ndarray) -> float:
    """p-value of a chi-square test on an ordered support, pooling neighbours.

    ``expected`` holds expected counts over the same bins as ``observed``; the
    last bin is the tail. Bins are merged left to right until each holds an
    expected count of at least 5; a short remainder joins the last bin.
    """
    obs_bins, exp_bins = [], []
    o_acc = e_acc = 0.0
    for o, e in zip(observed, expected):
        o_acc += o
        e_acc += e
        if e_acc >= 5.0:
            obs_bins.append(o_acc)
            exp_bins.append(e_acc)
            o_acc = e_acc = 0.0
    if e_acc > 0 or o_acc > 0:
        if not exp_bins:
            return 1.0
        obs_bins[-1] += o_acc
        exp_bins[-1] += e_acc
    return _p_value(np.array(obs_bins), np.array(exp_bins))


def chi_square_categories(observed: np.ndarray, expected: np.ndarray) -> float:
    """p-value of a chi-square test over categories; small ones are pooled into one bin."""
    small = expected < 5.0
    obs = list(observed[~small])
    exp = list(expected[~small])
    if small.any():
        o, e = observed[small].sum(), expected[small].sum()
        if e >= 5.0 or not exp:
            obs.append(o)
            exp.append(e)
        else:
            i = int(np.argmin(exp))
            obs[i] += o
            exp[i] += e
    return _p_value(np.array(obs), np.array(exp))


def _p_value(obs: np.ndarray, exp: np.ndarray) -> float:
    if obs.size < 2:
        return 1.0
    if np.any(exp <= 0) and np.any(obs[exp <= 0] > 0):
        return 0.0  # something the exact model calls impossible happened
    stat = float(np.sum((obs - exp) ** 2 / exp))
    return float(chi2.sf(stat, obs.size - 1))


def length_test(dist, values: np.ndarray) -> float:
    games = values.size
    horizon = max(dist.horizon, int(values.max()))
    observed = np.bincount(values, minlength=horizon + 2)[: horizon + 2].astype(float)
    observed[horizon + 1] = np.sum(values > horizon)
    expected = np.append(dist.pmf(np.arange(horizon + 1)), dist.sf(horizon)) * games
    return chi_square_ordered(observed, expected)


def crosscheck(exact: RaceResult, sim: SimulationResult) -> dict[str, float]:
    """p-values of every test of ``exact`` against ``sim``."""
    assert sim.n_truncated == 0
    k, games = exact.players, sim.games
    p = {}
    wins = np.bincount(sim.winner, minlength=k).astype(float)
    p["winner"] = chi_square_categories(wins, exact.win_probability * games)
    if exact.mode == "last_one_standing":
        orders = list(itertools.permutations(range(k)))
        code = {o: i for i, o in enumerate(orders)}
        by_place = np.argsort(sim.place, axis=1, kind="stable")
        seen = np.bincount([code[tuple(row)] for row in by_place.tolist()], minlength=len(orders)).astype(float)
        want = np.array([exact.order_probability[o] for o in orders]) * games
        p["order"] = chi_square_categories(seen, want)
    p["rounds"] = length_test(exact.rounds_distribution, np.asarray(sim.rounds, dtype=np.int64))
    p["turns"] = length_test(exact.turns_distribution, np.asarray(sim.turns, dtype=np.int64))
    return p


def assert_agree(exact: RaceResult, sim: SimulationResult) -> None:
    pvalues = crosscheck(exact, sim)
    failed = {name: p for name, p in pvalues.items() if p < ALPHA}
    assert not failed, f"{exact.method}, {exact.players} players, {exact.mode}: {failed}"


@functools.cache
def exact_race(board: Board, rules: Rules, players: int, mode: str) -> RaceResult:
    return race(board, rules, players=players, mode=mode, method="exact")


@functools.cache
def simulated(board: Board, rules: Rules, players: int, mode: str, games: int, seed: int) -> SimulationResult:
    return simulate(board, rules, games, players=players, mode=mode, rng=seed)


# ----------------------------------------------------------- the statistics
def test_chi_square_helpers_accept_and_reject() -> None:
    rng = np.random.default_rng(0)
    probs = np.array([0.5, 0.3, 0.15, 0.05])
    obs = np.bincount(rng.choice(4, size=20_000, p=probs), minlength=4).astype(float)
    assert chi_square_categories(obs, probs * 20_000) > ALPHA
    assert chi_square_categories(obs, np.array([0.45, 0.35, 0.15, 0.05]) * 20_000) < ALPHA
    assert chi_square_ordered(obs, probs * 20_000) > ALPHA
    assert _p_value(np.array([3.0, 1.0]), np.array([4.0, 0.0])) == 0.0


# ------------------------------------------------------ independent players
def _slow_for(*players: int) -> list:
    """2 to 6 players (a slice for fewer), those named run in the slow step (100,000 games a case)."""
    return [pytest.param(k, marks=[pytest.mark.slow] if k in players else []) for k in range(2, 7)]


@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
@pytest.mark.parametrize("players", _slow_for(3, 5))
def test_independent_players_agree_with_simulation(players: int, mode: str) -> None:
    board, rules = Board.builtin(), Rules()
    exact = exact_race(board, rules, players, mode)
    assert exact.method == "exact: independent players"
    assert_agree(exact, simulated(board, rules, players, mode, 100_000, 100 + players))


# ---------------------------------------------------------------- with bump
@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_bump_two_players_agree_with_simulation(mode: str) -> None:
    board, rules = Board.builtin(), Rules.preset("family")
    exact = exact_race(board, rules, 2, mode)
    assert exact.method == "exact: joint chain (bump)"
    assert_agree(exact, simulated(board, rules, 2, mode, 100_000, 7))


#: the published puzzle chain 83 -> 84 -> 97 on the jungle board
PUZZLE = Board(100, {**Board.builtin().jumps, 83: 84, 84: 97}, name="puzzle", chain=True)


@pytest.mark.parametrize(
    "board, rules, players, mode",
    [
        (PUZZLE, Rules.preset("family").replace(bonus_on_six=True, max_sixes=1, on_cap="restart"), 2, "classic"),
        (Board.builtin(), Rules.preset("family").replace(jump_after_bounce=False), 2, "last_one_standing"),
        (PUZZLE, Rules(on_cap="restart", finish="bounce", jump_after_bounce=False), 3, "last_one_standing"),
    ],
    ids=["bump-chain-restart", "bump-nojump", "independent-all"],
)
def test_house_rule_races_agree_with_simulation(board: Board, rules: Rules, players: int, mode: str) -> None:
    exact = exact_race(board, rules, players, mode)
    assert exact.method == ("exact: joint chain (bump)" if rules.bump else "exact: independent players")
    assert_agree(exact, simulated(board, rules, players, mode, 100_000, 11))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_bump_three_players_agree_with_simulation(mode: str) -> None:
    board, rules = Board.builtin(), Rules.preset("family")
    exact = exact_race(board, rules, 3, mode)
    assert exact.method == "exact: joint chain (bump)"
    assert_agree(exact, simulated(board, rules, 3, mode, 100_000, 8))


def test_bump_three_players_exact_figures_are_consistent() -> None:
    board, rules = Board.builtin(), Rules.preset("family")
    r = exact_race(board, rules, 3, "last_one_standing")
    c = exact_race(board, rules, 3, "classic")
    assert r.exact and len(r.order_probability) == 6
    np.testing.assert_allclose(r.place_probability.sum(axis=0), 1.0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(r.place_probability.sum(axis=1), 1.0, rtol=0, atol=1e-9)
    assert abs(sum(r.order_probability.values()) - 1.0) < 1e-9
    # the first to finish is the classic winner: the same chain up to the first finish
    np.testing.assert_allclose(c.win_probability, r.win_probability, rtol=0, atol=1e-10)
    assert c.expected_rounds < r.expected_rounds and c.expected_total_turns < r.expected_total_turns
    # classic: total turns = (rounds - 1) * 3 + winner + 1
    e_turns = (c.expected_rounds - 1) * 3 + float(np.dot([1, 2, 3], c.win_probability))
    assert abs(c.expected_total_turns - e_turns) < 1e-9
    assert r.rounds_distribution.tail_mass < 1e-13 and r.turns_distribution.tail_mass < 1e-13


@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
@pytest.mark.parametrize("players", _slow_for(5, 6)[2:])
def test_bump_four_to_six_players_agree_with_simulation(players: int, mode: str) -> None:
    """4 to 6 players with bump, solved exactly on a small board (10 squares, 3 jumps)."""
    rules = Rules.preset("app").replace(bump=True)
    exact = exact_race(SMALL_BOARD, rules, players, mode)
    assert exact.method == "exact: joint chain (bump)"
    assert_agree(exact, simulated(SMALL_BOARD, rules, players, mode, 100_000, 20 + players))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_bump_family_rules_four_players_small_board(mode: str) -> None:
    rules = Rules.preset("family")
    exact = exact_race(SMALL_BOARD, rules, 4, mode)
    assert_agree(exact, simulated(SMALL_BOARD, rules, 4, mode, 100_000, 44))


@pytest.mark.slow
def test_bump_four_players_jungle_exact_agrees_with_simulation() -> None:
    """The exact 4-player race on the jungle board (181 million states, beyond ``method="auto"``; ~2 minutes)."""
    board, rules = Board.builtin(), Rules.preset("family")
    exact = exact_race(board, rules, 4, "classic")
    assert exact.method == "exact: joint chain (bump)" and exact.exact
    assert abs(exact.win_probability.sum() + exact.rounds_distribution.tail_mass - 1.0) < 1e-12
    # classic: total turns = (rounds - 1) * 4 + winner + 1
    e_turns = (exact.expected_rounds - 1) * 4 + float(np.dot([1, 2, 3, 4], exact.win_probability))
    assert abs(exact.expected_total_turns - e_turns) < 1e-9
    sim = simulated(board, rules, 4, "classic", 100_000, 48)
    assert_agree(exact, sim)
    # the same games reject the race without the bump and the race with the seats reversed
    wrong = crosscheck(exact_race(board, rules.replace(bump=False), 4, "classic"), sim)
    assert min(wrong.values()) < ALPHA
    assert crosscheck(reversed_seats(exact), sim)["winner"] < ALPHA


@pytest.mark.slow
def test_bump_four_players_jungle_last_one_standing_exact_agrees_with_simulation() -> None:
    """The exact 4-player last-one-standing race on the jungle board (~5 minutes): all 24 orders too."""
    board, rules = Board.builtin(), Rules.preset("family")
    exact = exact_race(board, rules, 4, "last_one_standing")
    assert exact.method == "exact: joint chain (bump)" and len(exact.order_probability) == 24
    assert abs(sum(exact.order_probability.values()) + exact.rounds_distribution.tail_mass - 1.0) < 1e-12
    np.testing.assert_allclose(exact.place_probability.sum(axis=0), 1.0, rtol=0, atol=1e-12)
    classic = exact_race(board, rules, 4, "classic")  # the first to finish is the classic winner
    np.testing.assert_allclose(exact.win_probability, classic.win_probability, rtol=0, atol=1e-10)
    sim = simulated(board, rules, 4, "last_one_standing", 100_000, 49)
    assert_agree(exact, sim)
    assert crosscheck(reversed_seats(exact), sim)["order"] < ALPHA


# ----------------------------------------------------------- planted mistakes
def test_ignoring_the_bump_is_caught() -> None:
    board, rules = Board.builtin(), Rules.preset("family")
    wrong = exact_race(board, rules.replace(bump=False), 2, "classic")
    pvalues = crosscheck(wrong, simulated(board, rules, 2, "classic", 100_000, 7))
    assert min(pvalues.values()) < ALPHA


def reversed_seats(right: RaceResult) -> RaceResult:
    """A planted mistake: the figures of a race where the last seat moves first."""
    k = right.players
    flip = lambda order: tuple(k - 1 - s for s in order)  # noqa: E731
    return RaceResult(
        board=right.board,
        rules=right.rules,
        players=k,
        mode=right.mode,
        method="planted mistake",
        exact=True,
        games=0,
        win_probability=right.win_probability[::-1],
        place_probability=right.place_probability[::-1],
        order_probability={flip(o): p for o, p in right.order_probability.items()},
        rounds_distribution=right.rounds_distribution,
        turns_distribution=right.turns_distribution,
    )


@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_reversed_seats_are_caught_with_bump(mode: str) -> None:
    rules = Rules.preset("app").replace(bump=True)
    wrong = reversed_seats(exact_race(SMALL_BOARD, rules, 4, mode))
    pvalues = crosscheck(wrong, simulated(SMALL_BOARD, rules, 4, mode, 100_000, 24))
    assert pvalues["winner"] < ALPHA
    if mode == "last_one_standing":
        assert pvalues["order"] < ALPHA


def test_reversed_seats_are_caught_without_bump() -> None:
    """Going first on the jungle board is worth about 1.6 points of winning chance: enough to see."""
    board, rules = Board.builtin(), Rules()
    wrong = reversed_seats(exact_race(board, rules, 2, "classic"))
    pvalues = crosscheck(wrong, simulated(board, rules, 2, "classic", 100_000, 102))
    assert pvalues["winner"] < ALPHA


def test_classic_turns_see_the_seat_order() -> None:
    """Total turns in classic encode the winner's seat: shifting them by one seat is caught."""
    board, rules = Board.builtin(), Rules()
    right = exact_race(board, rules, 3, "classic")
    shifted = LengthDistribution(
        np.concatenate([[0.0], right.turns_distribution.probabilities]),
        right.turns_distribution.tail_mass,
        unit="turns",
    )
    sim = simulated(board, rules, 3, "classic", 100_000, 103)
    assert length_test(shifted, np.asarray(sim.turns, dtype=np.int64)) < ALPHA

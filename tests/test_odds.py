"""Odds from any state: race(..., state=) and Odds, against race(), hand fractions and the simulator."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import numpy as np
import pytest
from scipy.stats import norm

import snlmarkov as snl
from snlmarkov import Board, Game, GameError, GameState, Odds, Rules, SnlError

JUNGLE = Board.builtin()
APP = Rules()
FAMILY = Rules.preset("family")
MODES = ("classic", "last_one_standing")
# a small board for 3 bumping players (the joint chain stays small)
SMALL = Board(30, {3: 12, 8: 20, 17: 4, 26: 9, 22: 28})
TWO = Rules.preset("plain").replace(faces=2)

#: Per-check false-alarm probability of the statistical checks (the suite's budget is ~1e-4).
ALPHA = 1e-6


def assert_same(a, b, atol=1e-12, rtol_expect=1e-12):
    np.testing.assert_allclose(a.win_probability, b.win_probability, rtol=0, atol=atol)
    np.testing.assert_allclose(a.place_probability, b.place_probability, rtol=0, atol=atol)
    assert set(a.order_probability) == set(b.order_probability)
    for order, p in a.order_probability.items():
        assert abs(p - b.order_probability[order]) <= atol, order
    assert a.expected_rounds == pytest.approx(b.expected_rounds, rel=rtol_expect)
    assert a.expected_total_turns == pytest.approx(b.expected_total_turns, rel=rtol_expect)


# ------------------------------------------------------------------ from the start


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_from_the_start_independent_tokens_equal_race(players, mode):
    odds = Odds(JUNGLE, APP, players=players, mode=mode)
    start = GameState.initial(players)
    r = snl.race(JUNGLE, APP, players=players, mode=mode)
    assert_same(odds(start), r)
    assert_same(snl.race(JUNGLE, APP, players=players, mode=mode, state=start), r, atol=0.0, rtol_expect=0.0)
    # the distributions agree too, term by term
    np.testing.assert_allclose(
        odds(start).turns_distribution.probabilities[: r.turns_distribution.horizon + 1],
        r.turns_distribution.probabilities,
        rtol=0,
        atol=1e-15,
    )


@pytest.mark.parametrize(
    "board, players, mode",
    [(JUNGLE, 2, "classic"), (JUNGLE, 2, "last_one_standing"), (SMALL, 3, "classic"), (SMALL, 3, "last_one_standing")],
)
def test_from_the_start_with_bump_equals_race(board, players, mode):
    odds = Odds(board, FAMILY, players=players, mode=mode)
    r = snl.race(board, FAMILY, players=players, mode=mode, tail=1e-15)  # a truncated mean errs by ~tail x horizon
    got = odds(GameState.initial(players))
    assert got.method == r.method == "exact: joint chain (bump)"
    assert_same(got, r)


# ------------------------------------------------------------------ hand-derived states


def test_hand_derived_independent_states_one_roll_from_the_end():
    # Board 3, a 2-faced die, exact finish (stay): from 2 a roll of 1 finishes, a 2 overshoots and stays.
    # Both on 2, seat 1 to move: each turn ends the race with probability 1/2, seat 1 first.
    board, state = Board(3), GameState((2, 2), to_move=1)
    classic = Odds(board, TWO, players=2, tail=1e-16)(state)
    assert classic.win_probability.tolist() == pytest.approx([1 / 3, 2 / 3], abs=1e-12)
    assert classic.expected_total_turns == pytest.approx(2.0, abs=1e-12)
    # rounds: turn t is in round floor(t/2) + 1 (seat 0 plays in the next round): 1 + sum_t 2^-t floor(t/2) = 5/3
    assert classic.expected_rounds == pytest.approx(5 / 3, abs=1e-12)
    los = Odds(board, TWO, players=2, mode="last_one_standing", tail=1e-16)(state)
    np.testing.assert_allclose(los.place_probability, [[1 / 3, 2 / 3], [2 / 3, 1 / 3]], rtol=0, atol=1e-12)
    assert los.expected_total_turns == pytest.approx(4.0, abs=1e-12)  # two independent geometric(1/2)
    # rounds: max(K1, K0 + 1), K geometric(1/2): 2 + sum_{r>=2} (3 * 2^-r - 2 * 4^-r) = 10/3
    assert los.expected_rounds == pytest.approx(10 / 3, abs=1e-12)
    # one token left, one roll from the end: places fixed, 2 turns and 2 rounds expected
    last = Odds(board, TWO, players=2, mode="last_one_standing", tail=1e-16)(GameState((3, 2), to_move=1, places=(0,)))
    assert last.place_probability.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert last.order_probability[(0, 1)] == pytest.approx(1.0, abs=1e-12)
    assert (last.expected_total_turns, last.expected_rounds) == pytest.approx((2.0, 2.0), abs=1e-12)


def _bump_hand():
    """Board 4, 2-faced die, stay, bump to 1: seat 0 on 3 (finishes with a 1), seat 1 on 1 to move.

    Seat 1 from 1: a 1 goes to 2, a 2 lands on 3 (held) and is bumped back to 1; from 2: a 2
    finishes, a 1 lands on 3 and is bumped to 1. With x_a (seat 1 to move, on a) and y_a = x_a / 2
    (seat 0 to move first): x_1 = (y_2 + y_1) / 2, x_2 = 1/2 + y_1 / 2, so x_1 = 2/11.
    Turns left: u_1 = 38/11 by the same equations with 1 paid per turn; rounds begun after this
    one: w_1 = 18/11 (1 paid when seat 1 does not finish), so 29/11 rounds left.
    """
    return Board(4), TWO.replace(bump=True), GameState((3, 1), to_move=1)


def test_hand_derived_state_with_bump():
    board, rules, state = _bump_hand()
    for r in (Odds(board, rules, players=2)(state), snl.race(board, rules, players=2, state=state, tail=1e-16)):
        assert r.method == "exact: joint chain (bump)"
        assert r.win_probability.tolist() == pytest.approx([9 / 11, 2 / 11], abs=1e-12)
        assert r.expected_total_turns == pytest.approx(float(F(38, 11)), abs=1e-12)
        assert r.expected_rounds == pytest.approx(float(F(29, 11)), abs=1e-12)
    los = Odds(board, rules, players=2, mode="last_one_standing")(state)
    assert los.place_probability[:, 0].tolist() == pytest.approx([9 / 11, 2 / 11], abs=1e-12)
    assert los.order_probability[(1, 0)] == pytest.approx(2 / 11, abs=1e-12)


def test_over_states_are_certain():
    odds = Odds(JUNGLE, APP, players=3)
    r = odds(GameState((40, 100, 7), to_move=1))
    assert r.win_probability.tolist() == [0.0, 1.0, 0.0] and r.expected_total_turns == 0.0
    los = Odds(JUNGLE, FAMILY, players=2, mode="last_one_standing")(GameState((100, 100), to_move=0, places=(1, 0)))
    assert los.order_probability[(1, 0)] == 1.0 and los.expected_rounds == 0.0


# ------------------------------------------------------------------ odds(state) == race(state=)


def _states_of_games(board, rules, players, mode, seeds, every=7):
    out = []
    for seed in seeds:
        record = Game(board, rules, players=players, mode=mode, rng=seed).play()
        out.extend(record.states()[1::every])
    return out


@pytest.mark.parametrize(
    "board, rules, players, mode",
    [
        (JUNGLE, APP, 3, "last_one_standing"),
        (JUNGLE, APP, 4, "classic"),
        (JUNGLE, FAMILY, 2, "classic"),
        (JUNGLE, FAMILY, 2, "last_one_standing"),
        (SMALL, FAMILY, 3, "last_one_standing"),
    ],
)
def test_odds_equal_race_from_random_reachable_states(board, rules, players, mode):
    odds = Odds(board, rules, players=players, mode=mode)
    states = _states_of_games(board, rules, players, mode, seeds=[1, 2])
    rng = np.random.default_rng(0)
    for i in rng.choice(len(states), size=min(4, len(states)), replace=False):
        state = states[i]
        got, want = odds(state), snl.race(board, rules, players=players, mode=mode, state=state, tail=1e-15)
        assert got.method == want.method
        assert_same(got, want, rtol_expect=1e-11)
    # the bump odds' distributions are run forwards from the state when asked for
    got = odds(states[0])
    want = snl.race(board, rules, players=players, mode=mode, state=states[0])
    assert got.rounds_distribution.median() == want.rounds_distribution.median()


# ------------------------------------------------------------------ against the simulator


def _z_check(odds_result, sim, seat, place):
    """Largest |z| of the simulated frequency of ``seat`` taking ``place`` (0 = first) and of the mean turns left."""
    n = sim.games
    p = float(odds_result.place_probability[seat, place])
    freq = np.mean(sim.place[:, seat] == place + 1)
    z_win = (freq - p) / np.sqrt(p * (1 - p) / n)
    turns = sim.turns.astype(float)
    z_turns = (turns.mean() - odds_result.expected_total_turns) / (turns.std(ddof=1) / np.sqrt(n))
    return max(abs(z_win), abs(z_turns))


@pytest.mark.parametrize(
    "board, rules, players, mode, state",
    [
        (JUNGLE, APP, 2, "classic", GameState((97, 94), to_move=1)),
        (SMALL, FAMILY, 3, "last_one_standing", GameState((30, 18, 21), to_move=2, places=(0,))),
    ],
)
def test_odds_agree_with_the_simulator_from_the_same_state(board, rules, players, mode, state):
    odds = Odds(board, rules, players=players, mode=mode)
    sim = snl.simulate(board, rules, 100_000, players=players, mode=mode, start=state, rng=2024)
    z = norm.ppf(1 - ALPHA / 4)  # two figures, two-sided
    seat, place = state.to_move, len(state.places)  # the next place still open
    assert _z_check(odds(state), sim, seat, place) < z
    # a planted mistake is caught: the odds of the same squares with the other seat to move
    other = next(s for s in state.racing if s != state.to_move)
    wrong = odds(GameState(state.positions, to_move=other, places=state.places))
    assert _z_check(wrong, sim, seat, place) > z


# ------------------------------------------------------------------ timeline, swings, refusals


def test_timeline_and_swings_of_a_game():
    record = Game(JUNGLE, APP, players=["Ann", "Bob"], rng=29).play()
    odds = Odds(JUNGLE, APP, players=2)
    t = odds.timeline(record)
    assert t.win.shape == (len(record.turns()) + 1, 2) and t.values is t.win
    np.testing.assert_allclose(t.win.sum(axis=1), 1.0, atol=1e-12)
    assert t.win[-1, record.winner] == 1.0
    for i in (0, 5, len(t.states) - 2):
        np.testing.assert_allclose(t.win[i], odds(t.states[i]).win_probability, atol=0)
    swings = odds.swings(record, top=4)
    assert [abs(s.change) for s in swings] == sorted((abs(s.change) for s in swings), reverse=True)
    top = swings[0]
    assert top.cause == (("snake", 99, 27),) and top.name == "Ann" and "cost Ann" in top.story()
    assert top.change == pytest.approx(t.win[top.turn + 1, 0] - t.win[top.turn, 0])
    los = Game(JUNGLE, FAMILY, players=2, mode="last_one_standing", rng=3).play()
    lt = Odds(JUNGLE, FAMILY, players=2, mode="last_one_standing").timeline(los)
    assert lt.values.shape == (len(los.turns()) + 1, 2, 2)
    np.testing.assert_allclose(lt.places.sum(axis=2), 1.0, atol=1e-9)
    assert "place" in Odds(JUNGLE, FAMILY, players=2, mode="last_one_standing").swings(los)[0].story(
        "last_one_standing"
    )


def test_refusals():
    with pytest.raises(SnlError, match="up to 3 players"):
        Odds(JUNGLE, FAMILY, players=4)
    odds = Odds(JUNGLE, APP, players=2)
    with pytest.raises(GameError, match="3 seats' squares for odds of 2"):
        odds(GameState((0, 0, 0)))
    with pytest.raises(GameError, match="start of a jump"):
        odds(GameState((80, 30)))
    with pytest.raises(GameError, match="state must be a GameState"):
        odds((80, 30))
    with pytest.raises(GameError, match="another board"):
        odds.timeline(Game(JUNGLE, FAMILY, players=2, rng=1).play())
    with pytest.raises(GameError, match="for players=3"):
        snl.race(JUNGLE, APP, players=3, state=GameState((1, 2)))
    with pytest.raises(SnlError, match="top must be"):
        odds.swings(Game(JUNGLE, APP, players=2, rng=1).play(), top=0)


def test_four_bumping_players_from_a_state():
    # four still racing: estimated by simulating from the state
    r = snl.race(SMALL, FAMILY, players=4, state=GameState((20, 25, 18, 14), to_move=3), games=2000, rng=1)
    assert not r.exact and r.method.startswith("Monte Carlo")
    # once one has finished, three are left: exact again
    state = GameState((30, 20, 25, 18), to_move=3, places=(0,))
    r = snl.race(SMALL, FAMILY, players=4, mode="last_one_standing", state=state)
    assert r.exact and r.method == "exact: joint chain (bump)"
    assert r.place_probability[0, 0] == pytest.approx(1.0, abs=1e-12)
    assert all(p == 0.0 for o, p in r.order_probability.items() if o[0] != 0)
    est = snl.race(
        SMALL, FAMILY, players=4, mode="last_one_standing", state=state, method="monte_carlo", games=2000, rng=1
    )
    assert est.place_probability[0, 0] == 1.0 and not est.exact


def test_all_orders_are_listed_from_a_state():
    r = Odds(JUNGLE, APP, players=3, mode="last_one_standing")(GameState((100, 40, 50), to_move=2, places=(0,)))
    assert set(r.order_probability) == set(itertools.permutations(range(3)))
    assert r.order_probability[(0, 1, 2)] + r.order_probability[(0, 2, 1)] == pytest.approx(1.0, abs=1e-12)


def test_a_board_that_takes_thousands_of_turns_is_not_taken_for_unwinnable():
    """No jump, a 2-faced die, 3,300 squares: about 2,200 turns from square 0, nearly surely more than 2,000.

    The turns-to-finish sweep once called a square "stuck" when its token was still in play with
    probability 1 - 1e-12 after 2,000 turns; a long board is no trap. The sweep's mean from square 0
    is held against the linear solve of ``analyze`` (another path).
    """
    from snlmarkov.races.passage import first_passage

    board = Board(3300)
    fp = first_passage(snl.turn_model(board, TWO), 1e-12)
    turns = np.arange(fp.table.shape[0])
    assert fp.table.shape[0] > 2000
    assert abs((turns * fp.table[:, 0]).sum() / snl.analyze(board, TWO).expected_turns - 1) < 1e-9
    # the race between two such tokens, from the start: P(first wins) = sum_t P(T = t) P(T >= t)
    f = fp.table[:, 0]
    first = float((f * (1 - np.concatenate([[0.0], np.cumsum(f)[:-1]]))).sum())
    win = Odds(board, TWO, players=2).win_probability(GameState((0, 0)))
    assert abs(win[0] - first) < 1e-9 and abs(win.sum() - 1) < 1e-9

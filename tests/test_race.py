"""Races of several players: exact figures of independent players, the result, validation.

The joint chain under ``bump`` is tested in ``test_race_bump.py``, the
comparison with the simulator in ``test_race_crosscheck.py``.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov import Board, Rules
from snlmarkov.errors import GameError, RuleError, SnlError
from snlmarkov.races.core import RaceResult, joint_chain_states, race

TOL = 1e-12


def geometric_board(faces: int) -> tuple[Board, Rules]:
    """A board where every turn finishes with probability 1/faces.

    On a board of 2 squares under ``stay``, a token on 0 finishes with a roll
    of 2 and a token on 1 with a roll of 1; every other roll leaves it on 0
    or 1 (a 1 from 0 moves it to 1). So each turn finishes with probability
    ``1/faces``, whatever happened before.
    """
    return Board(2), Rules.preset("plain").replace(faces=faces)


# --------------------------------------------------------- closed forms
@pytest.mark.parametrize("players", [1, 2, 3, 5])
@pytest.mark.parametrize("faces", [2, 3, 6])
def test_classic_geometric_closed_form(players: int, faces: int) -> None:
    board, rules = geometric_board(faces)
    p = 1.0 / faces
    q = 1.0 - p
    r = race(board, rules, players=players)
    assert r.method == "exact: independent players" and r.exact and r.games == 0
    seats = np.arange(players)
    np.testing.assert_allclose(r.win_probability, p * q**seats / (1 - q**players), rtol=0, atol=TOL)
    # the game ends at the first successful turn of anyone: turns ~ Geometric(p)
    assert abs(r.expected_total_turns - 1 / p) < 1e-9
    t = np.arange(1, 60)
    np.testing.assert_allclose(r.turns_distribution.pmf(t), p * q ** (t - 1), rtol=0, atol=TOL)
    # rounds ~ Geometric(1 - q**players)
    assert abs(r.expected_rounds - 1 / (1 - q**players)) < 1e-9
    rr = np.arange(1, 30)
    np.testing.assert_allclose(
        r.rounds_distribution.pmf(rr), (q**players) ** (rr - 1) * (1 - q**players), rtol=0, atol=TOL
    )


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("faces", [2, 3])
def test_last_one_standing_geometric_closed_form(players: int, faces: int) -> None:
    board, rules = geometric_board(faces)
    p = 1.0 / faces
    q = 1.0 - p
    r = race(board, rules, players=players, mode="last_one_standing")
    # each seat plays its own geometric number of turns; total turns ~ NegativeBinomial(players, p)
    assert abs(r.expected_total_turns - players / p) < 1e-9
    t = np.arange(players, 80)
    negbin = np.array([math.comb(int(x) - 1, players - 1) for x in t]) * p**players * q ** (t - players)
    np.testing.assert_allclose(r.turns_distribution.pmf(t), negbin, rtol=0, atol=TOL)
    # rounds = max of the seats' geometric counts: P(R <= r) = (1 - q**r)**players
    rr = np.arange(0, 60)
    np.testing.assert_allclose(r.rounds_distribution.cdf(rr), (1 - q**rr) ** players, rtol=0, atol=TOL)
    expected_max = sum(
        (-1) ** (j + 1) * math.comb(players, j) / (1 - q**j) for j in range(1, players + 1)
    )  # inclusion-exclusion
    assert abs(r.expected_rounds - expected_max) < 1e-9
    if players == 2:
        # seat 0 finishes first when K0 <= K1: p / (1 - q**2) = 1 / (1 + q)
        assert abs(r.order_probability[(0, 1)] - 1 / (1 + q)) < TOL
        assert abs(r.order_probability[(1, 0)] - q / (1 + q)) < TOL


def test_three_geometric_seats_orders_by_hand() -> None:
    """Three seats, each turn finishing with probability 1/2 (K_i ~ Geometric(1/2)).

    Ties within a round go to the lower seat. The order (2, 1, 0) needs
    K2 < K1 < K0: sum_{a<b<c} 2**-(a+b+c) = sum_a 2**-a sum_{b>a} 4**-b
    = sum_a 8**-a / 3 = 1/21. The order (0, 1, 2) needs K0 <= K1 <= K2:
    sum_a 2**-a sum_{b>=a} 2 * 4**-b = (8/3) sum_a 8**-a = 8/21.
    """
    board, rules = geometric_board(2)
    r = race(board, rules, players=3, mode="last_one_standing")
    assert abs(r.order_probability[(2, 1, 0)] - 1 / 21) < TOL
    assert abs(r.order_probability[(0, 1, 2)] - 8 / 21) < TOL


# ------------------------------------------------------ one player = analyze
@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
@pytest.mark.parametrize(
    "board,rules",
    [
        (Board.builtin(), Rules()),
        (Board.builtin("milton_bradley"), Rules.preset("plain")),
        (Board.builtin(), Rules.preset("family")),  # bump does nothing with one token
    ],
)
def test_one_player_reduces_to_single_player_analysis(board: Board, rules: Rules, mode: str) -> None:
    a = snl.analyze(board, rules)
    r = race(board, rules, players=1, mode=mode)
    assert r.method == "exact: independent players"
    assert r.win_probability.tolist() == [pytest.approx(1.0, abs=1e-12)]
    assert r.place_probability.shape == (1, 1)
    assert list(r.order_probability) == [(0,)]
    for dist in (r.rounds_distribution, r.turns_distribution):
        np.testing.assert_allclose(
            dist.probabilities[: a.length.horizon + 1], a.length.probabilities, rtol=0, atol=1e-15
        )
        assert dist.tail_mass < 1e-12
    assert abs(r.expected_rounds - a.expected_turns) < 1e-9
    assert abs(r.expected_total_turns - a.expected_turns) < 1e-9
    assert r.rounds_distribution.unit == "rounds" and r.turns_distribution.unit == "turns"


def test_milton_bradley_two_players_against_single_player_figures() -> None:
    """Classic with two seats: E[rounds] = sum_r S(r)**2, the mean of the smaller of two lengths."""
    board, rules = Board.builtin("milton_bradley"), Rules.preset("plain")
    length = snl.analyze(board, rules).length
    s = length.sf(np.arange(length.horizon + 1))
    r = race(board, rules, players=2)
    assert abs(r.expected_rounds - float(np.sum(s**2))) < 1e-9
    f = length.probabilities
    # seat 0 wins when K0 <= K1
    assert abs(r.win_probability[0] - float(np.sum(f * (s + f)))) < 1e-12


# --------------------------------------------------- places and orders
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_orders_sum_to_places_and_places_are_doubly_stochastic(players: int) -> None:
    r = race(Board.builtin(), Rules(), players=players, mode="last_one_standing")
    assert len(r.order_probability) == math.factorial(players)
    assert sorted(r.order_probability) == sorted(itertools.permutations(range(players)))
    from_orders = np.zeros((players, players))
    for order, p in r.order_probability.items():
        for place, seat in enumerate(order):
            from_orders[seat, place] += p
    # the places were computed separately (binomial counts), the orders by a recursion over positions
    np.testing.assert_allclose(from_orders, r.place_probability, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.place_probability.sum(axis=0), 1.0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(r.place_probability.sum(axis=1), 1.0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(r.win_probability, r.place_probability[:, 0], rtol=0, atol=0)
    assert abs(r.expected_place.sum() - players * (players + 1) / 2) < 1e-9
    # moving first is worth something: earlier seats are ahead
    assert np.all(np.diff(r.win_probability) < 0)
    assert np.all(np.diff(r.expected_place) > 0)


@pytest.mark.parametrize("players", [2, 4, 6])
def test_classic_winner_is_last_one_standing_first_place(players: int) -> None:
    board, rules = Board.builtin("milton_bradley"), Rules()
    c = race(board, rules, players=players)
    s = race(board, rules, players=players, mode="last_one_standing")
    np.testing.assert_allclose(c.win_probability, s.place_probability[:, 0], rtol=0, atol=1e-12)
    assert c.expected_rounds < s.expected_rounds
    # classic: total turns = (rounds - 1) * players + winner + 1
    e_turns = (c.expected_rounds - 1) * players + float(np.dot(np.arange(1, players + 1), c.win_probability))
    assert abs(c.expected_total_turns - e_turns) < 1e-9
    # last one standing: every seat plays its own single-player length
    single = snl.analyze(board, rules).expected_turns
    assert abs(s.expected_total_turns - players * single) < 1e-9


def test_classic_places_only_the_winner() -> None:
    r = race(Board.builtin(), Rules(), players=3)
    assert r.place_probability.shape == (3, 1)
    np.testing.assert_array_equal(r.place_probability[:, 0], r.win_probability)
    assert sorted(r.order_probability) == [(0,), (1,), (2,)]
    assert abs(sum(r.order_probability.values()) - 1.0) < 1e-12
    with pytest.raises(SnlError, match="classic places only the winner"):
        r.expected_place
    assert "expected_place" not in r.standard_error


# ------------------------------------------------------------- the result
def test_result_is_frozen_and_read_only() -> None:
    r = race(Board.builtin(), Rules(), players=2, mode="last_one_standing")
    with pytest.raises(AttributeError):
        r.players = 3  # type: ignore[misc]
    with pytest.raises(ValueError):
        r.win_probability[0] = 1.0
    with pytest.raises(TypeError):
        r.order_probability[(0, 1)] = 1.0  # type: ignore[index]
    with pytest.raises(ValueError):
        r.expected_place[0] = 1.0


def test_exact_result_has_zero_standard_errors_and_point_intervals() -> None:
    r = race(Board.builtin(), Rules(), players=3, mode="last_one_standing")
    assert set(r.standard_error) == {
        "win_probability",
        "place_probability",
        "expected_rounds",
        "expected_total_turns",
        "expected_place",
    }
    assert all(not np.any(v) for v in r.standard_error.values())
    low, high = r.confidence_interval("win_probability")
    np.testing.assert_array_equal(low, r.win_probability)
    np.testing.assert_array_equal(high, r.win_probability)
    assert r.confidence_interval("expected_rounds") == (r.expected_rounds, r.expected_rounds)
    with pytest.raises(SnlError, match="no figure named"):
        r.confidence_interval("median")
    with pytest.raises(SnlError, match="level"):
        r.confidence_interval("expected_rounds", level=1.0)


def test_to_dict_is_json_and_complete() -> None:
    r = race(Board.builtin(), Rules(), players=3, mode="last_one_standing")
    d = json.loads(json.dumps(r.to_dict()))
    assert d["method"] == "exact: independent players" and d["exact"] is True and d["games"] == 0
    assert [s["seat"] for s in d["seats"]] == [0, 1, 2]
    assert d["seats"][1]["expected_place"] == pytest.approx(float(r.expected_place[1]), abs=1e-12)
    assert len(d["orders"]) == 6
    assert d["expected_rounds"] == pytest.approx(r.expected_rounds, abs=1e-12)
    assert "standard_error" not in d


@pytest.mark.parametrize(
    "change,match",
    [
        ({"players": 0}, "players"),
        ({"mode": "sudden_death"}, "mode"),
        ({"win_probability": np.array([0.5, 0.5, 0.0])}, "shape"),
        ({"place_probability": np.ones((2, 2)) / 2}, "shape"),
        ({"order_probability": {(0,): 1.0}}, "finishing orders"),
        ({"order_probability": {(0,): 0.5, (3,): 0.5}}, "not a finishing order"),
        ({"exact": True, "games": 10}, "exact figures"),
        ({"standard_error": {"win_probability": np.array([0.1, 0.1])}}, "no standard error"),
        ({"standard_error": {"median": 1.0}}, "no standard error is defined"),
        ({"method": ""}, "method"),
    ],
)
def test_result_validates_on_construction(change: dict, match: str) -> None:
    r = race(Board.builtin(), Rules(), players=2)
    fields = {
        "board": r.board,
        "rules": r.rules,
        "players": 2,
        "mode": "classic",
        "method": r.method,
        "exact": True,
        "games": 0,
        "win_probability": r.win_probability,
        "place_probability": r.place_probability,
        "order_probability": dict(r.order_probability),
        "rounds_distribution": r.rounds_distribution,
        "turns_distribution": r.turns_distribution,
    }
    fields.update(change)
    with pytest.raises(SnlError, match=match):
        RaceResult(**fields)


# ------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"players": 0}, GameError, "players"),
        ({"players": 7}, GameError, "players"),
        ({"players": 2.0}, GameError, "players"),
        ({"players": True}, GameError, "players"),
        ({"mode": "first_past"}, GameError, "mode"),
        ({"method": "guess"}, SnlError, "method"),
        ({"games": 0}, SnlError, "games"),
        ({"tail": 0.0}, SnlError, "tail"),
        ({"tail": 0.5}, SnlError, "tail"),
    ],
)
def test_race_validates_its_arguments(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        race(Board.builtin(), Rules(), **kwargs)


def test_race_refuses_bad_board_and_rules() -> None:
    with pytest.raises(SnlError, match="Board"):
        race("jungle", Rules())  # type: ignore[arg-type]
    with pytest.raises(RuleError, match="Rules"):
        race(Board.builtin(), "family")  # type: ignore[arg-type]
    with pytest.raises(RuleError, match="bounce"):
        race(Board(4), Rules(finish="bounce"))
    with pytest.raises(RuleError, match="bump_to"):
        race(Board(10), Rules(bump=True, bump_to=10), players=2)


def test_exact_joint_chain_too_large_is_refused() -> None:
    """Past the caps, method="exact" is refused up front (in well under a second), never allocated."""
    board, rules = Board.builtin(), Rules.preset("family")
    from snlmarkov.errors import LimitError
    from snlmarkov.races.core import MAX_EXACT_JOINT_STATES, MAX_EXACT_STATES

    assert MAX_EXACT_STATES < joint_chain_states(board, rules, 4) <= MAX_EXACT_JOINT_STATES
    assert joint_chain_states(board, rules, 5) > MAX_EXACT_JOINT_STATES
    for mode in ("classic", "last_one_standing"):
        with pytest.raises(LimitError, match=r"states, more than 400000000; use method='monte_carlo'"):
            race(board, rules, players=5, mode=mode, method="exact")


def test_exact_joint_chain_respects_the_memory_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from snlmarkov.errors import LimitError

    monkeypatch.setenv("SNLMARKOV_MEMORY_LIMIT", "1G")
    with pytest.raises(
        LimitError,
        match=r"exact joint chain of 4 players \(180848704 states\) would need about 1\.3 GiB.*monte_carlo' instead",
    ):
        race(Board.builtin(), Rules.preset("family"), players=4, method="exact")


def test_auto_keeps_monte_carlo_for_four_bump_players() -> None:
    r = race(Board.builtin(), Rules.preset("family"), players=4, method="auto", games=200, rng=1)
    assert not r.exact and r.method.startswith("Monte Carlo")


def test_exact_joint_chain_shows_its_rounds(capsys: pytest.CaptureFixture[str]) -> None:
    board, rules = Board(10, {2: 7, 6: 3, 8: 4}), Rules.preset("app").replace(bump=True)
    quiet = race(board, rules, players=4, method="exact")
    assert capsys.readouterr().err == ""
    shown = race(board, rules, players=4, method="exact", progress=True)
    err = capsys.readouterr().err
    assert "exact race, 4 players" in err and "round" in err and "in play" in err
    np.testing.assert_array_equal(shown.win_probability, quiet.win_probability)


def test_defaults_are_the_jungle_board_and_app_rules() -> None:
    r = race()
    assert r.board == Board.builtin() and r.rules == Rules() and r.players == 2 and r.mode == "classic"


def test_exported_names_survive_submodule_imports() -> None:
    """Importing the defining modules first must not shadow the exported functions."""
    import importlib

    for name in ("races", "races.core", "sim", "sim.core", "checks", "checks.crosschecking", "game", "game.textboard"):
        importlib.import_module(f"snlmarkov.{name}")
    assert callable(snl.race) and callable(snl.simulate) and callable(snl.crosscheck) and callable(snl.render)
    a = race(Board(2), Rules.preset("plain"), players=2)
    b = snl.race(Board(2), Rules.preset("plain"), players=2)
    np.testing.assert_array_equal(a.win_probability, b.win_probability)
    assert snl.RaceResult is RaceResult


# ------------------------------------------------------------ Monte Carlo
def test_bump_with_four_players_falls_back_to_monte_carlo() -> None:
    board, rules = Board.builtin(), Rules.preset("family")
    r = race(board, rules, players=4, games=2000, rng=5)
    assert r.method == "Monte Carlo: 2000 games, 95% CI"
    assert not r.exact and r.games == 2000
    assert r.win_probability.shape == (4,) and abs(r.win_probability.sum() - 1.0) < 1e-12
    assert r.standard_error["win_probability"].shape == (4,)
    assert np.all(r.standard_error["win_probability"] > 0)
    assert r.standard_error["expected_rounds"] > 0
    low, high = r.confidence_interval("win_probability")
    p = r.win_probability  # the binomial interval, written out independently: p +- z sqrt(p(1-p)/n)
    np.testing.assert_allclose(high - p, 1.959963984540054 * np.sqrt(p * (1 - p) / 2000), rtol=1e-9)
    np.testing.assert_allclose(p - low, high - p, rtol=1e-9)
    wide_low, wide_high = r.confidence_interval("win_probability", level=0.999)
    assert np.all(wide_low < low) and np.all(high < wide_high)
    assert r.rounds_distribution.tail_mass == 0.0
    # the same seed gives the same estimates
    again = race(board, rules, players=4, games=2000, rng=5)
    np.testing.assert_array_equal(again.win_probability, r.win_probability)
    assert again.expected_total_turns == r.expected_total_turns
    d = json.loads(json.dumps(r.to_dict()))
    assert d["exact"] is False and d["standard_error"]["expected_rounds"] > 0


def test_monte_carlo_last_one_standing_orders_and_places() -> None:
    r = race(Board.builtin(), Rules(), players=3, mode="last_one_standing", method="monte_carlo", games=3000, rng=2)
    assert not r.exact and r.method.startswith("Monte Carlo")
    assert len(r.order_probability) == 6
    assert abs(sum(r.order_probability.values()) - 1.0) < 1e-12
    from_orders = np.zeros((3, 3))
    for order, p in r.order_probability.items():
        for place, seat in enumerate(order):
            from_orders[seat, place] += p
    np.testing.assert_allclose(from_orders, r.place_probability, atol=1e-12)
    assert r.standard_error["expected_place"].shape == (3,)


def test_monte_carlo_interval_covers_the_exact_value_at_a_sound_level() -> None:
    """Simulated estimates agree with exact ones within a 1 - 1e-6 interval."""
    board, rules = Board.builtin("milton_bradley"), Rules.preset("plain")
    exact = race(board, rules, players=3)
    mc = race(board, rules, players=3, method="monte_carlo", games=20_000, rng=11)
    for name in ("win_probability", "expected_rounds", "expected_total_turns"):
        low, high = mc.confidence_interval(name, level=1 - 1e-6 / 7)  # Bonferroni over 7 figures
        value = getattr(exact, name)
        assert np.all(low <= value) and np.all(value <= high), name


# ---------------------------------------------------------------- exact tails (from the planted-bug audit, benchmarks/mutation_audit.py)
PLAIN2 = Rules.preset("plain").replace(faces=2)


def test_classic_race_tail_mass_is_exact():
    """Board(2), plain, a 2-faced die: each turn finishes with probability 1/2 (a 2 from 0; a 1 from 1,
    where a 2 overshoots and stays). So a token's turns are Geometric(1/2) and two tokens are both
    still racing after r rounds with probability 4^-r, the tail beyond the horizon."""
    r = race(Board(2), PLAIN2, players=2)
    rounds = r.rounds_distribution
    h = rounds.horizon
    assert rounds.tail_mass == pytest.approx(4.0**-h, rel=1e-9, abs=0)  # abs=0: the tail is ~1e-27
    k = np.arange(1, h + 1)
    np.testing.assert_allclose(rounds.probabilities[1:], 0.75 * 0.25 ** (k - 1), rtol=1e-9, atol=0)
    # seat 0 wins with 1/2 + 1/8 + ... = (1/2) / (1 - 1/4) = 2/3
    assert r.win_probability[0] == pytest.approx(2 / 3, abs=1e-12)


def test_last_one_standing_tail_mass_is_exact():
    """Same game, last one standing: the race lasts past r rounds unless both finished:
    1 - (1 - 2^-r)^2."""
    r = race(Board(2), PLAIN2, players=2, mode="last_one_standing")
    h = r.rounds_distribution.horizon
    assert r.rounds_distribution.tail_mass == pytest.approx(-math.expm1(2 * math.log1p(-(2.0**-h))), rel=1e-6, abs=0)

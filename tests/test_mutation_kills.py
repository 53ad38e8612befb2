"""Direct tests for the planted bugs that survived the audit (benchmarks/mutation_audit.py).

Each test here compares against an independent value (a hand derivation, a closed form) or plants a
mistake that exactly one check must catch, so that a check that never fires is noticed.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov import Board, Game, GameRecord, Rules, race, simulate, verify_game
from snlmarkov.analysis.distribution import LengthDistribution
from snlmarkov.checks.crosschecking import crosscheck

PLAIN2 = Rules.preset("plain").replace(faces=2)


# ---------------------------------------------------------------- exact races
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


def test_exact_path_returns_a_fraction_not_a_float():
    value = snl.exact_expected_turns(Board(3), PLAIN2)
    assert isinstance(value, Fraction) and value == Fraction(3)  # hand: E0 = 1 + E1/2, E1 = 2 ...
    mb = snl.exact_expected_turns(Board.builtin("milton_bradley"), Rules.preset("plain"))
    assert isinstance(mb, Fraction) and mb.denominator > 1


# ---------------------------------------------------------------- board files
def test_board_file_parser_does_not_truncate(tmp_path):
    for text in ('{"size": 10.5}', '{"size": 10, "ladders": {"2": 7.5}}', '{"size": 10, "snakes": [[9.9, 3]]}'):
        path = tmp_path / "b.json"
        path.write_text(text)
        with pytest.raises(snl.BoardError, match="must be an integer"):
            Board.from_file(path)
    path.write_text('{"size": 10.0, "ladders": {"2": 7.0}}')
    assert Board.from_file(path) == Board(10, {2: 7})


# ---------------------------------------------------------------- simulator
def test_landings_of_games_near_max_turns_are_counted():
    """Board(30), plain: a finished game lands on 30 exactly once (overshoots stay and land nowhere).
    With max_turns close to the typical length, many games finish in the simulator's slow lane."""
    rules = Rules.preset("plain")
    from snlmarkov.sim.core import play

    r = play(Board(30), rules, 20_000, 1, "classic", np.random.default_rng(3), 14)
    finished = int((~r.truncated).sum())
    assert 0 < r.n_truncated < 20_000
    late = int(((r.turns > 6) & ~r.truncated).sum())
    assert late > 1000  # games that went through the slow lane and finished
    assert int(r.landings[30]) == finished


def test_simulated_rolls_equal_turns_without_bonus():
    r = simulate(Board.builtin(), Rules.preset("plain"), 5000, rng=2)
    assert (r.rolls == r.turns).all()


# ---------------------------------------------------------------- cross-check power, one check at a time
@pytest.fixture(scope="module")
def jungle_plain():
    board, rules = Board.builtin(), Rules.preset("plain")
    return board, rules, snl.analyze(board, rules)


GAMES = 40_000
NAMES = ("mean turns", "mean rolls", "turn distribution", "landings")


def _only_fails(report, name: str) -> None:
    verdict = {c.name: c.passed for c in report.checks}
    assert verdict[name] is False, (name, verdict)
    assert all(verdict[n] for n in NAMES if n != name), (name, verdict)


def test_power_mean_turns_alone(jungle_plain):
    board, rules, a = jungle_plain
    wrong = dataclasses.replace(a, expected_turns=a.expected_turns + 1.2)  # only the mean is wrong
    _only_fails(crosscheck(board, rules, GAMES, rng=11, exact=wrong), "mean turns")


def test_power_mean_rolls_alone(jungle_plain):
    board, rules, a = jungle_plain
    wrong = dataclasses.replace(a, expected_rolls=a.expected_rolls + 1.2)
    _only_fails(crosscheck(board, rules, GAMES, rng=12, exact=wrong), "mean rolls")


def test_power_turn_distribution_alone(jungle_plain):
    board, rules, a = jungle_plain
    p = a.length.probabilities
    spread = np.zeros(p.size + 8)  # half the mass 4 turns earlier, half 4 later: same mean, wider
    spread[:-8] += 0.5 * p
    spread[8:] += 0.5 * p
    wrong = dataclasses.replace(a)
    wrong.__dict__["length"] = LengthDistribution(spread[4:], tail_mass=a.length.tail_mass)
    assert wrong.length.mean() == pytest.approx(a.length.mean(), abs=1e-6)
    _only_fails(crosscheck(board, rules, GAMES, rng=13, exact=wrong), "turn distribution")


def test_power_landings_alone(jungle_plain):
    board, rules, a = jungle_plain
    landings = a.landings.copy()
    landings[50] *= 1.3  # one square's expected landings wrong
    wrong = dataclasses.replace(a)
    wrong.__dict__["landings"] = landings  # landings is a cached property: plant the wrong value in its cache
    report = crosscheck(board, rules, GAMES, rng=14, exact=wrong)
    _only_fails(report, "landings")
    assert report.landing_p[50] <= report.check("landings").alpha  # the planted square is the one flagged


# ---------------------------------------------------------------- every check of verify_game fires
def _data(record):
    return record.to_dict()


def test_verify_roll_that_cannot_be_dealt():
    record = Game(Board(30), Rules(), players=1, dice=[6, 6, 3] + [5] * 10).play()
    data = _data(record)
    for e in data["log"]:
        if e["kind"] == "roll" and e["turn"] == 0 and e["value"] == 3:
            e["value"] = 6
    data["dice"][2] = 6
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed and "roll 3 (6) cannot be dealt after the cap" in report.failures[0]


def test_verify_rolls_after_the_turn_ended():
    record = Game(Board(30), Rules.preset("plain"), players=1, dice=[3, 4, 5, 6, 6, 6]).play()
    data = _data(record)
    turn0 = [e for e in data["log"] if e["turn"] == 0]
    extra = {"kind": "roll", "seat": 0, "turn": 0, "value": 2, "capped": False}
    data["log"].insert(len(turn0), extra)
    data["dice"].insert(1, 2)
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed and "rolls go on after roll 1 ended the turn" in report.failures[0]


def test_verify_turn_that_stops_while_a_roll_is_due():
    game = Game(Board(30), Rules(), players=1, dice=[6, 2])
    game.take_turn()
    data = _data(game.record())
    # turn 0 is 6 then 2: drop the bonus roll and its move, so the turn ends on the six
    data["log"] = [e for e in data["log"] if not (e["turn"] == 0 and e["kind"] in ("bonus_roll",))]
    turn0 = [i for i, e in enumerate(data["log"]) if e["turn"] == 0]
    del data["log"][turn0[2] : turn0[-1] + 1]
    data["dice"] = [e["value"] for e in data["log"] if e["kind"] == "roll"]
    from snlmarkov.game.events import event_from_dict
    from snlmarkov.game.record import _summarise

    _, pos, fin = _summarise(tuple(event_from_dict(e) for e in data["log"]), 1, snl.GameState.initial(1))
    data["positions"], data["finishing_order"] = list(pos), list(fin)
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed and "the turn stopped while another roll was due" in report.failures[0]


def test_verify_turn_without_rolls():
    game = Game(Board(30), Rules.preset("plain"), players=2, dice=[3, 4])
    game.take_turn(), game.take_turn()
    data = game.record().to_dict()
    data["log"] = [e for e in data["log"] if not (e["turn"] == 1 and e["kind"] == "roll")]
    data["dice"] = [3]
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed and "no rolls in a turn that was not skipped" in report.failures[0]


def test_verify_turn_after_the_game_was_over():
    game = Game(Board(10), Rules.preset("plain"), players=2, dice=[4, 1, 6, 2])
    game.take_turn(), game.take_turn(), game.take_turn()  # seat 0 reaches 10: game over
    data = game.record().to_dict()
    data["log"] = [e for e in data["log"] if e["kind"] != "game_over"]
    data["log"] += [
        {"kind": "roll", "seat": 1, "turn": 3, "value": 2, "capped": False},
        {"kind": "move", "seat": 1, "turn": 3, "start": 1, "end": 3},
    ]
    data["dice"] = [4, 1, 6, 2]
    data["positions"] = [10, 3]
    data["finished"] = False  # the editor says so too
    report = verify_game(GameRecord.from_dict(data))
    assert not report.passed
    assert any("a turn after the game was over" in f for f in report.failures)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("positions", (3, 1), "positions (3, 1) differ from the replay's"),
        ("finishing_order", (1,), "finishing order (1,) differs from the replay's"),
        ("dice", (1, 1, 1), "the record's dice are not the rolls of its log"),
    ],
)
def test_verify_summary_fields_of_a_tampered_object(field, value, message):
    """A record object altered after it was built (bypassing its own checks) still fails."""
    record = Game(Board(10), Rules.preset("plain"), players=2, dice=[4, 1, 6]).play()
    object.__setattr__(record, field, value)
    report = verify_game(record)
    assert not report.passed and any(message in f for f in report.failures)


def test_verify_log_probability_of_a_forfeit_turn():
    """Forfeit: 6, 6 (cap), then a 6 voids the turn: three fair rolls, (1/6)^3; back where it began."""
    rules = Rules(on_cap="forfeit")
    record = Game(Board(30), rules, players=1, dice=[6, 6, 6] + [5] * 10).play()
    report = verify_game(record)
    assert report.passed
    assert report.turns[0].rolls_log_probability == pytest.approx(3 * math.log(1 / 6))
    assert report.turns[0].end == 0

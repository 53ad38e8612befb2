"""The cross-check of simulated games against the exact analysis.

Correct models must pass for every preset and a grid of every rule toggle on
both built-in boards (this grid is the project's CI cross-check of the
simulator against the matrices; the product of the toggles runs in CI's slow
step, ``pytest -m slow``); models with one planted mistake (a wrong
jump, a wrong rule) must fail, with margins that make a miss practically
impossible.
"""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest

from snlmarkov import Board, GameError, Rules, SnlError
from snlmarkov.analysis.distribution import LengthDistribution
from snlmarkov.analysis.single import analyze
from snlmarkov.checks.crosschecking import TESTS, CrosscheckReport, _holm, _turn_distribution, crosscheck

JUNGLE, MB = Board.builtin("jungle"), Board.builtin("milton_bradley")
#: the published puzzle chain 83 -> 84 -> 97 on the jungle board (whose ladder 28 -> 84 then chains on to 97)
PUZZLE = Board(100, {**JUNGLE.jumps, 83: 84, 84: 97}, name="puzzle", chain=True)
BOARDS = {"jungle": JUNGLE, "milton_bradley": MB, "puzzle": PUZZLE}


def moved(board, start, end):
    jumps = dict(board.jumps)
    jumps[start] = end
    return Board(board.size, jumps)


def without(board, start):
    jumps = dict(board.jumps)
    del jumps[start]
    return Board(board.size, jumps)


# ------------------------------------------------------ correct models pass
def grid():
    """Every preset, and every combination of the toggles, on both boards."""
    cases = [
        (name, preset, Rules.preset(preset)) for name in ("jungle", "milton_bradley") for preset in Rules.presets()
    ]
    caps = [(None, "redeal"), (1, "redeal"), (2, "forfeit")]
    for name, finish, bonus, six, (cap, on_cap) in itertools.product(
        ("jungle", "milton_bradley"), ("stay", "bounce", "none"), (True, False), (False, True), caps
    ):
        rules = Rules(finish=finish, bonus_on_six=bonus, start_on_six=six, max_sixes=cap, on_cap=on_cap)
        cases.append((name, f"{finish}-bonus{int(bonus)}-six{int(six)}-cap{cap}{on_cap[0]}", rules))
    cases.append(("jungle", "four-faces", Rules(faces=4, finish="bounce", max_sixes=3, on_cap="forfeit")))
    cases.append(("milton_bradley", "eight-faces", Rules(faces=8, start_on_six=True, max_sixes=1)))
    # the house rules of issue 11: restart after the cap, no jump after a bounce, and a chained board
    house = [
        ("restart", Rules(on_cap="restart")),
        ("restart-cap1-six", Rules(on_cap="restart", max_sixes=1, start_on_six=True)),
        ("bounce-nojump", Rules(finish="bounce", jump_after_bounce=False)),
        ("bounce-nojump-plain", Rules.preset("plain").replace(finish="bounce", jump_after_bounce=False)),
        (
            "all-three",
            Rules(finish="bounce", jump_after_bounce=False, on_cap="restart", max_sixes=1, start_on_six=True),
        ),
    ]
    for name in BOARDS:
        for label, rules in house:
            cases.append((name, label, rules))
    for preset in Rules.presets():
        cases.append(("puzzle", preset, Rules.preset(preset)))
    cases.append(("puzzle", "none-cap2f", Rules(finish="none", max_sixes=2, on_cap="forfeit")))
    return cases


GRID = grid()
#: Per-case level: the whole grid, a correct model every time, fails with
#: probability below 4e-5 (Bonferroni), well under once in 10^4 CI runs.
GRID_ALPHA = 4e-5 / len(GRID)


def _grid_params():
    """The grid's cases; the toggle product (every combination, 72 cases) runs in the slow step.

    The presets, the extra faces, the house rules and the chained board stay in the fast suite.
    """
    for index, (b, label, _) in enumerate(GRID):
        toggles = "-bonus" in label  # the labels of the toggle product
        yield pytest.param(index, id=f"{b}-{label}", marks=[pytest.mark.slow] if toggles else [])


@pytest.mark.parametrize("index", list(_grid_params()))
def test_correct_models_pass(index):
    name, _, rules = GRID[index]
    report = crosscheck(BOARDS[name], rules, 100_000, rng=[2024, index], alpha=GRID_ALPHA)
    assert report.passed, report.summary()
    assert report.n_truncated == 0 and report.games == 100_000


def test_the_grid_covers_every_toggle():
    seen = {
        field: {getattr(r, field) for _, _, r in GRID}
        for field in ("finish", "bonus_on_six", "start_on_six", "max_sixes", "on_cap", "faces", "jump_after_bounce")
    }
    assert seen["finish"] == {"stay", "bounce", "none"}
    assert seen["bonus_on_six"] == seen["start_on_six"] == seen["jump_after_bounce"] == {True, False}
    assert seen["max_sixes"] == {None, 1, 2, 3} and seen["on_cap"] == {"redeal", "forfeit", "restart"}
    assert seen["faces"] == {4, 6, 8}
    assert {label for _, label, _ in GRID} >= set(Rules.presets())
    # the new toggles on both built-in boards and on the chained one
    for name in BOARDS:
        rules = [r for b, _, r in GRID if b == name]
        assert {r.on_cap for r in rules} >= {"restart"} and {r.jump_after_bounce for r in rules} == {True, False}
    assert PUZZLE.chain and PUZZLE.jump_path(83) == (83, 84, 97)


def test_an_exact_analysis_can_be_given():
    a = analyze(MB, Rules())
    report = crosscheck(MB, Rules(), 50_000, rng=3, exact=a)
    assert report.passed and report.exact_mean_turns == a.expected_turns


# -------------------------------------------------- planted mistakes fail
PLANTED = {
    # name: (board simulated, rules simulated, exact model, games)
    "snake 56->52 for 56->53": (JUNGLE, Rules(), {"exact_board": moved(JUNGLE, 56, 52)}, 200_000),
    "snake 95->74 for 95->75": (JUNGLE, Rules(), {"exact_board": moved(JUNGLE, 95, 74)}, 200_000),
    "ladder 28->84 missing": (MB, Rules.preset("plain"), {"exact_board": without(MB, 28)}, 100_000),
    "bounce for stay": (
        JUNGLE,
        Rules.preset("plain"),
        {"exact_rules": Rules.preset("plain").replace(finish="bounce")},
        100_000,
    ),
    "stay for bounce": (
        MB,
        Rules.preset("family"),
        {"exact_rules": Rules.preset("family").replace(finish="stay")},
        100_000,
    ),
    "stay for none": (JUNGLE, Rules(finish="none"), {"exact_rules": Rules()}, 100_000),
    "no six to start": (
        JUNGLE,
        Rules.preset("family"),
        {"exact_rules": Rules.preset("family").replace(start_on_six=False)},
        100_000,
    ),
    "no bonus roll": (JUNGLE, Rules(), {"exact_rules": Rules(bonus_on_six=False)}, 200_000),
    "forfeit for redeal": (JUNGLE, Rules(), {"exact_rules": Rules(on_cap="forfeit")}, 1_000_000),
    "cap 3 for cap 2": (MB, Rules(), {"exact_rules": Rules(max_sixes=3)}, 2_000_000),
    "cap 1 for cap 2 (forfeit)": (
        JUNGLE,
        Rules(on_cap="forfeit"),
        {"exact_rules": Rules(on_cap="forfeit", max_sixes=1)},
        100_000,
    ),
    # the house rules of issue 11, each modelled wrongly
    "restart sent to the turn's start": (
        JUNGLE,
        Rules(on_cap="restart", max_sixes=1),
        {"exact_rules": Rules(on_cap="forfeit", max_sixes=1)},
        100_000,
    ),
    "jump applied after a bounce": (
        JUNGLE,
        Rules(finish="bounce", jump_after_bounce=False),
        {"exact_rules": Rules(finish="bounce")},
        100_000,
    ),
    "84->97 missing from the chain": (
        PUZZLE,
        Rules(),
        {"exact_board": Board(100, {**JUNGLE.jumps, 83: 84})},
        100_000,
    ),
}


@pytest.mark.parametrize("name", list(PLANTED))
def test_a_model_with_one_mistake_fails(name):
    board, rules, exact, games = PLANTED[name]
    report = crosscheck(board, rules, games, rng=77, **exact)
    assert not report.passed, report.summary()
    # caught by a wide margin: far below the level each test is given
    assert min(c.p_value for c in report.checks) < 1e-12, report.summary()


def test_a_chain_stopped_after_one_jump_fails(monkeypatch):
    # the planted mistake: a model that takes only the first jump of a chain (83 -> 84, and stops there)
    def one_jump(board):
        dest = np.arange(board.size + 1, dtype=np.int64)
        for start, end in board.jumps.items():
            dest[start] = end
        return dest

    with monkeypatch.context() as m:
        m.setattr(Board, "destination", one_jump)
        wrong = analyze(PUZZLE, Rules())
    assert wrong.expected_turns != analyze(PUZZLE, Rules()).expected_turns
    report = crosscheck(PUZZLE, Rules(), 100_000, rng=77, exact=wrong)
    assert not report.passed, report.summary()
    assert min(c.p_value for c in report.checks) < 1e-12, report.summary()


def test_a_wrong_jump_is_located():
    report = crosscheck(JUNGLE, Rules(), 200_000, rng=5, exact_board=moved(JUNGLE, 56, 52))
    assert not report.check("landings").passed
    assert {52, 53} & set(report.flagged_squares)
    assert report.check("mean turns").passed  # the mean alone would not have told


# ------------------------------------------------------------ the report
def test_report_reads_well_and_serialises():
    report = crosscheck(JUNGLE, Rules.preset("plain"), 20_000, rng=1)
    assert isinstance(report, CrosscheckReport)
    text = str(report)
    assert text == report.summary() and "PASSED" in text and "mean turns" in text
    data = json.loads(json.dumps(report.to_dict()))
    assert (
        data["passed"] is True and len(data["landings"]) == 101 and [c["name"] for c in data["checks"]] == list(TESTS)
    )
    assert report.landing_t[0] == 0 and report.landing_p[0] == 1  # square 0 is never landed on
    with pytest.raises(ValueError):
        report.landings[3] = 0
    with pytest.raises(SnlError):
        report.check("median")
    failed = crosscheck(
        JUNGLE, Rules.preset("plain"), 20_000, rng=1, exact_rules=Rules.preset("plain").replace(finish="bounce")
    )
    assert "FAILED" in str(failed) and "different board or rules" in str(failed)


def test_truncated_games_are_refused_not_judged():
    """Games stopped by max_turns would give an impossible z (-6309 at --max-turns 1): refuse instead."""
    with pytest.raises(GameError, match=r"reached max_turns=3 without finishing \(the guard was hit\)"):
        crosscheck(Board(2, {1: 2}), Rules.preset("plain"), 10_000, rng=1, max_turns=3)


def test_impossible_turn_counts_fail_outright():
    a = analyze(Board(2, {1: 2}), Rules.preset("plain"))  # turns ~ Geometric(1/3): 0 turns is impossible
    check = _turn_distribution(np.array([0, 1, 1, 2, 3]), a, 1e-6)
    assert check.p_value == 0 and check.statistic == np.inf and not check.passed


def test_turn_distribution_pools_cells_to_expected_five():
    a = analyze(Board(2, {1: 2}), Rules.preset("plain"))
    rng = np.random.default_rng(0)
    turns = rng.geometric(1 / 3, size=300)
    check = _turn_distribution(turns, a, 1e-6)
    # 300 games, P(T=k) = (2/3)^(k-1)/3: expected 100, 66.7, 44.4, 29.6, 19.8, 13.2, 8.8
    # and 5.9 for k = 1..8 (eight cells), 3.9 + 2.6 for k = 9, 10 (one cell), and the
    # rest, 300 (2/3)^10 = 5.2, in an open tail (a closed cell there would leave
    # a tail below 5): ten cells, nine degrees of freedom
    assert check.detail.endswith("on 9 degrees of freedom") and check.passed


def test_holm_adjustment():
    adjusted = _holm(np.array([0.01, 0.04, 0.03, 0.005]))
    assert adjusted.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"games": 100}, GameError),
        ({"batches": 5}, GameError),
        ({"alpha": 0}, SnlError),
        ({"alpha": 1.5}, SnlError),
        ({"exact": "model"}, SnlError),
        ({"exact_board": Board(50)}, SnlError),
        ({"exact": analyze(JUNGLE, Rules()), "exact_rules": Rules()}, SnlError),
        ({"rules": Rules(finish="bounce", faces=200)}, SnlError),
    ],
)
def test_bad_arguments_are_refused(kwargs, error):
    args = {"board": JUNGLE, "rules": Rules(), "games": 10_000, **kwargs}
    with pytest.raises(error):
        crosscheck(**args)


# ---------------------------------------------------------------- the power of each check, one at a time (from the planted-bug audit, benchmarks/mutation_audit.py)
@pytest.fixture(scope="module")
def jungle_plain():
    board, rules = Board.builtin(), Rules.preset("plain")
    return board, rules, analyze(board, rules)


GAMES = 40_000
# plain turns on the jungle board: sd about 52, so a standard error of 0.26 at GAMES;
# a mean 2.0 off is 7.7 standard errors, caught (|z| above about 4.9) for all but a few seeds in 1,000
SHIFT = 2.0
NAMES = ("mean turns", "mean rolls", "turn distribution", "landings")


def _only_fails(report, name: str) -> None:
    verdict = {c.name: c.passed for c in report.checks}
    assert verdict[name] is False, (name, verdict)
    assert all(verdict[n] for n in NAMES if n != name), (name, verdict)


def test_power_mean_turns_alone(jungle_plain):
    board, rules, a = jungle_plain
    wrong = dataclasses.replace(a, expected_turns=a.expected_turns + SHIFT)  # only the mean is wrong
    _only_fails(crosscheck(board, rules, GAMES, rng=11, exact=wrong), "mean turns")


def test_power_mean_rolls_alone(jungle_plain):
    board, rules, a = jungle_plain
    wrong = dataclasses.replace(a, expected_rolls=a.expected_rolls + SHIFT)
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

"""The report's spinner figure: game length against the spinner range, its summary section and its plot."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from _dice_brute import brute_expected_turns  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import snlmarkov as snl  # noqa: E402
from snlmarkov import Board, Die, Rules  # noqa: E402
from snlmarkov.errors import SnlError  # noqa: E402
from snlmarkov.plots import plot_spinner_ranges  # noqa: E402
from snlmarkov.report.spinner import SPINNER_RANGES, SpinnerSweep, compare_spinners, spinner_markdown  # noqa: E402

JUNGLE = Board.builtin()


@pytest.fixture(scope="module")
def sweep() -> SpinnerSweep:
    return compare_spinners()


def test_the_sweep_is_the_default_board_under_the_default_rules(sweep: SpinnerSweep) -> None:
    assert sweep.board == JUNGLE and sweep.rules == Rules() and sweep.ranges == tuple(range(2, 31)) == SPINNER_RANGES
    assert sweep.expected_turns[sweep.ranges.index(6)] == pytest.approx(55.614784, abs=1e-6)  # the six-faced die


def test_the_shortest_range_against_exact_fractions(sweep: SpinnerSweep) -> None:
    """The best range and its neighbours, each against the exact Fraction solver; the minimum is strict."""
    best = sweep.best_range
    exact = {
        n: snl.exact_expected_turns(JUNGLE, Rules().replace(die=Die.spinner(n))) for n in (best - 1, best, best + 1)
    }
    for n, value in exact.items():
        assert sweep.expected_turns[sweep.ranges.index(n)] == pytest.approx(float(value), rel=1e-12)
    assert exact[best] < exact[best - 1] and exact[best] < exact[best + 1]
    assert min(sweep.expected_turns) == sweep.best_expected_turns
    assert best == 17 and round(sweep.best_expected_turns, 4) == 35.1612


@pytest.mark.slow  # a brute force of every spinner; tests/test_dice_published.py keeps the exact figures fast
def test_a_spinner_under_plain_rules_against_the_brute_force() -> None:
    plain = compare_spinners(JUNGLE, Rules.preset("plain"), [5, 12])
    for n, mean in zip(plain.ranges, plain.expected_turns):
        assert mean == pytest.approx(
            float(brute_expected_turns(JUNGLE, Rules.preset("plain").replace(die=n))), rel=1e-12
        )


def test_summary_and_markdown_sections(tmp_path) -> None:
    from snlmarkov.report.core import write_report

    report = write_report(Board(30, {3: 22, 27: 1}, name="small"), tmp_path, games=1000, max_players=2)
    assert {"spinner.png", "spinner.svg"} <= set(report.files)
    data = json.loads((tmp_path / "summary.json").read_text())["spinner"]
    assert data["rules"] == "app" and data["ranges"] == list(SPINNER_RANGES)
    small = compare_spinners(Board(30, {3: 22, 27: 1}), Rules())
    assert data["best_range"] == small.best_range
    assert data["expected_turns"] == pytest.approx(list(small.expected_turns), rel=1e-11)
    text = (tmp_path / "summary.md").read_text()
    assert "## Spinner range (`app` rules" in text and f"the spinner 1..{small.best_range}, " in text
    assert spinner_markdown(data)[1] in text and "| 1..30 |" in text


def test_the_plot_draws_the_sweep(sweep: SpinnerSweep) -> None:
    ax = plot_spinner_ranges(sweep, Figure().subplots())
    x, y = ax.lines[0].get_data()
    assert list(x) == list(sweep.ranges) and list(y) == pytest.approx(list(sweep.expected_turns))
    texts = [t.get_text() for t in ax.texts]
    assert f"shortest: 1..{sweep.best_range}, {sweep.best_expected_turns:.2f} turns" in texts
    assert any(t.startswith("a six-faced die: 55.61") for t in texts)
    assert "jungle board, app rules" in ax.get_title()


def test_refusals() -> None:
    with pytest.raises(SnlError):
        compare_spinners(JUNGLE, Rules(), [])
    with pytest.raises(SnlError):
        compare_spinners(JUNGLE, Rules(), [1])
    with pytest.raises(SnlError):
        SpinnerSweep(JUNGLE, Rules(), (2, 3), (1.0,), (1.0,))

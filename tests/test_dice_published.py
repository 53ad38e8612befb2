"""The published figure for spinners: "Chutes and Ladders for the Impatient".

Source: Leslie A. Cheteyan, Stewart Hengeveld and Michael A. Jones, "Chutes and
Ladders for the Impatient", *The College Mathematics Journal* 42(1), January
2011, pp. 2-8 (George Pólya Award of the MAA, 2012). The paper models the
Milton Bradley game (exact finish: a spin that would pass square 100 does not
move the token; no extra spin) with a spinner ``1..n`` and finds, in the words
of the MAA's award summary (MathFest 2012 Prizes and Awards booklet), that "a
spinner with range 1 to 15 will provide the impatient player with the shortest
game on average (with an expected length of 25.81 turns)".

Our reading of that game: ``Board.builtin("milton_bradley")`` (docs/rules.md),
``Rules.preset("plain")`` (``finish="stay"``, no bonus roll, no cap) and
``Die.spinner(n)``. The paper's figures have two decimals; the exact value is
checked besides against the brute-force solver of ``tests/_dice_brute.py``
(Fractions, written from docs/rules.md), to the last digit.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from _dice_brute import brute_expected_turns

import snlmarkov as snl
from snlmarkov import Board, Die, Rules

#: The paper's answer: the spinner range with the shortest expected game, and that expected length.
PUBLISHED_BEST_RANGE = 15
PUBLISHED_EXPECTED_TURNS = 25.81  # two decimals, as published

BOARD = Board.builtin("milton_bradley")
PLAIN = Rules.preset("plain")


def _rules(n: int) -> Rules:
    return PLAIN.replace(die=Die.spinner(n))


def test_the_papers_game_is_our_plain_preset() -> None:
    assert PLAIN.finish == "stay" and not PLAIN.bonus_on_six and PLAIN.max_sixes is None
    assert BOARD.size == 100 and len(BOARD.ladders) == 9 and len(BOARD.snakes) == 10


def test_spinner_1_to_15_gives_the_shortest_game() -> None:
    exact = {n: snl.exact_expected_turns(BOARD, _rules(n)) for n in range(2, 31)}
    assert min(exact, key=exact.__getitem__) == PUBLISHED_BEST_RANGE
    # and no larger spinner does better (past 30 the games only grow longer; floats suffice to rank them)
    far = {n: snl.expected_turns(BOARD, _rules(n)) for n in range(31, 151, 7)}
    assert min(far.values()) > float(exact[PUBLISHED_BEST_RANGE]) + 1


def test_its_expected_length_is_the_published_one() -> None:
    exact = snl.exact_expected_turns(BOARD, _rules(PUBLISHED_BEST_RANGE))
    assert isinstance(exact, Fraction)
    assert round(float(exact), 2) == PUBLISHED_EXPECTED_TURNS
    assert abs(float(exact) - PUBLISHED_EXPECTED_TURNS) <= 0.005
    assert snl.analyze(BOARD, _rules(PUBLISHED_BEST_RANGE)).expected_turns == pytest.approx(
        PUBLISHED_EXPECTED_TURNS, abs=0.005
    )


def test_the_exact_figure_against_an_independent_brute_force() -> None:
    """The published two decimals, and beyond them an independent solver to the last digit."""
    rules = _rules(PUBLISHED_BEST_RANGE)
    brute = brute_expected_turns(BOARD, rules)
    assert snl.exact_expected_turns(BOARD, rules) == brute
    assert snl.analyze(BOARD, rules).expected_turns == pytest.approx(float(brute), rel=1e-12, abs=0)


@pytest.mark.parametrize("finish", ["bounce", "none"])
def test_the_other_finish_rules_do_not_give_the_papers_answer(finish: str) -> None:
    """Why the paper's rule is ``stay``: under the others the shortest range or its length differ."""
    figures = {n: snl.expected_turns(BOARD, _rules(n).replace(finish=finish)) for n in range(2, 31)}
    best = min(figures, key=figures.__getitem__)
    assert best != PUBLISHED_BEST_RANGE or round(figures[best], 2) != PUBLISHED_EXPECTED_TURNS

"""Game length against the range of a spinner: the report's ``spinner.png`` and its headline numbers.

:func:`compare_spinners` solves one board under one rule set with the spinner
``1..n`` (:meth:`snlmarkov.Die.spinner`) for every ``n`` of a range; every
rule that speaks of a six then means ``n``, the spinner's top value
(``docs/rules.md``, "Dice"). The question is the one of "Chutes and Ladders
for the Impatient" (College Mathematics Journal, 2011): which range gives the
shortest game.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..analysis.single import analyze
from ..board import Board
from ..dice import Die
from ..errors import SnlError
from ..rules import Rules

__all__ = []

#: The spinner ranges the report compares: ``1..n`` for ``n`` in 2..30.
SPINNER_RANGES = tuple(range(2, 31))


@dataclass(frozen=True)
class SpinnerSweep:
    """Exact game length for each spinner range ``1..n`` on one board under one rule set.

    Attributes
    ----------
    board : Board
    rules : Rules
        The rules the spinners replace the die of.
    ranges : tuple of int
        The tops ``n`` of the spinners, increasing.
    expected_turns, std_turns : tuple of float
        Mean and standard deviation of the number of turns, one per range (exact).
    """

    board: Board
    rules: Rules
    ranges: tuple[int, ...]
    expected_turns: tuple[float, ...]
    std_turns: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.ranges or not len(self.ranges) == len(self.expected_turns) == len(self.std_turns):
            raise SnlError("a spinner sweep needs one mean and one spread per range, and at least one range")

    @property
    def best_range(self) -> int:
        """The range with the shortest expected game (the smallest such range on a tie)."""
        return min(zip(self.expected_turns, self.ranges))[1]

    @property
    def best_expected_turns(self) -> float:
        """The expected number of turns with :attr:`best_range`."""
        return self.expected_turns[self.ranges.index(self.best_range)]


def compare_spinners(
    board: Board | None = None, rules: Rules | None = None, ranges: Iterable[int] = SPINNER_RANGES
) -> SpinnerSweep:
    """Exact expected game length with the spinner ``1..n`` for each ``n`` in ``ranges``.

    Parameters
    ----------
    board : Board, optional
        Defaults to the jungle board.
    rules : Rules, optional
        The other rule fields; defaults to the ``app`` preset. Their die is
        replaced by each spinner.
    ranges : iterable of int, default 2..30
        Spinner tops, each ``2..MAX_FACES``.

    Returns
    -------
    SpinnerSweep

    Raises
    ------
    SnlError
        For an empty range, a spinner the rules refuse, or a board some
        spinner cannot finish.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> sweep = compare_spinners(snl.Board.builtin("milton_bradley"), snl.Rules.preset("plain"), range(12, 19))
    >>> sweep.best_range, round(sweep.best_expected_turns, 2)
    (15, 25.81)
    """
    board = Board.builtin() if board is None else board
    rules = Rules.preset("app") if rules is None else rules
    tops = tuple(sorted(set(ranges)))
    runs = [analyze(board, rules.replace(die=Die.spinner(n))) for n in tops]
    return SpinnerSweep(
        board=board,
        rules=rules,
        ranges=tops,
        expected_turns=tuple(a.expected_turns for a in runs),
        std_turns=tuple(a.std_turns for a in runs),
    )


def spinner_summary(sweep: SpinnerSweep, rules_name: str) -> dict[str, Any]:
    """The sweep as the ``"spinner"`` section of ``summary.json``."""
    return {
        "rules": rules_name,
        "best_range": sweep.best_range,
        "best_expected_turns": sweep.best_expected_turns,
        "ranges": list(sweep.ranges),
        "expected_turns": list(sweep.expected_turns),
        "std_turns": list(sweep.std_turns),
    }


def spinner_markdown(section: Mapping[str, Any]) -> list[str]:
    """The ``"spinner"`` section of the summary as lines of ``summary.md``."""
    ranges, means, stds = section["ranges"], section["expected_turns"], section["std_turns"]
    lines = [
        "",
        f"## Spinner range (`{section['rules']}` rules, a spinner 1..n for the die)",
        "",
        f"Shortest expected game: the spinner 1..{section['best_range']}, "
        f"{section['best_expected_turns']:.4f} turns ([spinner.png](spinner.png)). "
        "Every rule's six is the spinner's top value.",
        "",
        "| spinner | expected turns | std |",
        "|---|---:|---:|",
    ]
    lines += [f"| 1..{n} | {m:.4f} | {s:.4f} |" for n, m, s in zip(ranges, means, stds)]
    return lines

"""Helpers shared by the figure modules: new axes, colours, labels."""

from __future__ import annotations

from typing import Any

__all__ = []

#: Colours of the Okabe-Ito palette (safe for colour-blind readers); ladders
#: and snakes are told apart by shape as well (rails and rungs; a wavy body
#: with a head).
LADDER_COLOUR = "#0072B2"
SNAKE_COLOUR = "#D55E00"
SERIES_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
#: Line styles and markers paired with the colours, so series stay apart in grey.
SERIES_STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), "-")
SERIES_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def new_axes(ax: Any, figsize: tuple[float, float]) -> Any:
    """``ax`` itself, or the axes of a new pyplot figure of ``figsize`` inches."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def describe_rules(rules: Any) -> str:
    """A short label for a rule set: its preset name, or ``"custom rules"``.

    Examples
    --------
    >>> from snlmarkov import Rules
    >>> describe_rules(Rules.preset("family")), describe_rules(Rules(finish="bounce"))
    ('family rules', 'custom rules')
    """
    name = rules.preset_name
    return f"{name} rules"


def board_label(board: Any) -> str:
    """A board's name for a figure title: control characters escaped, ``$`` kept literal.

    Matplotlib reads text between two ``$`` as mathematics and fails on
    names such as ``"$$"``; a board name is never mathematics.

    Examples
    --------
    >>> from snlmarkov import Board
    >>> print(board_label(Board(10, name="a$b$c")), board_label(Board(10)))
    a\\$b\\$c custom
    """
    from ..limits import clean_text

    return clean_text(board.name or "custom").replace("$", r"\$")

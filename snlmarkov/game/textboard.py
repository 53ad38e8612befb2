"""Plain-text drawing of a board and the tokens on it.

Squares are laid out as :meth:`Board.cell <snlmarkov.board.Board.cell>` says
(square 1 bottom-left, rows alternating direction, square 100 top-left on the
10x10 board). Each square shows its number, ``L<n>`` on the foot of a ladder
up to ``n`` or ``S<n>`` on the head of a snake down to ``n``, and the tokens
standing on it in brackets, one symbol per seat (``1``..``9``, then
``A``..``Z``, then ``a``..``z``): ``(13)`` holds the tokens of seats 1 and 3.
Tokens on square 0 are listed as off the board.

Examples
--------
>>> from snlmarkov import Board, render
>>> print(render(Board(9, {2: 7, 8: 4}), positions=(0, 7), seats=["Ann", "Bob"]))
+----+----+----+
|7   |8 S4|9   |
|(2) |    |    |
+----+----+----+
|6   |5   |4   |
|    |    |    |
+----+----+----+
|1   |2 L7|3   |
|    |    |    |
+----+----+----+
Ln: ladder up to n, Sn: snake down to n; (12): tokens of seats 1 and 2
1 Ann: off the board
2 Bob: square 7
Off the board: 1 Ann
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

from ..board import Board
from ..errors import GameError, LimitError
from ..limits import clean_text
from .events import _is_int

#: Largest board :func:`render` draws (a 100 x 100 grid).
MAX_DRAWN_SQUARES = 10_000

__all__ = ["render", "token_symbol"]

_SYMBOLS = string.digits[1:] + string.ascii_uppercase + string.ascii_lowercase


def token_symbol(seat: int) -> str:
    """The symbol drawing seat ``seat`` (0-based) on the board.

    Seats 0..8 are ``1``..``9``, then ``A``..``Z`` and ``a``..``z``; any
    further seat is drawn as its number in brackets.

    Examples
    --------
    >>> token_symbol(0), token_symbol(9), token_symbol(35), token_symbol(61)
    ('1', 'A', 'a', '[62]')
    """
    if not _is_int(seat) or seat < 0:
        raise GameError(f"a seat index must be an integer >= 0; got {seat!r}")
    return _SYMBOLS[seat] if seat < len(_SYMBOLS) else f"[{seat + 1}]"


def render(board: Board, positions: Sequence[int] = (), seats: Sequence[Any] | None = None) -> str:  # noqa: C901
    """Draw ``board`` with tokens on ``positions`` as plain text.

    Parameters
    ----------
    board : Board
        Any size; rows are ``board.width`` squares wide.
    positions : sequence of int, optional
        Each seat's square (0 = off the board, ``board.size`` = finished).
    seats : sequence of Seat or str, optional
        Names (or :class:`~snlmarkov.game.engine.Seat` objects, whose name and
        colour are shown) for the legend, one per position; by default
        ``Player 1``, ``Player 2``, ...

    Returns
    -------
    str
        The drawing (no trailing newline): the board, a legend for the jump
        marks, one line per seat with its symbol and square, and the tokens
        off the board.

    Raises
    ------
    GameError
        If a position is not a square ``0..size`` or ``seats`` does not match
        ``positions``.

    Examples
    --------
    >>> from snlmarkov import Board, Seat
    >>> text = render(Board.builtin(), positions=(100, 38), seats=[Seat("Ann", "red"), Seat("Bob", "blue")])
    >>> print(text.splitlines()[1])
    |100   |99 S27|98    |97    |96    |95 S75|94    |93 S73|92    |91    |
    >>> print(text.splitlines()[-1])
    2 Bob (blue): square 38
    """
    if not isinstance(board, Board):
        raise GameError(f"render needs a Board; got {type(board).__name__}")
    size = board.size
    if size > MAX_DRAWN_SQUARES:
        raise LimitError(
            f"the text board draws at most {MAX_DRAWN_SQUARES:,} squares; this board has {size:,} "
            "(the command line's play takes --no-board)"
        )
    positions = tuple(positions)
    for i, p in enumerate(positions):
        if not _is_int(p) or not 0 <= p <= size:
            raise GameError(f"position of seat {i} must be a square 0..{size}; got {p!r}")
    if seats is None:
        names: Sequence[str] = [f"Player {i + 1}" for i in range(len(positions))]
        labels: Sequence[str] = names
    else:
        seats = list(seats)
        if len(seats) != len(positions):
            raise GameError(f"render got {len(seats)} seats for {len(positions)} positions")
        names, labels = zip(*map(_name_and_label, seats)) if seats else ((), ())

    tokens: dict[int, str] = {}
    for i, p in enumerate(positions):
        if p:
            tokens[p] = tokens.get(p, "") + token_symbol(i)
    marks = {}
    for start, end in board.jumps.items():
        marks[start] = f"{start} {'L' if end > start else 'S'}{end}"
    cells: dict[tuple[int, int], tuple[str, str]] = {}
    for square in range(1, size + 1):
        here = tokens.get(square)
        cells[board.cell(square)] = (marks.get(square, str(square)), f"({here})" if here else "")
    width = max(len(text) for pair in cells.values() for text in pair)
    columns, rows = board.width, max(r for r, _ in cells) + 1

    rule = "+" + "+".join("-" * width for _ in range(columns)) + "+"
    lines = [rule]
    for row in reversed(range(rows)):
        for part in (0, 1):
            texts = [cells.get((row, col), ("", ""))[part] for col in range(columns)]
            lines.append("|" + "|".join(t.ljust(width) for t in texts) + "|")
        lines.append(rule)
    legend = ["Ln: ladder up to n, Sn: snake down to n"] if board.jumps else []
    if positions:
        legend.append("(12): tokens of seats 1 and 2")
    if legend:
        lines.append("; ".join(legend))
    for i, (label, p) in enumerate(zip(labels, positions)):
        where = "off the board" if p == 0 else "finished" if p == size else f"square {p}"
        lines.append(f"{token_symbol(i)} {label}: {where}")
    off = [f"{token_symbol(i)} {names[i]}" for i, p in enumerate(positions) if p == 0]
    if off:
        lines.append("Off the board: " + ", ".join(off))
    return "\n".join(lines)


def _name_and_label(seat: Any) -> tuple[str, str]:
    """A seat's name and legend text (``name (colour)`` for a Seat)."""
    name, colour = getattr(seat, "name", None), getattr(seat, "colour", None)
    if isinstance(name, str) and isinstance(colour, str):
        return clean_text(name), f"{clean_text(name)} ({clean_text(colour)})"
    if isinstance(seat, str) and seat.strip():
        return clean_text(seat.strip()), clean_text(seat.strip())
    raise GameError(f"a seat must be a Seat or a name; got {clean_text(repr(seat))[:60]}")

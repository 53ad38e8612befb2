"""Plain-text drawings of a board and the tokens on it.

Squares are laid out as :meth:`Board.cell <snlmarkov.board.Board.cell>` says
(square 1 bottom-left, rows alternating direction, square 100 top-left on the
10x10 board). Three drawings, from the largest:

- :func:`render`: a ruled grid, two lines a square: its number, ``L<n>`` on
  the foot of a ladder up to ``n`` or ``S<n>`` on the head of a snake down
  to ``n``, and the tokens standing on it in brackets, one symbol per seat
  (``1``..``9``, then ``A``..``Z``, then ``a``..``z``): ``(13)`` holds the
  tokens of seats 1 and 3; or, given ``labels``, ``[A][C]``. Tokens on
  square 0 are listed as off the board.
- :func:`rows`: one line per row, ``99v27`` for a snake's head, ``1^38``
  for a ladder's foot (:func:`jump_mark`), the tokens as ``[label]``.
- :func:`track`: one line of consecutive squares, as long as asked, from a
  given square on: it fits any width and any size of board.

The labels of :func:`token_labels` are distinct for every seat and readable
without colour (``[A]``, ``[P1]``): the browser game's scheme.

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
from collections.abc import Mapping, Sequence
from typing import Any

from ..board import Board
from ..errors import GameError, LimitError
from ..limits import clean_text
from .events import _is_int

#: Largest board :func:`render` draws (a 100 x 100 grid).
MAX_DRAWN_SQUARES = 10_000

__all__ = ["render"]

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


def token_labels(names: Sequence[str]) -> tuple[str, ...]:
    """A short label for each seat's token, distinct for every seat, from the seats' names.

    The scheme of the browser game: a name's initials (``Robot 1`` -> ``R1``,
    ``Ann`` -> ``A``); where two seats would share a label, the first two
    letters of the name (``Bea``, ``Bo`` -> ``Be``, ``Bo``), then the
    initial and the seat's number (``Ann``, ``Andrew`` -> ``A1``, ``A2``),
    then the seat's number.
    Only letters and digits of a name are used (anything else is skipped).

    Examples
    --------
    >>> token_labels(["Ann", "Bob"]), token_labels(["Player 1", "Player 2", "Robot 1"])
    (('A', 'B'), ('P1', 'P2', 'R1'))
    >>> token_labels(["Ann", "Andrew", "Bea", "Ben", "Bo"])
    ('A1', 'A2', 'B3', 'B4', 'Bo')
    """
    words = [["".join(c for c in w if c.isalnum()) for w in str(name).split()] for name in names]
    words = [[w for w in ws if w] for ws in words]
    initials = [("".join(w[0] for w in ws[:2]) if len(ws) > 1 else (ws[0][0] if ws else "?")).upper() for ws in words]
    out = list(initials)
    tries = (lambda i: "".join(words[i])[:2] or "?", lambda i: initials[i][0] + str(i + 1))
    for make in tries:
        clashing = [i for i, label in enumerate(out) if out.count(label) > 1 or label == "?"]
        for i in clashing:
            text = make(i)
            out[i] = text[0].upper() + text[1:]
    for i, label in enumerate(out):  # one seat at a time, as the browser does
        if out.count(label) > 1 or label == "?":
            out[i] = str(i + 1)
    while len(set(out)) < len(out):  # a seat's number that is also another seat's label: marked
        out = [label if out.count(label) == 1 else f"#{i + 1}" for i, label in enumerate(out)]
    return tuple(out)


def jump_mark(board: Board, square: int) -> str:
    """``^n`` on the foot of a ladder up to ``n``, ``vn`` on the head of a snake down to ``n``, else ``""``.

    Examples
    --------
    >>> board = Board(20, {3: 12, 19: 2})
    >>> jump_mark(board, 3), jump_mark(board, 19), jump_mark(board, 4)
    ('^12', 'v2', '')
    """
    end = board.jumps.get(square)
    if end is None:
        return ""
    return f"^{end}" if end > square else f"v{end}"


def rows(board: Board, positions: Sequence[int], labels: Sequence[str], *, gap: int = 2) -> list[str]:
    """The board in one line per row, top row first: ``38``, ``99v27``, ``14[A][B]`` in aligned columns.

    Each square is its number, its :func:`jump_mark` and the tokens standing
    on it (``[label]``, :func:`token_labels`); columns are as wide as their
    longest square and ``gap`` spaces apart. Tokens off the board (square 0)
    are not drawn.

    Examples
    --------
    >>> print("\\n".join(rows(Board(20, {3: 12, 19: 2}), (12, 0), ["A", "B"])))
    20  19v2   18    17  16
    11  12[A]  13    14  15
    10  9      8     7   6
    1   2      3^12  4   5
    """
    positions = check_positions(board, positions)
    marks = [f"[{label}]" for label in _check_labels(labels, len(positions))]
    here = _standing(positions)
    w = board.width
    count = (board.size + w - 1) // w
    table = [["" for _ in range(w)] for _ in range(count)]
    for sq in range(1, board.size + 1):
        row, col = board.cell(sq, w)
        table[row][col] = f"{sq}{jump_mark(board, sq)}" + "".join(marks[i] for i in here.get(sq, ()))
    widths = [max(len(table[r][c]) for r in range(count)) for c in range(w)]
    return [
        (" " * gap).join(t.ljust(widths[c]) for c, t in enumerate(table[r])).rstrip() for r in reversed(range(count))
    ]


def track(board: Board, positions: Sequence[int], labels: Sequence[str], *, width: int, focus: int) -> str:
    """One line of the board's squares in playing order, from square ``focus`` on, at most ``width`` long.

    Squares are drawn as in :func:`rows`, a space apart; as many as fit
    from ``focus`` (square 1 for 0) on, then, once the line reaches the
    last square, before it. ``<`` and ``>`` mark squares left out before and after.
    Only the squares shown are built, so any size of board can be drawn.

    Examples
    --------
    >>> board = Board(20, {3: 12, 19: 2})
    >>> track(board, (12, 0), ["A", "B"], width=30, focus=12)
    '< 12[A] 13 14 15 16 17 18 >'
    >>> track(board, (12, 0), ["A", "B"], width=30, focus=19)
    '< 13 14 15 16 17 18 19v2 20'
    """
    size = board.size
    if not _is_int(width) or width < 1:
        raise GameError(f"a track needs a width >= 1; got {width!r}")
    if not _is_int(focus) or not 0 <= focus <= size:
        raise GameError(f"focus must be a square 0..{size}; got {focus!r}")
    positions = check_positions(board, positions, whole=False)
    marks = [f"[{label}]" for label in _check_labels(labels, len(positions))]
    here = _standing(positions)

    def item(sq: int) -> str:
        return f"{sq}{jump_mark(board, sq)}" + "".join(marks[i] for i in here.get(sq, ()))

    lo = hi = max(focus, 1)
    shown = [item(lo)]
    used = len(shown[0])

    def fits(extra: int, lo: int, hi: int) -> bool:
        return used + 1 + extra + (2 if lo > 1 else 0) + (2 if hi < size else 0) <= width

    while hi < size and fits(len(nxt := item(hi + 1)), lo, hi + 1):
        hi += 1
        shown.append(nxt)
        used += 1 + len(nxt)
    while hi == size and lo > 1 and fits(len(prev := item(lo - 1)), lo - 1, hi):
        lo -= 1
        shown.insert(0, prev)
        used += 1 + len(prev)
    line = ("< " if lo > 1 else "") + " ".join(shown) + (" >" if hi < size else "")
    return line if len(line) <= width else shown[0][:width]  # not even the focus square fits: it, cut short


def _standing(positions: Sequence[int]) -> dict[int, list[int]]:
    """The seats standing on each square of the board (square 0, off the board, left out)."""
    here: dict[int, list[int]] = {}
    for seat, p in enumerate(positions):
        if p:
            here.setdefault(int(p), []).append(seat)
    return here


def _check_labels(labels: Sequence[str], count: int) -> list[str]:
    labels = list(labels)
    if len(labels) != count or not all(isinstance(x, str) and x and "[" not in x and "]" not in x for x in labels):
        raise GameError(f"labels must be {count} non-empty strings without brackets, one per seat")
    if len(set(labels)) < len(labels):
        raise GameError(f"labels must be distinct; got {labels}")
    return labels


def render(
    board: Board,
    positions: Sequence[int] = (),
    seats: Sequence[Any] | None = None,
    *,
    labels: Sequence[str] | None = None,
) -> str:
    """Draw ``board`` with tokens on ``positions`` as plain text.

    Parameters
    ----------
    board : Board
        Any size up to :data:`MAX_DRAWN_SQUARES` squares; rows are
        ``board.width`` squares wide.
    positions : sequence of int, optional
        Each seat's square (0 = off the board, ``board.size`` = finished).
    seats : sequence of Seat or str, optional
        Names (or :class:`~snlmarkov.game.engine.Seat` objects, whose name and
        colour are shown) for the legend, one per position; by default
        ``Player 1``, ``Player 2``, ...
    labels : sequence of str, optional
        A label per seat (:func:`token_labels`): each token is then drawn
        as its label in square brackets (``[A][B]``) rather than as a seat
        symbol (``(12)``).

    Returns
    -------
    str
        The drawing (no trailing newline): the board, a legend for the jump
        marks, one line per seat with its symbol and square, and the tokens
        off the board.

    Raises
    ------
    GameError
        If a position is not a square ``0..size`` or ``seats`` or ``labels``
        do not match ``positions``.
    LimitError
        If the board has more than :data:`MAX_DRAWN_SQUARES` squares.

    Examples
    --------
    >>> from snlmarkov import Board, Seat
    >>> text = render(Board.builtin(), positions=(100, 38), seats=[Seat("Ann", "red"), Seat("Bob", "blue")])
    >>> print(text.splitlines()[1])
    |100   |99 S27|98    |97    |96    |95 S75|94    |93 S73|92    |91    |
    >>> print(text.splitlines()[-1])
    2 Bob (blue): square 38
    >>> print(render(Board(4), (1, 4), ["Ann", "Bob"], labels=["A", "B"]))
    +---+---+
    |4  |3  |
    |[B]|   |
    +---+---+
    |1  |2  |
    |[A]|   |
    +---+---+
    [A]: a token (seats below)
    [A] Ann: square 1
    [B] Bob: finished
    """
    if not isinstance(board, Board):
        raise GameError(f"render needs a Board; got {type(board).__name__}")
    positions = check_positions(board, positions)
    if seats is None:
        names: Sequence[str] = [f"Player {i + 1}" for i in range(len(positions))]
        legends: Sequence[str] = names
    else:
        seats = list(seats)
        if len(seats) != len(positions):
            raise GameError(f"render got {len(seats)} seats for {len(positions)} positions")
        names, legends = zip(*map(_name_and_label, seats)) if seats else ((), ())
    if labels is None:
        marks = [token_symbol(i) for i in range(len(positions))]
        tokens = {sq: f"({''.join(marks[i] for i in seated)})" for sq, seated in _standing(positions).items()}
        key = "(12): tokens of seats 1 and 2"
    else:
        marks = [f"[{label}]" for label in _check_labels(labels, len(positions))]
        tokens = {sq: "".join(marks[i] for i in seated) for sq, seated in _standing(positions).items()}
        key = f"{marks[0]}: a token (seats below)" if marks else ""
    jumps = {start: f"{start} {'L' if end > start else 'S'}{end}" for start, end in board.jumps.items()}
    lines = grid(board, {sq: jumps.get(sq, str(sq)) for sq in range(1, board.size + 1)}, tokens)
    legend = ["Ln: ladder up to n, Sn: snake down to n"] if board.jumps else []
    if positions:
        legend.append(key)
    if legend:
        lines.append("; ".join(legend))
    size = board.size
    for mark, text, p in zip(marks, legends, positions):
        where = "off the board" if p == 0 else "finished" if p == size else f"square {p}"
        lines.append(f"{mark} {text}: {where}")
    off = [f"{marks[i]} {names[i]}" for i, p in enumerate(positions) if p == 0]
    if off:
        lines.append("Off the board: " + ", ".join(off))
    return "\n".join(lines)


def check_positions(board: Board, positions: Sequence[int], *, whole: bool = True) -> tuple[int, ...]:
    """``positions`` as a tuple, each a square ``0..board.size``; ``whole``: a board drawn whole.

    Raises
    ------
    GameError
        If a position is not a square ``0..size``.
    LimitError
        If ``whole`` and the board has more than :data:`MAX_DRAWN_SQUARES`
        squares (a :func:`track` draws only the squares it shows).
    """
    size = board.size
    if whole and size > MAX_DRAWN_SQUARES:
        raise LimitError(
            f"the text board draws at most {MAX_DRAWN_SQUARES:,} squares; this board has {size:,} "
            "(the command line's play takes --no-board)"
        )
    positions = tuple(positions)
    for i, p in enumerate(positions):
        if not _is_int(p) or not 0 <= p <= size:
            raise GameError(f"position of seat {i} must be a square 0..{size}; got {p!r}")
    return positions


def grid(board: Board, top: Mapping[int, str], bottom: Mapping[int, str]) -> list[str]:
    """The board's squares as a ruled grid, two lines a square: ``top[sq]`` over ``bottom[sq]``.

    Squares are placed by :meth:`Board.cell`; every cell is as wide as the
    longest text. Squares missing from a mapping are blank there.

    Examples
    --------
    >>> print("\\n".join(grid(Board(4), {1: "1", 2: "2", 3: "3^4", 4: "4"}, {2: "[A]"})))
    +---+---+
    |4  |3^4|
    |   |   |
    +---+---+
    |1  |2  |
    |   |[A]|
    +---+---+
    >>> print("\\n".join(grid(Board(4), {}, {})[:2]))
    +-+-+
    | | |
    """
    columns = board.width
    rows = (board.size + columns - 1) // columns
    cells: dict[tuple[int, int], tuple[str, str]] = {}
    for square in range(1, board.size + 1):
        cells[board.cell(square)] = (top.get(square, ""), bottom.get(square, ""))
    width = max((len(text) for pair in cells.values() for text in pair), default=1) or 1
    rule = "+" + "+".join("-" * width for _ in range(columns)) + "+"
    lines = [rule]
    for row in reversed(range(rows)):
        for part in (0, 1):
            texts = [cells.get((row, col), ("", ""))[part] for col in range(columns)]
            lines.append("|" + "|".join(t.ljust(width) for t in texts) + "|")
        lines.append(rule)
    return lines


def _name_and_label(seat: Any) -> tuple[str, str]:
    """A seat's name and legend text (``name (colour)`` for a Seat)."""
    name, colour = getattr(seat, "name", None), getattr(seat, "colour", None)
    if isinstance(name, str) and isinstance(colour, str):
        return clean_text(name), f"{clean_text(name)} ({clean_text(colour)})"
    if isinstance(seat, str) and seat.strip():
        return clean_text(seat.strip()), clean_text(seat.strip())
    raise GameError(f"a seat must be a Seat or a name; got {clean_text(repr(seat))[:60]}")

"""What ``snlmarkov play`` shows: one line per event, or a screen redrawn in place.

:class:`LineDisplay` prints the game as it goes (the board before every
turn unless ``--no-board``, the turn's events in words, each seat's chance
of winning after it); it is what pipes, scripts and tests see.
:class:`ScreenDisplay` is for a real terminal: the screen is cleared and
redrawn in place every turn, sized to the terminal
(:func:`shutil.get_terminal_size`): the full board when it fits, a compact
one-line-per-row board when it does not (an 80x24 terminal), each seat's
square and chance of winning beside its name, and the last few events.
Tokens and names are coloured with ANSI escapes unless ``NO_COLOR`` is set
(https://no-color.org) or the output is not a terminal.

Examples
--------
>>> from snlmarkov import Board, Seat
>>> print(compact_board(Board(20, {3: 12, 19: 2}), (12, 0), [Seat("Ann", "red"), Seat("Bob", "blue")], colour=False))
  20     19v2    18      17      16
  11      12   1  13      14      15
  10       9       8       7       6
   1       2       3^12    4       5
off the board: 2
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from typing import Any

from ..board import Board
from ..game.textboard import render, token_symbol

__all__ = ["LineDisplay", "ScreenDisplay", "compact_board", "use_colour", "paint", "ANSI_COLOURS"]

#: ANSI foreground codes for the seat colours players are given by default (and a few more).
ANSI_COLOURS = {
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "purple": "35",
    "magenta": "35",
    "cyan": "36",
    "orange": "38;5;208",
    "white": "37",
    "black": "30",
}

_CELL = 8  # characters per square in the compact board


def use_colour(stream: Any = None) -> bool:
    """Whether to colour ``stream`` (standard output by default): a terminal, and ``NO_COLOR`` unset.

    Examples
    --------
    >>> import io
    >>> use_colour(io.StringIO())
    False
    """
    stream = sys.stdout if stream is None else stream
    if os.environ.get("NO_COLOR", ""):
        return False
    if os.environ.get("TERM", "") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def paint(text: str, colour: str, on: bool, bold: bool = False) -> str:
    """``text`` in ``colour`` (a seat colour name) when ``on``; unknown colours stay plain.

    Examples
    --------
    >>> paint("Ann", "red", True), paint("Ann", "red", False), paint("Ann", "teal", True)
    ('\\x1b[31mAnn\\x1b[0m', 'Ann', 'Ann')
    """
    code = ANSI_COLOURS.get(colour.lower()) if on else None
    if not code:
        return f"\x1b[1m{text}\x1b[0m" if (on and bold) else text
    return f"\x1b[{'1;' if bold else ''}{code}m{text}\x1b[0m"


def compact_board(board: Board, positions: Sequence[int], seats: Sequence[Any], *, colour: bool) -> str:
    """The board in one line per row: each square's number, ``^n``/``vn`` for a ladder or snake, its tokens.

    Rows are drawn top first, as :meth:`Board.cell` lays them out. A square
    shows at most three tokens (``+`` when more stand there).
    """
    w = board.width
    rows = (board.size + w - 1) // w
    grid = [["" for _ in range(w)] for _ in range(rows)]
    here: dict[int, list[int]] = {}
    for seat, p in enumerate(positions):
        here.setdefault(int(p), []).append(seat)
    for sq in range(1, board.size + 1):
        row, col = board.cell(sq, w)
        dest = board.jumps.get(sq)
        mark = "" if dest is None else (f"^{dest}" if dest > sq else f"v{dest}")
        text = f"{sq:>4}{mark}"
        tokens = here.get(sq, [])
        shown = "".join(token_symbol(s) for s in tokens[:3]) + ("+" if len(tokens) > 3 else "")
        pad = max(_CELL - len(text) - len(shown), 1)
        if shown and colour:
            shown = "".join(paint(token_symbol(s), _colour_of(seats[s]), True, bold=True) for s in tokens[:3]) + (
                "+" if len(tokens) > 3 else ""
            )
        grid[row][col] = text + " " * pad + shown if shown else text.ljust(_CELL)
    lines = ["".join(cell if cell else " " * _CELL for cell in grid[r]).rstrip() for r in range(rows - 1, -1, -1)]
    off = [s for s, p in enumerate(positions) if p == 0]
    if off:
        lines.append("off the board: " + " ".join(paint(token_symbol(s), _colour_of(seats[s]), colour) for s in off))
    return "\n".join(lines)


def _colour_of(seat: Any) -> str:
    return str(getattr(seat, "colour", ""))


def _chance(p: float) -> str:
    """A chance for the screen: ``61.2%``, and ``<0.1%`` or ``>99.9%`` rather than a rounded 0 or 100."""
    if 0.0 < p < 0.0005:
        return "<0.1%"
    if 0.9995 < p < 1.0:
        return ">99.9%"
    return f"{p:.1%}"


class LineDisplay:
    """The game told line by line (pipes, scripts, tests): what ``play`` always printed, and the odds."""

    def __init__(self, board: Board, seats: Sequence[Any], *, draw_board: bool, odds: bool) -> None:
        self.board, self.seats, self.draw_board, self.odds = board, seats, draw_board, odds

    def header(self, lines: Sequence[str]) -> None:
        for line in lines:
            print(line)

    def before_turn(self, game: Any, chances: Any) -> None:
        if self.draw_board:
            print()
            print(render(self.board, game.positions, self.seats))

    def after_turn(self, heading: str, said: Sequence[str], game: Any, chances: Any) -> None:
        print(heading)
        for line in said:
            print(f"  {line}")
        if self.odds and chances is not None:
            print("Odds: " + ", ".join(f"{s.name} {_chance(p)}" for s, p in zip(self.seats, chances)))

    def finish(self, game: Any, closing: Sequence[str]) -> None:
        if self.draw_board:
            print()
            print(render(self.board, game.positions, self.seats))
        for line in closing:
            print(line)

    def prompt(self, text: str) -> str:
        return text


class ScreenDisplay:
    """The game on one screen, redrawn in place every turn (a real terminal)."""

    #: events kept on screen at most
    KEEP = 8

    def __init__(self, board: Board, seats: Sequence[Any], *, odds: bool, colour: bool) -> None:
        self.board, self.seats, self.odds, self.colour = board, seats, odds, colour
        self.title = ""
        self.events: list[str] = []
        self.chances: Any = None
        self.note = ""

    def header(self, lines: Sequence[str]) -> None:
        self.title = lines[0] if lines else ""
        self.note = lines[2] if len(lines) > 2 else ""

    def _board_text(self, game: Any, rows_free: int, width: int) -> str:
        full = render(self.board, game.positions, self.seats)
        lines = full.splitlines()
        if len(lines) <= rows_free and max(len(x) for x in lines) <= width:
            return full
        return compact_board(self.board, game.positions, self.seats, colour=self.colour)

    def draw(self, game: Any, status: str) -> None:
        size = shutil.get_terminal_size((80, 24))
        width, height = max(size.columns, 40), max(size.lines, 12)
        seat_lines = []
        for i, s in enumerate(self.seats):
            name = paint(f"{token_symbol(i)} {s.name}", s.colour, self.colour, bold=i == game.current_seat)
            where = game.positions[i]
            square = "home" if where == self.board.size else ("off" if where == 0 else f"on {where}")
            chance = ""
            if self.odds and self.chances is not None:
                chance = f"  win {_chance(float(self.chances[i])):>6}"
            mover = "  <- to move" if (i == game.current_seat and not game.is_over) else ""
            seat_lines.append(f"{name} ({s.colour}), {square}{chance}{mover}")
        fixed = 2 + len(seat_lines) + 1 + 3  # title, status, seats, blank, at least three events
        board = self._board_text(game, height - fixed, width)
        board_lines = board.splitlines()
        room = max(height - 1 - len(board_lines) - len(seat_lines) - 3, 1)
        shown = self.events[-min(room, self.KEEP) :]
        out = [paint(self.title[:width], "", self.colour, bold=True)]
        out += board_lines
        out += seat_lines
        out.append(status[:width])
        out += [e[:width] for e in shown]
        sys.stdout.write("\x1b[H\x1b[2J" + "\n".join(out) + "\n")
        sys.stdout.flush()

    def before_turn(self, game: Any, chances: Any) -> None:
        self.chances = chances
        self.draw(game, f"Turn {game.total_turns + 1}, round {game.round}; last events:")

    def after_turn(self, heading: str, said: Sequence[str], game: Any, chances: Any) -> None:
        self.chances = chances
        self.events.append(heading)
        self.events.extend(f"  {line}" for line in said)
        self.events = self.events[-self.KEEP :]

    def finish(self, game: Any, closing: Sequence[str]) -> None:
        self.draw(game, "Game over.")
        for line in closing:
            print(line)

    def prompt(self, text: str) -> str:
        return text

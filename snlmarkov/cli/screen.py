"""What ``snlmarkov play`` shows: one line per event, or a screen redrawn in place.

:class:`LineDisplay` prints the game as it goes (the board before every
turn unless ``--no-board``, the turn's events in words, each seat's chance
of winning after it); it is what pipes, scripts and tests see.
:class:`ScreenDisplay` is for a real terminal: the screen is cleared and
redrawn in place every turn, sized to the terminal as it is at that moment
(:func:`shutil.get_terminal_size`, read at every redraw, so a resized
window is followed). Its board takes the first of three layouts that fits
(:func:`board_layout`):

- ``grid``: the ruled grid, two lines a square (a tall terminal: 31 lines
  for a 10x10 board, with room left for the seats and three events);
- ``rows``: one line per row of the board (80x24 for a 10x10 board);
- ``track``: one line of the squares ahead of the seat to move (any size,
  40x12 and smaller; any board).

Under the board: a legend for the jump marks (``^38`` ladder up to 38,
``v27`` snake down to 27), why there are no odds if there are none, each
seat's token, square and chance of winning, the turn, the last events, and
then the prompt, shortened to the width. Every line fits the width; lines
that do not fit the height are dropped (the events first, then the title).
Tokens are drawn as ``[label]`` (:func:`~snlmarkov.game.textboard.token_labels`:
distinct for every seat, readable without colour) and coloured with ANSI
escapes unless ``NO_COLOR`` is set (https://no-color.org), ``--no-color``
is given or the output is not a terminal.

Examples
--------
>>> from snlmarkov import Board
>>> board = Board(20, {3: 12, 19: 2})
>>> board_layout(board, (12, 0), ["A", "B"], width=40, height=13, focus=1)[0]
'grid'
>>> print("\\n".join(board_layout(board, (12, 0), ["A", "B"], width=40, height=8, focus=1)[1]))
20  19v2   18    17  16
11  12[A]  13    14  15
10  9      8     7   6
1   2      3^12  4   5
>>> board_layout(board, (12, 0), ["A", "B"], width=20, height=3, focus=12)
('track', ['< 12[A] 13 14 15 >'])
>>> legend(board, 40)
'^12 ladder up to 12, v2 snake down to 2'
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from ..board import Board
from ..game.textboard import MAX_DRAWN_SQUARES, grid, jump_mark, render, rows, token_labels, track

__all__ = []

#: The board's layouts on the redrawn screen, largest first (see the module).
LAYOUTS = ("grid", "rows", "track")

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

#: Lines kept free for events under the ``grid`` layout (it is only worth it with room to spare).
_GRID_EVENTS = 3

_TOKEN = re.compile(r"\[([^\[\]\s]+)\]")


def board_layout(
    board: Board,
    positions: Sequence[int],
    labels: Sequence[str],
    *,
    width: int,
    height: int,
    focus: int,
    grid_spare: int = 0,
) -> tuple[str, list[str]]:
    """The first of :data:`LAYOUTS` whose lines fit ``width`` columns and ``height`` lines: its name and lines.

    ``grid`` must leave ``grid_spare`` of the ``height`` lines free; the
    ``track`` (from square ``focus``) always fits the width, in one line.
    Boards of more than :data:`~snlmarkov.game.textboard.MAX_DRAWN_SQUARES`
    squares are always drawn as a track.
    """
    columns = board.width
    count = (board.size + columns - 1) // columns
    digits = len(str(board.size))
    if board.size <= MAX_DRAWN_SQUARES:
        if 3 * count + 1 <= height - grid_spare and columns * (digits + 1) + 1 <= width:
            here: dict[int, str] = {}
            for seat, p in enumerate(positions):
                if p:
                    here[p] = here.get(p, "") + f"[{labels[seat]}]"
            top = {sq: f"{sq}{jump_mark(board, sq)}" for sq in range(1, board.size + 1)}
            lines = grid(board, top, here)
            if len(lines[0]) <= width:
                return "grid", lines
        if count <= height and columns * (digits + 1) - 1 <= width:
            for gap in (2, 1):
                lines = rows(board, positions, labels, gap=gap)
                if max(map(len, lines)) <= width:
                    return "rows", lines
    return "track", [track(board, positions, labels, width=width, focus=focus)]


def legend(board: Board, width: int) -> str:
    """A line that reads the jump marks, with the board's own marks as examples, at most ``width`` long.

    The examples are the ladder from the lowest square and the snake from
    the highest; ``""`` for a board without either.

    Examples
    --------
    >>> board = Board.builtin()
    >>> legend(board, 80), legend(board, 40), legend(board, 30), legend(board, 20), legend(Board(10), 80)
    ('^38 ladder up to 38, v27 snake down to 27', '^38: ladder to 38, v27: snake to 27', '^38 ladder, v27 snake', '^38 up, v27 down', '')
    """
    ladder = min(board.ladders.items(), default=None)
    snake = max(board.snakes.items(), default=None)
    forms = []
    for up, down in (
        ("{} ladder up to {}", "{} snake down to {}"),
        ("{}: ladder to {}", "{}: snake to {}"),
        ("{} ladder", "{} snake"),
        ("{} up", "{} down"),
    ):
        parts = []
        if ladder is not None:
            parts.append(up.format(f"^{ladder[1]}", ladder[1]))
        if snake is not None:
            parts.append(down.format(f"v{snake[1]}", snake[1]))
        forms.append(", ".join(parts))
    return next((f for f in forms if len(f) <= width), forms[-1][:width])


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


def _chance(p: float) -> str:
    """A chance for the screen: ``61.2%``, and ``<0.1%`` or ``>99.9%`` rather than a rounded 0 or 100."""
    if 0.0 < p < 0.0005:
        return "<0.1%"
    if 0.9995 < p < 1.0:
        return ">99.9%"
    return f"{p:.1%}"


def _shorter(title: str, width: int) -> str:
    """The title cut to ``width``, without its opening words if that is what it takes."""
    opening = "Snakes & Ladders on "
    if len(title) > width and title.startswith(opening):
        title = title[len(opening) :]
    return title[:width]


def _prompts(name: str, colour: str, mark: str) -> tuple[str, ...]:
    """The roll prompt, longest first."""
    return (
        f"{name} ({colour}), press Enter to roll (q to quit): ",
        f"{name}: Enter to roll, q to quit: ",
        f"{mark} Enter rolls, q quits: ",
        f"{mark} Enter: ",
    )


class LineDisplay:
    """The game told line by line (pipes, scripts, tests): what ``play`` always printed, and the odds."""

    def __init__(self, board: Board, seats: Sequence[Any], *, draw_board: bool, odds: bool) -> None:
        self.board, self.seats, self.draw_board, self.odds = board, seats, draw_board, odds
        self.labels = token_labels([s.name for s in seats])

    def header(self, lines: Sequence[str], note: Sequence[str] = ()) -> None:
        """Print ``lines`` and the longest form of ``note`` (why there are no odds), if any."""
        for line in [*lines, *note[:1]]:
            print(line)

    def _board(self, game: Any) -> None:
        print()
        print(render(self.board, game.positions, self.seats, labels=self.labels))

    def before_turn(self, game: Any, chances: Any) -> None:
        if self.draw_board:
            self._board(game)

    def after_turn(self, heading: str, said: Sequence[str], game: Any, chances: Any) -> None:
        print(heading)
        for line in said:
            print(f"  {line}")
        if self.odds and chances is not None:
            print("Odds: " + ", ".join(f"{s.name} {_chance(p)}" for s, p in zip(self.seats, chances)))

    def finish(self, game: Any, closing: Sequence[str]) -> None:
        if self.draw_board:
            self._board(game)
        for line in closing:
            print(line)

    def prompt(self, seat: int) -> str:
        """What seat ``seat`` is asked before its roll."""
        s = self.seats[seat]
        return _prompts(s.name, s.colour, f"[{self.labels[seat]}]")[0]


class ScreenDisplay:
    """The game on one screen, redrawn in place every turn to the terminal's size (see the module)."""

    #: event lines kept
    KEEP = 40

    def __init__(self, board: Board, seats: Sequence[Any], *, odds: bool, colour: bool) -> None:
        self.board, self.seats, self.odds, self.colour = board, seats, odds, colour
        self.labels = token_labels([s.name for s in seats])
        self.marks = [f"[{label}]" for label in self.labels]
        self._seat_of = {label: i for i, label in enumerate(self.labels)}
        self.title = ""
        self.events: list[str] = []
        self.chances: Any = None
        self.note: tuple[str, ...] = ()
        self.layout = ""  # the board's layout at the last redraw (one of LAYOUTS)

    def header(self, lines: Sequence[str], note: Sequence[str] = ()) -> None:
        """Keep the title (``lines[0]``) and the forms of ``note``, longest first, for every redraw."""
        self.title = lines[0] if lines else ""
        self.note = tuple(note)

    def _note(self, width: int, room: int) -> list[str]:
        """The longest form of the note that fits in ``room`` lines (at least one line of the shortest)."""
        for form in self.note:
            lines = textwrap.wrap(form, width)
            if len(lines) <= room:
                return lines
        return textwrap.wrap(self.note[-1], width)[: max(room, 1)] if self.note else []

    @staticmethod
    def size() -> tuple[int, int]:
        """Columns a line may fill (one short of the terminal's, so no line ends on its edge) and lines."""
        size = shutil.get_terminal_size((80, 24))
        return max(size.columns - 1, 10), max(size.lines, 3)

    def _seat_lines(self, game: Any, width: int) -> list[str]:
        """Each seat's token, name, square and chance, in the longest form that fits every seat's line."""
        forms = [self._seat_forms(game, i) for i in range(len(self.seats))]
        for k in range(len(forms[0]) - 1):
            if all(len(f[k]) <= width for f in forms):
                return [f[k] for f in forms]
        return [f[-1][:width] for f in forms]

    def _seat_forms(self, game: Any, i: int) -> tuple[str, ...]:
        s, mark = self.seats[i], self.marks[i]
        where = game.positions[i]
        square = "home" if where == self.board.size else ("off" if where == 0 else f"on {where}")
        chance = ""
        if self.odds and self.chances is not None:
            chance = _chance(float(self.chances[i]))
        moving = i == game.current_seat and not game.is_over
        return (
            f"{mark} {s.name} ({s.colour}), {square}"
            + (f"  win {chance:>6}" if chance else "")
            + ("  <- to move" if moving else ""),
            f"{mark} {s.name}, {square}" + (f" win {chance}" if chance else "") + (" <-" if moving else ""),
            f"{mark} {square}" + (f" {chance}" if chance else "") + (" <-" if moving else ""),
        )

    def _paint(self, line: str) -> str:
        """``line`` with every ``[label]`` token in its seat's colour (bold), when colouring."""
        if not self.colour:
            return line

        def token(m: re.Match[str]) -> str:
            seat = self._seat_of.get(m.group(1))
            if seat is None:
                return m.group(0)
            return paint(m.group(0), str(getattr(self.seats[seat], "colour", "")), True, bold=True)

        return _TOKEN.sub(token, line)

    def _painted_seat(self, game: Any, i: int, line: str) -> str:
        s, mark = self.seats[i], self.marks[i]
        if not self.colour:
            return line
        name = f"{mark} {s.name}"
        if line.startswith(name):
            return paint(name, s.colour, True, bold=i == game.current_seat and not game.is_over) + line[len(name) :]
        return self._paint(line)

    def _events(self, width: int, room: int) -> list[str]:
        """The last events that fit in ``room`` lines, each whole, wrapped to ``width``."""
        shown: list[str] = []
        for event in reversed(self.events):
            indent = " " * (len(event) - len(event.lstrip()) + 2)
            lines = [line.rstrip() for line in textwrap.wrap(event, width, subsequent_indent=indent)] or [""]
            if len(shown) + len(lines) > room:
                if not shown:  # not even the last one whole: its start
                    shown = lines[:room]
                break
            shown = lines + shown
        return shown

    def draw(self, game: Any, status: str, closing: Sequence[str] = ()) -> None:
        """Clear the terminal and draw the game as it stands, fitted to the terminal's size now."""
        width, height = self.size()
        seats = self._seat_lines(game, width)
        below = [legend(self.board, width)] if self.board.jumps else []
        tail = [line for text in closing for line in (textwrap.wrap(text, width) or [""])]
        room = height - 1 - len(below) - len(seats) - 1 - len(tail)  # 1: the prompt's line; 1: the status
        note = self._note(width, room - 1)  # a line left for the board
        below += note
        room -= len(note)
        events = 0 if closing else 1
        focus = game.winner if game.is_over else game.current_seat
        self.layout, board = board_layout(
            self.board,
            game.positions,
            self.labels,
            width=width,
            height=room - events,
            focus=game.positions[focus],
            grid_spare=1 + _GRID_EVENTS - events,
        )
        title = [_shorter(self.title, width)] if room - len(board) - events >= 1 else []
        shown = self._events(width, room - len(board) - len(title))
        out = [paint(t, "", self.colour, bold=True) for t in title]
        out += [self._paint(line) for line in board]
        out += [self._paint(line) for line in below]
        out += [self._painted_seat(game, i, line) for i, line in enumerate(seats)]
        out += [status[:width]] + shown + tail
        out = out[-(height - 1) :]  # a terminal too small for all of it keeps the lines nearest the prompt
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
        self.draw(game, "Game over.", closing)

    def prompt(self, seat: int) -> str:
        """What seat ``seat`` is asked before its roll: the longest form that fits the terminal's width."""
        s = self.seats[seat]
        width, _ = self.size()
        forms = _prompts(s.name, s.colour, self.marks[seat])
        return next((f for f in forms if len(f) < width), forms[-1])

"""The plain-text board drawing."""

from __future__ import annotations

import importlib
import re

import pytest

import snlmarkov
from snlmarkov import Board, GameError, Seat
from snlmarkov.game.textboard import render, token_symbol


def squares_drawn(text: str) -> list[list[int]]:
    """The square numbers of each drawn row, top row first."""
    rows = []
    lines = [line for line in text.splitlines() if line.startswith("|")]
    for label_line in lines[::2]:
        cells = label_line.strip("|").split("|")
        rows.append([int(c.split()[0]) if c.strip() else 0 for c in cells])
    return rows


def test_small_board_exactly():
    text = render(Board(9, {2: 7, 8: 4}), positions=(0, 7, 7, 9), seats=["Ann", "Bob", "Cy", "Di"])
    assert text == "\n".join(
        [
            "+----+----+----+",
            "|7   |8 S4|9   |",
            "|(23)|    |(4) |",
            "+----+----+----+",
            "|6   |5   |4   |",
            "|    |    |    |",
            "+----+----+----+",
            "|1   |2 L7|3   |",
            "|    |    |    |",
            "+----+----+----+",
            "Ln: ladder up to n, Sn: snake down to n; (12): tokens of seats 1 and 2",
            "1 Ann: off the board",
            "2 Bob: square 7",
            "3 Cy: square 7",
            "4 Di: finished",
            "Off the board: 1 Ann",
        ]
    )


def test_standard_board_layout():
    board = Board.builtin()
    rows = squares_drawn(render(board))
    assert len(rows) == 10
    assert rows[0] == list(range(100, 90, -1))  # square 100 top-left
    assert rows[-1] == list(range(1, 11))  # square 1 bottom-left
    assert rows[-2] == list(range(20, 10, -1))  # boustrophedon
    text = render(board)
    for start, end in board.ladders.items():
        assert f"|{start} L{end}" in text
    for start, end in board.snakes.items():
        assert f"|{start} S{end}" in text
    assert "|1 L38 |" in text and "|16 S6 |" in text and "|99 S27|" in text


def test_tokens_and_seats():
    seats = [Seat("Ann", "red"), Seat("Bob", "blue"), Seat("Cy", "green")]
    text = render(Board.builtin(), positions=(0, 38, 0), seats=seats)
    lines = text.splitlines()
    row_38 = lines.index(next(line for line in lines if "|38 " in line))
    column = lines[row_38].index("|38 ")
    assert lines[row_38 + 1][column:].startswith("|(2) ")
    assert "1 Ann (red): off the board" in lines and "2 Bob (blue): square 38" in lines
    assert lines[-1] == "Off the board: 1 Ann, 3 Cy"
    default = render(Board(9), positions=(3, 3))
    assert "|(12)|" in default and "1 Player 1: square 3" in default and "Off the board" not in default


@pytest.mark.parametrize("size", [2, 3, 10, 11, 99, 101, 1000])
def test_any_board_size(size):
    board = Board.random(size, rng=size) if size > 20 else Board(size)
    rows = squares_drawn(render(board, positions=(size, 1)))
    numbers = sorted(n for row in rows for n in row if n)
    assert numbers == list(range(1, size + 1))
    assert all(len(row) == board.width for row in rows)
    for square in (1, size, size // 2 or 1):
        r, c = board.cell(square)
        assert rows[len(rows) - 1 - r][c] == square
    widths = {len(line) for line in render(board).splitlines() if line[:1] in "+|"}
    assert len(widths) == 1


def test_many_tokens_widen_the_cells():
    text = render(Board(4), positions=tuple([2] * 12))
    assert "|(123456789ABC)|" in text


def test_token_symbols():
    assert [token_symbol(i) for i in (0, 8, 9, 34, 35, 60, 61)] == ["1", "9", "A", "Z", "a", "z", "[62]"]
    with pytest.raises(GameError):
        token_symbol(-1)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"positions": (11,)}, "square 0..10"),
        ({"positions": (-1,)}, "square 0..10"),
        ({"positions": (1.5,)}, "square 0..10"),
        ({"positions": (1, 2), "seats": ["Ann"]}, "1 seats for 2 positions"),
        ({"positions": (1,), "seats": [3]}, "Seat or a name"),
    ],
)
def test_bad_input(kwargs, message):
    with pytest.raises(GameError, match=message):
        render(Board(10), **kwargs)
    with pytest.raises(GameError, match="needs a Board"):
        render(10)


def test_exported_render_is_callable_in_any_import_order():
    # importing the submodule first must not shadow the exported function
    importlib.import_module("snlmarkov.game.textboard")
    assert snlmarkov.render(Board(4)) == render(Board(4))
    from snlmarkov import render as exported

    assert re.search(r"\|1 +\|2 +\|", exported(Board(4), positions=(1,)))

"""The plain-text board drawing."""

from __future__ import annotations

import importlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import snlmarkov
from snlmarkov import Board, GameError, Seat
from snlmarkov.game.textboard import jump_mark, render, rows, token_labels, token_symbol, track


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


# ----------------------------------------------------------------- token labels and the smaller drawings


@pytest.mark.parametrize(
    "names, labels",
    [
        (["Ann", "Bob"], ("A", "B")),
        (["Player 1", "Player 2"], ("P1", "P2")),
        (["Robot 1", "Robot 2", "Player 1"], ("R1", "R2", "P1")),  # as the browser game labels them
        (["Ann", "Amy", "Bob"], ("An", "Am", "B")),
        (["Ann", "Andrew"], ("A1", "A2")),
        (["Mary Jane", "Mark Jones", "M"], ("M1", "M2", "M")),
        (["ann", "bo b"], ("A", "BB")),
    ],
)
def test_token_labels_follow_the_browser_scheme(names, labels):
    assert token_labels(names) == labels


@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=8, unique=True))
@settings(max_examples=200, deadline=None, derandomize=True, database=None)
def test_token_labels_are_distinct_and_bracketable(names):
    labels = token_labels(names)
    assert len(labels) == len(names) and len(set(labels)) == len(labels)
    for label in labels:
        assert label and not any(c.isspace() or c in "[]" for c in label) and len(label) <= 4


def test_render_with_labels():
    text = render(Board(9, {2: 7, 8: 4}), positions=(0, 7, 7, 9), seats=["Ann", "Bob", "Cy", "Di"], labels="ABCD")
    assert text == "\n".join(
        [
            "+------+------+------+",
            "|7     |8 S4  |9     |",
            "|[B][C]|      |[D]   |",
            "+------+------+------+",
            "|6     |5     |4     |",
            "|      |      |      |",
            "+------+------+------+",
            "|1     |2 L7  |3     |",
            "|      |      |      |",
            "+------+------+------+",
            "Ln: ladder up to n, Sn: snake down to n; [A]: a token (seats below)",
            "[A] Ann: off the board",
            "[B] Bob: square 7",
            "[C] Cy: square 7",
            "[D] Di: finished",
            "Off the board: [A] Ann",
        ]
    )
    with pytest.raises(GameError, match="distinct"):
        render(Board(9), positions=(1, 2), labels=["A", "A"])
    with pytest.raises(GameError, match="without brackets"):
        render(Board(9), positions=(1, 2), labels=["A", "[B]"])
    with pytest.raises(GameError, match="2 non-empty strings"):
        render(Board(9), positions=(1, 2), labels=["A"])


@pytest.mark.parametrize("size", [2, 9, 20, 100, 101, 1000])
def test_rows_hold_every_square_once_where_the_board_puts_it(size):
    board = Board.random(size, rng=size) if size > 20 else Board(size, {2: size - 1} if size > 3 else {})
    positions = (1, size // 2, size // 2, 0)
    labels = ["A", "B", "C", "D"]
    lines = rows(board, positions, labels)
    assert len(lines) == (size + board.width - 1) // board.width
    # the columns line up: in every full row each square starts where its column starts
    starts = [[m.start() for m in re.finditer(r"\S+", line)] for line in lines]
    full = [x for x in starts if len(x) == board.width]
    assert full and all(x == full[0] for x in full)
    seen = {}
    for r, line in enumerate(lines):
        for m in re.finditer(r"\S+", line):
            number = int(re.match(r"\d+", m.group()).group())
            seen[number] = m.group()
            assert board.cell(number) == (len(lines) - 1 - r, full[0].index(m.start()))
    assert sorted(seen) == list(range(1, size + 1))
    for sq, cell in seen.items():
        tokens = "".join(f"[{labels[i]}]" for i, p in enumerate(positions) if p == sq)
        assert cell == f"{sq}{jump_mark(board, sq)}{tokens}"


def test_rows_of_the_jungle_board():
    table = [line.split() for line in rows(Board.builtin(), (0, 0), ["A", "B"])]
    assert table[0][:2] == ["100", "99v27"] and table[-1][0] == "1^38" and table[-1][3] == "4^14"
    assert [int(re.match(r"\d+", c).group()) for c in table[-2]] == list(range(20, 10, -1))


@pytest.mark.parametrize("width", [1, 5, 12, 20, 40, 80, 400])
@pytest.mark.parametrize("focus", [0, 1, 37, 95, 100])
def test_track_fits_and_runs_on_from_the_focus(width, focus):
    board = Board.builtin()
    positions = (focus, 40, 0)

    def item(sq):
        return f"{sq}{jump_mark(board, sq)}" + "".join(f"[{x}]" for x, p in zip("ABC", positions) if p == sq)

    line = track(board, positions, ["A", "B", "C"], width=width, focus=focus)
    assert len(line) <= width
    if width < 12:  # not even the focus square with its marks: it, cut short
        assert line == item(max(focus, 1))[:width]
        return
    items = line.removeprefix("< ").removesuffix(" >").split(" ")
    numbers = [int(re.match(r"\d+", x).group()) for x in items]
    assert numbers == list(range(numbers[0], numbers[-1] + 1))  # consecutive squares
    assert items == [item(sq) for sq in numbers]
    assert max(focus, 1) in numbers
    assert line.startswith("< ") == (numbers[0] > 1) and line.endswith(" >") == (numbers[-1] < 100)
    if numbers[-1] < 100:  # as many squares from the focus as fit
        assert numbers[0] == max(focus, 1)
        assert len(line) + 1 + len(item(numbers[-1] + 1)) > width
    elif numbers[0] > 1:  # then the squares before it
        assert len(line) + 1 + len(item(numbers[0] - 1)) > width


def test_track_of_a_board_too_large_to_draw_whole():
    board = Board(1_000_000, {10: 999_990})
    with pytest.raises(snlmarkov.LimitError):
        rows(board, (5,), ["A"])
    assert track(board, (10, 999_990), ["A", "B"], width=40, focus=999_990) == "< 999990[B] 999991 999992 999993 >"
    assert track(board, (10, 999_990), ["A", "B"], width=40, focus=10) == "< 10^999990[A] 11 12 13 14 15 16 17 18 >"
    with pytest.raises(GameError, match="focus"):
        track(board, (1,), ["A"], width=40, focus=-1)
    with pytest.raises(GameError, match="width"):
        track(board, (1,), ["A"], width=0, focus=1)
    with pytest.raises(GameError, match="square 0"):
        track(board, (1_000_001,), ["A"], width=40, focus=1)

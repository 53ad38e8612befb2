"""The redrawn screen of ``snlmarkov play`` (:class:`ScreenDisplay`) at many terminal sizes, without a terminal.

The terminal's size is what :func:`shutil.get_terminal_size` answers (patched here); every screen is read
back from standard output and checked: it fits (lines and columns), nothing the player needs is left out
(the board or track, the legend, each seat's line with its odds, the prompt), and the tokens are distinct
``[label]`` marks with or without colour. tests/test_cli_play_terminal.py does the same in a real terminal.
"""

from __future__ import annotations

import os
import re
import shutil

import pytest

from snlmarkov import Board, Game, Rules, Seat
from snlmarkov.cli.screen import LAYOUTS, ScreenDisplay, board_layout, legend
from snlmarkov.races.odds import Odds

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
CLEAR = "\x1b[H\x1b[2J"


def at_size(monkeypatch, width, height):
    monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=(80, 24): os.terminal_size((width, height)))


def chances(odds, game):
    return None if odds is None else odds.place_probability(game.state)[:, 0]


def play_screens(monkeypatch, capsys, width, height, *, colour, names=("Ann", "Bob"), rules=None, seed=29, odds=True):
    """Every screen of a whole automatic game at ``width`` x ``height``: (game, display, text, prompt) each."""
    board, rules = Board.builtin(), rules or Rules()
    seats = [Seat.default(i, name) for i, name in enumerate(names)]
    game = Game(board, rules, seats, rng=seed)
    solved = Odds(board, rules, players=len(seats)) if odds else None
    display = ScreenDisplay(board, seats, odds=odds, colour=colour)
    note = (
        ()
        if odds
        else ("No live odds: a reason that takes more than one line on a narrow terminal, to wrap.", "No odds: short")
    )
    display.header(["Snakes & Ladders on jungle, rules: app, mode: classic", "Seats: ..."], note=note)
    at_size(monkeypatch, width, height)
    capsys.readouterr()
    shots = []
    while not game.is_over:
        display.before_turn(game, chances(solved, game))
        shots.append((game.positions, game.current_seat, display.layout, capsys.readouterr().out))
        prompt = display.prompt(game.current_seat)
        assert len(prompt) < width
        events = game.take_turn()
        display.after_turn(
            f"Turn {game.total_turns}", [f"{e.describe(seats[e.seat].name)}." for e in events], game, None
        )
    display.finish(game, ["Story: a long closing line that has to be wrapped on a narrow terminal screen.", "Done."])
    shots.append((game.positions, None, display.layout, capsys.readouterr().out))
    return game, display, shots


def lines_of(out):
    assert out.startswith(CLEAR) and out.endswith("\n")
    return out[len(CLEAR) : -1].split("\n")


SIZES = [(w, h) for w in (20, 30, 40, 60, 80, 120) for h in (8, 12, 24, 45)]


@pytest.mark.parametrize("width, height", SIZES)
def test_every_screen_fits_and_keeps_what_the_player_needs(monkeypatch, capsys, width, height):
    game, display, shots = play_screens(monkeypatch, capsys, width, height, colour=False)
    for positions, mover, layout, out in shots:
        lines = lines_of(out)
        assert len(lines) <= height - 1  # and the prompt's line below
        assert all(len(line) < width for line in lines), "\n".join(lines)
        assert "\x1b" not in out[len(CLEAR) :]
        text = "\n".join(lines)
        if mover is None:  # the end: the closing lines first (on a small terminal they push the board out)
            assert lines[-1] == "Done." and lines[-2].endswith("screen.")
            if height < 24:
                continue
        # each seat's line, with its token and its odds (or "home"), in seat order
        seat_lines = [next(x for x in lines if x.startswith(f"[{label}] ")) for label in display.labels]
        assert [lines.index(x) for x in seat_lines] == sorted(lines.index(x) for x in seat_lines)
        if mover is not None:
            assert all(re.search(r"\d+\.\d%", x) or "<0.1%" in x or ">99.9%" in x for x in seat_lines), text
        if width > 21:
            assert legend(Board.builtin(), width - 1) in lines
        # the board as its layout draws it, whole, above the legend
        _, expected = board_layout(
            game.board,
            positions,
            display.labels,
            width=width - 1,
            height=height,
            focus=positions[mover if mover is not None else game.winner],
        )
        if layout == "track":
            assert any(line.split(" >")[0] in line for line in lines)
        board_lines = [x for x in lines if not x.startswith(("[", "^", "Turn", "Game", "Story", "Done", " "))]
        assert layout in LAYOUTS and board_lines
        # every token on the board drawn once, as its bracketed label
        on_board = [display.labels[i] for i, p in enumerate(positions) if p]
        drawn = re.findall(r"\[([^\]]+)\]", "\n".join(x for x in lines if not x.startswith(tuple(display.marks))))
        if layout != "track":
            assert sorted(drawn) == sorted(on_board)
    assert shots[-1][3].rstrip().endswith("Done.")


@pytest.mark.parametrize(
    "width, height, layout",
    [
        (80, 24, "rows"),
        (40, 12, "track"),
        (80, 45, "grid"),
        (120, 40, "grid"),
        (120, 39, "rows"),
        (60, 24, "rows"),
        (50, 24, "track"),
    ],
)
def test_the_layout_follows_the_size(monkeypatch, capsys, width, height, layout):
    _, _, shots = play_screens(monkeypatch, capsys, width, height, colour=False)
    assert shots[0][2] == layout
    first = lines_of(shots[0][3])
    title = "Snakes & Ladders on jungle, rules: app, mode: classic"
    assert first[0] == (title if len(title) < width else title.removeprefix("Snakes & Ladders on "))
    if layout == "rows":
        assert first[1].startswith("100 ") and "99v27" in first[1] and first[10].startswith("1^38 ")
    if layout == "grid":
        assert first[1].startswith("+-") and first[2].startswith("|100  |99v27|")
    if layout == "track":
        assert first[1].startswith("1^38 2 3 4^14")


def test_colour_changes_nothing_but_the_escapes(monkeypatch, capsys):
    for width, height in ((80, 24), (40, 12)):
        _, _, plain = play_screens(monkeypatch, capsys, width, height, colour=False)
        _, display, painted = play_screens(monkeypatch, capsys, width, height, colour=True)
        assert [ANSI.sub("", s[3][len(CLEAR) :]) for s in painted] == [s[3][len(CLEAR) :] for s in plain]
        assert "\x1b[1;31m[A]\x1b[0m" in painted[5][3] and "\x1b[1;34m[B]\x1b[0m" in painted[5][3]


def test_many_seats_and_a_note_on_a_small_terminal(monkeypatch, capsys):
    names = ("Ann", "Andrew", "Player 3", "Player 4", "Robot 1", "Robot 2")
    _, display, shots = play_screens(monkeypatch, capsys, 40, 12, colour=False, names=names, odds=False)
    assert display.labels == ("A1", "A2", "P3", "P4", "R1", "R2")
    for _, _, layout, out in shots[:-1]:
        lines = lines_of(out)
        assert layout == "track" and len(lines) <= 11 and all(len(x) < 40 for x in lines)
        assert lines[0].startswith(("1^38", "<")) and lines[1].startswith("^38")  # the track, the legend
        assert lines[2] == "No odds: short"  # the note's short form: the long one takes three lines
        assert [x.split()[0] for x in lines[3:9]] == [f"[{x}]" for x in display.labels]
        assert lines[9].startswith("Turn ")
    # with four seats, the long form
    _, display, shots = play_screens(monkeypatch, capsys, 40, 12, colour=False, names=names[:4], odds=False)
    assert lines_of(shots[0][3])[2:5] == [
        "No live odds: a reason that takes more",
        "than one line on a narrow terminal, to",
        "wrap.",
    ]


def test_the_prompt_shortens_with_the_width(monkeypatch):
    display = ScreenDisplay(Board.builtin(), [Seat("Ann", "red")], odds=False, colour=False)
    got = []
    for width in (80, 40, 30, 12):
        at_size(monkeypatch, width, 24)
        got.append(display.prompt(0))
    assert got == [
        "Ann (red), press Enter to roll (q to quit): ",
        "Ann: Enter to roll, q to quit: ",
        "[A] Enter rolls, q quits: ",
        "[A] Enter: ",
    ]

"""``snlmarkov play``: automatic and interactive games, and argument errors."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest

from snlmarkov import Board, Game, Rules, Seat
from snlmarkov.cli import main


class FakeTerminal(io.StringIO):
    """Standard input that claims to be a terminal, with scripted key presses."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def no_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))


def run(capsys, *argv):
    try:
        status = main(["play", *argv])
    except SystemExit as exc:  # refused by the argument parser: one line, status 2 as well
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def test_automatic_game_matches_the_engine(no_terminal, capsys):
    status, out, err = run(capsys, "--names", "Ann", "Bob", "Cy", "--seed", "42", "--board", "milton_bradley")
    assert status == 0 and err == ""
    record = Game(Board.builtin("milton_bradley"), Rules(), ["Ann", "Bob", "Cy"], rng=42).play()
    winner = record.seats[record.winner]
    lines = out.splitlines()
    assert lines[0] == "Snakes & Ladders on milton_bradley, rules: app, mode: classic"
    assert lines[1] == "Seats: [A] Ann (red, automatic), [B] Bob (blue, automatic), [C] Cy (green, automatic)"
    winner_turns = sum(t.seat == record.winner for t in record.turns())
    assert lines[-2] == f"{winner.name} ({winner.colour}) wins after {winner_turns} turns."
    assert lines[-1] == f"Finishing order: 1. {winner.name} ({winner.colour})"
    assert sum(line.startswith("Turn ") for line in lines) == len(record.turns())
    # the board is drawn before every turn and once at the end
    assert len(re.findall(r"^\|100 +\|", out, re.M)) == len(record.turns()) + 1
    for t in record.turns()[:5]:
        assert f"Turn {t.turn + 1}, round " in out


def test_words_for_each_event(no_terminal, capsys):
    status, out, _ = run(capsys, "--players", "1", "--seed", "3", "--no-board", "--rules", "family")
    assert status == 0 and "+---" not in out
    record = Game(Board.builtin(), Rules.preset("family"), 1, rng=3).play()
    said = [line.strip() for line in out.splitlines() if line.startswith("  ")]
    assert said == [f"{e.describe('Player 1')}." for e in record.log]


def test_last_one_standing_lists_every_place(no_terminal, capsys):
    status, out, _ = run(
        capsys,
        "--players",
        "3",
        "--mode",
        "last_one_standing",
        "--seed",
        "8",
        "--no-board",
        "--colours",
        "teal",
        "pink",
    )
    assert status == 0
    record = Game(
        Board.builtin(),
        Rules(),
        [Seat("Player 1", "teal"), Seat("Player 2", "pink"), "Player 3"],
        "last_one_standing",
        rng=8,
    ).play()
    order = ", ".join(
        f"{p}. {record.seats[i].name} ({record.seats[i].colour})" for p, i in enumerate(record.finishing_order, 1)
    )
    assert out.splitlines()[-1] == f"Finishing order: {order}"
    assert len(record.finishing_order) == 3


def test_rules_and_settings_are_used(no_terminal, capsys):
    status, out, _ = run(
        capsys, "--players", "2", "--seed", "5", "--no-board", "--set", "finish=bounce", "--set", "max_sixes=1"
    )
    assert status == 0 and out.startswith("Snakes & Ladders on jungle, rules: custom, mode: classic")
    record = Game(Board.builtin(), Rules(finish="bounce", max_sixes=1), 2, rng=5).play()
    assert out.count("\nTurn ") == len(record.turns())


def test_interactive_seats_press_enter_and_ai_seats_do_not(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", FakeTerminal("\n" * 2000))
    status, out, _ = run(capsys, "--names", "Ann", "Bob", "--ai", "1", "--seed", "2", "--no-board")
    assert status == 0
    record = Game(Board.builtin(), Rules(), ["Ann", "Bob"], rng=2).play()
    ann_turns = sum(t.seat == 0 for t in record.turns())
    assert out.count("Ann (red), press Enter to roll (q to quit): ") == ann_turns
    assert "Bob (blue), press Enter" not in out
    assert "Seats: [A] Ann (red), [B] Bob (blue, automatic)" in out


def test_ai_by_name(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", FakeTerminal("\n" * 2000))
    status, out, _ = run(capsys, "--names", "Ann", "Bob", "Cy", "--ai", "Ann", "Cy", "--seed", "2", "--no-board")
    assert status == 0
    assert "Seats: [A] Ann (red, automatic), [B] Bob (blue), [C] Cy (green, automatic)" in out
    assert "Bob (blue), press Enter" in out and "Ann (red), press Enter" not in out


@pytest.mark.parametrize("keys, newline", [("\nq\n", ""), ("\n", "\n")])
def test_quitting_or_end_of_input_abandons_the_game(monkeypatch, capsys, keys, newline):
    monkeypatch.setattr(sys, "stdin", FakeTerminal(keys))
    status, out, _ = run(capsys, "--players", "1", "--seed", "2")
    assert status == 1
    prompt = "Player 1 (red), press Enter to roll (q to quit): "
    assert out.endswith(f"{prompt}{newline}Player 1 quits: game abandoned after 1 turn.\n")
    assert out.count("|100   |") == 2  # drawn before each prompt


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--players", "7"], "players must be 1 to 6 (docs/rules.md), got 7"),
        (["--players", "0"], "players must be 1 to 6 (docs/rules.md), got 0"),
        (["--players", "3", "--names", "Ann", "Bob"], "does not match the 2 names"),
        (["--names", "Ann", "Ann"], "distinct"),
        (["--colours", "red", "blue", "green"], "3 colours given for 2 players"),
        (["--ai", "3"], "--ai 3: there are only 2 seats"),
        (["--names", "Ann", "Bob", "--ai", "Cy"], "no seat named 'Cy'"),
        (["--rules", "house"], "unknown rule preset"),
        (["--board", "chutes"], "unknown board"),
        (["--board", "missing.toml"], "cannot read board file"),
        (["--set", "finish=exact"], "finish must be one of"),
        (["--set", "bump_to=100", "--set", "bump=on"], "bump_to=100"),
        (["--max-turns", "0"], "expected a whole number >= 1, got 0"),
        (["--max-turns", "3", "--seed", "1"], "not over after 3 turns"),
    ],
)
def test_errors_are_one_line_with_status_2(no_terminal, capsys, argv, message):
    status, _, err = run(capsys, "--no-board", *argv)
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("snlmarkov play: error: ") and message in err


@pytest.mark.parametrize("argv", [["--mode", "battle"], ["--players", "two"], ["--seed", "x"], ["--bogus"]])
def test_argument_parsing_errors_exit_2(no_terminal, capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(["play", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err


def _python_m(*argv, **kwargs):
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "snlmarkov", "play", *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        **kwargs,
    )


def test_python_m_without_a_terminal_plays_automatically():
    done = _python_m("--players", "4", "--mode", "last_one_standing", "--seed", "7")
    assert done.returncode == 0 and done.stderr == ""
    record = Game(players=4, mode="last_one_standing", rng=7).play()
    order = ", ".join(
        f"{p}. {record.seats[i].name} ({record.seats[i].colour})" for p, i in enumerate(record.finishing_order, 1)
    )
    assert done.stdout.splitlines()[-1] == f"Finishing order: {order}"


def test_python_m_bad_arguments_give_one_line_and_no_traceback():
    for argv in (["--players", "9"], ["--mode", "x"]):
        done = _python_m(*argv)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


# ------------------------------------------------------------------------- odds under the bump rule


def test_a_bump_game_of_two_shows_its_exact_odds(no_terminal, capsys):
    from snlmarkov.races.odds import Odds

    status, out, _ = run(capsys, "--players", "2", "--set", "bump=on", "--seed", "4", "--no-board")
    assert status == 0
    rules = Rules(bump=True)
    game = Game(Board.builtin(), rules, 2, rng=4)
    odds = Odds(Board.builtin(), rules, players=2)
    shown = [line for line in out.splitlines() if line.startswith("Odds: ")]
    for line in shown[:3]:
        game.take_turn()
        p = odds.win_probability(game.state)
        assert line == f"Odds: Player 1 {p[0]:.1%}, Player 2 {p[1]:.1%}"
    assert len(shown) == len(Game(Board.builtin(), rules, 2, rng=4).play().turns())


def test_a_bump_game_of_four_says_why_it_has_no_odds(no_terminal, capsys):
    status, out, _ = run(capsys, "--players", "4", "--set", "bump=on", "--seed", "4", "--no-board")
    assert status == 0 and "Odds: " not in out
    assert out.splitlines()[2] == (
        "No live odds: with the bump rule exact odds are solved for up to 3 players (this game has 4)."
    )


def test_a_bump_game_too_slow_to_solve_says_so(no_terminal, capsys, monkeypatch):
    import snlmarkov.cli.play as play
    from snlmarkov.analysis import expected_turns
    from snlmarkov.races.core import joint_chain_states

    rules = Rules(bump=True)
    states, turns = joint_chain_states(Board.builtin(), rules, 2), expected_turns(Board.builtin(), rules)
    monkeypatch.setattr(play, "LIVE_BUMP_WORK", int(states * turns) - 1)
    status, out, _ = run(capsys, "--players", "2", "--set", "bump=on", "--seed", "4", "--no-board")
    assert status == 0 and "Odds: " not in out
    assert out.splitlines()[2] == (
        f"No live odds: with the bump rule they need the joint chain of {states:,} states, over about "
        f"{turns:.0f} turns a token: too slow to solve for a live game "
        f"(the terminal game solves up to {int(states * turns) - 1:,} state-turns)."
    )
    monkeypatch.setattr(play, "LIVE_BUMP_WORK", int(states * turns) + 1)
    status, out, _ = run(capsys, "--players", "2", "--set", "bump=on", "--seed", "4", "--no-board")
    assert status == 0 and "Odds: " in out and "No live odds" not in out


def test_tokens_are_labels_on_the_printed_board(no_terminal, capsys):
    status, out, _ = run(capsys, "--names", "Ann", "Andy", "Bob", "--seed", "3", "--max-turns", "10000")
    assert status == 0
    assert (
        out.splitlines()[1]
        == "Seats: [A1] Ann (red, automatic), [A2] Andy (blue, automatic), [B] Bob (green, automatic)"
    )
    boards = out.split("\n\n")[1:]
    assert len(boards) > 5 and all(
        "[A1] Ann (red): " in b and "[A2] Andy (blue): " in b and "[B] Bob (green): " in b for b in boards
    )
    cells = re.findall(r"\|(\[[^|]*?)\s*\|", out)  # the token lines of the grid: only bracketed labels
    assert cells and all(re.fullmatch(r"(\[(A1|A2|B)\])+", c) for c in cells)

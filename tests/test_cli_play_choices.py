"""``snlmarkov play`` under a choice rule: the human's choices, the automatic seats' strengths, the coach."""

from __future__ import annotations

import io
import re
import sys

import pytest

from snlmarkov.cli import main

SMALL = ["--board", "milton_bradley", "--no-board", "--lines"]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(monkeypatch, capsys, keys, *argv):
    monkeypatch.setattr(sys, "stdin", FakeTerminal(keys) if keys is not None else io.StringIO(""))
    try:
        status = main(["play", *argv])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def test_a_human_chooses_the_die_and_the_coach_judges_each_choice(monkeypatch, capsys):
    keys = "2\nx\nd4\n" + "1\n" * 400
    status, out, _ = run(monkeypatch, capsys, keys, "--names", "Ann", "Bob", "--ai", "1", "--seed", "3",
                         "--set", "choose_die=d4,d6", *SMALL)  # fmt: skip
    assert status == 0 and "No live odds under a choice rule" in out
    assert out.count("Ann on 0: which die? 1) d4  2) d6 (q to quit): ") == 1
    assert "press Enter" not in out  # the choice of die is the prompt
    assert "Not one of the choices: x" in out
    assert "  Ann chooses the d6." in out and "  Ann chooses the d4." in out
    asked = out.count("which die?") - out.count("Not one of the choices")
    assert out.count("Coach: ") == asked  # one line per choice made
    assert re.search(r"Coach: Picking the d\d on \d+ cost Ann [\d.]+ points of win chance \(best: the d\d\)", out)
    assert "Bob chooses the d" in out and "Bob (blue, automatic)" in out


def test_a_human_picks_the_value_and_no_coach_hides_the_line(monkeypatch, capsys):
    keys = ("\n" + "".join(f"{v}\n" for v in range(1, 7))) * 300
    status, out, _ = run(monkeypatch, capsys, keys, "--names", "Ann", "--seed", "5", "--set", "choose_move=2",
                         "--no-coach", *SMALL)  # fmt: skip
    assert status == 0 and "Coach:" not in out
    assert "Ann (red), press Enter to roll" in out and re.search(r"Ann on \d+ rolled \d and \d: which value", out)
    assert "Ann wins after" in out or "Ann (red) wins after" in out


def test_quitting_at_a_choice_abandons_the_game(monkeypatch, capsys):
    status, out, _ = run(monkeypatch, capsys, "q\n", "--players", "1", "--seed", "2", "--set", "choose_die=d4,d6",
                         *SMALL)  # fmt: skip
    assert status == 1 and "quits: game abandoned after 0 turns" in out


@pytest.mark.parametrize("strength", ["random", "greedy", "optimal"])
def test_automatic_seats_play_their_strength(monkeypatch, capsys, strength):
    status, out, _ = run(monkeypatch, capsys, None, "--players", "2", "--seed", "4", "--set", "choose_move=2",
                         "--ai-strength", strength, *SMALL)  # fmt: skip
    assert status == 0 and "moves by the" in out and "wins after" in out


def test_the_coach_speaks_in_expected_turns_for_one_token(monkeypatch, capsys):
    keys = "1\n" * 400
    status, out, _ = run(monkeypatch, capsys, keys, "--names", "Ann", "--seed", "3", "--set", "choose_die=d4,d6",
                         *SMALL)  # fmt: skip
    assert status == 0
    assert re.search(r"Coach: Picking the d4 on \d+ cost Ann \d\.\d+ expected turns \(best: the d6\)", out)
    assert "Coach: Ann: picking the d4 on" in out  # a best choice is said so

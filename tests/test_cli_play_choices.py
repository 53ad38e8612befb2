"""``snlmarkov play`` under a choice rule: the human's choices, the automatic seats' strengths, the coach."""

from __future__ import annotations

import io
import re
import sys

import pytest

from snlmarkov import Board, Rules
from snlmarkov.analysis.coach import Advice, Coach
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
    assert re.search(
        r"Coach: the d\d (was best here \(\d+\.\d\d turns to go\); the d\d cost \d\.\d\d turns|, the best)", out
    )
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


def test_the_coachs_figures_are_the_exact_values():
    board, rules = Board(10, {5: 9}), Rules(choose_die=(4, 6))
    coach = Coach(board, rules)
    q = coach.turns(0, 0, 0)
    assert q.min() == pytest.approx(coach.policy.value, abs=1e-12)  # the best choice from 0: the policy's value
    advice = coach.advise(square=0, sixes=0, origin=0, chosen=int(q.argmax()))
    assert advice.cost == pytest.approx(q.max() - q.min()) and not advice.is_best
    move = Coach(board, Rules(choose_move=2))
    a = move.advise(square=0, sixes=0, origin=0, chosen=1, rolled=(1, 5))  # the 5 climbs the ladder at 5 to 9
    assert a.best == 5 and a.cost > 0 and a.line(move.rules).startswith("Coach: the 5 was best here")
    assert a.best_turns == pytest.approx(1 + 36 / 11)  # from 9 only a 1 finishes: 11/36 a turn
    assert Advice("die", 0, 1, float("inf"), 3.0).line(rules).endswith("the d4 may never finish")

"""``snlmarkov simulate`` from the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from snlmarkov import Board, Rules
from snlmarkov.analysis.single import analyze
from snlmarkov.cli import main


def test_one_player_prints_simulated_beside_exact_with_a_verdict(capsys):
    assert main(["simulate", "--games", "40000", "--seed", "1", "--no-progress"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "simulate: 40,000 games, jungle board (100 squares), rules app, 1 player" in out
    exact = analyze(Board.builtin(), Rules())
    assert f"{exact.expected_turns:12.4f}" in out and f"{exact.expected_rolls:12.4f}" in out
    for name in ("mean turns", "mean rolls", "turn distribution", "landings"):
        assert f"[pass] {name}" in out
    assert out.rstrip().endswith("cross-check: PASSED at overall alpha 1e-05")
    assert captured.err == ""  # no progress bar


def test_progress_bar_is_on_by_default(capsys):
    assert main(["simulate", "--games", "2000", "--rules", "plain", "--seed", "2"]) == 0
    assert "2000/2000" in capsys.readouterr().err


def test_json_and_settings(capsys):
    argv = [
        "simulate",
        "--games",
        "20000",
        "--board",
        "milton_bradley",
        "--rules",
        "plain",
        "--set",
        "finish=bounce",
        "--seed",
        "4",
        "--no-progress",
        "--json",
    ]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] is True and data["games"] == 20000
    assert data["rules"]["finish"] == "bounce" and data["board"]["name"] == "milton_bradley"
    assert data["exact_mean_turns"] == pytest.approx(
        analyze(Board.builtin("milton_bradley"), Rules.preset("plain").replace(finish="bounce")).expected_turns,
        abs=1e-12,
    )


def test_several_players(capsys):
    argv = [
        "simulate",
        "--games",
        "5000",
        "--players",
        "3",
        "--mode",
        "last_one_standing",
        "--rules",
        "family",
        "--seed",
        "5",
        "--no-progress",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "3 players, last_one_standing" in out and "place 3" in out and "snlmarkov race" in out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1] in "123" and len(line.split()) == 4]
    assert len(rows) == 3
    assert sum(float(r[1]) for r in rows) == pytest.approx(1.0, abs=1e-9)


def test_several_players_json(capsys):
    assert main(["simulate", "--games", "3000", "--players", "2", "--seed", "6", "--no-progress", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["players"] == 2 and sum(data["win_frequencies"]) == pytest.approx(1.0, abs=1e-12)
    assert len(data["landings_per_game"]) == 101 and data["n_truncated"] == 0


def test_truncation_is_reported(capsys):
    # two turns per seat: nobody can finish the jungle board in fewer than three
    argv = ["simulate", "--games", "500", "--players", "2", "--max-turns", "4", "--seed", "1", "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "truncated at 4 turns: 500 games" in out and "note: 500 of 500 games reached max_turns=4" in out


def test_truncated_games_are_refused_by_the_cross_check(capsys):
    # every game is cut short: their lengths are unknown, so the check refuses to judge
    argv = ["simulate", "--games", "1000", "--max-turns", "5", "--seed", "1", "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "reached max_turns=5 without finishing (the guard was hit)" in err and len(err.splitlines()) == 1


def test_a_failed_cross_check_exits_1(capsys, monkeypatch):
    import snlmarkov.checks.crosschecking as cc

    real = cc.crosscheck

    def wrong_model(board, rules, *args, **kwargs):  # the exact side built for the bounce finish
        return real(board, rules, *args, exact_rules=rules.replace(finish="bounce"), **kwargs)

    monkeypatch.setattr(cc, "crosscheck", wrong_model)
    argv = ["simulate", "--games", "20000", "--rules", "plain", "--seed", "1", "--no-progress"]
    assert main(argv) == 1
    assert "cross-check: FAILED" in capsys.readouterr().out


def test_too_few_games_for_a_cross_check(capsys):
    assert main(["simulate", "--games", "50", "--seed", "1", "--no-progress"]) == 0
    assert "a cross-check needs at least 100 games" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["simulate", "--games", "0"], "--games: expected a whole number >= 1, got 0"),
        (["simulate", "--games", "100", "--players", "0"], "players must be 1 to 6 (docs/rules.md), got 0"),
        (["simulate", "--games", "100", "--rules", "house"], "unknown rule preset"),
        (["simulate", "--games", "100", "--board", "moon"], "unknown board 'moon'"),
        (["simulate", "--games", "100", "--set", "faces=1"], "faces must be an integer 2..1000"),
        (["simulate", "--games", "100", "--max-turns", "0"], "--max-turns: expected a whole number >= 1, got 0"),
    ],
)
def test_bad_arguments_one_line_exit_2(argv, message, capsys):
    try:
        status = main(argv + ["--no-progress"])
    except SystemExit as exc:  # refused by the argument parser
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_argparse_errors_exit_2():
    for argv in (["simulate"], ["simulate", "--games", "ten"], ["simulate", "--games", "10", "--mode", "x"]):
        done = subprocess.run([sys.executable, "-m", "snlmarkov", *argv], capture_output=True, text=True)
        assert done.returncode == 2 and "Traceback" not in done.stderr

"""The ``snlmarkov race`` command line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov.cli import main


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    try:
        status = main(["race", *argv])
    except SystemExit as exc:  # refused by the argument parser: one line, status 2 as well
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_last_one_standing_table_with_exact_figures(capsys: pytest.CaptureFixture) -> None:
    status, out, err = run(capsys, "--players", "3", "--mode", "last_one_standing", "--rules", "plain")
    assert status == 0 and err == ""
    exact = snl.race(snl.Board.builtin(), snl.Rules.preset("plain"), players=3, mode="last_one_standing")
    assert "method: exact: independent players" in out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("seat"))
    assert header.split() == ["seat", "win", "chance", "expected", "place", "1st", "2nd", "3rd"]
    rows = [line.split() for line in lines[lines.index(header) + 1 : lines.index(header) + 4]]
    for i, row in enumerate(rows):
        assert int(row[0]) == i + 1
        assert float(row[1]) == pytest.approx(exact.win_probability[i], abs=5e-5)
        assert float(row[2]) == pytest.approx(exact.expected_place[i], abs=5e-4)
        np.testing.assert_allclose([float(x) for x in row[3:]], exact.place_probability[i], atol=5e-5)
    rounds = next(line for line in lines if line.startswith("expected rounds"))
    assert float(rounds.split()[2]) == pytest.approx(exact.expected_rounds, abs=5e-5)
    turns = next(line for line in lines if line.startswith("expected total turns"))
    assert float(turns.split()[3]) == pytest.approx(exact.expected_total_turns, abs=5e-5)
    assert "going first:" in out


def test_the_issue_example_falls_back_to_monte_carlo(capsys: pytest.CaptureFixture) -> None:
    status, out, _ = run(
        capsys, "--players", "4", "--mode", "last_one_standing", "--rules", "family", "--games", "3000", "--seed", "3"
    )
    assert status == 0
    assert "method: Monte Carlo: 3000 games, 95% CI" in out
    assert out.count("±") >= 4 * 2 + 2  # win chance and expected place per seat, both lengths
    header = next(line for line in out.splitlines() if line.startswith("seat"))
    assert header.split()[-4:] == ["1st", "2nd", "3rd", "4th"]


def test_bump_with_three_players_is_exact(capsys: pytest.CaptureFixture) -> None:
    status, out, _ = run(capsys, "--players", "2", "--rules", "family")
    assert status == 0
    assert "method: exact: joint chain (bump)" in out
    assert "±" not in out
    assert "only the winner is placed" in out


def test_json_output_matches_the_api(capsys: pytest.CaptureFixture) -> None:
    status, out, _ = run(capsys, "--players", "2", "--board", "milton_bradley", "--set", "bonus_on_six=false", "--json")
    assert status == 0
    data = json.loads(out)
    exact = snl.race(snl.Board.builtin("milton_bradley"), snl.Rules(bonus_on_six=False), players=2)
    assert data["method"] == exact.method and data["exact"] is True
    assert [s["win_probability"] for s in data["seats"]] == pytest.approx(exact.win_probability.tolist(), abs=1e-15)
    assert data["expected_total_turns"] == pytest.approx(exact.expected_total_turns, abs=1e-12)
    assert data["rules"]["bonus_on_six"] is False


def test_monte_carlo_json_is_reproducible_with_a_seed(capsys: pytest.CaptureFixture) -> None:
    args = ("--players", "3", "--method", "monte_carlo", "--games", "500", "--seed", "9", "--json")
    _, first, _ = run(capsys, *args)
    _, second, _ = run(capsys, *args)
    assert first == second
    data = json.loads(first)
    assert data["exact"] is False and data["games"] == 500
    assert len(data["standard_error"]["win_probability"]) == 3


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--players", "7"], "players must be 1 to 6 (docs/rules.md), got 7"),
        (["--players", "0"], "players must be 1 to 6 (docs/rules.md), got 0"),
        (["--players", "2", "--rules", "house"], "unknown rule preset"),
        (["--board", "chutes"], "unknown board"),
        (["--set", "bump=maybe"], "bump takes true or false"),
        (["--games", "0", "--method", "monte_carlo"], "expected a whole number >= 1, got 0"),
        (["--players", "5", "--rules", "family", "--method", "exact"], "states, more than"),
        (["--board", "missing.toml"], "cannot read board file"),
    ],
)
def test_errors_are_one_line_and_exit_2(capsys: pytest.CaptureFixture, argv: list[str], message: str) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("snlmarkov race: error: ") and message in err


@pytest.mark.parametrize("argv", [["--players", "two"], ["--mode", "sudden_death"], ["--method", "guess"]])
def test_bad_arguments_are_refused_by_the_parser(capsys: pytest.CaptureFixture, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["race", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err


def test_runs_as_a_program() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "snlmarkov", "race", "--players", "2", "--board", "milton_bradley", "--rules", "plain"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "win chance" in done.stdout and "0.5079" in done.stdout

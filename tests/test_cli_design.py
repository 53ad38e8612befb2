"""``snlmarkov design`` and ``snlmarkov sweep`` from the command line."""

import csv
import subprocess
import sys

import pytest

import snlmarkov as snl
from snlmarkov.cli import main


def test_design_prints_the_board_and_writes_a_file_the_report_reads(tmp_path, capsys):
    out = tmp_path / "board.toml"
    argv = ["design", "--mean", "25", "--max-sd", "15", "--ladders", "8", "--snakes", "8", "--seed", "1"]
    assert main(argv + ["--out", str(out), "--budget", "4000", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "target met" in text and "ladders:" in text and str(out) in text
    board = snl.Board.from_file(out)
    assert len(board.ladders) == 8 and len(board.snakes) == 8
    a = snl.analyze(board)
    assert abs(a.expected_turns - 25) <= 0.5 and a.std_turns <= 15
    assert f"{a.expected_turns:.6g}" in text
    # what `snlmarkov report --board board.toml` does with it: read it through the CLI and draw it
    import argparse

    import matplotlib

    matplotlib.use("Agg")
    from snlmarkov.cli.common import board_from_args
    from snlmarkov.plots import draw_board

    assert board_from_args(argparse.Namespace(board=str(out))) == board
    ax = draw_board(board)
    assert ax.get_title().startswith("designed")


def test_design_that_cannot_be_met_says_so(tmp_path, capsys):
    out = tmp_path / "b.json"
    assert main(["design", "--mean", "2", "--ladders", "1", "--snakes", "1", "--budget", "400", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "target NOT met" in captured.out
    assert "design" in captured.err  # the progress bar
    assert snl.Board.from_file(out).size == 100


@pytest.mark.parametrize(
    "argv, message",
    [
        (["design"], "at least one goal"),
        (["design", "--mean", "abc"], "expected a number"),
        (["design", "--mean", "20", "--ladders", "-1"], "expected a whole number >= 0"),
        (["design", "--max-quantile", "0.9"], "expected KEY=VALUE"),
        (["design", "--mean", "20", "--out", "board.txt", "--budget", "200"], ".toml or .json"),
        (["design", "--mean", "20", "--must", "5", "--avoid", "5"], "both in must_jump and in no_jump"),
        (["sweep", "--metric", "nope"], "unknown metric"),
    ],
)
def test_bad_arguments_print_one_line_and_exit_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        code = main(argv)
        raise SystemExit(code)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_sweep_prints_a_table_and_writes_csv(tmp_path, capsys):
    out = tmp_path / "t.csv"
    argv = ["sweep", "--board", "jungle", "--board", "milton_bradley", "--rules", "app", "--rules", "plain"]
    assert main(argv + ["--players", "2", "--csv", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "first_seat_advantage" in text and "55.6148" in text
    rows = list(csv.DictReader(out.open()))
    assert [(r["board"], r["rules"]) for r in rows] == [
        ("jungle", "app"),
        ("jungle", "plain"),
        ("milton_bradley", "app"),
        ("milton_bradley", "plain"),
    ]


def test_help_stays_fast_and_light():
    code = "import sys; from snlmarkov.cli import build_parser; build_parser(); print('pandas' in sys.modules, 'snlmarkov.search.batch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]

"""``snlmarkov report`` on the command line."""

import json
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from snlmarkov import Board, Rules, analyze  # noqa: E402
from snlmarkov.cli import main  # noqa: E402
from snlmarkov.report.core import STAGES  # noqa: E402


@pytest.fixture(scope="module")
def small_board_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("boards") / "small.toml"
    path.write_text("size = 30\nladders = { 3 = 22, 11 = 26 }\nsnakes = { 27 = 1, 19 = 7 }\n")
    return path


def test_report_prints_headlines_progress_and_files(tmp_path, small_board_file, capsys):
    out = tmp_path / "figs"
    status = main(
        ["report", "--board", str(small_board_file), "--out", str(out), "--games", "2000", "--max-players", "3"]
    )
    assert status == 0
    captured = capsys.readouterr()
    progress = captured.err.splitlines()
    assert progress == [f"report [{i}/{len(STAGES)}] {name}" for i, name in enumerate(STAGES, start=1)]
    lines = captured.out.splitlines()
    assert lines[0] == "board small"
    board = Board.from_file(small_board_file)
    for name, line in zip(Rules.presets(), lines[2:5]):
        a = analyze(board, Rules.preset(name))
        assert line.split()[:4] == [name, f"{a.expected_turns:.2f}", f"{a.std_turns:.2f}", str(a.length.median())]
    assert lines[5].startswith("cross-check: ")
    assert lines[6].startswith(f"wrote 20 files to {out}: board.png, board.svg")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["board"]["name"] == "small"
    assert set(summary["race"]["classic"]) == {"2", "3"}
    assert summary["crosscheck"]["games"] == 2000


def test_quiet_prints_no_progress(tmp_path, small_board_file, capsys):
    argv = ["report", "--board", str(small_board_file), "--out", str(tmp_path), "--games", "1000", "--max-players", "2"]
    status = main(argv + ["--quiet", "--seed", "3"])
    assert status == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "app" in captured.out
    assert json.loads((tmp_path / "summary.json").read_text())["crosscheck"]["seed"] == 3


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--board", "nowhere"], "unknown board 'nowhere'"),
        (["--board", "missing.toml"], "cannot read board file"),
        (["--games", "10"], "games must be an integer >= 400"),
        (["--max-players", "9"], "max_players must be an integer in 2..6"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys, argv, message):
    status = main(["report", "--out", str(tmp_path / "x"), *argv])
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("snlmarkov report: error: ") and message in err[0]
    assert not (tmp_path / "x" / "summary.json").exists()


def test_argument_type_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "--games", "many"])
    assert exc.value.code == 2
    assert "expected a whole number written with the digits 0-9" in capsys.readouterr().err


def test_help_as_a_program():
    done = subprocess.run(
        [sys.executable, "-m", "snlmarkov", "report", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    for option in ("--board", "--out", "--games", "--seed", "--max-players", "--quiet"):
        assert option in done.stdout

"""``snlmarkov analyze`` from the command line."""

import json
import subprocess
import sys

import pytest

from snlmarkov.cli import main


def test_analyze_text(capsys):
    assert main(["analyze"]) == 0
    out = capsys.readouterr().out
    assert "expected turns" in out and "55.614784" in out and "jungle" in out


def test_analyze_json_with_settings(capsys):
    assert (
        main(
            [
                "analyze",
                "--board",
                "milton_bradley",
                "--rules",
                "app",
                "--set",
                "bonus_on_six=false",
                "--set",
                "max_sixes=none",
                "--json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["expected_turns"] == pytest.approx(39.225122308235, abs=1e-9)
    assert data["rules"]["bonus_on_six"] is False and data["rules"]["max_sixes"] is None


def test_analyze_board_file(tmp_path, capsys):
    f = tmp_path / "b.toml"
    f.write_text("size = 10\n[ladders]\n2 = 8\n")
    assert main(["analyze", "--board", str(f), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["board_size"] == 10


@pytest.mark.parametrize(
    "argv, message",
    [
        (["analyze", "--rules", "house"], "unknown rule preset"),
        (["analyze", "--board", "moon"], "unknown board 'moon'"),
        (["analyze", "--set", "finish=exact"], "finish must be one of"),
        (["analyze", "--set", "bump"], "--set takes FIELD=VALUE"),
        (["analyze", "--set", "faces=six"], "faces takes an integer"),
    ],
)
def test_bad_arguments_one_line_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_module_entry_point_and_argparse_errors():
    ok = subprocess.run([sys.executable, "-m", "snlmarkov", "analyze", "--json"], capture_output=True, text=True)
    assert ok.returncode == 0 and json.loads(ok.stdout)["board"] == "jungle"
    bad = subprocess.run([sys.executable, "-m", "snlmarkov", "analyze", "--bogus"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    unwin = subprocess.run(
        [sys.executable, "-m", "snlmarkov", "analyze", "--board", "nope.json"], capture_output=True, text=True
    )
    assert unwin.returncode == 2 and "nope.json" in unwin.stderr and "Traceback" not in unwin.stderr

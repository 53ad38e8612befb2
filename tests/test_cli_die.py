"""``--die`` on every command that takes rules, and ``--rules FILE``: parsed once, refused in one line."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

import snlmarkov as snl
from snlmarkov import Board, Die, Rules
from snlmarkov.cli import main
from snlmarkov.cli.common import DIE_HELP, die_arg
from snlmarkov.search.files import write_rules

#: every sub-command that takes rules (report analyses every preset itself and takes none)
RULE_COMMANDS = ("analyze", "race", "odds", "policy", "simulate", "play", "design", "sweep")


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    try:
        status = main(list(argv))
    except SystemExit as exc:  # refused by the argument parser (one line, status 2) or --help (0)
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    "text, die",
    [
        ("6", Die(6)),
        ("d6", Die(6)),
        ("D8", Die(8)),
        ("2d6", Die.sum_of(2, 6)),
        ("spinner:15", Die.spinner(15)),
        ("faces:2,2,2,2,6,6", Die.weighted({2: 2, 6: 1})),
        ("weights:1=1,2=1,6=4", Die.weighted({1: 1, 2: 1, 6: 4})),
        ("weights:1=1/3,2=2/3", Die.weighted({1: 1, 2: 2})),
        ("cowries:4", Die.weighted({1: 4, 2: 6, 3: 4, 4: 1, 8: 1})),
        ("cowries:4:0", Die.weighted({0: 1, 1: 4, 2: 6, 3: 4, 4: 1})),
        ("efron-a", Die.faces(0, 0, 4, 4, 4, 4)),
        ("efron-d", Die.faces(1, 1, 1, 5, 5, 5)),
        (" loaded-six ", Die.weighted({1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 3})),
    ],
)
def test_every_text_form_reads(text: str, die: Die) -> None:
    assert die_arg(text) == die


@pytest.mark.parametrize("command", RULE_COMMANDS)
def test_help_lists_the_die_forms(command: str, capsys: pytest.CaptureFixture) -> None:
    status, out, _ = run(capsys, command, "--help")
    flat = " ".join(out.split())  # argparse wraps the help text
    assert status == 0 and "--die DIE" in out
    for form in ("2d6", "spinner:15", "faces:2,2,2,2,6,6", "weights:1=1,2=1,6=4", "cowries:4", "efron-a"):
        assert form in flat, (command, form)
    assert "FILE" in out.split("--rules", 1)[1].split("\n", 1)[0]  # --rules PRESET|FILE


@pytest.mark.parametrize("command", RULE_COMMANDS)
@pytest.mark.parametrize(
    "die, message",
    [
        ("bogus", "cannot read the die 'bogus'"),
        ("d1", "faces must be an integer 2..1000; got 1"),
        ("faces:0,0", "only value is 0"),
        ("spinner:0", "a spinner's range must be an integer 2..1000; got 0"),
        ("weights:1=0", "must be positive"),
        ("weights:1=1/0", "cannot read the die"),
        ("weights:1=1,1=2", "die value 1 is given twice"),
        ("faces:" + ",".join(["1"] * 1001), "at most 1000 faces"),
        ("d" + "9" * 5000, "cannot read the die"),
        ("x" * 100_000, "at most 20000 characters"),
        ("\x1b[2J", "cannot read the die '\\x1b[2J'"),
        ("", "cannot read the die ''"),
    ],
)
def test_a_bad_die_is_one_line_exit_2(command: str, die: str, message: str, capsys: pytest.CaptureFixture) -> None:
    status, out, err = run(capsys, command, "--die", die)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err and "\x1b" not in err
    assert f"snlmarkov {command}: error: argument --die: " in err and message in err, err
    assert len(err) < 400


def test_the_die_changes_the_figures(capsys: pytest.CaptureFixture) -> None:
    """The Milton Bradley board, plain rules, a spinner 1..15: the CLI prints the exact solver's figure."""
    status, out, _ = run(
        capsys, "analyze", "--board", "milton_bradley", "--rules", "plain", "--die", "spinner:15", "--json"
    )
    assert status == 0
    data = json.loads(out)
    board, rules = Board.builtin("milton_bradley"), Rules.preset("plain").replace(die=Die.spinner(15))
    assert data["expected_turns"] == pytest.approx(float(snl.exact_expected_turns(board, rules)), abs=1e-9)
    assert round(data["expected_turns"], 2) == 25.81  # the published figure (tests/test_dice_published.py)
    assert data["rules"]["faces"] == 15 and "die" not in data["rules"]


def test_a_loaded_die_shows_in_the_rules(capsys: pytest.CaptureFixture) -> None:
    status, out, _ = run(capsys, "race", "--players", "2", "--rules", "plain", "--die", "cowries:4", "--json")
    assert status == 0
    data = json.loads(out)
    assert Rules(**data["rules"]).die == Die.cowries(4)
    assert data["rules"]["die"] == "weights:1=4,2=6,3=4,4=1,8=1"
    status, fair, _ = run(capsys, "race", "--players", "2", "--rules", "plain", "--json")
    assert json.loads(fair)["expected_rounds"] != pytest.approx(data["expected_rounds"], rel=1e-3)


def test_set_die_and_set_faces_match_die(capsys: pytest.CaptureFixture) -> None:
    outs = []
    for extra in (
        ["--die", "2d6"],
        ["--set", "die=2d6"],
        ["--set", "die=weights:2=1,3=2,4=3,5=4,6=5,7=6,8=5,9=4,10=3,11=2,12=1"],
    ):
        status, out, err = run(capsys, "analyze", "--rules", "plain", "--set", "finish=none", *extra, "--json")
        assert status == 0, err
        outs.append(json.loads(out)["expected_turns"])
    assert outs[0] == outs[1] == outs[2]
    status, four, _ = run(capsys, "analyze", "--rules", "plain", "--set", "faces=4", "--json")
    status2, d4, _ = run(capsys, "analyze", "--rules", "plain", "--die", "d4", "--json")
    assert status == status2 == 0 and json.loads(four) == json.loads(d4)


@pytest.mark.parametrize("extra", [["--set", "die=d4"], ["--set", "faces=4"]])
def test_the_die_given_twice_is_refused(extra: list[str], capsys: pytest.CaptureFixture) -> None:
    status, _, err = run(capsys, "analyze", "--die", "2d6", *extra)
    assert status == 2 and err.count("\n") == 1 and "give the die once" in err


def test_set_die_bad_text(capsys: pytest.CaptureFixture) -> None:
    status, _, err = run(capsys, "analyze", "--set", "die=spinner:1")
    assert status == 2 and err.count("\n") == 1 and "a spinner's range must be an integer 2..1000; got 1" in err


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_rules_file_with_a_die(suffix: str, tmp_path, capsys: pytest.CaptureFixture) -> None:
    rules = Rules.preset("plain").replace(die=Die.faces(2, 2, 2, 2, 6, 6), finish="none")
    path = write_rules(rules, tmp_path / f"house{suffix}")
    status, out, err = run(capsys, "analyze", "--rules", str(path), "--json")
    assert status == 0, err
    data = json.loads(out)
    assert Rules(**data["rules"]) == rules
    assert data["expected_turns"] == pytest.approx(float(snl.exact_expected_turns(Board.builtin(), rules)), abs=1e-9)
    # --die on top of a rule file replaces its die
    status, out, _ = run(capsys, "analyze", "--rules", str(path), "--die", "d6", "--json")
    assert status == 0 and Rules(**json.loads(out)["rules"]) == rules.replace(die=Die(6))


def test_rules_file_refusals_are_one_line(tmp_path, capsys: pytest.CaptureFixture) -> None:
    cases = {
        "die.toml": ('die = "spinner:1"\n', "die.toml: die: a spinner's range must be an integer 2..1000; got 1"),
        "type.toml": ("die = [1, 2]\n", "die must be a text form"),
        "key.toml": ("dice = 6\n", "unknown key(s) 'dice'"),
        "preset.toml": ('preset = "house"\n', "unknown rule preset 'house'"),
        "finish.json": ('{"finish": "exact"}', "finish must be one of"),
        "twice.json": ('{"die": "d4", "die": "d6"}', "the key 'die' is given twice"),
        "long.json": (json.dumps({"die": "faces:" + "1," * 30_000 + "1"}), "at most 20000 characters"),
        "both.json": ('{"die": "2d6", "faces": 4}', "give the die once"),
        "latin1.toml": (b'die = "\xe9"\n', "must be UTF-8"),
    }
    for name, (text, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        status, _, err = run(capsys, "analyze", "--rules", str(path))
        assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, (name, err)
        assert message in err, (name, err)
    status, _, err = run(capsys, "analyze", "--rules", str(tmp_path / "missing.toml"))
    assert status == 2 and "cannot read rule file" in err


def test_sweep_and_design_read_the_die() -> None:
    """The two commands with their own rule options build their rules through the same helpers."""
    from snlmarkov.cli import build_parser
    from snlmarkov.cli.common import base_rules, rule_changes, rules_from_args

    parser = build_parser()
    args = parser.parse_args(["design", "--mean", "30", "--rules", "plain", "--die", "spinner:12"])
    assert rules_from_args(args) == Rules.preset("plain").replace(die=12)
    args = parser.parse_args(["sweep", "--rules", "family", "--rules", "plain", "--die", "efron-c"])
    changes = rule_changes(args)
    assert [base_rules(r).replace(**changes).die for r in args.rules] == [Die.faces(2, 2, 2, 2, 6, 6)] * 2
    assert Die.faces(2, 2, 2, 2, 6, 6).mean == Fraction(10, 3)


def test_die_help_names_the_rules_page() -> None:
    assert "docs/rules.md" in DIE_HELP and "top value" in DIE_HELP


def test_simulate_draws_from_the_die(capsys: pytest.CaptureFixture) -> None:
    """The simulator's games against the exact chain for the same die (the cross-check's own verdict)."""
    status, out, err = run(capsys, "simulate", "--die", "cowries:4", "--games", "20000", "--seed", "1", "--no-progress")
    assert status == 0, err
    exact = float(snl.exact_expected_turns(Board.builtin(), Rules(die=Die.cowries(4))))
    row = next(line for line in out.splitlines() if line.startswith("mean turns"))
    assert float(row.split()[3]) == pytest.approx(exact, abs=5e-5)
    assert "cross-check: PASSED" in out

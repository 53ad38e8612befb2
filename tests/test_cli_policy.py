"""The ``snlmarkov policy`` command line: the policy as a board, the gain, JSON, the saved policy, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov.cli import main

BOARD = snl.Board(30, {3: 16, 27: 5}, name="small")
PLAIN = snl.Rules.preset("plain")
DICE = PLAIN.replace(choose_die=(4, 6))


@pytest.fixture(scope="module")
def board_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("policy") / "small.json"
    path.write_text(json.dumps(BOARD.to_dict()), encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    try:
        status = main(["policy", *argv])
    except SystemExit as exc:  # refused by the argument parser
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def grid_choices(out: str, board: snl.Board) -> dict[int, str]:
    """The choice printed under each square of the text board (blank squares left out)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("+"))
    rows = (board.size + board.width - 1) // board.width
    found: dict[int, str] = {}
    for r in range(rows):
        tops = lines[start + 1 + 3 * r].strip("|").split("|")
        bottoms = lines[start + 2 + 3 * r].strip("|").split("|")
        for top, bottom in zip(tops, bottoms):
            if bottom.strip():
                found[int(top.split()[0])] = bottom.strip()
    return found


def test_text_board_and_gain_under_choose_die(capsys, board_file):
    status, out, err = run(capsys, "--choose-die", "4,6", "--board", board_file, "--rules", "plain")
    assert status == 0 and err == ""
    policy = snl.optimal_policy(BOARD, DICE)
    table = policy.table
    want = {s: ("d4", "d6")[table.die_index(s, 0, s)] for s in range(1, BOARD.size) if s not in BOARD.jumps}
    assert grid_choices(out, BOARD) == want  # blank on the jumps' squares and on the finish
    assert f"off the board (square 0): {('d4', 'd6')[table.die_index(0, 0, 0)]}" in out
    fixed = {d: snl.analyze(BOARD, PLAIN.replace(die=snl.Die(d))).expected_turns for d in (4, 6)}
    gain = out[out.index("expected turns from square 0:") :].splitlines()
    assert gain[1].split()[0] == "optimal" and float(gain[1].split()[1]) == pytest.approx(policy.value, abs=5e-5)
    for line, (d, turns) in zip(gain[2:4], fixed.items()):
        name, die, value, extra, _ = line.split()
        assert (name, die) == ("always", f"d{d}") and float(value) == pytest.approx(turns, abs=5e-5)
        assert float(extra.strip("(")) == pytest.approx(turns - policy.value, abs=5e-5)
    assert "the choice matters most at the start of a turn on:" in out


def test_json_schema_and_figures(capsys, board_file):
    status, out, _ = run(capsys, "--choose-die", "d4", "6", "--board", board_file, "--rules", "plain", "--json")
    assert status == 0
    data = json.loads(out)
    assert set(data) == {
        "board",
        "squares",
        "rules",
        "base_rules",
        "choice",
        "options",
        "objective",
        "turns",
        "players",
        "seats",
        "gain",
        "within",
    }
    assert snl.Rules(**data["rules"]) == DICE
    assert (data["board"], data["squares"], data["choice"], data["options"]) == ("small", 30, "die", ["d4", "d6"])
    assert (data["objective"], data["turns"], data["players"], data["within"]) == ("turns", None, 1, None)
    (seat,) = data["seats"]
    assert len(seat["choices"]) == len(seat["orders"]) == len(seat["turn_begins"]) == BOARD.size
    assert all(order[0] == choice for order, choice in zip(seat["orders"], seat["choices"]))
    assert [s for s in range(BOARD.size) if not seat["turn_begins"][s]] == sorted(BOARD.jumps)
    gain = snl.policy_gain(BOARD, DICE)
    assert seat["value"] == pytest.approx(gain.optimal[0], abs=1e-9)
    assert data["gain"]["optimal"] == pytest.approx(gain.optimal[0], abs=1e-9)
    assert data["gain"]["against"] == pytest.approx({k: float(v[0]) for k, v in gain.against.items()}, abs=1e-9)
    np.testing.assert_allclose(data["gain"]["spread"], gain.spread, atol=1e-9)


def test_choose_move_text_and_json(capsys, board_file):
    status, out, _ = run(capsys, "--choose-move", "2", "--board", board_file, "--rules", "plain")
    assert status == 0
    assert "choose the move (2 of d6 rolled): 1, 2, 3, 4, 5, 6" in out
    assert "first die" in out and "greedy" in out
    status, out, _ = run(capsys, "--choose-move", "2", "--board", board_file, "--rules", "plain", "--json")
    data = json.loads(out)
    assert data["options"] == [1, 2, 3, 4, 5, 6] and set(data["gain"]["against"]) == {"first die", "greedy"}
    table = snl.optimal_policy(BOARD, PLAIN.replace(choose_move=2)).table
    assert data["seats"][0]["choices"][5] == 1 + int(np.argmin(table.order(5, 0, 5)))


def test_within_needs_turns_and_compares_the_chance(capsys, board_file):
    args = ("--choose-die", "4,6", "--board", board_file, "--rules", "plain", "--objective", "within")
    status, _, err = run(capsys, *args)
    assert status == 2 and "--objective within needs --turns" in err
    status, out, _ = run(capsys, *args, "--turns", "6", "--json")
    assert status == 0
    within = json.loads(out)["within"]
    assert within["optimal"] == pytest.approx(snl.optimal_policy(BOARD, DICE, objective="within", turns=6).value)
    d6 = snl.analyze(BOARD, PLAIN).length.cdf(6)
    assert within["against"]["always d6"] == pytest.approx(d6, abs=1e-12)
    assert within["optimal"] >= max(within["against"].values()) - 1e-12


def test_out_round_trips_through_policy_load_and_plot_writes(capsys, board_file, tmp_path: Path):
    out_file, png = tmp_path / "policy.json", tmp_path / "policy.png"
    argv = ("--choose-die", "4,6", "--board", board_file, "--rules", "plain", "--out", str(out_file))
    status, out, _ = run(capsys, *argv, "--plot", str(png))
    assert status == 0 and f"wrote {out_file}" in out and f"wrote {png}" in out
    loaded = snl.Policy.load(out_file)
    solved = snl.optimal_policy(BOARD, DICE)
    np.testing.assert_array_equal(loaded.table.ranks, solved.table.ranks)
    np.testing.assert_allclose(loaded.values, solved.values, atol=1e-12)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_rule_file_with_a_choice_needs_no_option(capsys, board_file, tmp_path: Path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"preset": "plain", "choose_die": ["d4", "d6"]}), encoding="utf-8")
    status, out, _ = run(capsys, "--board", board_file, "--rules", str(rules), "--json")
    assert status == 0 and snl.Rules(**json.loads(out)["rules"]) == DICE


def test_a_race_writes_one_policy_per_seat(capsys, board_file, tmp_path: Path, monkeypatch):
    import snlmarkov.races.policy as races_policy

    def fake(board, rules, *, objective, turns, players):  # the race solver's shape: one policy per seat
        assert (objective, turns, players) == ("win", None, 2)
        return (snl.Policy.fixed(4), snl.Policy.fixed(6))

    monkeypatch.setattr(races_policy, "optimal_policy", fake)
    argv = ("--choose-die", "4,6", "--board", board_file, "--rules", "plain", "--objective", "win")
    status, out, err = run(capsys, *argv, "--out", str(tmp_path / "p.json"))
    assert status == 0, err
    assert "seat 1 (the other tokens off the board):" in out and "seat 2" in out
    assert snl.Policy.load(tmp_path / "p-seat2.json").die == snl.Die(6)
    status, out, _ = run(capsys, *argv, "--json")
    seats = json.loads(out)["seats"]
    assert [set(s["choices"]) for s in seats] == [{"d4"}, {"d6"}]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "the rules give the mover no choice"),
        (("--choose-die", "x,6"), "cannot read the die 'x'"),
        (("--choose-die", "4,\x1b[2J"), "cannot read the die '\\x1b[2J'"),
        (("--choose-die", "4,d1"), "faces must be an integer 2..1000; got 1"),
        (("--choose-die", "4,faces:0,0"), "a die written with a colon is an argument of its own"),
        (("--choose-die", "4", "faces:0,0"), "only value is 0"),
        (("--choose-die", ",".join(["4"] * 100_000)), "at most 8 dice"),
        (("--choose-die", "4", "x" * 100_000), "at most 20000 characters"),
        (("--choose-die", *[str(k) for k in range(2, 11)]), "choose_die takes 2..8 dice"),
        (("--choose-die", "4"), "choose_die takes 2..8 dice"),
        (("--choose-die", "4,4"), "the same die twice"),
        (("--choose-die", "4,6", "--choose-move", "2"), "not allowed with argument"),
        (("--choose-move", "1"), "choose_move must be an integer 2..8"),
        (("--choose-move", "\u0662"), "digits 0-9"),
        (("--choose-die", "4,6", "--die", "8"), "drop --die"),
        (("--choose-die", "4,6", "--turns", "3"), "--turns is the horizon of --objective within"),
        (("--choose-die", "4,6", "--objective", "within", "--turns", "10001"), "--turns must be 1..10,000"),
        (("--choose-die", "4,6", "--objective", "within", "--turns", "0"), "expected a whole number >= 1"),
        (("--choose-die", "4,6", "--players", "2"), "needs --objective win"),
        (("--choose-die", "4,6", "--objective", "win", "--players", "1"), "--players must be 2 or more"),
        (("--choose-die", "4,6", "--objective", "best"), "invalid choice"),
        (("--choose-die", "4,6", "--out", "p.txt"), "must end in .json"),
        (("--choose-die", "4,6", "--out", "/nonexistent-dir/p.json"), "does not exist"),
        (("--choose-die", "4,6", "--plot", "/tmp"), "must end in .png or .svg or .pdf"),
        (("--choose-die", "4,6", "--plot", "/proc/p.png"), "cannot write there"),
    ],
)
def test_refusals_are_one_line_with_status_2(capsys, board_file, argv, message):
    status, out, err = run(capsys, "--board", board_file, *argv)
    assert status == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_objective_win_passes_the_solver_s_refusal_through(capsys, board_file, monkeypatch):
    import snlmarkov.races.policy as races_policy

    def refuse(*args, **kwargs):
        raise snl.PolicyError("objective='win' is not available yet")

    monkeypatch.setattr(races_policy, "optimal_policy", refuse)
    status, out, err = run(capsys, "--choose-die", "4,6", "--board", board_file, "--objective", "win")
    assert (status, out) == (2, "")
    assert err == "snlmarkov policy: error: objective='win' is not available yet\n"


def test_squares_that_never_finish_give_no_warning(capsys):
    """Under 2d6 (2 at least) one square of the jungle board never finishes: the spread there is 0, no numpy warning."""
    status, out, err = run(capsys, "--choose-move", "2", "--die", "2d6", "--json")
    assert status == 0 and err == ""
    gain = json.loads(out)["gain"]
    assert all(x is not None for x in gain["spread"]) and gain["optimal"] < gain["against"]["first die"]

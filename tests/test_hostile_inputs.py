"""Every hostile input of issue 9 gives a named SnlError (one line, exit 2 on the CLI) within seconds."""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from fractions import Fraction

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov import (
    Board,
    BoardError,
    Game,
    GameError,
    GameRecord,
    InputFileError,
    LimitError,
    RuleError,
    Rules,
    SeedError,
    SnlError,
    UnwinnableBoardError,
    verify_game,
)
from snlmarkov.checks.stored import check_stored
from snlmarkov.cli import main
from snlmarkov.limits import check_rng, clean_text, parse_ascii_int


def cli(capsys, *argv):
    """Run the CLI in-process: (status, stdout, stderr); argparse refusals count as status 2."""
    start = time.monotonic()
    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    assert time.monotonic() - start < 30, argv
    return status, out, err


def refused(capsys, *argv, message=""):
    status, out, err = cli(capsys, *argv)
    assert status == 2, (argv, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert message in err, err
    return err


# ------------------------------------------------------------------ files
@pytest.mark.parametrize(
    "raw, message",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "must be UTF-8 text"),
        ("size = 10\nname = 'caf\u00e9'\n".encode("latin-1"), "must be UTF-8 text"),
        ("size = 10\n".encode("utf-16"), "must be UTF-8 text"),
    ],
)
def test_board_file_that_is_not_utf8(tmp_path, raw, message):
    path = tmp_path / "b.toml"
    path.write_bytes(raw)
    with pytest.raises(BoardError, match=message):
        Board.from_file(path)


def test_utf8_bom_before_toml_is_accepted(tmp_path):
    path = tmp_path / "b.toml"
    path.write_bytes(b"\xef\xbb\xbfsize = 10\n[ladders]\n2 = 7\n")
    assert Board.from_file(path) == Board(10, {2: 7})


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_devices_are_refused_before_reading(target):
    start = time.monotonic()
    with pytest.raises(BoardError, match="must end in .toml or .json"):
        Board.from_file(target)
    assert time.monotonic() - start < 1


def test_device_with_a_board_suffix_is_refused(tmp_path):
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(BoardError, match="must be a regular file, not a character device"):
        Board.from_file(link)


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(BoardError, match=r"must be a regular file, not a FIFO"):
        Board.from_file(fifo)
    assert time.monotonic() - start < 1


def test_folder_is_refused(tmp_path):
    folder = tmp_path / "boards.json"
    folder.mkdir()
    with pytest.raises(BoardError, match="not a folder"):
        Board.from_file(folder)


def test_oversized_file_is_refused_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_text('{"size": 10}' + " " * 5000)
    monkeypatch.setenv("SNLMARKOV_MAX_FILE_BYTES", "4K")
    with pytest.raises(LimitError, match="over the limit of 4.0 KiB"):
        Board.from_file(path)
    monkeypatch.setenv("SNLMARKOV_MAX_FILE_BYTES", "1M")
    assert Board.from_file(path).size == 10


def test_bad_limit_setting_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("SNLMARKOV_MAX_FILE_BYTES", "lots")
    with pytest.raises(LimitError, match="SNLMARKOV_MAX_FILE_BYTES='lots'"):
        Board.from_file(tmp_path / "b.json")


@pytest.mark.parametrize("path", [None, 3, b"/tmp/b.json", ""])
def test_from_file_needs_a_path(path):
    with pytest.raises(BoardError):
        Board.from_file(path)


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"size": 100, "size": 50}', "the key 'size' is given twice"),
        ('{"size": 10, "ladders": {"2": 7, "2": 8}}', "the key '2' is given twice"),
        ('{"size": 10, "ladders": {"3_0": 7}}', "digits 0-9; got '3_0'"),
        ('{"size": 10, "ladders": {"\\u0663": 7}}', "digits 0-9"),
        ('{"size": 10, "ladders": {"\\uff13": 7}}', "digits 0-9"),
        ('{"size": 10, "ladders": {" 3 ": 7, "+4": 9}}', ""),  # spaces and a sign are plain digits: accepted
        ('{"size": 10.5}', "size must be an integer, got 10.5"),
        ('{"size": 10, "ladders": [[2, 7.5]]}', "must be an integer, got 7.5"),
        ('{"size": 1e300}', "over the limit"),
        ('{"size": 123456789012345678901234567890}', "over the limit"),
        ('{"size": NaN}', "size must be an integer"),
        ('{"size": 10, "name": "\\ud800"}', "lone surrogate"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
)
def test_json_board_files(tmp_path, text, message):
    path = tmp_path / "b.json"
    path.write_text(text, encoding="utf-8")
    if not message:
        assert Board.from_file(path).jumps == {3: 7, 4: 9}
        return
    with pytest.raises(SnlError, match=message.replace("[", r"\[").replace("(", r"\(")):
        Board.from_file(path)


def test_toml_keys_must_be_plain_digits(tmp_path):
    path = tmp_path / "b.toml"
    path.write_text('size = 10\n[ladders]\n"3_0" = 7\n', encoding="utf-8")
    with pytest.raises(BoardError, match="digits 0-9"):
        Board.from_file(path)


def test_board_name_none_and_surrogates():
    assert Board(10, name=None).name == ""
    with pytest.raises(BoardError, match="lone surrogate"):
        Board(10, name="a\udc80")
    with pytest.raises(BoardError, match="must be text"):
        Board(10, name=5)


def test_control_characters_are_escaped_when_printed(tmp_path, capsys):
    path = tmp_path / "evil.json"
    path.write_text(json.dumps({"size": 30, "name": "x\x1b[2J\x1b]0;pwned\x07\r", "ladders": {"3": 20}}))
    for argv in (["analyze"], ["play", "--seed", "1", "--no-board"], ["race"], ["simulate", "--games", "200"]):
        status, out, err = cli(capsys, *argv, "--board", str(path), *(["--no-progress"] if "simulate" in argv else []))
        assert status == 0, err
        assert "\x1b" not in out + err and "\x07" not in out + err and "\r" not in out
        assert "x\\x1b[2J" in out


def test_seat_names_are_escaped_when_printed(capsys):
    status, out, _ = cli(capsys, "play", "--names", "A\x1b[31m", "B", "--seed", "2")
    assert status == 0 and "\x1b" not in out and "A\\x1b[31m" in out


def test_board_path_without_suffix(capsys):
    refused(capsys, "analyze", "--board", "/dev/null", message="/dev/null: a board file must end in .toml or .json")
    refused(capsys, "analyze", "--board", "moon", message="unknown board 'moon'")


def test_clean_text_and_ascii_ints():
    assert clean_text("a\u202eb\x00") == "a\\u202eb\\x00"
    assert parse_ascii_int("-12", "x") == -12
    for bad in ("1_000", "\u0663", "\uff11", "1.0", "", "0x10", "9" * 41):
        with pytest.raises(LimitError):
            parse_ascii_int(bad, "x")


# ------------------------------------------------------------- sizes and budgets
@pytest.mark.parametrize("size", [10**12, 1e12, 1e300, 10**29 + 7])
def test_huge_board_sizes_are_refused_at_once(size):
    with pytest.raises(LimitError, match="SNLMARKOV_MAX_BOARD_SIZE"):
        Board(size)


def test_board_of_ten_million_squares_is_refused_by_memory_estimate_not_allocated():
    board = Board(10**7)
    start = time.monotonic()
    with pytest.raises(LimitError, match=r"analyze\(\) of a 10,000,000-square board .* SNLMARKOV_MEMORY_LIMIT"):
        snl.analyze(board)
    assert time.monotonic() - start < 2


def test_memory_limit_can_be_lowered_and_raised(monkeypatch):
    monkeypatch.setenv("SNLMARKOV_MEMORY_LIMIT", "1M")
    with pytest.raises(LimitError, match="over the limit of 1.0 MiB"):
        snl.turn_model(Board(20_000))
    monkeypatch.setenv("SNLMARKOV_MEMORY_LIMIT", "64M")
    assert snl.turn_model(Board(20_000)).n_states == 20_001


def test_exact_expected_turns_on_a_huge_board_is_refused_at_once():
    start = time.monotonic()
    with pytest.raises(LimitError, match="use expected_turns"):
        snl.exact_expected_turns(Board(10**8))
    with pytest.raises(LimitError, match="SNLMARKOV_MAX_BOARD_SIZE"):
        snl.exact_expected_turns(Board(10**12))
    assert time.monotonic() - start < 1


@pytest.mark.parametrize("faces", [100_000, 20_000, 1001])
def test_faces_bound(faces, capsys):
    with pytest.raises(RuleError, match=r"faces must be an integer 2\.\.1000"):
        Rules(faces=faces)
    refused(capsys, "analyze", "--set", f"faces={faces}", message="faces must be an integer 2..1000")


def test_numpy_integers_are_accepted_by_rules_like_board():
    r = Rules(faces=np.int64(6), max_sixes=np.int32(2), bump_to=np.uint8(3))
    assert r == Rules(bump_to=3) and type(r.faces) is int
    with pytest.raises(RuleError):
        Rules(faces=np.bool_(True))


@pytest.mark.parametrize("games", [10**9, 10**10])
def test_simulate_game_counts_over_the_memory_limit(games, capsys):
    start = time.monotonic()
    with pytest.raises(LimitError, match="SNLMARKOV_MEMORY_LIMIT"):
        snl.simulate(None, None, games, rng=1)
    refused(capsys, "simulate", "--games", str(games), "--no-progress", message="would need about")
    refused(capsys, "race", "--games", str(games), "--method", "monte_carlo", message="would need about")
    assert time.monotonic() - start < 10


def test_bump_to_beyond_the_board(capsys):
    with pytest.raises(RuleError, match="bump_to=5000 is not a square 1..99"):
        snl.analyze(None, Rules(bump_to=5000))
    refused(capsys, "analyze", "--set", "bump_to=5000", message="bump_to=5000")


# ------------------------------------------------------------- arguments and state
@pytest.mark.parametrize("rng", [-1, "abc", 1.5, True, np.bool_(False), [1, -2], object(), 2.0])
def test_every_rng_is_checked_in_one_place(rng):
    with pytest.raises(SeedError):
        check_rng(rng)
    with pytest.raises(SeedError):
        snl.simulate(None, None, 10, rng=rng)
    with pytest.raises(SeedError):
        Game(players=2, rng=rng)
    with pytest.raises(SeedError):
        Board.random(50, rng=rng)
    with pytest.raises(SeedError):
        snl.race(None, Rules.preset("plain"), players=2, rng=rng)  # exact: still checked
    with pytest.raises(SeedError):
        snl.analyze(Board(10)).length.rvs(3, rng=rng)


@pytest.mark.parametrize(
    "rng", [None, 0, 7, np.int64(3), np.random.SeedSequence(5), np.random.default_rng(1), [1, 2], np.random.PCG64(1)]
)
def test_good_rngs_are_accepted(rng):
    assert isinstance(check_rng(rng), np.random.Generator)


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--games", "200", "--no-progress"],
        ["play", "--no-board"],
        ["race"],
        ["race", "--method", "monte_carlo", "--games", "100"],
        ["report", "--out", "unused"],
    ],
)
def test_negative_seed_everywhere(argv, capsys):
    refused(capsys, *argv, "--seed", "-1", message="a seed must be a whole number >= 0")


@pytest.mark.parametrize("seed", ["1_0", "\u0661", "1.5", "one"])
def test_seed_digits(seed, capsys):
    refused(capsys, "simulate", "--games", "200", "--seed", seed, message="digits 0-9")


@pytest.mark.parametrize("out", ["/proc", "/sys", "/proc/figures", ""])
def test_report_out_unwritable_is_refused_before_work(out, capsys):
    start = time.monotonic()
    refused(capsys, "report", "--out", out, "--quiet", message="--out")
    assert time.monotonic() - start < 5


def test_report_out_that_is_a_file(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("x")
    refused(capsys, "report", "--out", str(target), "--quiet", message="cannot write files there")


def test_max_turns_guard_is_reported_not_fed_to_the_cross_check(capsys):
    err = refused(capsys, "simulate", "--games", "2000", "--max-turns", "1", "--seed", "1", "--no-progress")
    assert "the guard was hit" in err and "6309" not in err


@pytest.mark.parametrize("command", ["simulate", "race", "play"])
@pytest.mark.parametrize("players", ["0", "7", "100"])
def test_one_players_rule_for_every_command(command, players, capsys):
    extra = ["--games", "200", "--no-progress"] if command == "simulate" else []
    refused(capsys, command, "--players", players, *extra, message="players must be 1 to 6 (docs/rules.md)")


def test_play_on_an_unwinnable_board_is_refused_at_once(tmp_path, capsys):
    path = tmp_path / "trap.json"
    path.write_text(json.dumps({"size": 9, "ladders": {"2": 9}, "snakes": {"7": 5, "8": 6}}))
    start = time.monotonic()
    refused(capsys, "play", "--board", str(path), "--set", "faces=2", "--rules", "plain", message="cannot be reached")
    assert time.monotonic() - start < 2
    with pytest.raises(UnwinnableBoardError):
        snl.simulate(Board.from_file(path), Rules.preset("plain").replace(faces=2), 100)


def test_ctrl_c_gives_no_traceback(capsys, monkeypatch):
    import snlmarkov.cli as cli_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_module, "build_parser", interrupted)  # Ctrl-C while the sub-commands import
    assert cli_module.main(["analyze"]) == 130
    err = capsys.readouterr().err
    assert err == "snlmarkov: interrupted\n"


def test_memory_error_is_one_line(capsys, monkeypatch):
    import snlmarkov.analysis.single as single  # cli/analyze.py imports analyze from here inside run

    def oom(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(single, "analyze", oom)
    refused(capsys, "analyze", message="out of memory")


# ------------------------------------------------------------- the Python API
def test_length_distribution_inputs():
    d = snl.analyze(Board(10)).length
    with pytest.raises(SnlError, match="not NaN"):
        d.ppf(math.nan)
    with pytest.raises(SnlError, match="takes numbers"):
        d.pmf("a")
    with pytest.raises(SnlError, match="takes numbers"):
        d.cdf(object())
    assert d.pmf(2.5) == 0.0 and d.pmf(math.inf) == 0.0 and d.cdf(math.inf) == pytest.approx(1 - d.tail_mass)


def test_verify_game_on_an_empty_log():
    with pytest.raises(GameError, match="empty"):
        verify_game(Game(players=2, dice=[]).record())


def test_exact_path_returns_fractions():
    value = snl.exact_expected_turns(Board(3), Rules.preset("plain").replace(faces=2))
    assert isinstance(value, Fraction) and value == Fraction(3)


# ------------------------------------------------------------- records
def test_record_from_json_refuses_deep_nesting_and_huge_input(monkeypatch):
    with pytest.raises(GameError, match="nested too deeply"):
        GameRecord.from_json("[" * 100_000 + "]" * 100_000)
    monkeypatch.setenv("SNLMARKOV_MAX_RECORD_BYTES", "1K")
    with pytest.raises(LimitError, match="SNLMARKOV_MAX_RECORD_BYTES"):
        GameRecord.from_json(" " * 2000)
    with pytest.raises(GameError, match="JSON text"):
        GameRecord.from_json(None)


def test_record_with_moves_past_the_board_or_a_huge_board():
    data = Game(players=2, rng=1).play().to_dict()
    for e in data["log"]:
        if e["kind"] == "move":
            e["end"] = 150
            break
    with pytest.raises(GameError, match="Move.end=150 is off the board 0..100"):
        GameRecord.from_dict(data)
    data = Game(players=2, rng=1).play().to_dict()
    data["board"]["size"] = 10**12
    with pytest.raises(LimitError):
        GameRecord.from_dict(data)
    data["board"]["size"] = 2 * 10**6
    with pytest.raises(LimitError, match="MAX_RECORD_BOARD_SIZE"):
        GameRecord.from_dict(data)


def test_errors_are_all_named():
    for name in ("LimitError", "SeedError", "InputFileError", "ModelError"):
        assert issubclass(getattr(snl, name), SnlError)
    assert issubclass(InputFileError, ValueError)


def test_error_lines_are_escaped_too(capsys):
    """Messages that join names as they are (here the list of seats) are escaped when printed."""
    err = refused(capsys, "play", "--names", "A\x1b[2J", "B", "--ai", "C", message="no seat named 'C'")
    assert "\x1b" not in err and "A\\x1b[2J" in err


# ------------------------------------------------ issue 23: bounded cost of every input
# Each case names its bound: the operation takes milliseconds, the bound allows seconds on a loaded machine.


def timed(func, *args, **kwargs):
    """``(result or exception, seconds)`` of one call."""
    start = time.perf_counter()
    try:
        out = func(*args, **kwargs)
    except Exception as exc:  # returned for the test to judge
        out = exc
    return out, time.perf_counter() - start


def timed_peak(func):
    """``(result or exception, seconds, tracemalloc peak bytes)`` of one call."""
    import tracemalloc

    tracemalloc.start()
    try:
        out, seconds = timed(func)
        return out, seconds, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_board_data_with_many_jumps_is_checked_in_linear_time(tmp_path):
    n = 40_000  # the quadratic duplicate check took 48 s here
    ladders = [[2 * i + 1, 2 * i + 2] for i in range(n)]
    out, seconds = timed(Board.from_dict, {"size": 4 * n, "ladders": ladders + [[1, 3]]})
    assert isinstance(out, BoardError) and "two jumps from square 1" in str(out)
    assert seconds < 10
    out, seconds = timed(Board.from_dict, {"size": 4 * n, "ladders": ladders})
    assert isinstance(out, Board) and len(out.jumps) == n and seconds < 10
    path = tmp_path / "many.toml"
    path.write_text("size = 120000\n[ladders]\n" + "".join(f"{2 * i + 1} = {2 * i + 2}\n" for i in range(30_000)))
    out, seconds = timed(Board.from_file, path)
    assert isinstance(out, Board) and len(out.jumps) == 30_000 and seconds < 10


def test_game_record_on_a_board_of_many_jumps_reads_in_linear_time():
    board = Board(100_000, {2 * i + 1: 2 * i + 2 for i in range(30_000)})
    text = Game(board, Rules.preset("plain"), players=1, dice=[1, 2, 3]).record().to_json()
    out, seconds = timed(GameRecord.from_json, text)
    assert isinstance(out, GameRecord) and out.board == board and seconds < 10


def test_long_chains_build_in_linear_time_and_cycles_are_still_found():
    n = 100_000  # the cycle check searched a list: over 30 s here
    out, seconds = timed(Board, n + 2, {i: i + 1 for i in range(1, n + 1)}, chain=True)
    assert isinstance(out, Board) and int(out.destination()[1]) == n + 1 and seconds < 10
    cycle = {i: i + 1 for i in range(1, n)}
    cycle[n] = 1
    out, seconds = timed(Board, n + 2, cycle, chain=True)
    assert isinstance(out, BoardError) and str(out).startswith("jumps form a cycle: 1->2->3") and seconds < 10


def test_jump_uses_of_a_long_chain_take_linear_memory():
    import tracemalloc

    board = Board(6002, {i: i + 1 for i in range(1, 6001)}, chain=True)  # 4.1 GB before
    tracemalloc.start()
    try:
        uses, seconds = timed(lambda: snl.analyze(board).jump_uses)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seconds < 30 and peak < 300 * 2**20, (seconds, peak)
    # every game lands on 1..6 first, so it takes the whole chain to 6001: square 6000 once per game;
    # square 1 is landed on only by a first roll of 1 (no turn starts below it afterwards)
    assert uses[6000] == pytest.approx(1.0, abs=1e-9)
    assert uses[1] == pytest.approx(1 / 6, abs=1e-9)


def test_weighted_chain_landings_equal_the_explicit_landings_on_branching_chains():
    """Chains that merge (two jumps ending on one start): the linear spread against every (roll, square) pair."""
    from snlmarkov.chain.model import turn_model

    board = Board(30, {2: 7, 4: 7, 7: 12, 9: 12, 12: 20, 15: 3, 3: 18, 25: 9}, chain=True)
    for rules in (Rules(), Rules.preset("plain"), Rules(finish="bounce", jump_after_bounce=False)):
        a = snl.analyze(board, rules)
        want = np.asarray(turn_model(board, rules).landings.T @ a.occupancy).ravel()
        np.testing.assert_allclose(a.landings, want, rtol=1e-12, atol=1e-14)


def test_explicit_landings_of_long_chains_are_refused_before_allocating(monkeypatch):
    from snlmarkov.chain.model import turn_model

    board = Board(6002, {i: i + 1 for i in range(1, 6001)}, chain=True)
    model = turn_model(board)
    out, seconds = timed(lambda: model.landings)
    assert isinstance(out, LimitError) and "chains of up to 6,000 jumps" in str(out) and seconds < 10
    monkeypatch.setenv("SNLMARKOV_MEMORY_LIMIT", "256M")  # the roll-level pairs: about 1.7 GB
    out, seconds = timed(lambda: snl.analyze(board).hit_probability)
    assert isinstance(out, LimitError) and "chains of up to 6,000 jumps" in str(out) and seconds < 10


def test_length_distribution_of_a_long_board_has_no_subnormal_slowdown():
    """20,000 squares, ladders on every odd square: the mass left behind decayed into subnormals (12 s)."""
    from snlmarkov.analysis.distribution import absorption_times

    board = Board(20_000, {2 * k + 1: 2 * k + 2 for k in range(9_999)})
    a = snl.analyze(board)
    sysm = a._system
    begin = np.zeros(sysm.states.size)
    begin[sysm.position(a.model.start)] = 1.0
    d, seconds = timed(absorption_times, sysm.q, begin, tail=a.tail)
    assert isinstance(d, snl.LengthDistribution) and seconds < 20, seconds
    assert d.mean() == pytest.approx(a.expected_turns, rel=1e-9)
    # the windowed, flushed product against the plain one on a small chain
    q = a.model.matrix[:200, :200].tocsr()
    start = np.zeros(200)
    start[0] = 1.0
    plain, v = [0.0], start.copy()
    exit_ = 1.0 - np.asarray(q.sum(axis=1)).ravel()
    while v.sum() > 1e-13:
        plain.append(float(v @ exit_))
        v = q.T @ v
    got = absorption_times(q, start, exit_, tail=1e-13).probabilities
    np.testing.assert_allclose(got, plain, atol=1e-15)


@pytest.mark.parametrize("size", [10**6, 200_000, 10**5000], ids=["1e6", "2e5", "5001-digits"])
def test_design_refuses_boards_whose_dense_matrices_pass_the_memory_limit(size):
    out, seconds = timed(snl.design, snl.Target(mean=30), size=size)
    assert isinstance(out, LimitError) and seconds < 5, out
    assert "SNLMARKOV_" in str(out) and "Exceeds the limit" not in str(out)


def test_simulate_streams_are_bounded_before_any_seed_is_spawned():
    out, seconds = timed(snl.simulate, Board.builtin(), Rules(), 1000, streams=10**9, rng=1)
    assert isinstance(out, LimitError) and "streams" in str(out) and seconds < 5
    few = snl.simulate(Board.builtin(), Rules(), 10, streams=500, rng=3)  # more streams than games: 10 seeds
    assert few.games == 10
    assert (few.turns == snl.simulate(Board.builtin(), Rules(), 10, streams=10, rng=3).turns).all()


@pytest.mark.parametrize("command", [["design", "--mean", "30"], ["sweep"]])
def test_worker_counts_are_bounded(command, capsys):
    start = time.perf_counter()
    refused(capsys, *command, "--workers", "100000", message="workers must be 1..")
    assert time.perf_counter() - start < 5


def test_sweep_refuses_a_product_over_the_pair_limit_without_building_it():
    b = Board.builtin()
    out, seconds = timed(snl.sweep, [b] * 10**6, [Rules()] * 10**6, as_frame=False)
    assert isinstance(out, LimitError) and "SNLMARKOV_MAX_SWEEP_PAIRS" in str(out) and seconds < 10


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"longer_than": -1}, "longer_than takes whole numbers"),
        ({"longer_than": 10**5000}, "an integer of about 5001 digits"),
        ({"quantiles": 2.0}, "strictly between 0 and 1"),
        ({"players": 10**5000}, "an integer of about 5001 digits"),
    ],
)
def test_sweep_options_are_refused_by_name(kwargs, message):
    out, seconds = timed(snl.sweep, [Board.builtin()], Rules(), as_frame=False, **kwargs)
    assert isinstance(out, SnlError) and message in str(out) and seconds < 5


HUGE = 10**5000


@pytest.mark.parametrize(
    "call",
    [
        lambda: Board(HUGE),
        lambda: Board(-HUGE),
        lambda: Board(10, {HUGE: 3}),
        lambda: Board(10, {3: HUGE}),
        lambda: Board(10).jump_path(HUGE),
        lambda: Board.random(100, jump_fraction=HUGE),
        lambda: Rules(bump_to=HUGE),
        lambda: Rules(faces=HUGE),
        lambda: Rules(max_sixes=HUGE),
        lambda: Rules(bump=HUGE),
        lambda: Game(players=HUGE),
        lambda: snl.GameState((-HUGE, 0)),
        lambda: snl.GameState((1, 0), to_move=HUGE),
        lambda: repr(snl.GameState((HUGE, 0))),  # was accepted, and its repr raised a raw ValueError
        lambda: snl.GameState((1, 0), places=(HUGE,)),
        lambda: snl.Odds(Board.builtin(), Rules(), players=2).win_probability(snl.GameState((0, HUGE))),
        lambda: snl.Odds(Board.builtin(), Rules(), players=HUGE),
        lambda: snl.race(Board.builtin(), Rules(), players=HUGE),
        lambda: snl.simulate(Board.builtin(), Rules(), HUGE),
        lambda: snl.Target(mean=HUGE),
        lambda: snl.Target(mean=30, max_sd=HUGE),
        lambda: snl.design(snl.Target(mean=30), constraints=snl.Constraints(must_jump={HUGE})),
        lambda: snl.analyze(Board(10)).position_distribution(HUGE),
    ],
)
def test_integers_of_thousands_of_digits_give_a_named_error(call):
    out, seconds = timed(call)
    assert isinstance(out, SnlError), repr(out)
    assert "digits" in str(out) and len(str(out)) < 400 and seconds < 5


def test_a_game_state_holds_squares_of_some_board_and_at_most_max_seats():
    assert snl.GameState((10**8, 0)).positions == (10**8, 0)
    with pytest.raises(GameError, match="not a square of any board"):
        snl.GameState((10**8 + 1, 0))
    with pytest.raises(LimitError, match="at most 1000"):
        snl.GameState((0,) * 1001)


def test_show_value_describes_what_it_cannot_write():
    from snlmarkov.limits import show_value

    assert show_value(12) == "12" and show_value(10**40) == "an integer of 41 digits"
    assert show_value(-(10**6000)).startswith("a negative integer of about 6001")
    assert show_value(12345, commas=True) == "12,345" and show_value("x\x1b") == "'x\\x1b'"


def test_random_board_with_an_overlong_jump_length():
    out, seconds = timed(Board.random, 100, max_length=10**30, rng=1)
    assert isinstance(out, Board) and seconds < 5
    assert all(1 <= e <= 100 for e in out.jumps.values())


@pytest.mark.parametrize(
    "call",
    [
        lambda: snl.Odds(Board(10**6), players=2),  # refused after 12-18 s of stepping before
        lambda: snl.Odds(Board(10**7), players=3),  # > 60 s and 4.4 GB building the turn model before
        lambda: snl.Odds(Board(10**7), Rules(bump=True), players=3),
        lambda: snl.race(Board(10**6), Rules(), players=2, state=snl.GameState((10, 20), to_move=1)),
    ],
    ids=["odds-1e6", "odds-1e7", "odds-bump-1e7", "race-state-1e6"],
)
def test_odds_tables_over_their_cap_are_refused_before_any_model(call):
    out, seconds, peak = timed_peak(call)
    assert type(out) is snl.LimitError, repr(out)
    assert "MAX_TABLE_ENTRIES" in str(out) and "fewer squares" in str(out) and "rolls" in str(out)
    assert seconds < 20 and peak < 400 * 2**20, (seconds, peak)


@pytest.mark.parametrize("board", ["jungle", 3000])
def test_the_odds_table_estimate_passes_every_table_the_sweep_builds(board):
    from snlmarkov.races.passage import check_table_size, first_passage

    board = Board.builtin(board) if isinstance(board, str) else Board(board)
    for name in Rules.presets():
        rules = Rules.preset(name)
        check_table_size(board, rules, 1e-13)  # never refuses
        if not rules.choice and board.size <= 100:  # the table it vouches for is built within the cap
            first_passage(snl.turn_model(board, rules), 1e-13, (0, rules.bump_to) if rules.bump else (0,))


def test_the_odds_table_estimate_and_the_sweep_refuse_alike():
    from snlmarkov.races import passage

    board, rules = Board(20_000), Rules.preset("plain")  # needs at least 3,334 turns: over 2,499
    with pytest.raises(snl.LimitError, match="leave room for fewer than 2,498 turns") as early:
        passage.check_table_size(board, rules, 1e-13)
    assert "at least 2,498 rolls, so at least 2,498 turns, to finish from square 0" in str(early.value)
    model = snl.turn_model(Board(2_000), rules)  # the sweep's own refusal, with a cap that 2,000 squares pass
    old = passage.MAX_TABLE_ENTRIES
    passage.MAX_TABLE_ENTRIES = 2001 * 100
    try:
        with pytest.raises(snl.LimitError, match="leave room for fewer than 99 turns.*still in play after 99 turns"):
            passage.first_passage(model, 1e-13)
    finally:
        passage.MAX_TABLE_ENTRIES = old


@pytest.mark.parametrize(
    "call, kind",
    [
        (lambda: snl.analyze("jungle"), snl.BoardError),
        (lambda: snl.analyze(Board.builtin(), "app"), snl.RuleError),
        (lambda: snl.race("jungle", Rules(), players=2), snl.BoardError),
        (lambda: snl.design(snl.Target(mean=30), rules="app"), snl.RuleError),
        (lambda: snl.sweep([3], Rules()), snl.BoardError),
        (lambda: snl.sweep(["jungle"], [3]), snl.RuleError),
        (lambda: snl.sweep(["jungle"], Rules(), mode="fast"), snl.GameError),
        (lambda: snl.sweep(["jungle"], Rules(), players=9), snl.GameError),
        (lambda: snl.verify_game("record"), snl.GameError),
        (lambda: check_stored(["record"]), snl.GameError),
        (lambda: snl.sweep([], Rules()), snl.BoardError),  # these were the bare SnlError
        (lambda: snl.sweep(["jungle"], []), snl.RuleError),
        (lambda: snl.sweep(["jungle"], Rules(), longer_than=-1), snl.MetricError),
        (lambda: snl.sweep(["jungle"], Rules(), quantiles=[0.5, 2.0]), snl.MetricError),
        (lambda: snl.race(Board.builtin(), Rules(), players=2, method="monte_carlo", games=0), snl.GameError),
        (
            lambda: __import__("snlmarkov.report.core").report.core.write_report(
                Board.builtin(), "/tmp/never-written", games=5
            ),
            snl.GameError,
        ),
        (lambda: __import__("snlmarkov.web.serving").web.serving.bind("999.999.999.999", 0), snl.AddressError),
        (
            lambda: __import__("snlmarkov.plots.jumps").plots.jumps.plot_jump_effects(snl.analyze(Board(10))),
            snl.BoardError,
        ),
        (lambda: snl.Odds(Board.builtin(), Rules(bump=True), players=4), snl.LimitError),
        (lambda: snl.Odds(players=2).swings(snl.Game(players=2, rng=1).play(), top=0), snl.GameError),
        (lambda: __import__("snlmarkov.chain.solve").chain.solve.BlockLU(np.ones((2, 3))), snl.ModelError),
        (
            lambda: __import__("snlmarkov.chain.solve").chain.solve.solve_blocks(np.ones((0, 0)), np.ones(0)),
            snl.ModelError,
        ),
        (lambda: __import__("snlmarkov.web.store").web.store.GameStore("/"), snl.InputFileError),
        (
            lambda: (
                __import__("snlmarkov.web.store")
                .web.store.GameStore(os.path.join(tempfile.mkdtemp(), "g.sqlite"))
                .record(7)
            ),
            snl.GameError,
        ),
        (
            lambda: snl.crosscheck(Board(10), Rules(), 1000, rng=1, exact=snl.analyze(Board(12))),
            snl.BoardError,
        ),
    ],
)
def test_refusals_name_their_kind(call, kind):
    out, seconds = timed(call)
    assert type(out) is kind and seconds < 5, repr(out)


# ---------------------------------------------------- stored games (snlmarkov games / verify --db)
def _store(path, names=("Robot 1", "Hostess")):
    from snlmarkov.web.store import GameStore

    store = GameStore(path)
    store.add(Game(players=list(names), rng=1).play(), room="r")
    store.close()
    return path


def _sql(path, statement):
    import sqlite3

    con = sqlite3.connect(path)
    con.execute(statement)
    con.commit()
    con.close()


@pytest.mark.parametrize("command", ["games", "verify"])
@pytest.mark.parametrize("kind", ["random bytes", "sqlite header", "other tables", "other columns", "truncated"])
def test_a_file_that_is_not_a_game_store_is_one_line(tmp_path, capsys, command, kind):
    import sqlite3

    path = tmp_path / "g.sqlite"
    if kind == "random bytes":
        path.write_bytes(os.urandom(4096))
    elif kind == "sqlite header":
        path.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    elif kind == "other tables":
        _sql(path, "CREATE TABLE other (x)")
    elif kind == "other columns":
        _sql(path, "CREATE TABLE games (id INTEGER PRIMARY KEY, name TEXT)")
    else:
        from snlmarkov.web.store import GameStore

        store = GameStore(path)
        for seed in range(40):
            store.add(Game(players=2, rng=seed).play())
        store.close()
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    before = path.read_bytes()
    start = time.perf_counter()
    refused(capsys, command, "--db", str(path), message="g.sqlite")
    assert time.perf_counter() - start < 10
    assert path.read_bytes() == before  # nothing written to a file that is not a store
    if kind == "other tables":
        con = sqlite3.connect(path)
        assert [r[0] for r in con.execute("SELECT name FROM sqlite_master")] == ["other"]
        con.close()


@pytest.mark.parametrize("command", ["games", "verify"])
def test_stored_rows_of_the_wrong_types_are_reported_not_raised(tmp_path, capsys, command):
    path = _store(tmp_path / "g.sqlite")
    _sql(path, "UPDATE games SET finished_at = 'yesterday'")
    status, out, err = cli(capsys, command, "--db", str(path))
    assert "Traceback" not in err and "finished_at is not a time" in out
    assert status == (0 if command == "games" else 1)
    _sql(path, "UPDATE games SET finished_at = 1.0, record = '{broken', players = 'many'")
    status, out, err = cli(capsys, command, "--db", str(path))
    assert "Traceback" not in err and "players is not a whole number" in out


def test_games_prints_full_names_pages_and_escapes_what_the_file_holds(tmp_path, capsys):
    path = _store(tmp_path / "g.sqlite", names=("Robot 1", "Hostess\x1b[2J"))
    _store(path, names=("Hostess", "Robot 2"))
    _sql(path, "UPDATE games SET mode = 'classic\x1b[31m' WHERE id = 2")
    status, out, err = cli(capsys, "games", "--db", str(path))
    assert status == 0 and "\x1b" not in out
    lines = out.splitlines()
    assert "/games/1" in lines[1] and "/games/2" in lines[2] and "classic\\x1b[31m" in lines[2]
    winners = [line.split("/games/")[1].split(None, 1)[1] for line in lines[1:3]]
    assert all(w in ("Robot 1", "Hostess\\x1b[2J", "Hostess", "Robot 2") for w in winners), winners


# ---------------------------------------------------------------- small ones
def test_odds_help_shows_a_plain_percent(capsys):
    status, out, _ = cli(capsys, "odds", "--help")
    assert status == 0 and "95% confidence" in out and "%%" not in out


@pytest.mark.parametrize(
    "option", [["--positions", "\u0661\u0662", "3"], ["--positions", "3", "3", "--to-move", "\u0661"]]
)
def test_odds_takes_only_ascii_digits(option, capsys):
    refused(capsys, "odds", *option, message="digits 0-9")


def test_report_games_message_speaks_of_games(capsys):
    err = refused(capsys, "report", "--games", "-5", message="--games")
    assert "seed" not in err


@pytest.mark.parametrize("host", ["999.999.999.999", "", "1.2.3.4.5", "bad\x1bhost"])
def test_serve_host_is_checked_before_the_address_is_printed(host, capsys):
    status, out, err = cli(capsys, "serve", "--host", host, "--port", "0")
    assert status == 2 and out == "" and "--host" in err and "Traceback" not in err


# ------------------------------------------------ issue 23 (audit): the play side of chains, the simulator's memory
def _walked_chains(board):
    """The play kernel's (dest, later) by walking every chain, jump by jump (the former construction)."""
    size, jumps = board.size, board.jumps
    dest = np.arange(size + 2, dtype=np.int64)
    paths = {}
    for start, end in jumps.items():
        path, square = [], end
        while board.chain and square in jumps:
            path.append(square)
            square = jumps[square]
        dest[start] = square
        if path:
            paths[start] = path
    later = np.full((max(map(len, paths.values()), default=0), size + 2), size + 1, dtype=np.int64)
    for start, path in paths.items():
        later[: len(path), start] = path
    return dest, later


@pytest.mark.parametrize("seed", range(6))
def test_play_kernel_chains_equal_the_walk_on_merging_chains(seed):
    from snlmarkov.playkernel import PlayKernel, landing_rows

    gen = np.random.default_rng(seed)
    size = 60
    starts = gen.choice(np.arange(1, size), size=25, replace=False).tolist()
    off = sorted(set(range(1, size + 1)) - set(starts))
    jumps = {}
    for i, s in enumerate(starts):  # onto a start drawn later (chains merge, never cycle) or off the chains
        later = starts[i + 1 :]
        jumps[s] = int(gen.choice(later)) if later and gen.random() < 0.7 else int(gen.choice(off))
    for chain in (True, False) if seed == 0 else (True,):
        try:
            board = Board(size, jumps, chain=chain)
        except BoardError:  # without chain=True the chains are refused
            assert not chain
            continue
        kern = PlayKernel(board, Rules())
        dest, later = _walked_chains(board)
        np.testing.assert_array_equal(kern.dest, dest)
        np.testing.assert_array_equal(kern.later, later)
        assert landing_rows(board) == kern.chain_rows == 1 + later.shape[0]


def test_playing_a_long_chain_is_linear_or_refused_at_once():
    """The play kernel walked every chain from every start: a 100,000-jump chain ran for hours."""
    from _fuzz import time_limit

    with time_limit(30):
        long = Board(100_002, {i: i + 1 for i in range(1, 100_001)}, chain=True)
        out, seconds = timed(Game, long, players=2, rng=1)
        assert isinstance(out, LimitError) and "chains take up to 100,000 jumps" in str(out), out
        assert seconds < 10
        out, seconds = timed(snl.simulate, long, Rules(), 10, rng=1)
        assert isinstance(out, LimitError) and seconds < 10, out
        board = Board(3002, {i: i + 1 for i in range(1, 3001)}, chain=True)
        game, seconds = timed(lambda: Game(board, Rules.preset("plain"), players=1, rng=2).play())
        assert isinstance(game, GameRecord) and seconds < 20, game
        assert game.turns()[0].end == 3001  # the first roll lands on 1..6: the whole chain up to 3001


def test_simulating_a_chain_whose_table_passes_the_memory_limit_is_a_named_refusal(monkeypatch):
    """Each landing row of the simulator's table costs the kernel's int64 answer and its copy: counted."""
    # 2,001 landing rows a roll: even the one-roll table needs about 1.3 GB to build (36,054 entries
    # of about 36 kB each, 5.8 MB without the rows); a two-roll table once tried 3.2 GiB + 3.2 GiB, raw MemoryError
    monkeypatch.setenv("SNLMARKOV_MEMORY_LIMIT", "1G")
    board = Board(2002, {i: i + 1 for i in range(1, 2001)}, chain=True)
    out, seconds = timed(snl.simulate, board, Rules(), 100, rng=1)
    assert isinstance(out, LimitError) and "SNLMARKOV_MEMORY_LIMIT" in str(out) and seconds < 10, out


@pytest.mark.parametrize(
    "call",
    [
        lambda: snl.simulate(Board(10**7), Rules(), 10, rng=1),  # 21 s and 2.7 GB before its refusal
        lambda: snl.crosscheck(Board(10**8), Rules(), 400, rng=1),  # 12.9 GB and still going after 60 s
        lambda: snl.simulate(Board(10**8), Rules(), 1, rng=1),
    ],
    ids=["simulate-1e7", "crosscheck-1e8", "simulate-1e8"],
)
def test_simulating_a_huge_board_is_refused_before_any_table_or_graph(call):
    out, seconds, peak = timed_peak(call)
    assert isinstance(out, LimitError) and "SNLMARKOV_MEMORY_LIMIT" in str(out), out
    assert seconds < 10 and peak < 400 * 2**20, (seconds, peak)


def test_the_reach_check_counts_its_graph_against_the_memory_limit(monkeypatch):
    from snlmarkov.reach import check_winnable

    monkeypatch.setenv("SNLMARKOV_MEMORY_LIMIT", "64M")
    out, seconds = timed(check_winnable, Board(400_000), Rules(), True)
    assert isinstance(out, LimitError) and "can reach the finish" in str(out) and seconds < 5, out
    monkeypatch.setenv("SNLMARKOV_MEMORY_LIMIT", "8G")
    assert check_winnable(Board(400_001), Rules(), True) is None


def test_analyze_of_a_long_board_shows_its_progress(tmp_path, capsys):
    """A 10^6-square board with 499,999 ladders ran past 60 s without a sign of life: the length bar counts turns."""
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"size": 6000, "ladders": {str(2 * k + 1): 2 * k + 2 for k in range(2999)}}))
    status, out, err = cli(capsys, "analyze", "--board", str(path))
    assert status == 0 and "expected turns" in out
    bar = err.replace("\r", "\n").splitlines()
    assert any(line.startswith("length distribution: 100%") and "turn/s" in line for line in bar), err[-300:]
    status, out, err = cli(capsys, "analyze")  # a board under PROGRESS_SQUARES: no bar
    assert status == 0 and "length distribution" not in err

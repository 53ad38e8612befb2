"""Fuzz: the command line, called in-process with generated argv.

Contract for every argv: exit status 0 or 1 (a result, or a cross-check that failed), or 2 with
exactly one line on standard error and no traceback; never another exception, never a hang.
"""

from __future__ import annotations

import io
import sys

import pytest
from _fuzz import HOSTILE_TEXT, fuzz, time_limit
from hypothesis import given
from hypothesis import strategies as st

from snlmarkov.cli import main

values = st.one_of(st.sampled_from(HOSTILE_TEXT), st.sampled_from(["3", "5", "200", "0", "-7", "10000000000"]))
boards = st.sampled_from(["jungle", "milton_bradley", "moon", "/dev/null", "/dev/zero", "", "x.toml", "/proc/x.json"])
sets = st.one_of(
    st.builds(
        "{}={}".format,
        st.sampled_from(
            ["faces", "max_sixes", "bump_to", "finish", "bump", "on_cap", "bonus_on_six", "start_on_six", "size"]
        ),
        st.one_of(values, st.sampled_from(["bounce", "none", "forfeit", "yes", "off", "2", "1000", "1001"])),
    ),
    values,
)


def option(name: str, value_strategy) -> st.SearchStrategy:
    return st.tuples(st.just(name), value_strategy).map(list)


COMMON = [
    option("--board", boards),
    option("--rules", st.sampled_from(["app", "family", "plain", "house", ""])),
    option("--set", sets),
]
SEED = option("--seed", st.one_of(values, st.sampled_from(["1", "7"])))
SMALL = st.sampled_from(["1", "2", "3", "6", "7", "0", "-1", "abc", "٣"])
COMMANDS = {
    "analyze": COMMON + [st.just(["--json"])],
    "race": COMMON
    + [
        option("--players", SMALL),
        option("--mode", st.sampled_from(["classic", "last_one_standing", "x"])),
        option("--method", st.sampled_from(["auto", "exact", "monte_carlo", "guess"])),
        option("--games", st.sampled_from(["100", "0", "-3", "1e3", "10000000000", "1_000"])),
        SEED,
        st.just(["--json"]),
    ],
    "simulate": COMMON
    + [
        option("--games", st.sampled_from(["100", "150", "0", "-3", "abc", "10000000000", "1_000", "\u0661\u0660"])),
        option("--players", SMALL),
        option("--max-turns", st.sampled_from(["1", "5", "0", "-1", "100000", "x"])),
        option("--mode", st.sampled_from(["classic", "last_one_standing"])),
        SEED,
        st.just(["--json"]),
    ],
    "play": COMMON
    + [
        option("--players", SMALL),
        option("--names", st.sampled_from(["Ann", "\x1b[31mEve", "", "\ud800", " "])),
        option("--ai", st.sampled_from(["1", "0", "9", "Ann", "-1"])),
        option("--max-turns", st.sampled_from(["1", "3", "0", "-1", "x"])),
        option("--colours", st.sampled_from(["red", "", "\x07"])),
        SEED,
        st.just(["--no-board"]),
    ],
    "report": [  # always with an --out that must be refused before any work
        option("--out", st.sampled_from(["", "/proc", "/sys", "/proc/x/y", "/dev/null"])),
        option("--board", boards),
        option("--games", st.sampled_from(["100", "0", "x"])),
        SEED,
        option("--max-players", SMALL),
        st.just(["--quiet"]),
    ],
    "games": [option("--db", st.sampled_from(["/dev/zero", "/proc", "", "/nonexistent/dir/x.db", "/dev/null"]))],
    "verify": [
        option("--db", st.sampled_from(["/dev/zero", "/proc", "", "/nonexistent/dir/x.db", "/dev/null"])),
        option("--alpha", st.sampled_from(["0.01", "-1", "nan", "2", "x"])),
    ],
}


@st.composite
def argvs(draw) -> list[str]:
    command = draw(st.sampled_from(sorted(COMMANDS)))
    chosen = draw(st.lists(st.sampled_from(range(len(COMMANDS[command]))), max_size=4, unique=True))
    argv = [command]
    for i in chosen:
        argv += draw(COMMANDS[command][i])
    if command == "report" and "--out" not in argv:
        argv += ["--out", "/proc"]
    if command == "simulate":
        argv += ["--no-progress"] + ([] if "--games" in argv else ["--games", "120"])
    if command in ("games", "verify") and "--db" not in argv:
        argv += ["--db", "/dev/zero"]
    return argv


@pytest.fixture
def no_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))


@fuzz(1.5)
@given(argv=argvs())
def test_cli_contract(argv, capsys, no_terminal):
    capsys.readouterr()
    with time_limit(30):
        try:
            status = main(argv)
        except SystemExit as exc:  # the argument parser's refusal
            status = exc.code
    out, err = capsys.readouterr()
    assert status in (0, 1, 2), (argv, status)
    assert "Traceback" not in err, (argv, err)
    if status == 2:
        assert err.count("\n") == 1 or err.startswith("usage:"), (argv, err)
        assert "error" in err, (argv, err)

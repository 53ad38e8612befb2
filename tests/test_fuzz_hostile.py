"""Fuzz: the hostile inputs of issue 23 (huge integers, long chains, counts, corrupt game stores).

Every example must give a result or an SnlError within its time limit; a message must stay short
(an integer of thousands of digits is described, not written out).
"""

from __future__ import annotations

import os
import sqlite3

import numpy as np
from _fuzz import fuzz, hostile_number, huge_integer, time_limit
from hypothesis import given
from hypothesis import strategies as st

import snlmarkov as snl
from snlmarkov import Board, Game, Rules, SnlError

ENTRY_POINTS = {
    "Board size": lambda v: Board(v),
    "Board start": lambda v: Board(20, {v: 3}),
    "Board end": lambda v: Board(20, {3: v}),
    "Board.random length": lambda v: Board.random(50, max_length=v, rng=1),
    "Board.random fraction": lambda v: Board.random(50, jump_fraction=v, rng=1),
    "jump_path": lambda v: Board(20).jump_path(v),
    "cell width": lambda v: Board(20).cell(3, width=v),
    "Rules faces": lambda v: Rules(faces=v),
    "Rules bump_to": lambda v: Rules(bump_to=v),
    "Rules max_sixes": lambda v: Rules(max_sixes=v),
    "Game players": lambda v: Game(players=v),
    "GameState square": lambda v: snl.GameState((v, 0)),
    "GameState to_move": lambda v: snl.GameState((1, 0), to_move=v),
    "race players": lambda v: snl.race(Board(20), Rules(), players=v),
    "Odds players": lambda v: snl.Odds(Board(20), Rules(), players=v),
    "simulate games": lambda v: snl.simulate(Board(20), Rules(), v, rng=1),
    "simulate streams": lambda v: snl.simulate(Board(20), Rules(), 20, streams=v, rng=1),
    "Target mean": lambda v: snl.Target(mean=v),
    "Constraints length": lambda v: snl.Constraints(max_ladder_length=v),
    "design size": lambda v: snl.design(snl.Target(mean=30), size=v, budget=256),
    "sweep longer_than": lambda v: snl.sweep([Board(20)], Rules.preset("plain"), longer_than=[v], as_frame=False),
    "position_distribution": lambda v: snl.analyze(Board(20)).position_distribution(v),
}


@fuzz(2)
@given(where=st.sampled_from(sorted(ENTRY_POINTS)), value=st.one_of(huge_integer, hostile_number))
def test_any_number_anywhere(where, value):
    with time_limit(20):
        try:
            ENTRY_POINTS[where](value)
        except SnlError as exc:
            assert len(str(exc)) < 600, (where, str(exc)[:200])


@st.composite
def chained_boards(draw):
    """A board whose jumps form merging chains (a forest: each start leads to a later-drawn one or off)."""
    size = draw(st.integers(8, 120))
    starts = draw(st.lists(st.integers(1, size - 1), min_size=1, max_size=min(40, size - 1), unique=True))
    jumps = {}
    for i, s in enumerate(starts):
        onto = draw(st.one_of(st.none(), st.integers(i + 1, len(starts) - 1))) if i + 1 < len(starts) else None
        if onto is not None:
            jumps[s] = starts[onto]  # onto a start drawn later: no cycle
        else:
            free = [t for t in range(1, size + 1) if t != s and t not in starts]
            jumps[s] = draw(st.sampled_from(free)) if free else size
    return Board(size, jumps, chain=True)


@fuzz(1)
@given(board=chained_boards(), rules=st.sampled_from([Rules(), Rules.preset("plain"), Rules(finish="bounce")]))
def test_chain_landings_in_linear_memory_equal_the_explicit_pairs(board, rules):
    from snlmarkov.chain.model import turn_model

    with time_limit(20):
        try:
            a = snl.analyze(board, rules)
            occupancy = a.occupancy
        except SnlError:  # an unwinnable draw
            return
        want = np.asarray(turn_model(board, rules).landings.T @ occupancy).ravel()
        np.testing.assert_allclose(a.landings, want, rtol=1e-10, atol=1e-12)


STORE_BYTES: list[bytes] = []


def _store_bytes(tmp_path) -> bytes:
    if not STORE_BYTES:
        from snlmarkov.web.store import GameStore

        path = tmp_path / "seed.sqlite"
        store = GameStore(path)
        for seed in range(3):
            store.add(Game(players=["Ann", "Robot 1"], rng=seed).play(), room="r")
        store.close()
        con = sqlite3.connect(path)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        STORE_BYTES.append(path.read_bytes())
    return STORE_BYTES[0]


@fuzz(0.5)
@given(
    flips=st.lists(st.tuples(st.integers(0, 2**20), st.integers(0, 255)), min_size=1, max_size=8),
    cut=st.one_of(st.none(), st.integers(0, 2**16)),
    command=st.sampled_from(["games", "verify"]),
)
def test_corrupt_game_stores_are_one_line(tmp_path_factory, capsys, flips, cut, command):
    from snlmarkov.cli import main

    folder = tmp_path_factory.mktemp("db")
    data = bytearray(_store_bytes(folder))
    for at, byte in flips:
        data[at % len(data)] = byte
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    path = folder / "g.sqlite"
    path.write_bytes(bytes(data))
    with time_limit(30):
        try:
            status = main([command, "--db", str(path)])
        except SystemExit as exc:
            status = exc.code
    out, err = capsys.readouterr()
    assert status in (0, 1, 2) and "Traceback" not in err
    assert status != 2 or err.count("\n") == 1, err
    assert "\x1b" not in out
    for leftover in ("g.sqlite-wal", "g.sqlite-shm"):
        if (folder / leftover).exists():
            os.remove(folder / leftover)

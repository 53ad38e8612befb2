"""simulate(executor=..., streams=...): independent streams, merged exactly, the same for any workers."""

import concurrent.futures as cf
import mmap
import os
from pathlib import Path

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov.sim.parallel import merge_results, seed_root, split_games

FIELDS = ("turns", "rolls", "rounds", "finish_turn", "finished", "place", "winner", "truncated", "landings")


@pytest.fixture(autouse=True)
def _pools_always_used(monkeypatch):
    """These tests send a few thousand games to real pools: below POOL_MIN_WORK they would be played here."""
    monkeypatch.setattr("snlmarkov.sim.parallel.POOL_MIN_WORK", 0)


class _Refusing(cf.Executor):
    """An executor that must not be used."""

    def submit(self, fn, /, *args, **kwargs):
        raise AssertionError("the pool was used for too little work")


def test_too_little_work_is_played_here_and_says_so(monkeypatch):
    monkeypatch.setattr("snlmarkov.sim.parallel.POOL_MIN_WORK", 10_000)
    board, rules = snl.Board.builtin(), snl.Rules()
    serial = snl.simulate(board, rules, 3001, streams=16, rng=3)
    with pytest.warns(RuntimeWarning, match="too little work for a pool.*same result"):
        here = snl.simulate(board, rules, 3001, executor=_Refusing(), rng=3)
    _same(serial, here)
    with pytest.warns(RuntimeWarning, match="too little work"):  # work counts every seat
        snl.simulate(board, rules, 3001, players=3, executor=_Refusing(), rng=3)
    monkeypatch.setattr("snlmarkov.sim.parallel.POOL_MIN_WORK", 9_000)
    with pytest.raises(AssertionError, match="pool was used"):  # 3 x 3001 seats: enough work, the pool is asked
        snl.simulate(board, rules, 3001, players=3, executor=_Refusing(), rng=3)


def _same(a, b):
    assert a.games == b.games
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize(
    "players, mode", [(1, "classic"), pytest.param(3, "last_one_standing", marks=pytest.mark.slow)]
)
def test_the_same_seed_gives_the_same_games_for_any_workers(players, mode):
    board, rules = snl.Board.builtin(), snl.Rules()
    kw = dict(players=players, mode=mode, rng=21)
    serial = snl.simulate(board, rules, 3001, streams=16, **kw)
    with cf.ThreadPoolExecutor(max_workers=3) as threads:
        _same(serial, snl.simulate(board, rules, 3001, executor=threads, **kw))
    with cf.ProcessPoolExecutor(max_workers=2) as pool:
        _same(serial, snl.simulate(board, rules, 3001, executor=pool, **kw))
    other = snl.simulate(board, rules, 3001, streams=16, players=players, mode=mode, rng=22)
    assert not np.array_equal(other.turns, serial.turns)


def test_streams_are_plain_simulations_of_spawned_seeds_joined_in_order():
    board, rules = snl.Board.builtin("milton_bradley"), snl.Rules.preset("family")
    merged = snl.simulate(board, rules, 1000, players=2, rng=5, streams=3)
    sizes = split_games(1000, 3)
    parts = [
        snl.simulate(board, rules, n, players=2, rng=child)
        for n, child in zip(sizes, np.random.SeedSequence(5).spawn(3))
    ]
    _same(merged, merge_results(parts))
    assert merged.landings.sum() == sum(p.landings.sum() for p in parts)
    assert sizes == [334, 333, 333]


def test_more_streams_than_games_and_a_single_stream():
    board, rules = snl.Board(20, {3: 15}), snl.Rules()
    r = snl.simulate(board, rules, 5, rng=1, streams=16)
    assert r.games == 5
    one = snl.simulate(board, rules, 50, rng=np.random.SeedSequence(4), streams=1)
    alone = snl.simulate(board, rules, 50, rng=np.random.SeedSequence(4).spawn(1)[0])
    _same(one, alone)


def test_unsplit_runs_are_unchanged():
    board, rules = snl.Board.builtin(), snl.Rules()
    _same(snl.simulate(board, rules, 500, rng=9), snl.simulate(board, rules, 500, rng=9, streams=0))


def test_bad_streams_executors_seeds_and_merges_are_refused():
    board, rules = snl.Board.builtin(), snl.Rules()
    with pytest.raises(snl.GameError, match="streams"):
        snl.simulate(board, rules, 10, streams=-2)
    with pytest.raises(snl.GameError, match="Executor"):
        snl.simulate(board, rules, 10, executor="pool")
    with pytest.raises(snl.SeedError):
        seed_root(-3)
    with pytest.raises(snl.GameError, match="nothing to merge"):
        merge_results([])
    a = snl.simulate(board, rules, 10, rng=1)
    b = snl.simulate(board, snl.Rules.preset("plain"), 10, rng=1)
    with pytest.raises(snl.GameError, match="one board, rules"):
        merge_results([a, b])


def test_the_progress_bar_counts_every_game(capsys):
    snl.simulate(snl.Board.builtin(), snl.Rules(), 2000, rng=1, streams=4, progress=True)
    assert "2000/2000" in capsys.readouterr().err


@pytest.mark.parametrize("players", [1, 2])
def test_summaries_of_streams_merge_exactly_whatever_runs_them(players):
    from snlmarkov.sim.summary import SimulationSummary

    board, rules = snl.Board.builtin(), snl.Rules()
    kw = dict(players=players, rng=8, keep="summary")
    serial = snl.simulate(board, rules, 2000, streams=5, **kw)
    with cf.ProcessPoolExecutor(max_workers=2) as pool:
        pooled = snl.simulate(board, rules, 2000, executor=pool, streams=5, **kw)
    games = SimulationSummary.of(snl.simulate(board, rules, 2000, streams=5, players=players, rng=8))
    for s in (pooled, games):
        assert s.games == serial.games == 2000
        for name in ("turns_hist", "rolls_hist", "rounds_hist", "place_counts", "wins", "landings"):
            np.testing.assert_array_equal(getattr(s, name), getattr(serial, name), err_msg=name)


class _Elsewhere(cf.Executor):
    """Runs each stream on a thread, but as a worker on another machine would: the parent's file is out of reach."""

    def __init__(self):
        self._threads = cf.ThreadPoolExecutor(2)

    def submit(self, fn, /, *args, **kwargs):
        if len(args) > 9 and args[9] is not None:
            path, token, layout = args[9]
            args = (*args[:9], (path + "-on-another-machine", token, layout), *args[10:])
        return self._threads.submit(fn, *args, **kwargs)

    def shutdown(self, wait=True, **kwargs):
        self._threads.shutdown(wait)


def _our_files():
    from snlmarkov.sim import parallel

    return (
        list(Path(parallel.SHARED_DIR).glob(f"snlmarkov-sim-{os.getpid()}-*"))
        if Path(parallel.SHARED_DIR).is_dir()
        else []
    )


@pytest.mark.parametrize("players", [1, 3])
def test_kept_games_from_workers_are_the_serial_games_however_they_travel(monkeypatch, players):
    from snlmarkov.sim import parallel

    board, rules = snl.Board.builtin(), snl.Rules()
    kw = dict(players=players, mode="last_one_standing", rng=31)
    serial = snl.simulate(board, rules, 3001, streams=16, **kw)
    with cf.ProcessPoolExecutor(max_workers=2) as pool:
        shared = snl.simulate(board, rules, 3001, executor=pool, **kw)  # written into the file by the workers
    _same(serial, shared)
    assert not shared.turns.flags.writeable
    if Path(parallel.SHARED_DIR).is_dir():  # the arrays are the pages the workers wrote, not copies
        base = shared.place
        while isinstance(base, np.ndarray):
            base = base.base
        assert isinstance(base.obj if isinstance(base, memoryview) else base, mmap.mmap)
    with _Elsewhere() as far:
        _same(serial, snl.simulate(board, rules, 3001, executor=far, **kw))  # sent back, written in here
    monkeypatch.setattr(parallel, "SHARED_DIR", "/no/such/dir")
    with cf.ThreadPoolExecutor(2) as threads:
        _same(serial, snl.simulate(board, rules, 3001, executor=threads, **kw))  # no file at all
    assert not _our_files()


def test_a_full_file_system_and_a_failing_stream_leave_the_same_result_and_no_file(monkeypatch):
    import errno

    from snlmarkov.sim import parallel

    board, rules = snl.Board.builtin(), snl.Rules()
    serial = snl.simulate(board, rules, 3001, streams=16, rng=4)
    real = parallel._pwrite_all

    def full(fd, data, offset):
        if offset > 0:  # the token goes in; no rows fit
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data, offset)

    monkeypatch.setattr(parallel, "_pwrite_all", full)
    with cf.ThreadPoolExecutor(2) as threads:
        _same(serial, snl.simulate(board, rules, 3001, executor=threads, rng=4))
    monkeypatch.setattr(parallel, "_pwrite_all", real)
    assert not _our_files()

    def broken(*args):
        raise RuntimeError("a worker fell over")

    monkeypatch.setattr(parallel, "_stream", broken)
    with cf.ThreadPoolExecutor(2) as threads, pytest.raises(RuntimeError, match="fell over"):
        snl.simulate(board, rules, 3001, executor=threads, rng=4)
    assert not _our_files()


def test_a_stream_of_the_wrong_dtype_is_an_error_not_a_cast():
    from snlmarkov.sim.parallel import _Layout

    layout = _Layout(games=4, players=1)
    rows = {
        name: np.zeros((2, 1) if name in ("finish_turn", "finished", "place") else 2, dtype=np.int32)
        for name in ("turns", "rolls", "rounds", "finish_turn", "place", "winner")
    }
    rows.update(finished=np.zeros((2, 1), dtype=bool), truncated=np.zeros(2, dtype=bool))
    assert len(layout.spans(2, rows)) == 8
    rows["turns"] = rows["turns"].astype(np.int64)
    with pytest.raises(snl.GameError, match="turns came back as int64"):
        layout.spans(2, rows)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc")
def test_workers_forked_at_the_first_task_hold_no_handle_on_the_file():
    import multiprocessing

    board, rules = snl.Board.builtin(), snl.Rules()
    context = multiprocessing.get_context("fork")
    with cf.ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:  # its processes start at the first task
        snl.simulate(board, rules, 3001, executor=pool, rng=2)
        held = [
            link
            for pid in pool._processes
            for fd in Path(f"/proc/{pid}/fd").iterdir()
            for link in [os.readlink(fd) if fd.is_symlink() else ""]
            if "snlmarkov-sim-" in link
        ]
    assert held == []  # else the file's memory would live as long as the workers

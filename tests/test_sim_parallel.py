"""simulate(executor=..., streams=...): independent streams, merged exactly, the same for any workers."""

import concurrent.futures as cf

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


@pytest.mark.parametrize("players, mode", [(1, "classic"), (3, "last_one_standing")])
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

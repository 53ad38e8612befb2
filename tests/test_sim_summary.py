"""simulate(keep="summary"): histograms equal to those of the per-game results, exact merges, constant memory."""

import tracemalloc

import numpy as np
import pytest

from snlmarkov import Board, Rules
from snlmarkov.errors import GameError
from snlmarkov.sim import summary as summary_module
from snlmarkov.sim.core import play, play_summary, simulate
from snlmarkov.sim.summary import SimulationSummary

JUNGLE = Board.builtin()


def _same(a: SimulationSummary, b: SimulationSummary):
    assert a.games == b.games and a.truncated == b.truncated
    for name in ("turns_hist", "rolls_hist", "rounds_hist", "place_counts", "wins", "landings"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize(
    "players, mode", [(1, "classic"), (3, "classic"), (3, "last_one_standing")], ids=["solo", "classic", "los"]
)
def test_summary_of_one_chunk_is_the_summary_of_the_games(players, mode):
    games = simulate(JUNGLE, Rules.preset("family"), 3000, players, mode, rng=11)
    summ = simulate(JUNGLE, Rules.preset("family"), 3000, players, mode, rng=11, keep="summary")
    _same(summ, SimulationSummary.of(games))
    # and every figure agrees with the per-game arrays
    assert summ.mean_turns() == pytest.approx(games.mean_turns(), rel=1e-12)
    assert summ.std_turns() == pytest.approx(games.std_turns(), rel=1e-12)
    assert summ.mean_rolls() == pytest.approx(games.mean_rolls(), rel=1e-12)
    assert summ.std_rolls() == pytest.approx(games.std_rolls(), rel=1e-12)
    assert summ.mean_rounds() == pytest.approx(games.mean_rounds(), rel=1e-12)
    np.testing.assert_allclose(summ.win_frequencies(), games.win_frequencies(), rtol=1e-15)
    np.testing.assert_allclose(summ.place_frequencies(), games.place_frequencies(), rtol=1e-15)
    np.testing.assert_array_equal(summ.landings, games.landings)
    assert "3000 games" in str(summ)


def test_chunks_are_the_games_of_consecutive_draws():
    rng = np.random.default_rng(5)
    want = None
    for n in (400, 400, 200):
        part = SimulationSummary.of(play(JUNGLE, Rules(), n, 2, "classic", rng, 100_000))
        want = part if want is None else want.merge(part)
    got = play_summary(JUNGLE, Rules(), 1000, 2, "classic", np.random.default_rng(5), 100_000, chunk=400)
    _same(got, want)


def test_merge_is_exact_commutative_and_associative():
    runs = [simulate(JUNGLE, Rules(), 500, 2, rng=s, keep="summary") for s in (1, 2, 3)]
    a, b, c = runs
    _same(a.merge(b).merge(c), c.merge(a.merge(b)))
    whole = SimulationSummary.of(simulate(JUNGLE, Rules(), 500, 2, rng=1)).merge(runs[1])
    assert whole.games == 1000
    np.testing.assert_array_equal(whole.turns_hist[: a.turns_hist.size] >= a.turns_hist, True)
    np.testing.assert_array_equal(a.merge(b).landings, a.landings + b.landings)


def test_merge_refuses_other_setups():
    a = simulate(JUNGLE, Rules(), 50, rng=1, keep="summary")
    for other in (
        simulate(JUNGLE, Rules.preset("plain"), 50, rng=1, keep="summary"),
        simulate(JUNGLE, Rules(), 50, 2, rng=1, keep="summary"),
        simulate(Board(30), Rules(), 50, rng=1, keep="summary"),
    ):
        with pytest.raises(GameError, match="do not merge"):
            a.merge(other)
    with pytest.raises(GameError, match="SimulationSummary"):
        a.merge(simulate(JUNGLE, Rules(), 50, rng=1))


def test_bad_keep_and_bad_summaries_refused():
    with pytest.raises(GameError, match="keep"):
        simulate(JUNGLE, Rules(), 10, keep="everything")
    s = simulate(JUNGLE, Rules(), 10, rng=1, keep="summary")
    with pytest.raises(GameError, match="counts"):
        SimulationSummary(**{**_fields(s), "games": 11})
    with pytest.raises(GameError, match="negative"):
        SimulationSummary(**{**_fields(s), "wins": -s.wins - 1})


def _fields(s):
    names = ("games", "players", "mode", "board", "rules", "max_turns", "turns_hist", "rolls_hist")
    names += ("rounds_hist", "place_counts", "wins", "landings", "truncated")
    return {n: getattr(s, n) for n in names}


def test_truncated_games_are_counted_and_warned():
    with pytest.warns(RuntimeWarning, match="counted in truncated"):
        s = simulate(JUNGLE, Rules(), 200, rng=3, max_turns=5, keep="summary")
    assert s.truncated == 200 and s.turns_hist[5] == 200


def test_summary_memory_does_not_grow_with_games(monkeypatch):
    monkeypatch.setattr(summary_module, "SUMMARY_CHUNK", 20_000)

    def peak(games, keep):
        tracemalloc.start()
        simulate(JUNGLE, Rules(), games, rng=1, keep=keep)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    small, large = peak(40_000, "summary"), peak(400_000, "summary")
    assert large < small + 2e6  # ten times the games, the same memory (the tables and one chunk)
    assert peak(400_000, "games") > peak(40_000, "games") + 5e6  # where keep="games" grows ~24 bytes a game


def test_a_billion_games_pass_the_memory_check_only_as_a_summary():
    from snlmarkov.errors import SnlError
    from snlmarkov.sim.core import _checked

    _checked(JUNGLE, Rules(), 10**9, 4, "classic", 100_000, "summary")  # one chunk is held at a time
    with pytest.raises(SnlError):
        _checked(JUNGLE, Rules(), 10**9, 4, "classic", 100_000, "games")


def test_summary_with_streams_summarises_each_stream_and_merges():
    # (streams and executors themselves are tested in tests/test_sim_parallel.py)
    s = simulate(JUNGLE, Rules(), 10, rng=1, keep="summary", streams=2)
    assert s.games == 10 and int(s.turns_hist.sum()) == 10

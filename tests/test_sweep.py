"""Sweeps: figures per (board, rules) pair, the same serially, on a process pool and on a Dask cluster."""

import concurrent.futures as cf
import sys
import warnings

import numpy as np
import pytest

import snlmarkov as snl

pd = pytest.importorskip("pandas")

STUCK = snl.Board(9, {2: 9, 7: 5, 8: 6}, name="stuck")  # unwinnable under a 2-faced die
TWO_FACED = snl.Rules.preset("plain").replace(faces=2)


def _boards():
    return [snl.Board.builtin(), snl.Board.builtin("milton_bradley")] + [snl.Board.random(100, rng=i) for i in range(4)]


def test_rows_hold_the_exact_figures():
    rules = [snl.Rules(), snl.Rules.preset("family")]
    df = snl.sweep(["jungle", "milton_bradley"], rules, players=2, quantiles=(0.25,), longer_than=(30,))
    assert len(df) == 4
    assert list(df["board"]) == ["jungle", "jungle", "milton_bradley", "milton_bradley"]
    assert list(df["rules"]) == ["app", "family", "app", "family"]
    for _, row in df.iterrows():
        board = snl.Board.builtin(row["board"])
        r = snl.Rules.preset(row["rules"])
        a = snl.analyze(board, r)
        assert row["expected_turns"] == a.expected_turns
        assert row["sd_turns"] == a.std_turns
        assert row["median_turns"] == a.length.median()
        assert row["q25_turns"] == a.length.ppf(0.25)
        assert row["p_longer_30"] == a.length.sf(30)
        race = snl.race(board, r, players=2)
        assert row["first_seat_advantage"] == pytest.approx(race.win_probability[0] - 0.5, abs=1e-15)
    assert {"finish", "bump", "start_on_six"} <= set(df.columns)  # the rule fields that vary


def test_metrics_by_name_and_unknown_names():
    df = snl.sweep("jungle", players=3, metrics=["win_probability", "longest_ladder", "expected_rolls"])
    assert df.loc[0, "longest_ladder"] == 56
    assert df.loc[0, ["win_seat0", "win_seat1", "win_seat2"]].sum() == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(snl.MetricError, match="unknown metric 'speed'.*expected_rolls"):
        snl.sweep("jungle", metrics=["speed"])
    with pytest.raises(snl.MetricError, match="players >= 2"):
        snl.sweep("jungle", metrics=["win_probability"])
    with pytest.raises(snl.SnlError, match="quantiles"):
        snl.sweep("jungle", quantiles=[1.5])


def test_without_pandas_a_warning_and_records(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.warns(UserWarning, match=r"snlmarkov\[sweep\]"):
        rows = snl.sweep("jungle")
    assert isinstance(rows, list) and rows[0]["board"] == "jungle"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert snl.sweep("jungle", as_frame=False) == rows


def test_a_failing_pair_is_reported_with_its_board():
    with pytest.raises(snl.SweepError) as info:
        snl.sweep([snl.Board(9), STUCK, snl.Board(8)], TWO_FACED)
    assert info.value.board == STUCK and info.value.index == 1
    assert info.value.cause.startswith("UnwinnableBoardError")
    assert isinstance(info.value, snl.SnlError)


def test_process_pool_gives_the_serial_table_and_reports_failures():
    boards = _boards()
    rules = [snl.Rules(), snl.Rules.preset("plain")]
    serial = snl.sweep(boards, rules, players=2, metrics=["jump_uses"])
    with cf.ProcessPoolExecutor(max_workers=2) as pool:
        parallel = snl.sweep(boards, rules, players=2, metrics=["jump_uses"], executor=pool, chunksize=3)
        pd.testing.assert_frame_equal(serial, parallel, check_exact=True)
        with pytest.raises(snl.SweepError) as info:
            snl.sweep([snl.Board(9), snl.Board(7), STUCK, snl.Board(8)], TWO_FACED, executor=pool, chunksize=1)
    assert info.value.board == STUCK and info.value.index == 2


def test_a_dask_cluster_gives_the_serial_table_and_reports_failures():
    distributed = pytest.importorskip("distributed")
    boards = _boards()[:4]
    serial = snl.sweep(boards, ["app", "family"], players=2)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        distributed.Client(cluster, timeout=60) as client,
    ):
        executor = client.get_executor()
        on_dask = snl.sweep(boards, ["app", "family"], players=2, executor=executor, chunksize=2)
        pd.testing.assert_frame_equal(serial, on_dask, check_exact=True)
        with pytest.raises(snl.SweepError) as info:
            snl.sweep([snl.Board(9), STUCK], TWO_FACED, executor=executor, chunksize=1)
    assert info.value.board == STUCK


def test_monte_carlo_races_do_not_depend_on_the_executor():
    family = snl.Rules.preset("family")
    boards = [snl.Board(30, {3: 20, 25: 5}), snl.Board(30, {7: 18})]
    kw = dict(players=4, metrics=["race_method"], rng=5)
    serial = snl.sweep(boards, family, **kw)
    assert serial.loc[0, "race_method"].startswith("Monte Carlo")
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        threaded = snl.sweep(boards, family, executor=pool, chunksize=1, **kw)
    pd.testing.assert_frame_equal(serial, threaded, check_exact=True)
    assert np.isfinite(serial["first_seat_advantage"]).all()


def test_rules_grid():
    grid = snl.rules_grid("plain", faces=[4, 6], finish=["stay", "none"])
    assert [(r.faces, r.finish) for r in grid] == [(4, "stay"), (4, "none"), (6, "stay"), (6, "none")]

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


def _one_by_one(monkeypatch, *args, **kwargs):
    """The sweep with every pair through analyze(), as rows were made before the batched evaluator."""
    from snlmarkov.search import sweep as sweep_module

    with monkeypatch.context() as m:
        m.setattr(sweep_module, "_batch_rows", lambda tasks, options: {})
        return snl.sweep(*args, **kwargs)


@pytest.mark.parametrize(
    "rules",
    [
        snl.Rules(),
        snl.Rules.preset("family"),
        snl.Rules.preset("plain"),
        snl.Rules(on_cap="forfeit", start_on_six=True),
        snl.Rules(on_cap="restart", finish="none", die="2d6"),
    ],
    ids=["app", "family", "plain", "forfeit-start", "restart-2d6"],
)
def test_batched_rows_equal_the_analysis_of_each_pair(monkeypatch, rules):
    """Single-token rows come from the batched dense evaluator; they equal analyze() pair by pair."""
    boards = [snl.Board.random(60, rng=i) for i in range(12)] + [snl.Board.builtin()]
    kw = dict(quantiles=(0.1, 0.25, 0.9), longer_than=(5, 30), as_frame=False)
    metrics = ["ladder_share_min", "snake_share_max", "longest_ladder"]
    rows = snl.sweep(boards, rules, metrics=metrics, **kw)
    ref = _one_by_one(monkeypatch, boards, rules, metrics=metrics, **kw)
    assert len(rows) == len(ref)
    for row, want in zip(rows, ref):
        assert row.keys() == want.keys()
        for key, value in want.items():
            if isinstance(value, float):
                assert row[key] == pytest.approx(value, rel=1e-10, abs=1e-12, nan_ok=True), key
            else:
                assert row[key] == value, key


def test_batched_rows_do_not_depend_on_the_chunks():
    """The batched evaluator solves each board on its own shape: any split of the sweep gives the same bits."""
    boards = [snl.Board.random(80, rng=i) for i in range(40)]
    whole = snl.sweep(boards, as_frame=False, metrics=["ladder_share_min"])
    for chunk in (1, 7, 40):
        assert snl.sweep(boards, as_frame=False, metrics=["ladder_share_min"], chunksize=chunk) == whole


@pytest.mark.parametrize("batch", [1, 5, 256])
def test_batched_rows_do_not_depend_on_the_batch(monkeypatch, batch):
    """Each board's length stepping runs as far as its own batch's slowest board: the bits are the same."""
    boards = [snl.Board.random(80, rng=i) for i in range(24)]
    whole = snl.sweep(boards, as_frame=False, metrics=["ladder_share_min"])
    monkeypatch.setattr("snlmarkov.search.sweep.BATCH_BOARDS", batch)
    assert snl.sweep(boards, as_frame=False, metrics=["ladder_share_min"]) == whole

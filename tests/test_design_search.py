"""design(): reachable targets are met, impossible ones are reported, bad input is refused by name."""

import concurrent.futures as cf
import math

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov.search.target import Goal


def _layout(res):
    return [dict(b.board.jumps) for b in res.boards]


def test_the_jungle_boards_own_figures_are_reached_within_tolerance():
    a = snl.analyze(snl.Board.builtin())
    target = snl.Target(mean=a.expected_turns, sd=a.std_turns, tolerance=0.03)
    res = snl.design(target, ladders=9, snakes=10, rng=3, budget=12_000)
    assert res.met, res.message
    best = res.best
    check = snl.analyze(best.board)  # the figures reported are the exact ones
    assert abs(check.expected_turns - best.figures["mean"]) < 1e-9
    assert abs(check.std_turns - best.figures["sd"]) < 1e-9
    assert abs(check.expected_turns - a.expected_turns) <= 0.03 * a.expected_turns
    assert abs(check.std_turns - a.std_turns) <= 0.03 * a.std_turns
    assert len(best.board.ladders) == 9 and len(best.board.snakes) == 10
    assert all(b.met and b.distance == 0 for b in res.boards)


def test_an_impossible_target_ends_with_the_best_found_and_says_so():
    res = snl.design(snl.Target(mean=2.5), ladders=2, snakes=2, rng=1, budget=640)
    assert not res.met
    assert res.best.distance > 0 and math.isfinite(res.best.distance)
    assert "NOT met" in res.message and "mean == 2.5" in res.message
    assert res.evaluated <= 640
    assert [b.distance for b in res.boards] == sorted(b.distance for b in res.boards)


def test_the_same_seed_gives_the_same_boards_with_or_without_workers():
    target = snl.Target(mean=30, max_quantiles={0.9: 55})
    kw = dict(ladders=6, snakes=6, rng=11, budget=1280)
    serial = snl.design(target, **kw)
    assert _layout(serial) == _layout(snl.design(target, **kw))
    with cf.ThreadPoolExecutor(max_workers=3) as pool:
        threaded = snl.design(target, executor=pool, **kw)
    assert _layout(threaded) == _layout(serial)
    assert [b.figures for b in threaded.boards] == [b.figures for b in serial.boards]
    assert _layout(snl.design(target, **{**kw, "rng": 12})) != _layout(serial)


def test_every_kind_of_goal_and_constraint_is_respected():
    cons = snl.Constraints(max_ladder_length=40, max_snake_length=30, must_jump={50, 70}, no_jump={99, 1})
    target = snl.Target(
        max_mean=45,
        min_mean=25,
        max_longer_than={90: 0.1},
        max_first_seat_advantage={2: 0.02},
        min_ladder_share=0.2,
    )
    res = snl.design(target, ladders=6, snakes=6, constraints=cons, rng=5, budget=2560)
    for found in res.boards:
        b = found.board
        assert {50, 70} <= set(b.jumps)
        assert not ({99, 1} & (set(b.jumps) | set(b.jumps.values())))
        assert all(e - s <= 40 for s, e in b.ladders.items()) and all(s - e <= 30 for s, e in b.snakes.items())
        a = snl.analyze(b)
        f = found.figures
        assert abs(f["mean"] - a.expected_turns) < 1e-9
        assert abs(f["P(>90)"] - a.length.sf(90)) < 1e-12
        assert abs(f["advantage(2)"] - (snl.race(b, players=2).win_probability[0] - 0.5)) < 1e-9
        assert abs(f["ladder_share"] - a.hit_probability[list(b.ladders)].min()) < 1e-10
    assert res.met, res.message


def test_quantile_goals_read_the_exact_quantiles():
    res = snl.design(snl.Target(quantiles={0.5: 20}), ladders=5, snakes=5, rng=2, budget=640, keep=2)
    for found in res.boards:
        assert found.figures["q50"] == snl.analyze(found.board).length.median()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "at least one goal"),
        ({"mean": -3}, "cannot be negative"),
        ({"mean": "25"}, "must be a number"),
        ({"max_sd": math.inf}, "finite"),
        ({"quantiles": {1.2: 40}}, "strictly between 0 and 1"),
        ({"max_longer_than": {60: 2}}, "probability"),
        ({"max_longer_than": {6.5: 0.1}}, "whole number"),
        ({"first_seat_advantage": {9: 0.01}}, "2 to 6 players"),
        ({"quantiles": [0.9, 40]}, "mapping"),
        ({"mean": 20, "tolerance": -1}, "negative"),
    ],
)
def test_bad_targets_are_refused(kwargs, match):
    with pytest.raises(snl.TargetError, match=match):
        snl.Target(**kwargs)


def test_bad_goals_and_constraints_are_refused():
    with pytest.raises(snl.TargetError, match="unknown figure"):
        Goal("speed", "<=", 3)
    with pytest.raises(snl.TargetError, match="above max_snake_length"):
        snl.Constraints(min_snake_length=10, max_snake_length=5)
    with pytest.raises(snl.TargetError, match="both in must_jump and in no_jump"):
        snl.Constraints(must_jump={5}, no_jump={5, 6})
    with pytest.raises(snl.TargetError, match="whole number of squares"):
        snl.Constraints(max_ladder_length=0)
    with pytest.raises(snl.TargetError, match="collection of squares"):
        snl.Constraints(no_jump=7)
    t = snl.Target(mean=30)
    with pytest.raises(snl.TargetError, match="3 squares must hold a jump"):
        snl.design(t, ladders=1, snakes=1, constraints=snl.Constraints(must_jump={10, 20, 30}))
    with pytest.raises(snl.TargetError, match="not a square 1..99"):
        snl.design(t, constraints=snl.Constraints(no_jump={100}))
    with pytest.raises(snl.TargetError, match="bump"):
        snl.design(snl.Target(max_first_seat_advantage={2: 0.01}), rules=snl.Rules.preset("family"))
    with pytest.raises(snl.TargetError, match="could not place"):
        snl.design(t, ladders=3, snakes=0, constraints=snl.Constraints(min_ladder_length=98), budget=200)
    with pytest.raises(snl.TargetError, match="must be a Target"):
        snl.design({"mean": 30})
    with pytest.raises(snl.TargetError, match="budget"):
        snl.design(t, budget=10)


def test_designed_boards_round_trip_through_a_board_file(tmp_path):
    res = snl.design(snl.Target(mean=35), ladders=4, snakes=4, rng=4, budget=640, keep=1)
    from snlmarkov.search.files import write_board

    path = write_board(res.best.board, tmp_path / "b.toml", comment=res.message)
    again = snl.Board.from_file(path)
    assert again == res.best.board
    assert np.isclose(snl.analyze(again).expected_turns, res.best.figures["mean"], rtol=0, atol=1e-9)


def test_target_keywords_become_goals():
    t = snl.Target(
        mean=30,
        sd=12,
        min_mean=20,
        max_sd=20,
        quantiles={0.5: 25},
        max_quantiles={0.9: 50},
        longer_than={40: 0.2},
        max_longer_than={60: 0.05},
        min_longer_than={10: 0.8},
        first_seat_advantage={3: 0.0},
        max_first_seat_advantage={2: 0.01},
        min_ladder_share=0.2,
    )
    labels = [g.label for g in t.goals]
    assert labels == [
        "mean == 30 +- 0.6",
        "sd == 12 +- 0.24",
        "mean >= 20",
        "sd <= 20",
        "q50 == 25 +- 1",
        "q90 <= 50",
        "P(>40) == 0.2 +- 0.01",
        "P(>60) <= 0.05",
        "P(>10) >= 0.8",
        "advantage(3) == 0 +- 0.01",
        "advantage(2) <= 0.01",
        "ladder_share >= 0.2",
    ]
    figs = {g.key: np.array([g.value]) for g in t.goals}
    figs["mean"], figs["sd"] = np.array([30.0]), np.array([12.0])
    assert t.distance(figs)[0] == 0.0
    figs["P(>60)"] = np.array([0.10])  # 5 points above the bound: one unit of distance
    assert t.distance(figs)[0] == pytest.approx(1.0)
    figs["mean"] = np.array([np.nan])  # an unwinnable board is infinitely far
    assert t.distance(figs)[0] == np.inf


def test_no_jump_squares_hold_neither_a_start_nor_an_end():
    """``no_jump`` forbids a jump's end as well as its start: with every third square forbidden, a
    search whose proposals ignored the ends would soon land one there (checked on every board kept)."""
    never = frozenset(range(3, 100, 3))
    cons = snl.Constraints(no_jump=never, max_ladder_length=30, max_snake_length=30)
    res = snl.design(snl.Target(mean=30), ladders=5, snakes=5, constraints=cons, rng=4, budget=640, keep=8)
    assert res.boards
    for found in res.boards:
        jumps = found.board.jumps
        assert not (never & set(jumps)), jumps
        assert not (never & set(jumps.values())), jumps


def test_jump_lengths_stay_within_both_limits():
    """Short limits on both kinds of jump and a target far out of reach (a short game: long ladders
    would help): the search's stretches and slides would soon pass a limit it did not check (checked
    on every board kept)."""
    cons = snl.Constraints(min_ladder_length=2, max_ladder_length=4, min_snake_length=2, max_snake_length=4)
    res = snl.design(snl.Target(mean=5), ladders=6, snakes=6, constraints=cons, rng=6, budget=640, keep=8)
    assert res.boards
    for found in res.boards:
        b = found.board
        assert all(2 <= e - s <= 4 for s, e in b.ladders.items()), b.ladders
        assert all(2 <= s - e <= 4 for s, e in b.snakes.items()), b.snakes


def test_must_jump_squares_keep_their_jump_through_the_search():
    """A target far out of reach keeps the search proposing for its whole budget: slides and redraws
    that moved a jump off a must_jump square would be kept if nothing checked them."""
    must = {10, 20, 30, 40, 50, 60}
    cons = snl.Constraints(must_jump=must)
    res = snl.design(snl.Target(mean=5), ladders=4, snakes=4, constraints=cons, rng=8, budget=640, keep=8)
    assert res.boards and not res.met
    for found in res.boards:
        assert must <= set(found.board.jumps), found.board.jumps

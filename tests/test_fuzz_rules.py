"""Fuzz: rule sets and boards built in Python. Any values: a model, or an SnlError, at once."""

from __future__ import annotations

from _fuzz import fuzz, hostile_number, hostile_text, hostile_value, time_limit
from hypothesis import given
from hypothesis import strategies as st

import snlmarkov as snl
from snlmarkov import Board, Rules, SnlError

FIELDS = ("finish", "bonus_on_six", "max_sixes", "on_cap", "start_on_six", "bump", "bump_to", "faces")
GOOD = {
    "finish": st.sampled_from(["stay", "bounce", "none"]),
    "bonus_on_six": st.booleans(),
    "max_sixes": st.one_of(st.none(), st.integers(1, 4)),
    "on_cap": st.sampled_from(["redeal", "forfeit"]),
    "start_on_six": st.booleans(),
    "bump": st.booleans(),
    "bump_to": st.integers(1, 40),
    "faces": st.integers(2, 12),
}
rule_kwargs = st.fixed_dictionaries({}, optional={f: st.one_of(GOOD[f], hostile_value) for f in FIELDS})
small_board = st.builds(
    lambda size, jumps, seed: Board.random(size, jump_fraction=jumps, rng=seed),
    st.integers(2, 40),
    st.floats(0, 0.4),
    st.integers(0, 1000),
)


@fuzz(3)
@given(kwargs=rule_kwargs, board=small_board)
def test_rules_then_every_model(kwargs, board):
    with time_limit(20):
        try:
            rules = Rules(**kwargs)
        except SnlError:
            return
        for work in (
            lambda: snl.analyze(board, rules).length.mean(),
            lambda: snl.roll_model(board, rules),
            lambda: snl.simulate(board, rules, 50, players=2, rng=1),
            lambda: snl.Game(board, rules, players=2, rng=1).play(max_turns=5000),
            lambda: snl.race(board, rules, players=2, method="monte_carlo", games=50, rng=1),
        ):
            try:
                work()
            except SnlError:
                pass


@fuzz(2)
@given(
    size=hostile_value,
    jumps=st.one_of(hostile_value, st.dictionaries(st.one_of(hostile_number, hostile_text), hostile_value, max_size=3)),
)
def test_board_constructor(size, jumps):
    with time_limit(5):
        try:
            board = Board(size, jumps)
        except SnlError:
            return
        assert board.size >= 2


@fuzz(2)
@given(name=st.sampled_from(["pmf", "cdf", "sf", "ppf"]), value=st.one_of(hostile_value, st.lists(hostile_value)))
def test_length_distribution_methods(name, value):
    d = snl.analyze(Board(12, {3: 9}), Rules.preset("plain")).length
    with time_limit(5):
        try:
            getattr(d, name)(value)
        except SnlError:
            pass


@fuzz(2)
@given(rng=st.one_of(hostile_value, st.lists(hostile_value, max_size=3)))
def test_every_rng(rng):
    with time_limit(5):
        for work in (
            lambda: snl.simulate(Board(10), Rules(), 20, rng=rng),
            lambda: snl.Game(Board(10), players=1, rng=rng).play(),
            lambda: Board.random(20, rng=rng),
        ):
            try:
                work()
            except SnlError:
                pass

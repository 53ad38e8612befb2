"""Fuzz: game records. Any edit of a real record, any text: a record (verified or not) or an SnlError."""

from __future__ import annotations

import copy
import json

from _fuzz import fuzz, hostile_text, hostile_value, time_limit
from hypothesis import given
from hypothesis import strategies as st

from snlmarkov import Board, Game, GameRecord, Rules, SnlError, verify_game

RECORDS = [
    Game(Board.builtin(), rules, players=k, mode=mode, rng=seed).play().to_dict()
    for seed, (rules, k, mode) in enumerate(
        [
            (Rules(), 2, "classic"),
            (Rules.preset("family"), 3, "last_one_standing"),
            (Rules(on_cap="forfeit", start_on_six=True, finish="bounce"), 2, "classic"),
        ]
    )
]


def _paths(node, prefix=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


PATHS = [(r, p) for r, rec in enumerate(RECORDS) for p in _paths(rec)]


def _check(make) -> None:
    with time_limit(20):
        try:
            record = make()
        except SnlError:
            return
        assert isinstance(record, GameRecord)
        try:
            report = verify_game(record)
        except SnlError:
            return
        assert isinstance(report.passed, bool)
        str(report)


@fuzz(3)
@given(
    where=st.sampled_from(PATHS),
    value=st.one_of(hostile_value, st.dictionaries(hostile_text, hostile_value, max_size=2)),
    delete=st.booleans(),
)
def test_edited_records(where, value, delete):
    r, path = where
    data = copy.deepcopy(RECORDS[r])
    node = data
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    _check(lambda: GameRecord.from_json(json.dumps(data, default=str)))
    _check(lambda: GameRecord.from_dict(data))


@fuzz(1)
@given(text=st.one_of(hostile_text, st.text(max_size=200), st.binary(max_size=100)))
def test_arbitrary_text(text):
    _check(lambda: GameRecord.from_json(text))


@fuzz(0.5)
@given(depth=st.integers(1, 200_000), opener=st.sampled_from(["[", '{"a":']))
def test_deep_nesting(depth, opener):
    closer = "]" if opener == "[" else "}"
    _check(lambda: GameRecord.from_json(opener * depth + ("1" if opener != "[" else "") + closer * depth))

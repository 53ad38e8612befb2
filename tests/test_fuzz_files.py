"""Fuzz: board files. Whatever the bytes, Board.from_file gives a Board or an SnlError, at once."""

from __future__ import annotations

import json

from _fuzz import fuzz, hostile_text, hostile_value, time_limit
from hypothesis import given
from hypothesis import strategies as st

import snlmarkov as snl
from snlmarkov import Board, Rules, SnlError

squares = st.one_of(st.integers(-3, 40), hostile_value)
jumps = st.one_of(
    st.dictionaries(st.one_of(st.integers(-2, 40).map(str), hostile_text), squares, max_size=6),
    st.lists(st.lists(squares, min_size=0, max_size=3), max_size=5),
    hostile_value,
)
board_data = st.fixed_dictionaries(
    {},
    optional={
        "size": st.one_of(st.integers(-2, 60), hostile_value),
        "ladders": jumps,
        "snakes": jumps,
        "name": st.one_of(hostile_text, hostile_value),
        "extra": hostile_value,
    },
)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(v) if v == v and abs(v) != float("inf") else ("nan" if v != v else "inf")
    return json.dumps(v, ensure_ascii=False) if isinstance(v, (str, list)) else json.dumps(str(v))


def _as_toml(data: dict) -> str:
    lines, tables = [], []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append(f"[{key}]")
            tables += [f"{json.dumps(str(k), ensure_ascii=False)} = {_toml_value(v)}" for k, v in value.items()]
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join(lines + tables) + "\n"


def _check(path) -> None:
    with time_limit(10):
        try:
            board = Board.from_file(path)
        except SnlError:
            return
        assert isinstance(board, Board)
        str(board.name)
        if board.size <= 60:  # a board read from a file is analysable or named unwinnable
            try:
                snl.analyze(board, Rules.preset("plain"))
            except SnlError:
                pass


@fuzz(2)
@given(data=board_data, suffix=st.sampled_from([".json", ".toml"]), bom=st.booleans())
def test_structured_board_files(tmp_path_factory, data, suffix, bom):
    path = tmp_path_factory.mktemp("f") / f"board{suffix}"
    if suffix == ".json":
        text = json.dumps(data, ensure_ascii=False, default=str)
    else:
        text = _as_toml(data)
    raw = text.encode("utf-8", "surrogatepass")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + raw)
    _check(path)


@fuzz(1)
@given(raw=st.binary(max_size=300), suffix=st.sampled_from([".json", ".toml", ".txt", ""]))
def test_arbitrary_bytes(tmp_path_factory, raw, suffix):
    path = tmp_path_factory.mktemp("f") / f"board{suffix}"
    path.write_bytes(raw)
    _check(path)


@fuzz(0.5)
@given(path=st.one_of(hostile_text, st.sampled_from(["/dev/zero", "/dev/urandom", "/proc/self/mem", "/", "x.json"])))
def test_arbitrary_paths(path):
    _check(path)

"""Boards: validation, built-ins, files, layout."""

import json

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov import Board, BoardError, SnlError


def test_builtin_boards_match_rules_md():
    jungle = Board.builtin()
    assert jungle == Board.builtin("jungle")
    assert jungle.ladders == {1: 38, 4: 14, 9: 31, 21: 42, 28: 84, 36: 44, 51: 67, 71: 91, 80: 98}
    assert jungle.snakes == {16: 6, 47: 26, 49: 11, 56: 53, 62: 19, 64: 60, 87: 24, 93: 73, 95: 75, 99: 27}
    mb = Board.builtin("milton_bradley")
    assert mb.ladders == {1: 38, 4: 14, 9: 31, 21: 42, 28: 84, 36: 44, 51: 67, 71: 91, 80: 100}
    assert mb.snakes == {16: 6, 47: 26, 49: 11, 56: 53, 62: 19, 64: 60, 87: 24, 93: 73, 95: 75, 98: 78}
    assert Board.names() == ["jungle", "milton_bradley"]


def test_unknown_builtin_lists_names():
    with pytest.raises(BoardError, match="nope.*jungle, milton_bradley"):
        Board.builtin("nope")


@pytest.mark.parametrize(
    "size, jumps, culprit",
    [
        (10, {0: 5}, "0->5"),
        (10, {10: 3}, "10->3"),
        (10, {11: 3}, "11->3"),
        (10, {-1: 3}, "-1->3"),
        (10, {4: 4}, "4->4"),
        (10, {4: 11}, "4->11"),
        (10, {4: 0}, "4->0"),
        (10, {2: 7, 7: 1}, "2->7 ends on the start of 7->1"),
        (10, {5: 2, 2: 8}, "5->2 ends on the start of 2->8"),
    ],
)
def test_invalid_jumps_name_the_squares(size, jumps, culprit):
    with pytest.raises(BoardError) as err:
        Board(size, jumps)
    assert culprit in str(err.value)
    assert isinstance(err.value, SnlError) and isinstance(err.value, ValueError)


@pytest.mark.parametrize("size", [1, 0, -3, 2.5, "10", True])
def test_invalid_size(size):
    with pytest.raises(BoardError, match="size"):
        Board(size, {})


def test_duplicate_jump_from_one_square_in_data():
    with pytest.raises(BoardError, match="two jumps from square 5"):
        Board.from_dict({"size": 10, "ladders": {"5": 8}, "snakes": {"5": 2}})
    with pytest.raises(BoardError, match="two jumps from square 5"):
        Board.from_dict({"size": 10, "ladders": [[5, 8], [5, 9]]})


def test_ladder_and_snake_sections_checked():
    with pytest.raises(BoardError, match="ladder 8->5 does not go up"):
        Board.from_dict({"size": 10, "ladders": {"8": 5}})
    with pytest.raises(BoardError, match="snake 2->5 does not go down"):
        Board.from_dict({"size": 10, "snakes": {"2": 5}})


def test_board_is_frozen_and_hashable():
    b = Board(10, {2: 7})
    with pytest.raises(AttributeError):
        b.size = 11
    with pytest.raises(TypeError):
        b.jumps[3] = 5
    assert hash(b) == hash(Board(10, {2: 7}))
    assert b == Board(10, {2: 7}, name="other")


def test_destination_table():
    b = Board(8, {2: 6, 7: 3})
    assert b.destination().tolist() == [0, 1, 6, 3, 4, 5, 6, 3, 8]


def test_cell_layout_boustrophedon():
    b = Board.builtin()
    assert b.cell(1) == (0, 0)
    assert b.cell(10) == (0, 9)
    assert b.cell(11) == (1, 9)
    assert b.cell(20) == (1, 0)
    assert b.cell(21) == (2, 0)
    assert b.cell(100) == (9, 0)
    assert b.cell(91) == (9, 9)
    assert b.cell(0) == (0, -1)
    cells = {b.cell(s) for s in range(1, 101)}
    assert len(cells) == 100
    small = Board(9)
    assert small.width == 3 and small.cell(9) == (2, 2) and small.cell(4) == (1, 2)
    with pytest.raises(BoardError, match="square 101"):
        b.cell(101)


def test_toml_and_json_files_round_trip(tmp_path):
    b = Board.builtin("milton_bradley")
    j = tmp_path / "mb.json"
    j.write_text(json.dumps(b.to_dict()))
    assert Board.from_file(j) == b
    t = tmp_path / "small.toml"
    t.write_text('size = 20\nname = "tiny"\n[ladders]\n3 = 11\n[snakes]\n17 = 4\n')
    small = Board.from_file(t)
    assert small == Board(20, {3: 11, 17: 4}) and small.name == "tiny"
    assert Board.from_dict(small.to_dict()) == small


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("bad.toml", "size = ", "not valid TOML"),
        ("bad.json", "{size: 3", "not valid JSON"),
        ("nosize.json", '{"ladders": {}}', "missing 'size'"),
        ("extra.json", '{"size": 10, "code": "import os"}', "unknown key"),
        ("chain.json", '{"size": 10, "ladders": {"2": 7}, "snakes": {"7": 1}}', "2->7"),
        ("text.json", '{"size": 10, "ladders": {"two": 7}}', "a square must be written with the digits 0-9; got 'two'"),
        ("board.yaml", "size: 10", "must end in .toml or .json"),
    ],
)
def test_malformed_files_name_file_and_problem(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(BoardError) as err:
        Board.from_file(path)
    assert name in str(err.value) and message in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(BoardError, match="missing.toml.*cannot read"):
        Board.from_file(tmp_path / "missing.toml")


def test_random_board_is_valid_and_reproducible():
    a = Board.random(500, rng=3)
    assert a == Board.random(500, rng=3)
    assert a != Board.random(500, rng=4)
    assert 0.07 * 499 < len(a.jumps) <= 0.1 * 499 + 1
    assert all(abs(e - s) <= 12 for s, e in a.jumps.items())
    with pytest.raises(BoardError):
        Board.random(100, jump_fraction=2.0)
    dest = a.destination()
    assert np.all(dest[dest] == dest)  # no chains


@pytest.mark.parametrize("jumps", [{8: 3, 3: 5}, {3: 5, 8: 3}, {8: 3, 3: 9}, {2: 6, 6: 4}])
def test_a_jump_ending_on_another_jumps_start_is_refused_without_chain(jumps):
    """RULES: "a board on which some jump ends on another jump's start is rejected" (snakes too), in any order."""
    ((first, mid),) = [(s, e) for s, e in jumps.items() if e in jumps]
    with pytest.raises(BoardError, match=f"jumps chain: {first}->{mid} ends on the start of {mid}->{jumps[mid]}"):
        Board(10, jumps)
    data = {
        "size": 10,
        "ladders": {str(s): e for s, e in jumps.items() if e > s},
        "snakes": {str(s): e for s, e in jumps.items() if e < s},
    }
    with pytest.raises(BoardError, match="jumps chain"):
        Board.from_dict(data)
    chained = Board(10, jumps, chain=True)  # allowed, and followed to its end
    assert chained.destination()[first] == jumps[mid]


# ---------------------------------------------------------------- board files (from the planted-bug audit, benchmarks/mutation_audit.py)
def test_board_file_parser_does_not_truncate(tmp_path):
    for text in ('{"size": 10.5}', '{"size": 10, "ladders": {"2": 7.5}}', '{"size": 10, "snakes": [[9.9, 3]]}'):
        path = tmp_path / "b.json"
        path.write_text(text)
        with pytest.raises(snl.BoardError, match="must be an integer"):
            Board.from_file(path)
    path.write_text('{"size": 10.0, "ladders": {"2": 7.0}}')
    assert Board.from_file(path) == Board(10, {2: 7})

"""Choice rules and policies as data: validation, repr, to_dict round trips, saved policies as hostile files."""

from __future__ import annotations

import base64
import copy
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import snlmarkov as snl
from snlmarkov import Board, Die, Policy, Rules
from snlmarkov.errors import LimitError, PolicyError, RuleError, SnlError
from snlmarkov.policy import FORMAT, decision_shape


# ------------------------------------------------------------------ rules
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"choose_die": (4,)}, "2..8 dice"),
        ({"choose_die": tuple(range(2, 12))}, "2..8 dice"),
        ({"choose_die": (4, 4)}, "same die twice"),
        ({"choose_die": (Die(4), Die.faces(1, 2, 3, 4))}, "same die twice"),
        ({"choose_die": "46"}, "tuple of dice"),
        ({"choose_die": None}, "tuple of dice"),
        ({"choose_die": (4, "d0")}, r"choose_die\[1\]"),
        ({"choose_die": (4, Die.faces(3, 3))}, r"choose_die\[1\].*single value"),
        ({"choose_die": (4, 6), "choose_move": 2}, "cannot both"),
        ({"choose_die": (4, 6), "die": 8}, "first of the dice"),
        ({"choose_move": 1}, "2..8"),
        ({"choose_move": 9}, "2..8"),
        ({"choose_move": True}, "2..8"),
        ({"choose_move": 2.0}, "2..8"),
        ({"choose_move": "2"}, "2..8"),
        ({"choose_move": 2, "die": Die.faces(3), "bonus_on_six": False}, "two values"),
    ],
)
def test_choice_rules_are_validated(kwargs, match):
    with pytest.raises(RuleError, match=match):
        Rules(**kwargs)


def test_choice_rules_repr_round_trip_and_options():
    r = Rules(choose_die=[Die(4), "2d6", Die.faces(0, 0, 4, 4, 4, 4)], finish="bounce")
    assert r.choose_die == (Die(4), Die.sum_of(2, 6), Die.faces(0, 0, 4, 4, 4, 4)) and r.die == Die(4)
    assert r.choice == "die" and r.options == r.choose_die
    assert "choose_die=(Die(4)," in repr(r) and "choose_move" not in repr(r)
    assert eval(repr(r), {"Rules": Rules, "Die": Die}) == r  # noqa: S307 (our own repr)
    for rules in (r, Rules(choose_move=3, die="faces:1,2,2,5"), Rules(choose_die=(Die.weighted({1: 1, 5: 2}), 6))):
        d = rules.to_dict()
        assert Rules(**json.loads(json.dumps(d))) == rules
        assert hash(Rules(**d)) == hash(rules)
    m = Rules(choose_move=2, die=4)
    assert m.choice == "move" and m.options == (1, 2, 3, 4) and "choose_move=2" in repr(m)
    assert m.option_rules() == Rules(die=4) and r.option_rules(1) == Rules(die="2d6", finish="bounce")
    with pytest.raises(RuleError, match="option must be 0..2"):
        r.option_rules(3)
    assert Rules().choice == "" and Rules().options == ()
    with pytest.raises(RuleError, match="needs a policy"):
        snl.expected_turns(Board.builtin(), m)
    with pytest.raises(RuleError, match="needs a policy"):
        snl.turn_model(Board.builtin(), r)
    with pytest.raises(RuleError, match="at least 12 squares"):
        snl.optimal_policy(Board(10), r)


# ------------------------------------------------------------------ policies
def test_policy_construction_is_checked():
    for bad in ({"kind": "best"}, {"kind": "random", "seed": -1}, {"kind": "random", "seed": 2**63}):
        with pytest.raises(PolicyError):
            Policy(**bad)
    with pytest.raises(PolicyError, match="seed"):
        Policy("random", seed=True)
    with pytest.raises(PolicyError, match="optimal_policy or Policy.from_table"):
        Policy("table")
    with pytest.raises(PolicyError, match="200 characters"):
        Policy("greedy", name="x" * 201)
    with pytest.raises(PolicyError, match=r"Policy\.fixed"):
        Policy.fixed("d0")
    board, rules = Board(10), Rules(choose_die=(4, 6))
    shape = decision_shape(board, rules)
    with pytest.raises(PolicyError, match="shape"):
        Policy.from_table(board, rules, np.zeros((2, 10, 1, 2)))
    with pytest.raises(PolicyError, match="order"):
        Policy.from_table(board, rules, np.zeros(shape))
    with pytest.raises(PolicyError, match="values"):
        Policy.from_table(board, rules, np.broadcast_to([0, 1], shape), values=[1.0, 2.0])
    with pytest.raises(PolicyError, match="no choice"):
        decision_shape(board, Rules())
    with pytest.raises(PolicyError, match="no table"):
        Policy.greedy().table  # noqa: B018
    with pytest.raises(PolicyError, match="carries no values"):
        Policy.greedy().values  # noqa: B018
    with pytest.raises(PolicyError, match="die_index is for choose_die"):
        snl.optimal_policy(board, Rules(choose_move=2)).table.die_index(0, 0, 0)
    t = snl.optimal_policy(board, Rules(choose_move=2)).table
    with pytest.raises(PolicyError, match="cannot show"):
        t.pick(0, 0, 0, (1, 7))
    with pytest.raises(PolicyError, match="cannot show"):
        t.pick(0, 0, 0, ())
    assert t.pick(0, 0, 0, (1, 1)) == 1


def _solved():
    board = Board(12, {3: 9, 11: 2})
    return [
        snl.optimal_policy(board, Rules(choose_die=(3, Die.faces(0, 2, 5)))),
        snl.optimal_policy(board, Rules(choose_move=2, die=4, on_cap="forfeit")),
        snl.optimal_policy(board, Rules(choose_die=(3, 4), max_sixes=None), objective="within", turns=4),
        Policy.fixed(4),
        Policy.greedy(),
        Policy.random(5),
    ]


def test_policies_round_trip_through_json(tmp_path):
    for k, p in enumerate(_solved()):
        path = p.save(tmp_path / f"p{k}.json")
        q = Policy.load(path)
        assert (q.kind, q.name, q.objective) == (p.kind, p.name, p.objective)
        assert Policy.from_dict(json.loads(json.dumps(p.to_dict()))).to_dict() == p.to_dict()
        if p.kind == "table":
            assert np.array_equal(q.table.ranks, p.table.ranks)
            assert np.array_equal(q.values, p.values)  # floats survive JSON exactly
            board, rules = p.table.board, p.table.rules
            assert (
                snl.analyze(board, rules, policy=q).expected_turns == snl.analyze(board, rules, policy=p).expected_turns
            )
            assert len(q.stages) == len(p.stages)
            for a, b in zip(q.stages, p.stages):
                assert np.array_equal(a.table.ranks, b.table.ranks) and (a.name, a.objective) == (b.name, b.objective)
        elif p.kind == "fixed":
            assert q.die == p.die
        elif p.kind == "random":
            assert q.seed == p.seed


def test_a_policy_with_unsolvable_squares_round_trips(tmp_path):
    board = Board(8, {3: 1})
    rules = Rules(choose_die=(Die(2), Die.faces(3)), bonus_on_six=False, max_sixes=None)
    p = snl.optimal_policy(board, rules)
    data = p.to_dict()
    q = Policy.load(p.save(tmp_path / "p.json"))
    assert np.array_equal(q.values, p.values) and data["format"] == FORMAT


def _table_dict() -> dict:
    return snl.optimal_policy(Board(12, {3: 9}), Rules(choose_die=(3, 4))).to_dict()


def _broken() -> dict:
    d = _table_dict()
    n = int(np.prod(d["shape"]))
    cases = {
        "not a mapping": [1, 2],
        "format": {**d, "format": "snlmarkov.policy/0"},
        "kind": {**d, "kind": "best"},
        "shape": {**d, "shape": [3, 12, 1, 3]},
        "shape kind": {**d, "shape": "3x12"},
        "base64": {**d, "ranks": "###"},
        "ranks length": {**d, "ranks": base64.b64encode(bytes(n - 1)).decode()},
        "ranks not orders": {**d, "ranks": base64.b64encode(bytes(n)).decode()},
        "ranks big": {**d, "ranks": base64.b64encode(bytes([200]) * n).decode()},
        "values length": {**d, "values": [1.0, 2.0]},
        "values kind": {**d, "values": "many"},
        "values text": {**d, "values": ["x"] * 13},
        "values nested": {**d, "values": [[1.0]] * 13},
        "rules": {**d, "rules": {"finish": "exact"}},
        "rules unknown": {**d, "rules": {"colour": "red"}},
        "rules missing": {k: v for k, v in d.items() if k != "rules"},
        "board": {**d, "board": {"size": -3}},
        "board missing": {k: v for k, v in d.items() if k != "board"},
        "no choice": {**d, "rules": Rules().to_dict()},
        "seed": {"format": FORMAT, "kind": "random", "seed": "many"},
        "die": {"format": FORMAT, "kind": "fixed", "die": "d0"},
        "name": {"format": FORMAT, "kind": "greedy", "name": 5},
        "stages kind": {**d, "stages": "all"},
        "stages entry": {**d, "stages": [5]},
        "stages ranks": {**d, "stages": [{"name": "s", "ranks": "AAAA"}]},
        "stages name": {**d, "stages": [{"name": 5, "ranks": d["ranks"]}]},
    }
    return cases


@pytest.mark.parametrize("case", list(_broken()))
def test_broken_policy_data_is_refused(case):
    with pytest.raises(PolicyError):
        Policy.from_dict(_broken()[case])


@pytest.mark.parametrize("case", ["format", "ranks length", "values text", "board"])
def test_broken_policy_files_name_the_file(case, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_broken()[case]), encoding="utf-8")
    with pytest.raises(PolicyError, match="bad.json"):
        Policy.load(path)


def test_hostile_policy_files(tmp_path, monkeypatch):
    good = tmp_path / "p.json"
    good.write_text(json.dumps(_table_dict()), encoding="utf-8")
    assert Policy.load(good).kind == "table"
    (tmp_path / "p.txt").write_text("{}", encoding="utf-8")
    (tmp_path / "latin.json").write_bytes(b'{"format": "\xe9"}')
    (tmp_path / "twice.json").write_text('{"format": 1, "format": 2}', encoding="utf-8")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (tmp_path / "junk.json").write_text("{not json", encoding="utf-8")
    for name, match in [
        ("p.txt", "json"),
        ("latin.json", "UTF-8"),
        ("twice.json", "twice"),
        ("deep.json", "JSON"),
        ("junk.json", "JSON"),
        ("missing.json", "missing.json"),
    ]:
        with pytest.raises(PolicyError, match=match):
            Policy.load(tmp_path / name)
    with pytest.raises(PolicyError):
        Policy.load(tmp_path)  # a directory
    monkeypatch.setenv("SNLMARKOV_MAX_FILE_BYTES", "200")
    with pytest.raises(LimitError, match="200"):
        Policy.load(good)


def test_memory_is_checked_before_work(monkeypatch):
    monkeypatch.setenv("SNLMARKOV_MEMORY_LIMIT", "64M")
    with pytest.raises(LimitError, match="forfeit"):  # levels x N x N states
        snl.optimal_policy(Board(3000), Rules(choose_die=(4, 6), on_cap="forfeit"))
    with pytest.raises(LimitError, match="turns left"):
        snl.optimal_policy(Board(2000), Rules(choose_die=(4, 6)), objective="within", turns=10_000)
    from snlmarkov.chain import choice

    monkeypatch.setattr(choice, "MAX_POLICY_HIT_WORK", 1000)
    rules = Rules(choose_die=(4, 6))
    a = snl.analyze(Board.builtin(), rules, policy=snl.optimal_policy(Board.builtin(), rules))
    with pytest.raises(LimitError, match="MAX_POLICY_HIT_WORK"):
        a.hit_probability  # noqa: B018
    assert a.landings.shape == (101,)


# ------------------------------------------------------------------ hypothesis
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    field=st.sampled_from(
        ["format", "kind", "name", "objective", "board", "rules", "shape", "ranks", "values", "die", "stages"]
    ),
    value=_json,
)
def test_any_mangled_field_gives_a_policy_error(field, value):
    data = copy.deepcopy(_TABLE)
    data[field] = value
    try:
        p = Policy.from_dict(data)
    except PolicyError:
        return
    except SnlError as exc:  # pragma: no cover - shown if it happens
        raise AssertionError(f"{type(exc).__name__} instead of PolicyError: {exc}") from None
    assert isinstance(p, Policy)


_TABLE = _table_dict()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), size=st.integers(3, 12), k=st.integers(2, 4), forfeit=st.booleans())
def test_random_tables_round_trip(seed, size, k, forfeit):
    rules = Rules(choose_die=tuple(range(2, 2 + k)), on_cap="forfeit" if forfeit else "redeal")
    board = Board(size)
    t = Policy.random(seed).resolve(board, rules)
    p = Policy.from_table(board, rules, t.ranks, name="r", objective="o")
    q = Policy.from_dict(json.loads(json.dumps(p.to_dict())))
    assert np.array_equal(q.table.ranks, t.ranks) and q.table.shape == decision_shape(board, rules)


def test_the_policies_page_runs():
    """Every code block of docs/policies.md runs, in order, in one namespace."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "policies.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 5
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/policies.md", "exec"), namespace)  # noqa: S102 (our own page)
    assert namespace["again"].value == namespace["best"].value

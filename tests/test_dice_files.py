"""A die round-trips through rule files (TOML and JSON) and game records; hostile dice are refused by name."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snlmarkov import Board, Die, Game, GameRecord, Rules
from snlmarkov.errors import GameError, RuleError
from snlmarkov.search.files import read_rules, rules_from_mapping, rules_toml, write_rules

#: Any die: up to 12 values 0..40 (not only 0), weights 1..9.
dice = st.dictionaries(st.integers(0, 40), st.integers(1, 9), min_size=1, max_size=12).filter(lambda d: set(d) != {0})
rule_sets = st.builds(
    Rules,
    finish=st.sampled_from(["stay", "bounce", "none"]),
    bonus_on_six=st.just(False),
    max_sixes=st.sampled_from([None, 1, 3]),
    on_cap=st.sampled_from(["forfeit", "restart"]),
    bump=st.booleans(),
    jump_after_bounce=st.booleans(),
    die=dice.map(Die.weighted),
)

SHOWN = [
    Die(6),
    Die(4),
    Die.spinner(15),
    Die.sum_of(2, 6),
    Die.faces(2, 2, 2, 2, 6, 6),
    Die.faces(0, 0, 4, 4, 4, 4),
    Die.weighted({1: 1, 2: 1, 6: 4}),
    Die.cowries(4),
    Die.cowries(4, zero=0),
    Die.weighted({3: 1}),
]


@pytest.mark.parametrize("die", SHOWN, ids=lambda d: d.spec)
@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_rule_file_round_trip(die: Die, suffix: str, tmp_path) -> None:
    rules = Rules.preset("plain").replace(die=die, finish="bounce")
    path = write_rules(rules, tmp_path / f"r{suffix}")
    assert read_rules(path) == rules
    text = path.read_text()
    if die.is_fair:  # a fair die is written as faces, as files always had it
        assert "faces" in text and '"die"' not in text and "die =" not in text
    else:
        assert die.spec in text and "faces" not in text


@settings(max_examples=60, deadline=None)
@given(rules=rule_sets)
def test_any_rules_round_trip_through_toml_and_json(rules: Rules) -> None:
    import tomllib

    assert rules_from_mapping(tomllib.loads(rules_toml(rules, comment="a\nb"))) == rules
    assert rules_from_mapping(json.loads(json.dumps(rules.to_dict()))) == rules


def test_a_rule_file_may_give_a_preset_and_a_few_fields(tmp_path) -> None:
    path = tmp_path / "house.toml"
    path.write_text('# house rules\npreset = "family"\ndie = "cowries:4"\nmax_sixes = "none"\n', encoding="utf-8")
    assert read_rules(path) == Rules.preset("family").replace(die=Die.cowries(4))
    path.write_text('\ufeff{"faces": 4, "max_sixes": null}', encoding="utf-8")
    json_path = path.with_suffix(".json")
    path.rename(json_path)
    assert read_rules(json_path) == Rules(faces=4, max_sixes=None)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"die": "spinner:1"}, "r.toml: die: a spinner's range must be an integer 2..1000; got 1"),
        ({"die": "x" * 30_000}, "r.toml: die: a die's text form is at most 20000 characters"),
        ({"die": "faces:7,7,7"}, "has a single value"),
        ({"die": 1}, "r.toml: die: faces must be an integer 2..1000; got 1"),
        ({"die": True}, "r.toml: die must be a text form"),
        ({"die": 2.5}, "r.toml: die must be a text form"),
        ({"faces": "6"}, "faces must be an integer"),
        ({"faces": 0}, "r.toml: faces must be an integer 2..1000"),
        ({"die": "d4", "faces": 6}, "give the die once"),
        ({"dice": "d6"}, "unknown key(s) 'dice'"),
        ({"preset": ["app"]}, "preset must be a preset's name"),
        ({"max_sixes": "two"}, "max_sixes must be an integer"),
    ],
)
def test_hostile_rule_tables_are_refused_by_field(data, message) -> None:
    with pytest.raises(RuleError) as info:
        rules_from_mapping(data, source="r.toml")
    assert message in str(info.value) and len(str(info.value)) < 400


def test_a_rule_file_that_is_not_a_table_or_not_a_file(tmp_path) -> None:
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(RuleError, match="expected a table of rule fields"):
        read_rules(tmp_path / "list.json")
    with pytest.raises(RuleError, match="must end in .toml or .json"):
        read_rules(tmp_path / "rules.txt")
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(RuleError, match="regular file"):
        read_rules(tmp_path / "folder.json")
    with pytest.raises(RuleError, match="must end in .toml or .json"):
        write_rules(Rules(), tmp_path / "r.yaml")


# ---------------------------------------------------------------- game records
def _record_with(die: Die, rolls: list[int]) -> GameRecord:
    """A one-seat record on a tiny board played with the fair die, then relabelled with ``die``.

    The engine's own play with any die is tested by its owners; this checks the
    record format: the rolls are chosen so that ``die`` can show them, and the
    moves are the same under plain rules whatever the die.
    """
    played = Game(Board(6), Rules.preset("plain"), players=1, dice=rolls).play()
    data = played.to_dict()
    data["rules"] = Rules.preset("plain").replace(die=die).to_dict()
    return GameRecord.from_dict(data)


@pytest.mark.parametrize(
    "die, rolls",
    [
        (Die.weighted({1: 1, 2: 1, 6: 4}), [2, 2, 2]),
        (Die.sum_of(2, 3), [2, 4]),
        (Die.cowries(4), [3, 3]),
        (Die.faces(2, 2, 2, 2, 6, 6), [6]),
        (Die(4), [4, 2]),
    ],
    ids=lambda x: getattr(x, "spec", ""),
)
def test_record_round_trip_keeps_the_die(die: Die, rolls: list[int]) -> None:
    record = _record_with(die, rolls)
    assert record.rules.die == die
    again = GameRecord.from_json(record.to_json())
    assert again == record and again.rules.die == die
    stored = json.loads(record.to_json())["rules"]
    assert ("die" in stored) is not die.is_fair and ("faces" in stored) is die.is_fair


def test_record_refuses_a_roll_the_die_cannot_show() -> None:
    data = _record_with(Die.weighted({1: 1, 2: 1, 6: 4}), [2, 2, 2]).to_dict()
    data["rules"] = Rules.preset("plain").replace(die=Die.faces(1, 3, 6)).to_dict()
    with pytest.raises(GameError, match="a roll of 2, which the die cannot show"):
        GameRecord.from_dict(data)


@pytest.mark.parametrize(
    "die, message",
    [
        ("bogus", "cannot read the die"),
        ("x" * 30_000, "at most 20000 characters"),
        ([2, 2, 6], "die must be a Die, a number of faces or a text form"),
        ("weights:1=1,2=" + "9" * 70, "cannot read the die"),
    ],
)
def test_record_with_a_hostile_die(die, message) -> None:
    data = _record_with(Die(6), [2, 2, 2]).to_dict()
    data["rules"] = {**data["rules"], "die": die}
    del data["rules"]["faces"]
    with pytest.raises(RuleError) as info:
        GameRecord.from_dict(data)
    assert message in str(info.value) and len(str(info.value)) < 400

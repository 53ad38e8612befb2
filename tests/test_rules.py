"""Rules: fields, presets, validation."""

import pytest

from snlmarkov import Board, RuleError, Rules


def test_presets_match_rules_md():
    assert Rules.preset() == Rules.preset("app") == Rules()
    app = Rules()
    assert (app.finish, app.bonus_on_six, app.max_sixes, app.on_cap, app.start_on_six, app.bump) == (
        "stay",
        True,
        2,
        "redeal",
        False,
        False,
    )
    fam = Rules.preset("family")
    assert (fam.finish, fam.bonus_on_six, fam.start_on_six, fam.bump, fam.bump_to) == ("bounce", False, True, True, 1)
    plain = Rules.preset("plain")
    assert (plain.finish, plain.bonus_on_six, plain.start_on_six, plain.bump) == ("stay", False, False, False)
    assert Rules.presets() == ["app", "family", "plain"]
    assert [Rules.preset(n).preset_name for n in Rules.presets()] == ["app", "family", "plain"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"finish": "exact"}, "finish must be one of"),
        ({"on_cap": "explode"}, "on_cap must be one of"),
        ({"bonus_on_six": 1}, "bonus_on_six must be True or False"),
        ({"start_on_six": "yes"}, "start_on_six must be True or False"),
        ({"bump": None}, "bump must be True or False"),
        ({"max_sixes": 0}, "max_sixes must be an integer 1..1000 or None"),
        ({"max_sixes": 1.5}, "max_sixes"),
        ({"faces": 1}, "faces must be an integer 2..1000"),
        ({"faces": True}, "faces"),
        ({"bump_to": 0}, "bump_to must be an integer >= 1"),
    ],
)
def test_invalid_values(kwargs, message):
    with pytest.raises(RuleError, match=message):
        Rules(**kwargs)


def test_unknown_preset_and_field():
    with pytest.raises(RuleError, match="unknown rule preset 'house'"):
        Rules.preset("house")
    with pytest.raises(RuleError, match="unknown rule field"):
        Rules().replace(colour="red")


def test_frozen_and_round_trip():
    r = Rules(finish="bounce", max_sixes=None)
    with pytest.raises(AttributeError):
        r.finish = "stay"
    assert Rules(**r.to_dict()) == r
    assert r.replace(faces=8).faces == 8


def test_board_fit():
    with pytest.raises(RuleError, match="bounce.*at least 6"):
        Rules(finish="bounce").check_board(Board(5))
    Rules(finish="bounce").check_board(Board(6))
    with pytest.raises(RuleError, match="bump_to=10 is not a square 1..9"):
        Rules(bump=True, bump_to=10).check_board(Board(10))

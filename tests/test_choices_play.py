"""Choice rules on the play side (issue 19): the engine's decisions, AI seats, records, replays and verify_game."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov import Board, Die, Game, GameError, GameRecord, Policy, PolicyError, Rules, Seat
from snlmarkov.chain.choice import resolve as exact_resolve
from snlmarkov.game.events import ChooseDie, ChooseMove, Roll, RolledDice
from snlmarkov.playkernel import furthest, resolve_policy
from snlmarkov.policy import decision_shape

SMALL = Board(30, {3: 22, 5: 8, 11: 26, 20: 29, 17: 4, 19: 7, 21: 9, 27: 1})
DIE = Rules(choose_die=(4, 6))
MOVE = Rules(choose_move=2)
RULE_SETS = [
    DIE,
    MOVE,
    Rules(choose_die=(4, 6, Die.faces(0, 0, 4, 4, 4, 4)), on_cap="forfeit", bump=True),
    Rules(choose_move=3, start_on_six=True, on_cap="restart", finish="bounce"),
    Rules(choose_die=(6, 8), max_sixes=None, finish="none"),
]


def kinds(events):
    return [e.kind for e in events]


@functools.cache
def optimal(rules):
    return snl.optimal_policy(SMALL, rules)


def ai_seats(rules):
    return [
        Seat("Rand", "red", policy="random"),
        Seat("Greedy", "blue", policy="greedy"),
        Seat("Opt", "green", policy=optimal(rules)),
    ]


# ------------------------------------------------------------ human seats
def test_a_human_chooses_the_die_before_every_roll_bonus_rolls_too():
    game = Game(Board(20), DIE, players=["Ann"], dice=[6, 4, 2])
    assert game.take_turn() == [] and game.waiting
    d = game.decision
    assert (d.kind, d.square, d.sixes, d.origin, d.capped, d.options, d.others) == (
        "die",
        0,
        0,
        0,
        False,
        (Die(4), Die(6)),
        (),
    )
    assert kinds(game.choose(1)) == ["choose_die", "roll", "move", "bonus_roll"]
    assert game.decision.square == 6 and game.decision.sixes == 1 and game.positions == (0,)
    # the d4's top is its six; two sixes: the cap is announced before the next choice
    assert kinds(game.choose(Die(4))) == ["choose_die", "roll", "move", "bonus_roll", "cap_reached"]
    assert game.decision.capped
    assert kinds(game.choose("d6")) == ["choose_die", "roll", "move"]
    assert not game.waiting and game.positions == (12,) and game.total_turns == 1
    log = game.log
    assert kinds(log).count("cap_reached") == 1
    cap = kinds(log).index("cap_reached")
    assert kinds(log)[cap + 1 : cap + 3] == ["choose_die", "roll"]  # the choice is made knowing the roll is capped
    assert [(e.die, e.spec) for e in log if isinstance(e, ChooseDie)] == [(1, "d6"), (0, "d4"), (1, "d6")]


def test_the_entering_roll_is_chosen_for_too():
    game = Game(Board(20), Rules(choose_die=(4, 6), start_on_six=True), players=1, dice=[6, 3])
    game.take_turn()
    assert kinds(game.choose(1)) == ["choose_die", "roll", "enter"]
    assert game.waiting and game.decision.sixes == 1
    assert kinds(game.choose(0))[-1] == "move" and game.positions == (3,)


def test_a_human_picks_one_value_of_the_dice_thrown():
    game = Game(Board(20, {4: 15}), MOVE, players=["Ann", "Bob"], dice=[4, 2, 1, 1])
    assert kinds(game.take_turn()) == ["rolled_dice"]
    assert game.decision.options == (4, 2) and game.decision.others == (0,)
    with pytest.raises(GameError, match="pick one of the values thrown"):
        game.pick(3)
    with pytest.raises(GameError, match="waits for Ann to choose"):
        game.choose(0)
    with pytest.raises(GameError, match="waits for Ann"):
        game.take_turn()
    events = game.pick(4)
    assert kinds(events) == ["choose_move", "roll", "move", "ladder"]
    assert events[1] == Roll(seat=0, turn=0, value=4, capped=False)
    assert game.positions == (15, 0) and game.current_seat == 1
    game.take_turn()
    assert game.decision.others == (15,)
    with pytest.raises(GameError, match="waits for no choice"):
        Game(Board(20), MOVE, players=1, dice=[]).pick(1)


def test_choose_refuses_a_die_the_rules_do_not_offer():
    game = Game(Board(20), DIE, players=1, dice=[1])
    game.take_turn()
    for bad in (2, -1, "d8", True, 1.0):
        with pytest.raises(GameError):
            game.choose(bad)
    assert game.waiting


def test_play_refuses_to_choose_for_a_human():
    with pytest.raises(GameError, match="cannot choose for the human seat 'Ann'"):
        Game(SMALL, DIE, players=["Ann"], rng=1).play()


def test_skip_turn_drops_a_turn_that_waits():
    game = Game(Board(20), MOVE, players=2, dice=[3, 5])
    game.take_turn()
    assert game.skip_turn() == [snl.game.events.Skip(seat=0, turn=0)]
    assert not game.waiting and game.positions == (0, 0) and game.current_seat == 1
    assert kinds(game.log) == ["skip"]


def test_dice_running_out_mid_turn_leave_the_game_as_before_the_turn():
    game = Game(Board(20), DIE, players=1, dice=[6])
    game.take_turn()
    game.choose(1)  # a six: the bonus roll waits for a die
    with pytest.raises(snl.DiceError):
        game.choose(0)
    assert not game.waiting and game.positions == (0,) and game.log == () and game.total_turns == 0


# ------------------------------------------------------------ AI seats
def test_seat_strengths():
    assert Seat("A", "red").strength == "human" and Seat("A", "red").is_human
    assert Seat("A", "red", policy="greedy").strength == "greedy"
    assert Seat("A", "red", policy="random").policy.seed == Seat("A", "blue", policy="random").policy.seed
    assert Seat("A", "red", policy="random").policy.seed != Seat("B", "red", policy="random").policy.seed
    assert Seat("A", "red", policy=optimal(DIE)).strength == "optimal"
    assert Seat("A", "red", policy="greedy") == Seat("A", "red")  # the policy is not part of equality
    assert repr(Seat("A", "red", policy="greedy")) == "Seat(name='A', colour='red', strength='greedy')"
    with pytest.raises(GameError, match="optimal_policy"):
        Seat("A", "red", policy="optimal")
    with pytest.raises(GameError, match="must be a Policy"):
        Seat("A", "red", policy="clever")


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.choice}-{r.on_cap}-{r.finish}")
def test_ai_seats_play_record_replay_and_verify(rules):
    record = Game(SMALL, rules, ai_seats(rules), mode="last_one_standing", rng=3).play()
    assert sorted(record.finishing_order) == [0, 1, 2]
    n_rolls = len(record.dice)
    per = {"die": [ChooseDie], "move": [RolledDice, ChooseMove]}[rules.choice]
    for cls in per:
        assert sum(isinstance(e, cls) for e in record.log) == n_rolls  # one choice per roll
    again = GameRecord.from_json(record.to_json())
    assert again == record and again.choices() == record.choices()
    assert Game.replay(again).record() == record
    report = snl.verify_game(again)
    assert report.passed, report.failures
    assert np.isfinite(report.log_probability) and report.log_probability == report.rolls_log_probability


def test_ai_choices_are_their_policies_choices():
    board = Board(10, {5: 9})
    game = Game(board, DIE, [Seat("G", "red", policy="greedy"), Seat("F", "blue", policy=Policy.fixed(4))], dice=[1, 1])
    game.take_turn()
    game.take_turn()
    assert [e.spec for e in game.log if isinstance(e, ChooseDie)] == ["d6", "d4"]
    table = optimal(MOVE).table
    game = Game(SMALL, MOVE, [Seat("O", "red", policy=optimal(MOVE))], rng=5)
    for _ in range(30):
        if game.is_over:
            break
        game.take_turn()
    for t, group in _turn_groups(game.log):
        square, sixes = t, 0
        for thrown, pick in zip(
            [e for e in group if isinstance(e, RolledDice)], [e for e in group if isinstance(e, ChooseMove)]
        ):
            assert pick.value == table.pick(square, sixes, square, thrown.values)
            break  # the first roll of the turn: from where the turn began


def _turn_groups(log):
    """(start square, events) per turn of a one-seat game."""
    square, out = 0, []
    for turn in sorted({e.turn for e in log}):
        group = [e for e in log if e.turn == turn]
        out.append((square, group))
        for e in group:
            if e.kind in ("move", "ladder", "snake"):
                square = e.end
    return out


def test_a_race_policy_reads_the_other_seats_squares():
    shape = decision_shape(SMALL, DIE, others=1)
    ranks = np.empty(shape, dtype=np.int16)
    ranks[..., :5, :] = [1, 0]  # the d6 first while the other token is below 5 ...
    ranks[..., 5:, :] = [0, 1]  # ... else the d4
    race = Policy.from_table(SMALL, DIE, ranks)
    game = Game(SMALL, DIE, [Seat("R", "red", policy=race), Seat("H", "blue")], dice=[5, 5, 1])
    game.take_turn()  # the other token on 0: the d6, a 5 climbs to 8
    game.take_turn()
    game.choose(1)  # the human takes the d6 too, to 8
    game.take_turn()  # the other token on 8: the d4
    assert [e.spec for e in game.log if isinstance(e, ChooseDie)] == ["d6", "d6", "d4"]
    assert game.positions == (9, 8)
    with pytest.raises(GameError, match="race of 2 tokens; this game has 3 seats"):
        Game(SMALL, DIE, [Seat("R", "red", policy=race), Seat("H", "blue"), Seat("I", "green")])


def test_a_policy_for_other_rules_is_refused():
    with pytest.raises(PolicyError, match="other rules"):
        Game(SMALL, MOVE, [Seat("O", "red", policy=optimal(DIE))])


def test_resume_gives_the_seats_their_policies_again():
    game = Game(SMALL, DIE, [Seat("G", "red", policy="greedy"), Seat("H", "blue", policy="greedy")], rng=2)
    game.take_turn()
    with pytest.raises(GameError, match="cannot choose for the human"):
        Game.resume(game.record(), rng=4).play()
    again = Game.resume(game.record(), rng=4, seats=game.seats)
    assert snl.verify_game(again.play()).passed
    with pytest.raises(GameError, match="the record's seats"):
        Game.resume(game.record(), rng=4, seats=[Seat("X", "red"), Seat("H", "blue")])


# ------------------------------------------------------------ records and verify_game
def _record(rules, seed=1):
    return Game(SMALL, rules, [Seat("G", "red", policy="greedy"), Seat("R", "blue", policy="random")], rng=seed).play()


def _edited(record, index, **changes):
    data = record.to_dict()
    data["log"][index].update(changes)
    return data


def test_a_choice_of_a_die_not_offered_is_refused_by_the_record():
    record = _record(DIE)
    i = next(i for i, e in enumerate(record.log) if isinstance(e, ChooseDie))
    with pytest.raises(GameError, match="is not one the rules offer"):
        GameRecord.from_dict(_edited(record, i, die=2))
    with pytest.raises(GameError, match="is not one the rules offer"):
        GameRecord.from_dict(_edited(record, i, spec="d8"))
    plain = Game(SMALL, Rules(), players=1, dice=[3]).record()
    with pytest.raises(GameError, match="offer none"):
        dataclasses.replace(plain, rules=Rules(), log=(ChooseDie(seat=0, turn=0, die=0, spec="d6"),), dice=())


def test_a_wrong_number_of_dice_or_a_value_off_the_die_is_refused_by_the_record():
    record = _record(MOVE)
    i = next(i for i, e in enumerate(record.log) if isinstance(e, RolledDice))
    with pytest.raises(GameError, match="3 dice thrown; the rules throw 2"):
        GameRecord.from_dict(_edited(record, i, values=[1, 2, 3]))
    with pytest.raises(GameError, match="cannot show"):
        GameRecord.from_dict(_edited(record, i, values=[1, 7]))


def test_verify_refuses_an_illegal_logged_choice():
    record = _record(MOVE)
    i = next(i for i, e in enumerate(record.log) if isinstance(e, ChooseMove))
    pick = record.log[i]
    thrown = record.log[i - 1]
    other = next(v for v in range(1, 7) if v not in thrown.values)
    data = _edited(record, i, value=other)
    data["log"][i + 1]["value"] = other  # the roll that follows agrees: only the pick is illegal
    data["dice"] = [e["value"] for e in data["log"] if e["kind"] == "roll"]
    forged = _forge(data)
    report = snl.verify_game(forged)
    assert not report.passed and f"the value picked, {other}, was not thrown" in report.failures[0]
    with pytest.raises(GameError):
        Game.replay(forged)
    assert pick.value in thrown.values


def _forge(data):
    """A record whose positions and dice follow its (edited) log, whatever the rules say."""
    from snlmarkov.game.record import _summarise
    from snlmarkov.state import GameState

    log = tuple(snl.game.events.event_from_dict(e) for e in data["log"])
    _, positions, finished = _summarise(log, len(data["seats"]), GameState.initial(len(data["seats"])))
    data = {**data, "positions": list(positions), "finishing_order": list(finished)}
    data["finished"] = data["log"][-1]["kind"] == "game_over"
    return GameRecord.from_dict(data)


def test_verify_refuses_a_roll_the_chosen_die_cannot_show_and_a_missing_choice():
    record = _record(DIE)
    log = record.log
    i = next(i for i, e in enumerate(log) if isinstance(e, ChooseDie) and e.die == 1 and log[i + 1].value > 4)
    data = record.to_dict()
    data["log"][i].update(die=0, spec="d4")  # the d4 chosen, yet a 5 or 6 rolled
    report = snl.verify_game(_forge(data))
    assert not report.passed and "cannot be dealt" in report.failures[0]
    data = record.to_dict()
    del data["log"][i]
    report = snl.verify_game(_forge(data))
    assert not report.passed


def test_a_choice_need_not_be_the_best_one():
    worst = Policy.fixed(4)
    record = Game(SMALL, DIE, [Seat("F", "red", policy=worst)], rng=0).play()
    assert snl.verify_game(record).passed


def test_an_old_plain_record_still_loads_replays_and_verifies():
    record = Game(SMALL, Rules(), players=2, rng=9).play()
    data = record.to_dict()
    again = GameRecord.from_dict(data)
    assert again.throws() == again.dice and again.choices() == ()
    assert snl.verify_game(again).passed and Game.replay(again).record() == record


# ------------------------------------------------------------ greedy on both paths
@pytest.mark.parametrize("rules", RULE_SETS + [Rules(choose_move=2, max_sixes=1)], ids=str)
def test_play_side_greedy_equals_the_exact_side(rules):
    """The two statements of a roll resolve the greedy policy alike (where a value can be dealt)."""
    board = Board.builtin()
    assert furthest(board, rules).shape == decision_shape(board, rules)
    play = resolve_policy(Policy.greedy(), board, rules).ranks
    exact = exact_resolve(Policy.greedy(), board, rules).ranks
    if rules.choice == "die" or rules.on_cap != "redeal":
        assert np.array_equal(play, exact)
        return
    cap = rules.max_sixes  # at the cap under redeal the top value is never thrown: compare the others' order
    assert np.array_equal(play[:cap], exact[:cap])
    assert np.array_equal(np.argsort(play[cap][..., :-1], axis=-1), np.argsort(exact[cap][..., :-1], axis=-1))


# ------------------------------------------------------------ stored games pooled
@pytest.mark.parametrize("rules", [DIE, Rules(choose_move=2, on_cap="forfeit")], ids=["choose_die", "choose_move"])
def test_stored_games_under_a_choice_rule_test_every_die_thrown(rules):
    from snlmarkov.checks.stored import check_stored

    board = Board(20, {3: 12})
    seats = [Seat("A", "red", policy="greedy"), Seat("B", "blue", policy="random")]
    fair = check_stored([Game(board, rules, seats, rng=i).play() for i in range(200)], alpha=1e-6)
    assert fair.passed, str(fair)
    names = [c.name for c in fair.groups[0].checks]
    assert names == ["turn counts", "landings", "dice"] and "not applicable: a choice rule" in str(fair)
    rng = np.random.default_rng(1)

    def loaded():  # sixes half the time
        return iter(lambda: int(rng.choice(6, p=[0.1] * 5 + [0.5])) + 1, 0)

    dice = Rules(choose_die=(Die(6), Die(8)), on_cap="forfeit") if rules.choice == "die" else rules
    caught = check_stored([Game(board, dice, seats, dice=loaded()).play() for _ in range(200)], alpha=1e-6)
    assert not caught.passed and "dice" in [c.name for c in caught.groups[0].checks if not c.passed]


def test_event_tuples_keep_their_limits():
    from snlmarkov.game.events import GameOver

    assert len(GameOver(seat=0, turn=9, finishing_order=tuple(range(1000))).finishing_order) == 1000  # MAX_SEATS
    with pytest.raises(GameError, match="at most 8 are thrown"):
        RolledDice(seat=0, turn=0, values=(1,) * 9)

"""The house rules of issue 11 in play: the engine and its log, records, verify_game, races.

The exact models are tested in ``test_house_rules.py``; the simulator's tables
against a reference in ``test_simulate.py``; simulated games against the
exact figures (and the planted mistakes) in ``test_crosscheck.py``.
"""

import json

import pytest

from snlmarkov import Board, Game, GameRecord, Rules, verify_game
from snlmarkov.game.events import Bounce, Ladder, Move, Restart, Snake, event_from_dict

PUZZLE = Board(100, {**Board.builtin().jumps, 83: 84, 84: 97}, name="puzzle", chain=True)


def kinds(events):
    return [e.kind for e in events]


# ------------------------------------------------------------------ restart
def test_restart_is_its_own_event_and_sends_the_token_to_zero():
    g = Game(Board(40), Rules(on_cap="restart"), players=1, dice=[6, 6, 6, 3])
    events = g.take_turn()
    assert kinds(events) == [
        "roll", "move", "bonus_roll", "roll", "move", "bonus_roll", "cap_reached", "roll", "restart",
    ]  # fmt: skip
    assert events[-1] == Restart(seat=0, turn=0, from_square=12)
    assert g.positions == (0,)
    assert events[-1].describe("Ann") == "Ann rolled one six too many: back to the start from 12"
    # the six moved nothing and landed nowhere: no move after the capped roll
    g.take_turn()
    assert g.positions == (3,)


def test_restart_from_a_later_turn_goes_to_zero_not_to_the_turns_start():
    g = Game(Board(40), Rules(on_cap="restart"), players=1, dice=[5, 6, 6, 6])
    g.take_turn()
    g.take_turn()
    assert g.positions == (0,)
    forfeit = Game(Board(40), Rules(on_cap="forfeit"), players=1, dice=[5, 6, 6, 6])
    forfeit.take_turn()
    forfeit.take_turn()
    assert forfeit.positions == (5,)


def test_a_capped_roll_that_is_not_a_six_moves_without_bonus():
    g = Game(Board(40), Rules(on_cap="restart"), players=1, dice=[6, 6, 4])
    events = g.take_turn()
    assert kinds(events)[-2:] == ["roll", "move"] and g.positions == (16,)


def test_restart_under_six_to_start_needs_a_six_again():
    rules = Rules(on_cap="restart", start_on_six=True, max_sixes=2)
    g = Game(Board(40), rules, players=1, dice=[6, 6, 6, 5, 6, 2])
    events = g.take_turn()  # enter (a six, counted), 6 -> 6 with a bonus, then the capped six: home
    assert kinds(events) == ["roll", "enter", "roll", "move", "bonus_roll", "cap_reached", "roll", "restart"]
    assert g.positions == (0,)
    assert kinds(g.take_turn()) == ["roll", "failed_enter"]
    assert kinds(g.take_turn()) == ["roll", "enter", "roll", "move"] and g.positions == (2,)


def test_restart_and_bump():
    # a restarted token stands on 0, which occupies nothing: no bump there
    rules = Rules(on_cap="restart", bump=True, max_sixes=1)
    g = Game(Board(40), rules, players=2, dice=[3, 6, 6])
    g.take_turn()
    events = g.take_turn()
    assert kinds(events)[-1] == "restart" and g.positions == (3, 0)


# ------------------------------------------------------------------ chained jumps
def test_a_chained_jump_logs_each_jump_taken():
    g2 = Game(PUZZLE, Rules.preset("plain"), players=1, dice=[4, 6, 1, 6, 6, 6, 6, 6, 6, 5, 2])
    # 0 -> 4 (ladder to 14) -> 20 -> 21 (ladder to 42) -> 48 -> 54 -> 60 -> 66 -> 72 -> 78, then 83 -> 84 -> 97
    for _ in range(9):
        g2.take_turn()
    assert g2.positions == (78,)
    events = g2.take_turn()
    assert events == [
        events[0],
        Move(seat=0, turn=9, start=78, end=83),
        Ladder(seat=0, turn=9, start=83, end=84),
        Ladder(seat=0, turn=9, start=84, end=97),
    ]
    assert g2.positions == (97,)
    # a chain up then down
    g3 = Game(Board(10, {2: 8, 8: 3}, chain=True), Rules.preset("plain"), players=1, dice=[2])
    assert g3.take_turn()[1:] == [
        Move(seat=0, turn=0, start=0, end=2),
        Ladder(seat=0, turn=0, start=2, end=8),
        Snake(seat=0, turn=0, start=8, end=3),
    ]


def test_without_chain_a_jump_end_is_never_a_start():
    g = Game(Board(10, {2: 8}), Rules.preset("plain"), players=1, dice=[2])
    assert kinds(g.take_turn()) == ["roll", "move", "ladder"]


# ------------------------------------------------------------------ jump after bounce
def test_no_jump_after_a_bounce_and_the_six_still_earns_its_bonus():
    board = Board(10, {8: 3, 5: 2})
    rules = Rules(finish="bounce", jump_after_bounce=False, max_sixes=None)
    g = Game(board, rules, players=1, dice=[6, 6, 1])
    events = g.take_turn()  # 6, bonus: 12 bounces to 8, stays on the snake's head, bonus again: 9
    assert events[3:] == [
        events[3],
        Bounce(seat=0, turn=0, target=8),
        Move(seat=0, turn=0, start=6, end=8),
        events[6],
        events[7],
        Move(seat=0, turn=0, start=8, end=9),
    ]
    assert kinds(events) == ["roll", "move", "bonus_roll", "roll", "bounce", "move", "bonus_roll", "roll", "move"]
    assert g.positions == (9,)
    # the same roll with the jump: down the snake
    g = Game(board, rules.replace(jump_after_bounce=True), players=1, dice=[6, 6, 1])
    assert kinds(g.take_turn())[4:7] == ["bounce", "move", "snake"]
    assert g.positions == (4,)
    # an ordinary landing on a jump still takes it
    g = Game(board, rules, players=1, dice=[5])
    assert kinds(g.take_turn()) == ["roll", "move", "snake"]


# ------------------------------------------------------------------ records and verification
HOUSE = [
    (Board.builtin(), Rules(on_cap="restart")),
    (Board.builtin("milton_bradley"), Rules(on_cap="restart", max_sixes=1, start_on_six=True)),
    (PUZZLE, Rules()),
    (Board.builtin(), Rules(finish="bounce", jump_after_bounce=False)),
    (PUZZLE, Rules(on_cap="restart", finish="bounce", jump_after_bounce=False, start_on_six=True, bump=True)),
]


@pytest.mark.parametrize("board, rules", HOUSE, ids=["restart", "restart-six", "chain", "nojump", "all-bump"])
@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_games_under_the_house_rules_round_trip_replay_and_verify(board, rules, mode):
    kinds_seen = set()
    for seed in range(6):
        record = Game(board, rules, players=3, mode=mode, rng=[11, seed]).play()
        kinds_seen |= {e.kind for e in record.log}
        again = GameRecord.from_json(record.to_json())
        assert again == record and again.board.chain == board.chain and again.rules == rules
        assert Game.replay(again).record() == record
        report = verify_game(record)
        assert report.passed, str(report)
    if rules.on_cap == "restart":
        assert "restart" in kinds_seen
    assert event_from_dict(Restart(seat=1, turn=2, from_square=7).to_dict()) == Restart(seat=1, turn=2, from_square=7)


def test_verify_catches_a_restart_logged_as_a_forfeit():
    board, rules = Board(40), Rules(on_cap="restart")
    g = Game(board, rules, players=1, dice=[5, 6, 6, 6, 3])
    for _ in range(3):
        g.take_turn()
    record = g.record()
    assert verify_game(record).passed
    # the same dice read as forfeit: turn 1 goes back to 5, not 0, and turn 2 moves from 5 to 8
    data = record.to_dict()
    data["rules"]["on_cap"] = "forfeit"
    data["log"] = [
        {"kind": "forfeit", "seat": 0, "turn": e["turn"], "back_to": 5} if e["kind"] == "restart" else e
        for e in data["log"]
    ]
    data["positions"] = [8]
    for e in data["log"]:
        if e["kind"] == "move" and e["turn"] == 2:
            e["start"], e["end"] = 5, 8
    forged = GameRecord.from_dict(json.loads(json.dumps(data)))
    assert verify_game(forged).passed  # consistent under forfeit
    data["rules"]["on_cap"] = "restart"  # but not under restart
    bad = GameRecord.from_dict(json.loads(json.dumps(data)))
    assert not verify_game(bad).passed


# ------------------------------------------------------------------ the command line
def test_cli_sets_the_house_rules_and_reads_chained_board_files(tmp_path, capsys):
    from fractions import Fraction

    from snlmarkov import exact_expected_turns
    from snlmarkov.cli import main

    assert main(["analyze", "--set", "on_cap=restart", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rules"]["on_cap"] == "restart"
    assert data["expected_turns"] == pytest.approx(
        float(exact_expected_turns(None, Rules(on_cap="restart"))), rel=1e-12
    )
    argv = ["analyze", "--rules", "family", "--set", "jump_after_bounce=false", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["rules"]["jump_after_bounce"] is False
    f = tmp_path / "puzzle.toml"
    ladders = "\n".join(f"{s} = {e}" for s, e in PUZZLE.ladders.items())
    snakes = "\n".join(f"{s} = {e}" for s, e in PUZZLE.snakes.items())
    f.write_text(f"size = 100\nchain = true\n[ladders]\n{ladders}\n[snakes]\n{snakes}\n")
    assert main(["analyze", "--board", str(f), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["expected_turns"]
    assert got == pytest.approx(float(exact_expected_turns(PUZZLE, Rules())), rel=1e-12)
    assert isinstance(exact_expected_turns(PUZZLE, Rules()), Fraction)
    assert main(["analyze", "--set", "jump_after_bounce=maybe"]) == 2
    assert "jump_after_bounce takes true or false" in capsys.readouterr().err
    f.write_text("size = 10\nchain = true\n[ladders]\n2 = 5\n[snakes]\n5 = 2\n")
    assert main(["analyze", "--board", str(f)]) == 2
    assert "jumps form a cycle: 2->5->2" in capsys.readouterr().err

"""The three house rules of issue 11: on_cap="restart", chained jumps, jump_after_bounce.

Rows are derived by hand on tiny boards with a 2- or 3-faced die (the top
face is "six") and checked exactly against the Fraction path and to 1e-15
against the float turn matrix; roll level composed against turn level; the
exact expected turns against the float solver.
"""

import itertools
from fractions import Fraction as F

import numpy as np
import pytest

from snlmarkov import (
    Board,
    BoardError,
    RuleError,
    Rules,
    analyze,
    exact_expected_turns,
    expected_turns,
    roll_model,
    turn_model,
)
from snlmarkov.analysis.hitting import hit_probabilities
from snlmarkov.chain.exact import exact_turn_row

H, Q, E = F(1, 2), F(1, 4), F(1, 8)
T, N = F(1, 3), F(1, 9)

#: the published puzzle chain 83 -> 84 -> 97 on the jungle board (whose ladder 28 -> 84 then chains on to 97)
PUZZLE = Board(100, {**Board.builtin().jumps, 83: 84, 84: 97}, name="puzzle", chain=True)


def check_rows(board, rules, want):
    """``want[p]`` (a dict of Fractions, or None to skip) equals the exact row and the float row."""
    m = turn_model(board, rules).matrix.toarray()
    for p, row in enumerate(want):
        if row is None:
            continue
        row = {q: F(v) for q, v in row.items() if v}
        assert sum(row.values()) == 1, (p, row)
        assert exact_turn_row(board, rules, p) == row, p
        dense = np.zeros(board.size + 1)
        for q, v in row.items():
            dense[q] = float(v)
        np.testing.assert_allclose(m[p], dense, atol=1e-15, err_msg=f"row {p}")


# ---------------------------------------------------------------- configuration
def test_rules_fields_and_presets_unchanged():
    assert Rules().jump_after_bounce is True and Rules().on_cap == "redeal"
    for name in Rules.presets():
        assert Rules.preset(name).jump_after_bounce is True
        assert Rules.preset(name).on_cap == "redeal"
    r = Rules(on_cap="restart", finish="bounce", jump_after_bounce=False)
    assert Rules(**r.to_dict()) == r and r.preset_name == "custom"
    assert Rules().replace(on_cap="restart").on_cap == "restart"
    with pytest.raises(RuleError, match="jump_after_bounce must be True or False"):
        Rules(jump_after_bounce="no")
    with pytest.raises(RuleError, match="on_cap must be one of 'redeal', 'forfeit', 'restart'"):
        Rules(on_cap="home")
    # without bounce the toggle changes nothing (documented in docs/rules.md): allowed, irrelevant
    b = Board(12, {3: 9, 11: 2})
    for finish in ("stay", "none"):
        a = turn_model(b, Rules(finish=finish)).matrix.toarray()
        c = turn_model(b, Rules(finish=finish, jump_after_bounce=False)).matrix.toarray()
        np.testing.assert_array_equal(a, c)


def test_chained_board_option():
    with pytest.raises(BoardError, match="jumps chain: 83->84 ends on the start of 84->97"):
        Board(100, {83: 84, 84: 97})
    b = Board(100, {83: 84, 84: 97}, chain=True)
    assert b.destination()[83] == 97 and b.destination()[84] == 97 and b.jump_path(83) == (83, 84, 97)
    assert Board.from_dict(b.to_dict()) == b and b.to_dict()["chain"] is True
    assert "chain" not in Board(100, {83: 84}).to_dict()
    assert Board(10, {2: 7}, chain=True) != Board(10, {2: 7})  # the option is part of the board
    with pytest.raises(BoardError, match="chain must be True or False"):
        Board(10, {2: 7}, chain="yes")
    with pytest.raises(BoardError, match="chain must be true or false"):
        Board.from_dict({"size": 10, "ladders": {"2": 7}, "chain": "yes"})
    # a long chain mixing ladders and snakes
    c = Board(10, {2: 5, 5: 8, 8: 3}, chain=True)
    assert c.destination().tolist() == [0, 1, 3, 3, 4, 3, 6, 7, 3, 9, 10]


@pytest.mark.parametrize(
    "jumps, cycle",
    [
        ({2: 7, 7: 2}, "2->7->2"),
        ({5: 9, 9: 4, 4: 5}, "4->5->9->4"),
        ({1: 3, 3: 6, 6: 8, 8: 6}, "6->8->6"),  # a chain leading into a cycle: the cycle is named
    ],
)
def test_a_cycle_of_jumps_is_refused_naming_its_squares(jumps, cycle):
    with pytest.raises(BoardError, match=f"jumps form a cycle: {cycle}$"):
        Board(10, jumps, chain=True)


def test_chained_board_files(tmp_path):
    p = tmp_path / "puzzle.toml"
    p.write_text("size = 10\nchain = true\n[ladders]\n2 = 5\n5 = 8\n[snakes]\n9 = 4\n")
    b = Board.from_file(p)
    assert b.chain and b.destination()[2] == 8 and b.name == "puzzle"
    p.write_text("size = 10\n[ladders]\n2 = 5\n5 = 8\n")
    with pytest.raises(BoardError, match="jumps chain"):
        Board.from_file(p)
    p.write_text("size = 10\nchain = true\n[ladders]\n2 = 5\n[snakes]\n5 = 2\n")
    with pytest.raises(BoardError, match="cycle: 2->5->2"):
        Board.from_file(p)


# ---------------------------------------------------------------- restart
def test_restart_rows_by_hand():
    r = Rules(max_sixes=1, on_cap="restart", faces=2)
    # a 2 earns a bonus; the capped roll is fair and a 2 there sends the token to 0
    check_rows(
        Board(5),
        r,
        [{1: H, 3: Q, 0: Q}, {2: H, 4: Q, 0: Q}, {3: H, 5: Q, 0: Q}, {4: H, 5: H}, {5: H, 4: H}],
    )
    # the forfeit would send it back to where the turn began instead
    check_rows(Board(5), r.replace(on_cap="forfeit"), [None, {2: H, 4: Q, 1: Q}])
    # with two sixes allowed, from 1: 2, 3+bonus, then 4 / 5+bonus, then the capped 6 / home
    check_rows(Board(6), r.replace(max_sixes=2), [None, {2: H, 4: Q, 6: E, 0: E}])
    # without a cap on_cap is irrelevant
    a = turn_model(Board(6), Rules(max_sixes=None, faces=2, on_cap="restart")).matrix.toarray()
    np.testing.assert_array_equal(a, turn_model(Board(6), Rules(max_sixes=None, faces=2)).matrix.toarray())


def test_restart_with_six_to_start():
    r = Rules(max_sixes=2, on_cap="restart", start_on_six=True, faces=2)
    # from 0: fail (1/2); enter (the six counts), then 1 ends on 1; 2 -> 2 with a bonus, capped: 1 -> 3, 2 -> home
    check_rows(Board(6), r, [{0: H + E, 1: Q, 3: E}, {2: H, 4: Q, 6: E, 0: E}])
    # the entering six alone reaches a cap of one: the capped roll's six restarts (same square as forfeit here)
    check_rows(Board(3), r.replace(max_sixes=1), [{0: H + Q, 1: Q}])
    # a token sent home must enter again: exact expected turns on a board of 3
    #   E0 = 1 + 3/4 E0 + 1/4 E1, E1 = 1 + 1/2 E2, E2 = 1 + 1/2 E2  ->  E2 = 2, E1 = 2, E0 = 6
    assert exact_expected_turns(Board(3), r.replace(max_sixes=1)) == 6


def test_restart_expected_turns_by_hand():
    r = Rules(max_sixes=1, on_cap="restart", faces=2)
    # board of 3: E2 = 2, E1 = 1 + E2/2 = 2, E0 = 1 + E1/2 + E0/4  ->  E0 = 8/3
    assert exact_expected_turns(Board(3), r) == F(8, 3)
    assert expected_turns(Board(3), r) == pytest.approx(8 / 3, abs=1e-13)
    # from 1 a restart loses ground that a forfeit does not: board of 4
    #   restart: E3 = 2, E2 = 1 + E3/2 = 2 (a 2 from 2 finishes),
    #            E1 = 1 + E2/2 + E0/4 (1->2; 1->3 six, then 4 or home), E0 = 1 + E1/2 + E3/4 + E0/4
    #   -> E1 = 2 + E0/4, E0 = 1 + 1 + E0/8 + 1/2 + E0/4  ->  5/8 E0 = 5/2, E0 = 4
    assert exact_expected_turns(Board(4), r) == 4
    assert expected_turns(Board(4), r) == pytest.approx(4, abs=1e-13)
    #   forfeit: E1 = 1 + E2/2 + E1/4 = 2 + E1/4 -> 8/3; E0 = 1 + E1/2 + E3/4 + E0/4 -> 3/4 E0 = 1 + 4/3 + 1/2
    assert exact_expected_turns(Board(4), r.replace(on_cap="forfeit")) == F(34, 9)


# ---------------------------------------------------------------- chained jumps
def test_chain_rows_by_hand():
    b = Board(6, {1: 3, 3: 5}, chain=True)
    plain = Rules.preset("plain").replace(faces=2)
    # landing on 1 takes 1->3 and 3->5 in the same roll
    check_rows(b, plain, [{5: H, 2: H}, {2: H, 5: H}, {5: H, 4: H}, {4: H, 5: H}, {5: H, 6: H}, {6: H, 5: H}])
    # the bonus is earned by a six that ends a chain
    check_rows(b, Rules(max_sixes=None, faces=2), [{5: H + Q + E, 6: E}])
    # a chain of three jumps, up and down
    check_rows(Board(8, {2: 5, 5: 7, 7: 1}, chain=True), plain, [{1: 1}])


def test_chain_landings_and_uses():
    b = Board(8, {2: 5, 5: 7, 7: 1}, chain=True)
    plain = Rules.preset("plain").replace(faces=2)
    turn = turn_model(b, plain)
    land = turn.landings.toarray()
    # from 0: a 1 lands on 1; a 2 lands on 2, 5 and 7 (every square where a jump acts), not on 1 again
    np.testing.assert_allclose(land[0], [0, 0.5, 0.5, 0, 0, 0.5, 0, 0.5, 0], atol=1e-15)
    roll = roll_model(b, plain)
    np.testing.assert_allclose(roll.landings.toarray()[0], land[0], atol=1e-15)
    a = analyze(b, plain)
    # every jump taken is a use: a jump later in the chain is used at least as often as the first
    for start in b.jumps:
        assert a.jump_uses[start] == pytest.approx(a.landings[start], abs=1e-12)
    assert a.jump_uses[5] >= a.jump_uses[2] and a.jump_uses[7] >= a.jump_uses[5]
    # the analysis's landings (summed as the turns are followed) equal occupancy x the turn model's landings
    for board, rules in ((b, plain), (PUZZLE, Rules()), (PUZZLE, Rules(finish="bounce", jump_after_bounce=False))):
        an = analyze(board, rules)
        want = np.asarray(turn_model(board, rules).landings.T @ an.occupancy).ravel()
        np.testing.assert_allclose(an.landings, want, rtol=1e-10, atol=1e-12)
        if board is PUZZLE:  # 84 is landed on from 83 and from 28 too
            assert an.landings[84] > an.landings[83]
    # hitting: whenever 2 is landed on, so are 5 and 7
    h = hit_probabilities(b, plain)
    assert h[2] <= h[5] + 1e-12 and h[2] <= h[7] + 1e-12 and h[1] == pytest.approx(0.5, abs=1e-12)  # only from 0
    # removing a jump from a chained board keeps the option
    fx = {e.start: e for e in a.jump_effects()}
    assert set(fx) == {2, 5, 7}


def test_chain_hitting_by_hand():
    # board of 4, plain two-faced: 1 -> 2 -> 3 chained. From 0: a 1 lands on 1, 2 (and rests on 3); a 2 lands on 2.
    b = Board(4, {1: 2, 2: 3}, chain=True)
    plain = Rules.preset("plain").replace(faces=2)
    h = hit_probabilities(b, plain)
    np.testing.assert_allclose(h, [0, 0.5, 1.0, 0, 1.0], atol=1e-12)
    # E3 = 2 (a 2 overshoots), E0 = 1 + E3 = 3
    assert exact_expected_turns(b, plain) == 3
    # stopping after one jump would rest on 2 half of the time: a different game
    assert exact_expected_turns(Board(4, {2: 3}), plain) != 3


# ---------------------------------------------------------------- jump after bounce
def test_jump_after_bounce_rows_by_hand():
    b = Board(4, {2: 1})
    plain = Rules.preset("plain").replace(faces=3, finish="bounce")
    # from 3: 1 finishes, 2 bounces to 3, 3 bounces to 2, a snake's head: down to 1 or, without the jump, stays on 2
    check_rows(b, plain, [None, None, None, {4: T, 3: T, 1: T}])
    off = plain.replace(jump_after_bounce=False)
    check_rows(b, off, [None, None, {3: 2 * T, 4: T}, {4: T, 3: T, 2: T}])
    # a jump reached by an ordinary roll still acts: from 0 a 2 lands on 2 and slides to 1
    check_rows(b, off, [{1: 2 * T, 3: T}])
    # the six that bounced onto 2 still earns its bonus (cap of one, then a redeal of 1..2)
    bonus = Rules(finish="bounce", max_sixes=1, faces=3)
    check_rows(b, bonus, [None, None, None, {4: T, 3: T + F(1, 6), 1: F(1, 6)}])
    check_rows(b, bonus.replace(jump_after_bounce=False), [None, None, None, {4: T + F(1, 6), 3: T + F(1, 6)}])
    land = turn_model(b, bonus.replace(jump_after_bounce=False)).landings.toarray()
    # landed on: 4 (1/3 + 1/6), 3 (1/3 + 1/6), the bounce square 2 (1/3)
    np.testing.assert_allclose(land[3], [0, 0, 1 / 3, 1 / 2, 1 / 2], atol=1e-15)


def test_jump_after_bounce_on_a_chained_board():
    b = Board(6, {4: 5, 5: 2}, chain=True)
    on = Rules.preset("plain").replace(faces=3, finish="bounce")
    check_rows(b, on, [None, None, None, {2: 2 * T, 6: T}, {2: 2 * T, 6: T}, {6: T, 2: 2 * T}])
    check_rows(b, on.replace(jump_after_bounce=False), [None, None, None, None, {2: T, 6: T, 5: T}, {6: T, 5: T, 4: T}])


# ---------------------------------------------------------------- all three together
def test_all_three_rules_together():
    b = Board(6, {4: 5, 5: 2}, chain=True)
    r = Rules(finish="bounce", max_sixes=1, on_cap="restart", faces=3, jump_after_bounce=False)
    # from 5: 1 finishes; 2 bounces to 5 and stays; 3 (a six) bounces to 4, stays, earns a bonus,
    # and the capped roll from 4 takes the chain 5->2, finishes, or (a six) sends the token home
    row5 = {6: T + N, 5: T, 2: N, 0: N}
    # from 0: 1, 2, or a six onto 3 and a capped roll: 4->5->2, 5->2, or home
    row0 = {1: T, 2: T + 2 * N, 0: N}
    check_rows(b, r, [row0, None, None, {2: 2 * T, 6: T}, None, row5])
    # with the jump after the bounce: the six from 5 bounces to 4, chains to 2, bonus from 2: 3, 4->5->2, home
    check_rows(b, r.replace(jump_after_bounce=True), [None, None, None, None, None, {6: T, 2: T + N, 3: N, 0: N}])
    # and with six to start: the entering six reaches the cap, whose six restarts
    s = r.replace(start_on_six=True)
    check_rows(b, s, [{0: 2 * T + N, 1: N, 2: N}, None, None, None, None, row5])
    for rules in (r, s, r.replace(jump_after_bounce=True)):
        assert float(exact_expected_turns(b, rules)) == pytest.approx(expected_turns(b, rules), rel=1e-13)


# ---------------------------------------------------------------- grids
NEW_RULES = [
    Rules(finish=f, bonus_on_six=bo, max_sixes=c, on_cap=o, start_on_six=s, jump_after_bounce=j)
    for f, bo, c, o, s, j in itertools.product(
        ["stay", "bounce", "none"],
        [True, False],
        [None, 1, 2],
        ["redeal", "forfeit", "restart"],
        [True, False],
        [True, False],
    )
    if (o == "restart" or not j) and (j or f == "bounce")  # the new combinations only
]
SMALL_CHAIN = Board(12, {3: 9, 9: 11, 11: 2, 6: 1, 10: 12}, chain=True)


def compose(model):
    """Turn-level matrix from the roll-level chain: A + B (I - C)^-1 D."""
    m = model.matrix.toarray()
    ts = model.turn_start
    a, b, c, d = m[np.ix_(ts, ts)], m[np.ix_(ts, ~ts)], m[np.ix_(~ts, ~ts)], m[np.ix_(~ts, ts)]
    return a + b @ np.linalg.solve(np.eye(c.shape[0]) - c, d), b, c


@pytest.mark.parametrize("board", [Board.builtin(), PUZZLE, SMALL_CHAIN], ids=["jungle", "puzzle", "small-chain"])
def test_roll_level_composes_to_turn_level_with_the_new_rules(board):
    small = board.size < 20  # every combination there; a spread of them on the 100-square boards
    rules_list = NEW_RULES if small else NEW_RULES[:: 4 if board.chain else 3]
    if board.chain:  # the old combinations on a chained board too
        old = [
            Rules(finish=f, bonus_on_six=bo, max_sixes=c, on_cap=o, start_on_six=s)
            for f, bo, c, o, s in itertools.product(
                ["stay", "bounce", "none"], [True, False], [None, 2], ["redeal", "forfeit"], [True, False]
            )
        ]
        rules_list = rules_list + (old if small else old[::5])
    for rules in rules_list:
        turn = turn_model(board, rules)
        roll = roll_model(board, rules)
        composed, b, c = compose(roll)
        np.testing.assert_allclose(composed, turn.matrix.toarray(), atol=1e-12, err_msg=str(rules))
        ts = roll.turn_start
        visits_mid = b @ np.linalg.inv(np.eye(c.shape[0]) - c)
        land = roll.landings.toarray()
        np.testing.assert_allclose(land[ts] + visits_mid @ land[~ts], turn.landings.toarray(), atol=1e-12)


@pytest.mark.parametrize("rules", NEW_RULES[::4], ids=str)
def test_float_rows_equal_exact_fraction_rows_with_the_new_rules(rules):
    for board in (SMALL_CHAIN, Board(12, {3: 9, 11: 2, 6: 1, 10: 12})):
        m = turn_model(board, rules).matrix.toarray()
        for p in range(board.size):
            row = np.zeros(board.size + 1)
            for q, prob in exact_turn_row(board, rules, p).items():
                row[q] = float(prob)
            np.testing.assert_allclose(m[p], row, atol=1e-15)


@pytest.mark.parametrize(
    "rules",
    [
        Rules(on_cap="restart"),
        Rules(finish="bounce", jump_after_bounce=False),
        Rules(on_cap="restart", start_on_six=True, finish="bounce", jump_after_bounce=False),
    ],
    ids=["restart", "no-jump-after-bounce", "all"],
)
def test_exact_expected_turns_equal_the_solver(rules):
    for board in (Board.builtin(), PUZZLE):
        assert float(exact_expected_turns(board, rules)) == pytest.approx(expected_turns(board, rules), rel=1e-12)

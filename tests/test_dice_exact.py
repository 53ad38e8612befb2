"""Dice of any shape on the exact side: the kernel's columns, the models, the batch evaluator.

Independent values: hand derivations from docs/rules.md ("Dice"), and a small
value iteration written here in fractions over single rolls (no kernel code).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov.chain.mechanics import batchable, die_columns, no_cap_depth, roll_slots
from snlmarkov.search import batch
from snlmarkov.search.batch import destinations, evaluate

DICE = [
    snl.Die.weighted({1: 1, 2: 1, 6: 4}),
    snl.Die.sum_of(2, 6),
    snl.Die.faces(0, 1, 2, 3, 4, 5),
    snl.Die.faces(2, 2, 2, 2, 6, 6),
    snl.Die.cowries(4),
    snl.Die.spinner(9),
]


def test_a_zero_move_stays_and_lands_nowhere_even_on_a_jump_start():
    # bounce without the jump can leave a token on 9 (a snake's head); a 0 there must not take the snake
    board = snl.Board(10, {9: 2})
    rules = snl.Rules(finish="bounce", jump_after_bounce=False, die=snl.Die.faces(0, 1, 2), bonus_on_six=False)
    s = roll_slots(board, rules, np.array([9, 4]), np.array([0, 0]), np.array([9, 4]))
    assert s.square[:, 0].tolist() == [9, 4]
    assert s.landing[:, 0].tolist() == [-1, -1]
    assert s.square[0, 1:].tolist() == [10, 9]  # 1 finishes; 2 bounces to 9 and stays there (no jump)
    assert s.cont.sum() == 0


def test_the_capped_roll_is_the_die_without_its_top_renormalised():
    die = snl.Die.weighted({1: 1, 3: 1, 6: 2})
    rules = snl.Rules(die=die, max_sixes=1)
    s = roll_slots(snl.Board(20), rules, np.array([5, 5]), np.array([0, 1]), np.array([5, 5]))
    np.testing.assert_array_equal(s.prob[0], [0.25, 0.25, 0.5])
    np.testing.assert_array_equal(s.prob[1], [0.5, 0.5, 0.0])
    assert s.cont[0].tolist() == [False, False, True] and not s.cont[1].any()


def test_the_top_value_is_the_six_of_every_rule():
    die = snl.Die.sum_of(2, 6)  # "a six" is a twelve
    rules = snl.Rules(die=die, start_on_six=True, bonus_on_six=False)
    s = roll_slots(snl.Board(30), rules, np.array([0]), np.array([0]), np.array([0]))
    assert s.cont[0].tolist() == [False] * 10 + [True]  # only a twelve enters
    assert s.prob[0, -1] == pytest.approx(1 / 36)


def test_die_columns_of_the_fair_die_are_the_old_uniform_floats():
    cols = die_columns(snl.Die(6))
    assert cols.probs.tolist() == [1.0 / 6] * 6
    assert cols.capped.tolist() == [1.0 / 5] * 5 + [0.0]


def test_no_cap_depth_is_exact():
    assert no_cap_depth(snl.Die(6)) == 26  # 6**-25 > 1e-20 > 6**-26
    assert Fraction(1, 6) ** 25 >= Fraction(1e-20) > Fraction(1, 6) ** 26


def _value_iteration(board: snl.Board, die: snl.Die, finish: str) -> Fraction:
    """Expected turns under plain rules (one roll a turn), from docs/rules.md alone, in fractions.

    x_p = 1 + sum_k P(k) x_{move(p, k)}, solved by Gauss-Jordan elimination over the squares
    0..N-1 a token can rest on (a jump's start is never rested on: the jump acts).
    """
    n = board.size
    rest = [p for p in range(n) if p not in board.jumps]
    at = {p: i for i, p in enumerate(rest)}

    def move(p: int, k: int) -> int:
        if k == 0:
            return p
        t = p + k
        if t > n:
            if finish == "stay":
                return p
            t = 2 * n - t if finish == "bounce" else n
        while t in board.jumps:
            t = board.jumps[t]
            if not board.chain:
                break
        return t

    m = len(rest)
    a = [[Fraction(int(i == j)) for j in range(m)] + [Fraction(1)] for i in range(m)]
    for p in rest:
        for k, prob in zip(die.values, die.pmf):
            q = move(p, k)
            if q < n:
                a[at[p]][at[q]] -= prob
    n = m
    for col in range(n):
        piv = next(r for r in range(col, n) if a[r][col] != 0)
        a[col], a[piv] = a[piv], a[col]
        a[col] = [v / a[col][col] for v in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col]
                a[r] = [v - f * w for v, w in zip(a[r], a[col])]
    return a[0][n]


@pytest.mark.parametrize("die", DICE, ids=str)
@pytest.mark.parametrize("finish", ["stay", "bounce", "none"])
def test_plain_rules_against_value_iteration_in_fractions(die, finish):
    board = snl.Board(14, {3: 11, 13: 5, 7: 2})
    rules = snl.Rules.preset("plain").replace(die=die, finish=finish)
    if finish == "bounce" and board.size < die.top:
        pytest.skip("bounce needs a board at least as large as the die")
    want = _value_iteration(board, die, finish)
    assert snl.exact_expected_turns(board, rules) == want
    assert snl.analyze(board, rules).expected_turns == pytest.approx(float(want), rel=1e-12)
    assert snl.expected_turns(board, rules) == pytest.approx(float(want), rel=1e-12)


@pytest.mark.parametrize("die", DICE, ids=str)
@pytest.mark.parametrize("preset", ["app", "family", "plain"])
def test_the_fraction_solver_and_the_float_models_agree(die, preset):
    board = snl.Board(30, {3: 17, 12: 28, 25: 6, 20: 9})
    rules = snl.Rules.preset(preset).replace(die=die)
    try:
        exact = snl.exact_expected_turns(board, rules)
    except snl.UnwinnableBoardError as err:  # e.g. 2d6 under exact finish: 29 needs a 1
        with pytest.raises(snl.UnwinnableBoardError) as again:
            snl.analyze(board, rules)
        assert again.value.square == err.square
        return
    a = snl.analyze(board, rules)
    assert a.expected_turns == pytest.approx(float(exact), rel=1e-11)


@pytest.mark.parametrize("die", DICE, ids=str)
@pytest.mark.parametrize(
    "rules",
    [
        snl.Rules(),
        snl.Rules.preset("family").replace(bump=False),
        snl.Rules(on_cap="forfeit", start_on_six=True),
        snl.Rules(on_cap="restart"),
        snl.Rules(max_sixes=None),
        snl.Rules(finish="bounce", jump_after_bounce=False),
    ],
    ids=["app", "family", "forfeit", "restart", "nocap", "nojump"],
)
def test_the_roll_model_composes_to_the_turn_model(die, rules):
    """A turn is the rolls of the roll chain up to the next turn start (the existing check, with dice)."""
    board = snl.Board(24, {2: 15, 9: 20, 19: 4, 23: 8})
    rules = rules.replace(die=die)
    turn = snl.turn_model(board, rules, check=False).matrix.toarray()
    roll = snl.roll_model(board, rules, check=False)
    m = roll.matrix.toarray()
    starts = np.flatnonzero(roll.turn_start)
    inner = np.flatnonzero(~roll.turn_start)
    # from a turn start: first roll, then any number of mid-turn rolls, until a turn start is reached
    a, b = m[np.ix_(starts, starts)], m[np.ix_(starts, inner)]
    c, d = m[np.ix_(inner, starts)], m[np.ix_(inner, inner)]
    composed = a + b @ np.linalg.solve(np.eye(len(inner)) - d, c)
    squares = [roll.labels[i].square for i in starts]
    np.testing.assert_allclose(composed, turn[np.ix_(squares, squares)], atol=1e-12)


@pytest.mark.parametrize("die", DICE, ids=str)
@pytest.mark.parametrize("preset", ["app", "family", "plain"])
def test_the_batch_evaluator_equals_analyze_for_any_die(die, preset):
    rules = snl.Rules.preset(preset).replace(die=die)
    rng = np.random.default_rng(5)
    boards = [snl.Board.random(40, jump_fraction=0.2, max_length=9, rng=rng) for _ in range(4)]
    fig = evaluate(destinations(boards), rules, horizon=20)
    for i, board in enumerate(boards):
        try:
            a = snl.analyze(board, rules)
        except snl.UnwinnableBoardError:
            assert not fig.winnable[i]
            continue
        assert fig.mean[i] == pytest.approx(a.expected_turns, rel=1e-10)
        assert fig.var[i] == pytest.approx(a.var_turns, rel=1e-8)
        np.testing.assert_allclose(fig.survival[i, :21], a.length.sf(np.arange(21)), atol=1e-12)


def test_the_fast_path_is_what_the_kernel_batches(monkeypatch):
    """batch asks the kernel (batchable), not rule-field names; a rule the kernel cannot batch goes per board."""
    rules = snl.Rules(die="2d6")
    assert batchable(rules)
    boards = [snl.Board.builtin(), snl.Board.builtin("milton_bradley")]
    fast = evaluate(destinations(boards), rules, horizon=10)
    monkeypatch.setattr(batch, "batchable", lambda r: False)
    slow = evaluate(destinations(boards), rules, horizon=10)
    np.testing.assert_allclose(slow.mean, fast.mean, rtol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"die": snl.Die.faces(3, 3, 3), "max_sixes": None}, "every roll is a six"),
        ({"die": snl.Die.faces(3, 3, 3), "on_cap": "forfeit"}, "every roll is a six"),
        ({"die": snl.Die.faces(3, 3, 3)}, "every roll is a six"),
        (
            {"die": snl.Die.faces(3, 3, 3), "bonus_on_six": False, "start_on_six": True, "max_sixes": 1},
            "nothing to be redealt",
        ),
        ({"die": snl.Die(4), "faces": 6}, "give the die once"),
        ({"die": "spinner:1"}, "spinner"),
        ({"die": 3.5}, "die must be"),
    ],
)
def test_rules_refuse_dice_they_cannot_roll(kwargs, message):
    with pytest.raises(snl.RuleError, match=message):
        snl.Rules(**kwargs)


def test_a_single_valued_die_is_valid_where_it_can_be_rolled():
    die = snl.Die.faces(3, 3, 3, 3, 3, 3)  # Efron's B
    for rules in (
        snl.Rules.preset("plain").replace(die=die),
        snl.Rules(die=die, bonus_on_six=False, start_on_six=True),  # enters, then moves 3 a turn
        snl.Rules(die=die, bonus_on_six=False, on_cap="restart", finish="none"),
    ):
        assert rules.die == die
    # plain rules on a board whose squares 3, 6, 9 lead to the finish 9: three turns
    assert snl.exact_expected_turns(snl.Board(9), snl.Rules.preset("plain").replace(die=die)) == 3


def test_bounce_needs_a_board_as_large_as_the_top_value():
    with pytest.raises(snl.RuleError, match="top value"):
        snl.analyze(snl.Board(10), snl.Rules(finish="bounce", die="2d6"))


def test_rules_faces_is_the_fair_die_only():
    assert snl.Rules(faces=4).faces == 4 and snl.Rules(faces=4).die == snl.Die(4)
    assert snl.Rules().replace(faces=8).die == snl.Die(8)
    with pytest.raises(snl.RuleError, match="rules.die"):
        _ = snl.Rules(die="2d6").faces


def test_a_zero_move_takes_no_jump_in_the_winnability_check():
    """A bounce leaves the token on 11 (a ladder's foot) without climbing; a 0 there must not climb either.

    Moves of 3 from 0 reach 12; from 12 a 3 bounces to 11 and from 11 back to 12, so the finish is
    out of reach. A check that let the 0 move take the ladder 11 -> 13 would call the board
    winnable. The exact chain agrees.
    """
    from snlmarkov.reach import check_winnable

    board = snl.Board(13, {10: 9, 11: 13})
    rules = snl.Rules.preset("plain").replace(finish="bounce", jump_after_bounce=False, die=snl.Die.faces(0, 3, 3))
    with pytest.raises(snl.UnwinnableBoardError):
        check_winnable.__wrapped__(board, rules)
    with pytest.raises(snl.UnwinnableBoardError):
        snl.turn_model(board, rules)

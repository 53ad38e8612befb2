"""The Monte Carlo simulator: its rule tables exactly, its games statistically.

Exact checks: the step tables against an independent rule-by-rule reference
(written here from RULES.md) and against the playable engine ``Game`` fed the
same dice. Statistical checks: chi-square or z tests at alpha = 5e-7 with
fixed seeds, against distributions derived by hand or computed exactly from
the reference on tiny boards.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import Counter, deque
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from snlmarkov import Board, BoardError, Game, GameError, RuleError, Rules
from snlmarkov.errors import UnwinnableBoardError
from snlmarkov.game.events import Ladder, Move, Roll, Snake
from snlmarkov.sim.core import MODES, SimulationResult, simulate
from snlmarkov.sim.multi import play_multi
from snlmarkov.sim.solo import CodeDraw, play_solo
from snlmarkov.sim.tables import max_rolls_per_turn, mixed_parts, mixed_roll_table, roll_table, turn_table

ALPHA = 5e-7  # about 25 statistical tests here: below 1.5e-5 for the file
APP, PLAIN, FAMILY = Rules(), Rules.preset("plain"), Rules.preset("family")
GEOM_BOARD = Board(2, {1: 2})  # from 0, a 1 or a 2 finishes; a 3..6 overshoots (stay)


# ---------------------------------------------------------------- reference
def ref_turn(board, rules, pos, die):
    """One turn from ``pos`` by RULES.md; ``die(n)`` gives a roll in 1..n.

    Returns (end square, rolls, landing squares)."""
    size, faces, jumps = board.size, rules.faces, board.jumps
    start, sixes, rolls, land = pos, 0, 0, []
    entered = not (rules.start_on_six and pos == 0)
    while True:
        capped = rules.max_sixes is not None and sixes >= rules.max_sixes
        k = die(faces - 1 if capped and rules.on_cap == "redeal" else faces)
        rolls += 1
        if capped and rules.on_cap == "forfeit" and k == faces:
            return start, rolls, land
        if capped and rules.on_cap == "restart" and k == faces:
            return 0, rolls, land
        if not entered:
            if k != faces:
                return pos, rolls, land
            entered, sixes = True, sixes + 1
            continue
        target = pos + k
        bounced = target > size and rules.finish == "bounce"
        if target > size:
            if rules.finish == "stay":
                return pos, rolls, land
            target = 2 * size - target if rules.finish == "bounce" else size
        land.append(target)
        pos = target
        if not (bounced and not rules.jump_after_bounce):
            pos = jumps.get(target, target)
            while board.chain and pos in jumps:  # a chained jump: it lands there too
                land.append(pos)
                pos = jumps[pos]
        if pos == size or not (k == faces and rules.bonus_on_six):
            return pos, rolls, land
        sixes += 1


def ref_turn_dist(board, rules, pos, max_rolls=12):
    """Exact distribution of (end, rolls, landings) of one turn; turns longer
    than ``max_rolls`` rolls are cut (their mass is reported under "cut")."""
    out = Counter()

    class Need(Exception):
        pass

    def explore(prefix, prob):
        used = []

        def die(n):
            if len(used) < len(prefix):
                used.append(n)
                return prefix[len(used) - 1]
            raise Need(n)

        try:
            end, rolls, land = ref_turn(board, rules, pos, die)
            out[(end, rolls, tuple(land))] += prob
        except Need as need:
            if len(prefix) >= max_rolls:
                out["cut"] += prob
                return
            n = need.args[0]
            for v in range(1, n + 1):
                explore(prefix + (v,), prob / n)

    explore((), Fraction(1))
    return out


def solo_chain(board, rules, horizon):
    """Exact pmf of turns, mean rolls and mean landings per square of one solo
    token, by iterating the reference turn distribution (floats)."""
    size = board.size
    dists = {p: ref_turn_dist(board, rules, p) for p in range(size)}
    mass = {0: 1.0}
    pmf = np.zeros(horizon + 1)
    rolls = 0.0
    landings = np.zeros(size + 1)
    for t in range(1, horizon + 1):
        nxt = Counter()
        for p, w in mass.items():
            for key, q in dists[p].items():
                if key == "cut":
                    continue
                end, r, land = key
                q = w * float(q)
                rolls += q * r
                for sq in land:
                    landings[sq] += q
                if end == size:
                    pmf[t] += q
                else:
                    nxt[end] += q
        mass = nxt
    return pmf, rolls, landings, sum(mass.values())


# ------------------------------------------------------------------- stats
def pooled(observed, expected, min_expected=5.0):
    """Pool adjacent cells so every expected count is at least ``min_expected``."""
    obs_out, exp_out, o_acc, e_acc = [], [], 0.0, 0.0
    for o, e in zip(observed, expected):
        o_acc, e_acc = o_acc + o, e_acc + e
        if e_acc >= min_expected:
            obs_out.append(o_acc)
            exp_out.append(e_acc)
            o_acc = e_acc = 0.0
    if e_acc > 0 or o_acc > 0:
        obs_out[-1] += o_acc
        exp_out[-1] += e_acc
    return np.array(obs_out), np.array(exp_out)


def chi2_gof(observed, probs):
    """p-value of a chi-square goodness-of-fit test (cells pooled to expected >= 5)."""
    observed = np.asarray(observed, dtype=float)
    probs = np.asarray(probs, dtype=float)
    assert abs(probs.sum() - 1) < 1e-9
    obs, exp = pooled(observed, probs * observed.sum())
    assert len(obs) >= 2
    return stats.chi2.sf(((obs - exp) ** 2 / exp).sum(), len(obs) - 1)


def chi2_two_sample(a, b):
    """p-value of a chi-square test that two samples of integers share one distribution
    (values pooled from the left so every expected count is at least 5)."""
    a, b = np.asarray(a), np.asarray(b)
    low = min(a.min(), b.min())
    top = max(a.max(), b.max()) - low + 1
    table = np.vstack([np.bincount(a - low, minlength=top), np.bincount(b - low, minlength=top)]).astype(float)
    need = 5 * table.sum() / table.sum(axis=1).min()
    cols, acc = [], np.zeros(2)
    for j in range(top):
        acc = acc + table[:, j]
        if acc.sum() >= need:
            cols.append(acc)
            acc = np.zeros(2)
    if acc.sum():
        cols[-1] = cols[-1] + acc
    assert len(cols) >= 2
    return stats.chi2_contingency(np.array(cols).T, correction=False).pvalue


def turn_counts(result, horizon):
    """Observed counts of turns 1..horizon, then everything above."""
    counts = np.bincount(result.turns, minlength=horizon + 2)[1:]
    return np.append(counts[:horizon], counts[horizon:].sum())


def with_tail(pmf):
    """pmf[1..] of a horizon plus the tail mass beyond it."""
    return np.append(pmf[1:], max(0.0, 1.0 - pmf[1:].sum()))


# ----------------------------------------------------- the tables, exactly
def table_turn_dist(table, pos, max_steps=12):
    """Distribution of (end, rolls, landings) of one turn from ``pos`` read off a table.

    A code that throws no roll (a roll table's six after the cap, never dealt)
    is drawn again: the other codes share its probability."""
    size = table.size
    out = Counter()

    def explore(state, prob, rolls, land, depth):
        if depth >= max_steps:
            out["cut"] += prob
            return
        dealt = [c for c in range(table.codes) if table.rolls[state * table.codes + c]]
        for c in dealt:
            e = state * table.codes + c
            r = rolls + int(table.rolls[e])
            seen = land + tuple(int(x) for x in table.land[:, e] if x != size + 1)
            share = prob / len(dealt)
            if table.void.size and table.void[e]:
                out[(pos, r, seen)] += share
            elif table.turns[e] or int(table.next[e]) == size:
                out[(int(table.next[e]), r, seen)] += share
            else:
                explore(int(table.next[e]), share, r, seen, depth + 1)

    explore(pos, Fraction(1), 0, (), 0)
    return out


def every_rule_set(faces=(6,)):
    for finish, bonus, cap, on_cap, six, f in itertools.product(
        ("stay", "bounce", "none"), (False, True), (None, 1, 2), ("redeal", "forfeit"), (False, True), faces
    ):
        if cap is None and on_cap == "forfeit":
            continue
        yield Rules(finish=finish, bonus_on_six=bonus, max_sixes=cap, on_cap=on_cap, start_on_six=six, faces=f)


def house_rule_sets(faces=(6,)):
    """The combinations the house rules of issue 11 add: restart, and no jump after a bounce."""
    for finish, bonus, cap, on_cap, six, jab, f in itertools.product(
        ("stay", "bounce", "none"),
        (False, True),
        (None, 1, 2),
        ("redeal", "forfeit", "restart"),
        (False, True),
        (True, False),
        faces,
    ):
        if (on_cap != "restart" and jab) or (not jab and finish != "bounce") or (cap is None and on_cap != "redeal"):
            continue
        yield Rules(
            finish=finish,
            bonus_on_six=bonus,
            max_sixes=cap,
            on_cap=on_cap,
            start_on_six=six,
            faces=f,
            jump_after_bounce=jab,
        )


#: a chained board: 2 -> 5 -> 1 and 6 -> 2 -> 5 -> 1 (bounce lands on 6 and 5)
CHAINED7 = Board(7, {2: 5, 5: 1, 6: 2}, chain=True)
CHAINED6 = Board(6, {1: 4, 4: 2, 5: 3}, chain=True)


def test_house_rule_tables_match_reference_exactly():
    checked = 0
    for board in (CHAINED7, Board(7, {2: 5, 6: 1})):
        for rules in itertools.chain(house_rule_sets(), every_rule_set() if board.chain else ()):
            if rules.bonus_on_six and rules.max_sixes is None:
                continue
            table = turn_table(board, rules)
            for pos in range(board.size):
                assert table_turn_dist(table, pos) == ref_turn_dist(board, rules, pos), (board, rules, pos)
            checked += 1
    assert checked == 2 * 50 + 54


def test_house_rule_roll_tables_match_reference_exactly():
    for rules in itertools.chain(house_rule_sets(faces=(4,)), every_rule_set(faces=(4,))):
        for rolls in (1, 2):
            table = turn_table(CHAINED6, rules, rolls=rolls)
            steps = 12 // rolls
            for pos in range(CHAINED6.size):
                want = ref_turn_dist(CHAINED6, rules, pos, steps * rolls)
                assert table_turn_dist(table, pos, steps) == want, (rules, pos)
        one = roll_table(CHAINED6, rules, 1)
        for pos in range(CHAINED6.size):
            assert table_turn_dist(one, pos, 12) == ref_turn_dist(CHAINED6, rules, pos, 12), (rules, pos)
        many = roll_table(CHAINED6, rules, 2)
        for e in range(0, many.entries, 7):
            state, code = divmod(e, many.codes)
            if state % (CHAINED6.size + 1) == CHAINED6.size and state != CHAINED6.size:
                continue
            want = walk(one, rules, state, code, 2)
            assert many.turns[e] == want["turns"] and many.rolls[e] == want["rolls"], (rules, state, code)
            assert [int(x) for x in many.land[:, e] if x != CHAINED6.size + 1] == want["land"]


@pytest.mark.parametrize("board", [Board(7, {2: 5, 6: 1}), Board(6, {1: 4, 5: 2})], ids=["b7", "b6"])
def test_whole_turn_tables_match_reference_exactly(board):
    checked = 0
    for rules in every_rule_set():
        if rules.bonus_on_six and rules.max_sixes is None:
            continue  # unbounded turns: see the continuation test
        table = turn_table(board, rules)
        assert table.phases == 1
        for pos in range(board.size):
            assert table_turn_dist(table, pos) == ref_turn_dist(board, rules, pos), (rules, pos)
        # the finished square is absorbing: no roll, no turn, no landing
        fin = slice(board.size * table.codes, (board.size + 1) * table.codes)
        assert (table.next[fin] == board.size).all() and not table.rolls[fin].any() and not table.turns[fin].any()
        checked += 1
    assert checked == 54


@pytest.mark.parametrize("rolls", [1, 2])
def test_part_turn_tables_match_reference_exactly(rolls):
    board = Board(5, {1: 4, 3: 2})
    for rules in every_rule_set(faces=(4,)):
        table = turn_table(board, rules, rolls=rolls)
        assert table.phases == (1 if rolls >= max_rolls_per_turn(rules) else (rules.max_sixes or 1) + 1)
        steps = 12 // rolls
        for pos in range(board.size):
            assert table_turn_dist(table, pos, steps) == ref_turn_dist(board, rules, pos, steps * rolls), (rules, pos)


def test_one_roll_tables_match_reference_exactly():
    board = Board(6, {1: 4, 5: 2})
    for rules in every_rule_set(faces=(4,)):
        table = roll_table(board, rules, 1)
        for pos in range(board.size):
            assert table_turn_dist(table, pos, 12) == ref_turn_dist(board, rules, pos, 12), (rules, pos)


def walk(one, rules, state, code, rolls):
    """Play ``rolls`` rolls of ``code`` from ``state`` one roll at a time on a
    one-roll table: what a many-roll table entry must hold."""
    size = one.size
    turns = thrown = 0
    land = []
    known, start = state <= size, state % (size + 1)
    for _ in range(rolls):
        if state == size:
            break
        code, digit = divmod(code, rules.faces)  # roll tables: every digit a fair die
        e = state * one.codes + digit
        if one.rolls[e] == 0:  # a six after the cap is never dealt: the step stops there
            break
        thrown += int(one.rolls[e])
        land += [int(x) for x in one.land[:, e] if x != size + 1]
        if one.void.size and one.void[e]:
            if not known:  # the voided turn ends; where it began, only the simulator knows
                return {"void": True, "turns": turns + 1, "rolls": thrown, "land": land}
            state, turns = start, turns + 1
            continue
        state = int(one.next[e])
        if one.turns[e]:
            turns += 1
            known, start = True, state
    carry = start if known else -1
    return {"void": False, "next": state, "turns": turns, "rolls": thrown, "land": land, "carry": carry}


@pytest.mark.parametrize("rolls", [2, 3])
def test_many_roll_tables_are_one_roll_tables_in_a_row(rolls):
    board = Board(6, {1: 4, 5: 2})
    for rules in every_rule_set(faces=(4,)):
        one = roll_table(board, rules, 1)
        many = roll_table(board, rules, rolls)
        assert many.phases == one.phases
        for e in range(many.entries):
            state, code = divmod(e, many.codes)
            if state % (board.size + 1) == board.size and state != board.size:
                continue  # mid-turn on the finish: not a state
            want = walk(one, rules, state, code, rolls)
            got_void = bool(many.void.size and many.void[e])
            assert got_void == want["void"], (rules, state, code)
            assert many.turns[e] == want["turns"] and many.rolls[e] == want["rolls"], (rules, state, code)
            assert [int(x) for x in many.land[:, e] if x != board.size + 1] == want["land"]
            if not got_void:
                assert many.next[e] == want["next"], (rules, state, code)
                if many.carry.size and want["next"] != board.size:
                    phase0 = want["next"] <= board.size
                    assert many.carry[e] == (want["next"] if phase0 else want["carry"])


class _Feed:
    """Scripted dice that can be topped up between turns."""

    def __init__(self):
        self.queue = deque()

    def __iter__(self):
        return self

    def __next__(self):
        if not self.queue:
            raise StopIteration
        return self.queue.popleft()


def decode(rules, code, rolls):
    """The die values a whole-turn code stands for (its first ``rolls`` digits)."""
    out, sixes = [], 0
    for _ in range(rolls):
        capped = rules.max_sixes is not None and sixes >= rules.max_sixes
        radix = rules.faces - 1 if capped and rules.on_cap == "redeal" else rules.faces
        code, digit = divmod(code, radix)
        out.append(digit + 1)
        sixes += 1
    return out


@pytest.mark.parametrize(
    "rules",
    [
        APP,
        PLAIN,
        FAMILY.replace(bump=False),
        Rules(on_cap="forfeit", start_on_six=True),
        Rules(finish="none", max_sixes=1),
        Rules(on_cap="restart", max_sixes=1, start_on_six=True),
        Rules(finish="bounce", jump_after_bounce=False, on_cap="restart"),
    ],
    ids=["app", "plain", "family", "forfeit-six", "none-cap1", "restart-six", "bounce-nojump-restart"],
)
@pytest.mark.parametrize("name", ["jungle", "milton_bradley", "puzzle"])
def test_tables_agree_with_the_game_engine_turn_by_turn(rules, name):
    if name == "puzzle":  # the published chain 83 -> 84 -> 97 on the jungle board
        board = Board(100, {**Board.builtin().jumps, 83: 84, 84: 97}, chain=True)
    else:
        board = Board.builtin(name)
    table = turn_table(board, rules)
    assert table.phases == 1
    rng = np.random.default_rng(11)
    for _ in range(40):
        feed = _Feed()
        game = Game(board, rules, players=1, dice=feed)
        state = 0
        while not game.is_over:
            code = int(rng.integers(table.codes))
            e = state * table.codes + code
            feed.queue.extend(decode(rules, code, int(table.rolls[e])))
            events = game.take_turn()
            assert not feed.queue
            state = int(table.next[e])
            assert game.positions == (state,)
            assert sum(isinstance(ev, Roll) for ev in events) == table.rolls[e]
            # landed on: each move's square, and each later jump of a chain
            landed = [
                ev.end if isinstance(ev, Move) else ev.start
                for i, ev in enumerate(events)
                if isinstance(ev, Move)
                or (isinstance(ev, (Ladder, Snake)) and isinstance(events[i - 1], (Ladder, Snake)))
            ]
            assert landed == [int(x) for x in table.land[:, e] if x != board.size + 1]


# ------------------------------------------------- solo games, in law
@pytest.mark.parametrize("rules", [PLAIN, APP, Rules(max_sixes=None), Rules(on_cap="forfeit")], ids=str)
def test_turns_are_geometric_when_each_turn_finishes_with_one_third(rules):
    # from 0 a 1 (ladder to 2) or a 2 finishes; 3..6 overshoot and, under stay,
    # end the turn at once even on a six: turns ~ Geometric(1/3), rolls == turns
    n = 300_000
    r = simulate(GEOM_BOARD, rules, n, rng=20240)
    horizon = 40
    pmf = np.array([0.0] + [(2 / 3) ** (t - 1) / 3 for t in range(1, horizon + 1)])
    assert chi2_gof(turn_counts(r, horizon), with_tail(pmf)) > ALPHA
    assert (r.rolls == r.turns).all()
    # every game ends with a single landing, on 1 or on 2 with equal odds
    assert r.landings.tolist()[0] == 0 and r.landings[1] + r.landings[2] == n
    assert abs(r.landings[1] - n / 2) / math.sqrt(n / 4) < stats.norm.isf(ALPHA / 2)


def test_finish_none_on_two_squares_takes_one_or_two_turns():
    n = 200_000
    r = simulate(Board(2), PLAIN.replace(finish="none"), n, rng=5)
    assert set(np.unique(r.turns).tolist()) == {1, 2}
    assert chi2_gof([np.sum(r.turns == 1), np.sum(r.turns == 2)], [5 / 6, 1 / 6]) > ALPHA
    # a roll of 1 lands on 1, every other roll lands on (reaches) 2
    assert r.landings[2] == n and r.landings[1] == np.sum(r.turns == 2)


def test_six_to_start_waits_for_a_six_then_moves():
    # finish none: once entered, any roll finishes. Turns ~ Geometric(1/6), and
    # the last turn has two rolls (the six, then the move): rolls == turns + 1
    n = 200_000
    rules = PLAIN.replace(finish="none", start_on_six=True)
    r = simulate(GEOM_BOARD, rules, n, rng=8)
    assert (r.rolls == r.turns + 1).all()
    horizon = 90
    pmf = np.array([0.0] + [(5 / 6) ** (t - 1) / 6 for t in range(1, horizon + 1)])
    assert chi2_gof(turn_counts(r, horizon), with_tail(pmf)) > ALPHA
    assert r.landings[0] == 0 and r.landings.sum() == n


@pytest.mark.parametrize("rolls", [1, 2, 3])
def test_mixed_roll_tables_are_roll_tables_by_code_range(rolls):
    board = Board(6, {1: 4, 5: 2})
    for rules in every_rule_set(faces=(4, 6)):
        codes, parts = mixed_parts(rules, rolls)
        mixed = mixed_roll_table(board, rules, rolls)
        assert codes == mixed.codes and codes & (codes - 1) == 0 and mixed.rolls_per_step == rolls
        none, tables = board.size + 1, [(roll_table(board, rules, r), copies) for r, copies in parts]
        for state in range(mixed.states):
            row = slice(state * codes, (state + 1) * codes)
            base = 0
            for t, copies in tables:
                src = state * t.codes + np.arange(copies * t.codes) % t.codes
                dst = np.arange(row.start + base, row.start + base + copies * t.codes)
                assert mixed.void.size == mixed.carry.size == (mixed.entries if t.void.size else 0)
                for name in ("next", "turns", "rolls") + (("void", "carry") if t.void.size else ()):
                    assert (getattr(mixed, name)[dst] == getattr(t, name)[src]).all(), (rules, state, name)
                assert (mixed.land[: t.land.shape[0], dst] == t.land[:, src]).all()
                assert (mixed.land[t.land.shape[0] :, dst] == none).all()
                base += copies * t.codes
            idle = np.arange(row.start + base, row.stop)  # codes left over: the token stays
            assert idle.size <= codes // 4
            assert (mixed.next[idle] == state).all() and not mixed.turns[idle].any() and not mixed.rolls[idle].any()
            assert (mixed.land[:, idle] == none).all() and not (mixed.void.size and mixed.void[idle].any())
            if mixed.carry.size:
                assert (mixed.carry[idle] == (state if state <= board.size else -1)).all()


def test_code_draws_are_uniform_and_the_check_catches_a_modulo_bias():
    for codes in (6, 200, 216, 256, 40_000):
        draw = CodeDraw(np.random.default_rng(codes), codes)
        counts = np.bincount(np.concatenate(draw.block(4, 250_000)).ravel(), minlength=codes)
        assert counts.size == codes
        assert stats.chisquare(counts).pvalue > ALPHA, codes
    # a 16-bit word taken modulo 40,000 (no rejection) makes codes below 25,536 twice as likely
    words = np.random.default_rng(1).integers(0, 1 << 16, size=1_000_000)
    assert stats.chisquare(np.bincount(words % 40_000, minlength=40_000)).pvalue < ALPHA


CHAIN_BOARD = Board(9, {1: 5, 3: 8, 7: 2})
CHAIN_RULES = {
    "app": APP,
    "plain": PLAIN,
    "family": FAMILY,
    "uncapped": Rules(max_sixes=None, finish="bounce"),
    "forfeit": Rules(on_cap="forfeit", max_sixes=1, start_on_six=True),
    "forfeit-4": Rules(on_cap="forfeit", max_sixes=1, faces=4, finish="bounce"),
    "none-cap3": Rules(finish="none", max_sixes=3, faces=4),
}


@pytest.mark.parametrize("key", list(CHAIN_RULES))
def test_solo_turns_rolls_and_landings_follow_the_reference_chain(key):
    rules = CHAIN_RULES[key]
    n, horizon = 200_000, 400
    pmf, mean_rolls, mean_land, left = solo_chain(CHAIN_BOARD, rules, horizon)
    assert left < 1e-9
    r = simulate(CHAIN_BOARD, rules, n, rng=1000 + len(key))
    assert r.n_truncated == 0
    assert chi2_gof(turn_counts(r, horizon), with_tail(pmf)) > ALPHA
    z = stats.norm.isf(ALPHA / 2)
    assert abs(r.mean_rolls() - mean_rolls) / (r.std_rolls() / math.sqrt(n)) < z
    # landings per square: the totals of independent batches are nearly normal
    batches = np.array([simulate(CHAIN_BOARD, rules, 4000, rng=[77, b]).landings for b in range(40)], dtype=float)
    mean, sd = batches.mean(axis=0), batches.std(axis=0, ddof=1)
    t_crit = stats.t.isf(ALPHA / 2 / CHAIN_BOARD.size, df=len(batches) - 1)
    for sq in range(1, CHAIN_BOARD.size + 1):
        expected = 4000 * mean_land[sq]
        if sd[sq] == 0:  # e.g. exactly one landing on the finish per game
            assert mean[sq] == pytest.approx(expected, rel=1e-8)
        else:
            assert abs(mean[sq] - expected) / (sd[sq] / math.sqrt(len(batches))) < t_crit, sq
    assert batches[:, 0].sum() == 0


@pytest.mark.parametrize("rolls", [1, 2, 3])
@pytest.mark.parametrize("key", ["forfeit", "forfeit-4", "app", "uncapped"])
def test_solo_engine_with_short_steps_follows_the_reference_chain(key, rolls):
    # few rolls per step: turns often span steps, and forfeits void turns
    # that began in an earlier step (the engine restores their start)
    rules = CHAIN_RULES[key]
    n, horizon = 100_000, 400
    pmf, mean_rolls, _, left = solo_chain(CHAIN_BOARD, rules, horizon)
    out = play_solo(
        roll_table(CHAIN_BOARD, rules, rolls),
        roll_table(CHAIN_BOARD, rules, 1),
        n,
        100_000,
        np.random.default_rng([rolls, len(key)]),
        one_roll_turns=False,
    )
    assert not out.truncated.any()
    turns = out.turns
    observed = np.append(np.bincount(turns, minlength=horizon + 1)[1 : horizon + 1], np.sum(turns > horizon))
    assert chi2_gof(observed, with_tail(pmf)) > ALPHA
    z = (out.rolls.mean() - mean_rolls) / (out.rolls.std(ddof=1) / math.sqrt(n))
    assert abs(z) < stats.norm.isf(ALPHA / 2)


def test_every_roll_lands_somewhere_without_stay_six_to_start_or_forfeit():
    # an exact identity over many games on a real board (composed tables included)
    for rules in (PLAIN.replace(finish="bounce"), Rules(finish="none"), Rules(finish="bounce", max_sixes=None)):
        r = simulate(Board.builtin(), rules, 50_000, rng=3)
        assert r.landings.sum() == r.rolls.sum()
        assert r.landings[0] == 0


def test_landings_on_the_finish_count_the_games_that_finish():
    board = Board.builtin("milton_bradley")  # 80 -> 100 is a ladder onto the finish
    r = simulate(board, PLAIN, 50_000, rng=9)
    dest = board.destination()
    onto_finish = [t for t in range(1, board.size + 1) if dest[t] == board.size]
    assert onto_finish == [80, 100]
    # each game ends with its only landing on 80 or on 100
    assert r.landings[80] + r.landings[100] == r.games


def test_seeds_reproduce_and_differ():
    a = simulate(Board.builtin(), APP, 5000, rng=12)
    b = simulate(Board.builtin(), APP, 5000, rng=np.random.default_rng(12))
    c = simulate(Board.builtin(), APP, 5000, rng=13)
    assert (a.turns == b.turns).all() and (a.rolls == b.rolls).all() and (a.landings == b.landings).all()
    assert not (a.turns == c.turns).all()


def test_solo_engine_agrees_with_the_multi_seat_engine_for_one_player():
    board, n = Board.builtin(), 60_000
    # forfeit with one six: a turn often spans two solo steps, so turns voided
    # after a step boundary are frequent
    for rules in (APP, FAMILY, Rules(max_sixes=None), Rules(on_cap="forfeit", max_sixes=1)):
        solo = simulate(board, rules, n, rng=31)
        base = turn_table(board, rules)
        multi = play_multi(base, rules, n, 1, "classic", 100_000, np.random.default_rng(32))
        assert chi2_two_sample(solo.turns, multi.turns) > ALPHA
        assert chi2_two_sample(solo.rolls, multi.rolls) > ALPHA


# ------------------------------------------------------------ truncation
def test_truncated_games_are_stopped_exactly_and_reported():
    n, cap = 200_000, 3
    for rules in (PLAIN, Rules(max_sixes=None)):  # composed tables / part-turn tables
        with pytest.warns(RuntimeWarning, match=r"reached max_turns=3"):
            r = simulate(GEOM_BOARD, rules, n, rng=4, max_turns=cap)
        assert r.turns.max() == cap and r.max_turns == cap
        assert (r.turns[r.truncated] == cap).all()
        assert not r.finished[r.truncated].any() and r.finished[~r.truncated].all()
        assert (r.winner[r.truncated] == -1).all() and (r.winner[~r.truncated] == 0).all()
        assert (r.finish_turn[:, 0] == np.where(r.truncated, 0, r.turns)).all()
        observed = [np.sum((r.turns == t) & ~r.truncated) for t in (1, 2, 3)] + [r.n_truncated]
        assert chi2_gof(observed, [1 / 3, 2 / 9, 4 / 27, 8 / 27]) > ALPHA


def test_long_games_leave_the_composed_tables_for_the_last_turns():
    # a 60-faced die: each turn finishes with probability 1/30; steps of two
    # turns are used until the games near max_turns = 110
    n, cap = 100_000, 110
    rules = PLAIN.replace(faces=60)
    with pytest.warns(RuntimeWarning):
        r = simulate(GEOM_BOARD, rules, n, rng=44, max_turns=cap)
    assert (r.rolls == r.turns).all() and r.turns.max() == cap
    p = np.array([(29 / 30) ** (t - 1) / 30 for t in range(1, cap + 1)] + [(29 / 30) ** cap])
    observed = np.append(np.bincount(r.turns[~r.truncated], minlength=cap + 1)[1:], r.n_truncated)
    assert chi2_gof(observed, p) > ALPHA


def test_unwinnable_board_is_refused_up_front():
    board = Board(4, {2: 1, 3: 1})  # with a two-faced die nothing gets past 1
    rules = PLAIN.replace(faces=2)
    for players in (1, 3):
        with pytest.raises(UnwinnableBoardError) as err:
            simulate(board, rules, 500, players=players, rng=0, max_turns=50)
        assert err.value.square == 0


def test_truncation_machinery_on_an_unwinnable_board():
    """play() (simulate without its checks) stops games at max_turns and marks them."""
    from snlmarkov.sim.core import play

    board = Board(4, {2: 1, 3: 1})
    rules = PLAIN.replace(faces=2)
    r = play(board, rules, 500, 1, "classic", np.random.default_rng(0), 50)
    assert r.n_truncated == 500 and (r.turns == 50).all() and (r.rolls == 50).all()
    assert not r.finished.any() and (r.winner == -1).all() and (r.place == 0).all()
    r = play(board, rules, 300, 1, "classic", np.random.default_rng(0), 1000)
    assert (r.turns == 1000).all() and (r.rolls == 1000).all()
    r = play(board, rules, 200, 3, "classic", np.random.default_rng(0), 10)
    assert (r.turns == 10).all() and (r.rounds == 4).all() and r.truncated.all()
    assert (r.finish_turn == 0).all()


def test_no_warning_when_nothing_is_truncated():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        simulate(GEOM_BOARD, PLAIN, 1000, rng=1)


# ------------------------------------------------------- several seats
def race_chain(board, rules, players, mode, horizon):
    """Exact law of (winner, total turns when won), of the finishing order and
    of the game's total turns, by iterating the reference turn distribution
    with the bump rule (floats)."""
    size = board.size
    dists = {p: ref_turn_dist(board, rules, p) for p in range(size)}
    # state: (positions, seat to play, order so far)
    mass = {((0,) * players, 0, ()): 1.0}
    winner_turns = Counter()  # (winner, total turns) -> prob
    orders = Counter()
    lengths = np.zeros(horizon + 1)
    for t in range(1, horizon + 1):
        nxt = Counter()
        for (pos, seat, order), w in mass.items():
            for key, q in dists[pos[seat]].items():
                end, _, _ = key
                if rules.bump and 1 <= end <= size - 1 and any(p == end for i, p in enumerate(pos) if i != seat):
                    end = rules.bump_to
                new = pos[:seat] + (end,) + pos[seat + 1 :]
                q = w * float(q)
                new_order = order + (seat,) if end == size else order
                if end == size and len(order) == 0:
                    winner_turns[(seat, t)] += q
                over = end == size and (mode == "classic" or len(new_order) == players)
                if over:
                    orders[new_order] += q
                    lengths[t] += q
                    continue
                following = [(seat + j) % players for j in range(1, players + 1)]
                nxt_seat = next(s for s in following if new[s] != size)
                nxt[(new, nxt_seat, new_order)] += q
        mass = nxt
    return winner_turns, orders, lengths, sum(mass.values())


@pytest.mark.parametrize("mode", MODES)
def test_bump_race_on_a_tiny_board_follows_the_exact_law(mode):
    board = Board(4, {2: 3})
    rules = PLAIN.replace(finish="none", bump=True, bump_to=1, faces=3)
    players, n = 2, 200_000
    horizon = 80
    winner_turns, orders, lengths, left = race_chain(board, rules, players, mode, horizon)
    assert left < 1e-12
    r = simulate(board, rules, n, players=players, mode=mode, rng=99, max_turns=1000)
    assert r.n_truncated == 0
    assert chi2_gof(turn_counts(r, horizon), with_tail(lengths)) > ALPHA
    # the winner and the turn (over all seats) on which the game was won
    keys = sorted(winner_turns)
    rows, seats = np.nonzero(r.place == 1)
    won_on = (r.finish_turn[rows, seats] - 1) * players + seats + 1
    first = Counter(zip(seats.tolist(), won_on.tolist()))
    assert set(first) <= set(keys) and sum(first.values()) == n
    assert chi2_gof([first[k] for k in keys], [winner_turns[k] for k in keys]) > ALPHA
    # the finishing order
    keys = sorted(orders)
    order_of = Counter()
    for row, count in zip(*np.unique(r.place, axis=0, return_counts=True)):
        placed = [seat for seat in np.argsort(row) if row[seat] > 0]
        order_of[tuple(int(seat) for seat in placed)] += int(count)
    assert set(order_of) <= set(keys)
    assert chi2_gof([order_of[k] for k in keys], [orders[k] for k in keys]) > ALPHA
    if mode == "classic":
        assert ((r.place > 0).sum(axis=1) == 1).all()
        assert (r.turns == (r.rounds - 1) * players + r.winner + 1).all()
    else:
        assert (np.sort(r.place, axis=1) == np.arange(1, players + 1)).all()
        assert (r.turns == r.finish_turn.sum(axis=1)).all()
        assert (r.rounds == r.finish_turn.max(axis=1)).all()


def test_bump_to_another_square_follows_the_exact_law():
    # squares 1 and 2 can be shared; a token bumped goes to square 2
    board = Board(3)
    rules = PLAIN.replace(bump=True, bump_to=2, finish="none", faces=3)
    r = simulate(board, rules, 100_000, players=2, mode="last_one_standing", rng=2, max_turns=1000)
    winner_turns, orders, lengths, left = race_chain(board, rules, 2, "last_one_standing", 60)
    assert left < 1e-12 and r.n_truncated == 0
    assert chi2_gof(turn_counts(r, 60), with_tail(lengths)) > ALPHA
    keys = sorted(orders)
    observed = [int(np.sum(r.place[:, k[0]] == 1)) for k in keys]
    assert chi2_gof(observed, [orders[k] for k in keys]) > ALPHA


@pytest.mark.slow  # a long statistical run
def test_races_agree_with_the_game_engine():
    board = Board(12, {2: 9, 10: 4, 6: 11})
    n_game, n_sim = 4000, 100_000
    for rules, mode in ((FAMILY, "classic"), (Rules(bump=True, on_cap="forfeit", max_sixes=1), "last_one_standing")):
        rng = np.random.default_rng(5)
        turns, winners = [], []
        for _ in range(n_game):
            game = Game(board, rules, players=3, mode=mode, rng=rng)
            game.play(max_turns=10_000)
            turns.append(game.total_turns)
            winners.append(game.winner)
        r = simulate(board, rules, n_sim, players=3, mode=mode, rng=6, max_turns=10_000)
        assert r.n_truncated == 0
        assert chi2_two_sample(np.array(turns), r.turns) > ALPHA
        assert chi2_two_sample(np.array(winners), r.winner) > ALPHA


def test_seats_take_turns_in_order_and_rounds_count_turns():
    r = simulate(Board.builtin(), APP, 20_000, players=4, rng=10)
    # classic: the winner's own turn count is the round, the game's turns follow
    assert (r.finish_turn[np.arange(r.games), r.winner] == r.rounds).all()
    assert (r.turns == (r.rounds - 1) * 4 + r.winner + 1).all()
    assert (r.finished.sum(axis=1) == 1).all() and (r.place.sum(axis=1) == 1).all()
    # seat 0 moves first: its advantage is a fact of the game, not of the simulator,
    # but all four win frequencies must be positive and add up to one
    freq = r.win_frequencies()
    assert freq.sum() == 1.0 and (freq > 0).all()
    places = r.place_frequencies()
    assert places.shape == (4, 4) and np.allclose(places[:, 0], freq) and (places[:, 1:] == 0).all()


def test_last_one_standing_places_everyone():
    r = simulate(Board.builtin(), FAMILY, 5000, players=3, mode="last_one_standing", rng=3)
    assert (np.sort(r.place, axis=1) == [1, 2, 3]).all()
    assert r.finished.all()
    assert np.allclose(r.place_frequencies().sum(axis=0), 1) and np.allclose(r.place_frequencies().sum(axis=1), 1)
    assert (r.winner == np.argmax(r.place == 1, axis=1)).all()


# ---------------------------------------------------- result and inputs
def test_result_is_read_only_and_consistent():
    r = simulate(Board.builtin(), APP, 1000, rng=1)
    with pytest.raises(ValueError):
        r.turns[0] = 5
    with pytest.raises(AttributeError):
        r.games = 3
    assert r.players == 1 and r.mode == "classic" and r.board == Board.builtin() and r.rules == APP
    assert r.rounds.tolist() == r.turns.tolist()
    assert r.finish_turn.shape == (1000, 1) and r.place.tolist() == [[1]] * 1000
    assert r.mean_turns() == pytest.approx(r.turns.mean(), abs=1e-12)
    assert r.std_turns() == pytest.approx(np.std(r.turns, ddof=1), abs=1e-12)
    assert "1000 games" in str(r) and "truncated at 100000 turns: 0" in r.summary()
    with pytest.raises(GameError):
        SimulationResult(**{**r.__dict__, "turns": r.turns[:5]})


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"games": 0}, GameError),
        ({"games": -3}, GameError),
        ({"games": 2.5}, GameError),
        ({"games": True}, GameError),
        ({"players": 0}, GameError),
        ({"mode": "sudden_death"}, GameError),
        ({"max_turns": 0}, GameError),
        ({"board": "jungle"}, BoardError),
        ({"rules": "app"}, RuleError),
        ({"board": Board(4), "rules": Rules(finish="bounce")}, RuleError),
        ({"players": 2, "rules": Rules(bump=True, bump_to=100)}, RuleError),
    ],
)
def test_bad_inputs_are_refused(kwargs, error):
    args = {"board": Board.builtin(), "rules": APP, "games": 10, **kwargs}
    with pytest.raises(error):
        simulate(args.pop("board"), args.pop("rules"), args.pop("games"), **args)


def test_defaults_and_progress_bar(capsys):
    r = simulate(None, None, 2000, rng=1, progress=True)
    assert r.board == Board.builtin() and r.rules == Rules()
    assert "2000/2000" in capsys.readouterr().err


# ---------------------------------------------------------------- the simulator's slow lane (from the planted-bug audit, benchmarks/mutation_audit.py)
def test_landings_of_games_near_max_turns_are_counted():
    """Board(30), plain: a finished game lands on 30 exactly once (overshoots stay and land nowhere).
    With max_turns close to the typical length, many games finish in the simulator's slow lane."""
    rules = Rules.preset("plain")
    from snlmarkov.sim.core import play

    r = play(Board(30), rules, 20_000, 1, "classic", np.random.default_rng(3), 14)
    finished = int((~r.truncated).sum())
    assert 0 < r.n_truncated < 20_000
    late = int(((r.turns > 6) & ~r.truncated).sum())
    assert late > 1000  # games that went through the slow lane and finished
    assert int(r.landings[30]) == finished


def test_simulated_rolls_equal_turns_without_bonus():
    r = simulate(Board.builtin(), Rules.preset("plain"), 5000, rng=2)
    assert (r.rolls == r.turns).all()

"""Dice of any shape on the play side: the engine, the simulator and the play kernel.

Exact checks: on small boards, the distribution of one turn from every
square, enumerated through the engine (scripted dice, each sequence weighted
by the die's Fractions) and read off the simulator's tables (every code
equally likely), equals the row of the exact turn matrix
(:func:`snlmarkov.chain.model.turn_model`, the exact kernel: an independent
statement of the rules) to 1e-12, for loaded dice, two dice summed and dice
with a 0 face, under every preset and the three newer house rules.

Statistical checks on the jungle board: simulated games against
:func:`snlmarkov.analyze` with the cross-check of ``checks/crosschecking.py``
(four tests, Bonferroni), engine games by a z test of the mean turns (exact
variance) and a chi-square of the turn distribution. Every check is run at a
stated alpha with a fixed seed, and planted mistakes (a die drawn uniformly
over its values, a capped roll redealt from the whole die) must be caught.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import snlmarkov.game.engine as engine
import snlmarkov.sim.core as simcore
import snlmarkov.sim.tables as tables
from snlmarkov import Board, DiceError, Die, Game, GameRecord, Rules, analyze, verify_game
from snlmarkov.chain.model import turn_model
from snlmarkov.checks.crosschecking import crosscheck
from snlmarkov.game.events import Roll
from snlmarkov.game.record import TurnSummary
from snlmarkov.playkernel import PlayKernel, draw, kernel
from snlmarkov.sim.tables import roll_table, slots, turn_table
from snlmarkov.state import GameState

LOADED = Die.weighted({1: 1, 2: 1, 6: 4})
TWO = Die.sum_of(2, 6)
ZERO = Die.faces(0, 1, 2, 3, 4, 5)
EFRON_A = Die.faces(0, 0, 4, 4, 4, 4)
DICE = {"loaded": LOADED, "2d6": TWO, "zero": ZERO}

JUNGLE = Board.builtin()
PUZZLE = Board(100, {**JUNGLE.jumps, 83: 84, 84: 97}, name="puzzle", chain=True)
#: small boards for the exact checks (at least 12 squares: 2d6 may bounce)
SMALL = Board(15, {2: 9, 7: 4, 14: 6, 11: 13})
SMALL_CHAINED = Board(15, {2: 9, 9: 13, 14: 6, 6: 1}, chain=True)

#: the presets and the three newer house rules (the chained board goes with "chain")
RULE_SETS = {
    "app": Rules(),
    "family": Rules.preset("family"),
    "plain": Rules.preset("plain"),
    "restart": Rules(on_cap="restart"),
    "chain": Rules(),
    "nojump": Rules(finish="bounce", jump_after_bounce=False),
}
CASES = [(d, r) for d in DICE for r in RULE_SETS]
IDS = [f"{d}-{r}" for d, r in CASES]

#: alpha of each statistical check below (about 40 of them: under 1e-4 for the file)
ALPHA = 2e-6


def rules_for(die_name: str, rules_name: str) -> Rules:
    return RULE_SETS[rules_name].replace(die=DICE[die_name])


# ------------------------------------------------------------ exact: one turn
def engine_turn_dist(board: Board, rules: Rules, start: int) -> dict[int, Fraction]:
    """The end square of one turn from ``start``, played by the engine on every
    sequence of scripted rolls, each weighted by the law it was drawn from."""
    die, top = rules.die, rules.die.top
    pmf = dict(zip(die.values, die.pmf))
    capped_mass = 1 - pmf[top] if rules.on_cap == "redeal" else Fraction(1)
    out: dict[int, Fraction] = {}

    def explore(prefix: tuple[int, ...]) -> None:
        game = Game(board, rules, players=1, dice=prefix, state=GameState((start,)))
        try:
            events = game.take_turn()
        except DiceError as err:
            if "ran out" in str(err):
                for v in die.values:
                    explore(prefix + (v,))
            return  # otherwise impossible: a capped six under redeal
        rolls = [e for e in events if isinstance(e, Roll)]
        assert len(rolls) == len(prefix)
        p = Fraction(1)
        for e in rolls:
            p *= pmf[e.value] / (capped_mass if e.capped else 1)
        out[game.positions[0]] = out.get(game.positions[0], Fraction(0)) + p

    explore(())
    return out


def table_turn_dist(table, start: int) -> dict[int, Fraction]:
    """The end square of one turn from ``start`` read off a step table (every
    dealt code equally likely; a code that throws no roll is drawn again)."""
    size, out = table.size, {}

    def explore(state: int, prob: Fraction) -> None:
        cut = slice(state * table.codes, (state + 1) * table.codes)
        dealt = table.rolls[cut] > 0
        void = table.void[cut] if table.void.size else np.zeros(table.codes, dtype=bool)
        ends = (table.turns[cut] > 0) | (table.next[cut] == size)
        outcomes = Counter(zip(void[dealt].tolist(), ends[dealt].tolist(), table.next[cut][dealt].tolist()))
        total = int(dealt.sum())
        for (is_void, is_end, nxt), count in outcomes.items():
            share = prob * Fraction(count, total)
            if is_void or is_end:
                square = start if is_void else nxt
                out[square] = out.get(square, Fraction(0)) + share
            else:
                explore(nxt, share)

    explore(start, Fraction(1))
    return out


def exact_rows(board: Board, rules: Rules) -> np.ndarray:
    return turn_model(board, rules).matrix.toarray()


def assert_rows(dist: dict[int, Fraction], row: np.ndarray, what: str) -> None:
    assert sum(dist.values()) == 1, what
    got = np.zeros(row.size)
    for square, p in dist.items():
        got[square] += float(p)
    np.testing.assert_allclose(got, row, rtol=0, atol=1e-12, err_msg=what)


SMALL_CASES = CASES + [("efron-a", "plain-none"), ("efron-a", "app-none")]


def small_case(die_name: str, rules_name: str) -> tuple[Board, Rules]:
    if die_name == "efron-a":
        base = Rules.preset("plain") if rules_name == "plain-none" else Rules()
        return Board(12, {3: 9, 8: 5}), base.replace(die=EFRON_A, finish="none")
    return (SMALL_CHAINED if rules_name == "chain" else SMALL), rules_for(die_name, rules_name)


@pytest.mark.parametrize(("die_name", "rules_name"), SMALL_CASES, ids=[f"{d}-{r}" for d, r in SMALL_CASES])
def test_engine_turns_equal_the_exact_turn_matrix(die_name, rules_name):
    board, rules = small_case(die_name, rules_name)
    rows = exact_rows(board, rules)
    for start in range(board.size):
        if start in board.jumps:
            continue  # no token rests on a jump start (no bump with one token)
        assert_rows(engine_turn_dist(board, rules, start), rows[start], f"{rules} from {start}")


@pytest.mark.parametrize(("die_name", "rules_name"), SMALL_CASES, ids=[f"{d}-{r}" for d, r in SMALL_CASES])
def test_simulator_tables_equal_the_exact_turn_matrix(die_name, rules_name):
    board, rules = small_case(die_name, rules_name)
    rows = exact_rows(board, rules)
    for table in (turn_table(board, rules), turn_table(board, rules, rolls=1), roll_table(board, rules, 1)):
        for start in range(board.size):
            if start not in board.jumps:
                assert_rows(table_turn_dist(table, start), rows[start], f"{rules} from {start}")


def test_slots_deal_each_value_by_its_weight():
    assert slots(LOADED).tolist() == [1, 2, 6, 6, 6, 6]
    assert slots(EFRON_A).tolist() == [0, 4, 4]
    two = slots(TWO)
    assert two.size == 36 and [int((two == v).sum()) for v in TWO.values] == [1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1]
    assert slots(Die(6)).tolist() == [1, 2, 3, 4, 5, 6]  # the fair die's codes are its faces, as before


def test_fair_die_tables_keep_their_shape():
    # the app rules: a whole turn (6 * 6 * 5 codes: the capped roll from the die without its six)
    t = turn_table(JUNGLE, Rules())
    assert (t.phases, t.codes) == (1, 180)
    t = turn_table(JUNGLE, Rules(die=LOADED))  # 6 slots, the capped roll from 2 (1 and 2)
    assert (t.phases, t.codes) == (1, 6 * 6 * 2)


def test_a_die_with_too_many_slots_is_refused_by_the_simulator():
    from snlmarkov.errors import LimitError

    die = Die.weighted({1: 1, 2: 10**6})
    with pytest.raises(LimitError, match="MAX_SLOTS"):
        turn_table(Board(10), Rules.preset("plain").replace(die=die))


# ------------------------------------------------------------ the engine, roll by roll
def test_a_roll_of_zero_logs_only_its_roll_and_ends_the_turn():
    g = Game(Board(10, {3: 8}), Rules(die=ZERO), players=1, dice=[3, 0, 5, 5, 0])
    assert [e.kind for e in g.take_turn()] == ["roll", "move", "ladder"]
    events = g.take_turn()
    assert events == [Roll(seat=0, turn=1, value=0, capped=False)] and g.positions == (8,)
    record = g.record()
    assert record.turns()[1].rolls == (0,) and record.dice == (3, 0)
    assert verify_game(record).passed


def test_a_zero_does_not_enter_and_a_zero_after_entry_stays_on_zero():
    rules = Rules(die=Die.faces(0, 1, 2, 3, 4, 6), start_on_six=True)
    g = Game(Board(20), rules, players=1, dice=[0, 6, 0, 6, 4])
    assert [e.kind for e in g.take_turn()] == ["roll", "failed_enter"]
    assert [e.kind for e in g.take_turn()] == ["roll", "enter", "roll"] and g.positions == (0,)
    assert [e.kind for e in g.take_turn()] == ["roll", "enter", "roll", "move"] and g.positions == (4,)


def test_six_means_the_top_value():
    g = Game(Board(60), Rules(die=TWO, finish="none"), players=1, dice=[12, 6, 12, 12, 7])
    kinds = [e.kind for e in g.take_turn()]
    assert kinds == ["roll", "move", "bonus_roll", "roll", "move"] and g.positions == (18,)
    kinds = [e.kind for e in g.take_turn()]
    assert kinds == ["roll", "move", "bonus_roll", "roll", "move", "bonus_roll", "cap_reached", "roll", "move"]
    assert g.positions == (18 + 12 + 12 + 7,)


def test_scripted_rolls_are_checked_against_the_die_and_the_redeal():
    with pytest.raises(DiceError, match=r"not a face 1, 2, 6 of the die"):
        Game(Board(30), Rules(die=LOADED), players=1, dice=[3]).take_turn()
    with pytest.raises(DiceError, match=r"not a face 1..5"):
        Game(Board(30), Rules(die=Die(5)), players=1, dice=[0]).take_turn()
    with pytest.raises(DiceError, match=r"redealt from 1, 2 \(on_cap='redeal'"):
        Game(Board(30), Rules(die=LOADED), players=1, dice=[6, 6, 6]).take_turn()
    g = Game(Board(30), Rules(die=LOADED), players=1, dice=[6, 6, 2])
    g.take_turn()
    assert g.positions == (14,)


def test_drawn_rolls_follow_the_die_and_the_redeal_draws_without_the_top():
    rng = np.random.default_rng(5)
    values = [draw(LOADED, rng) for _ in range(6000)]
    counts = [values.count(v) for v in (1, 2, 6)]
    assert stats.chisquare(counts, [1000, 1000, 4000]).pvalue > ALPHA
    capped = [draw(LOADED.without_top(), rng) for _ in range(2000)]
    assert set(capped) == {1, 2}
    # the fair die draws as it always did: 1 + integers(0, n)
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    assert [draw(Die(6), a) for _ in range(50)] == [int(x) for x in b.integers(1, 7, size=50)]


def test_draw_handles_weights_past_64_bits():
    die = Die.weighted({1: Fraction(1, 3**50), 2: 1})
    rng = np.random.default_rng(0)
    assert {draw(die, rng) for _ in range(200)} == {2}


def test_turn_summaries_and_rolls_accept_zero():
    assert Roll(seat=0, turn=0, value=0, capped=False).value == 0
    summary = TurnSummary(turn=0, seat=0, start=4, end=4, end_before_bump=4, rolls=(0,), bumped=False, skipped=False)
    assert summary.rolls == (0,)


def test_the_kernel_story_is_the_engine_and_the_table():
    k = kernel(PUZZLE, Rules.preset("plain"))
    s = k.story(80, 0, 80, 3)
    assert s.jumps == ((83, 84), (84, 97)) and s.square == 97 and s.landed == (83, 84)
    r = k.roll(np.array([80, 80]), 0, np.array([80, 80]), np.array([3, 1]))
    assert r.square.tolist() == [97, 81] and r.land[:, 0].tolist() == [83, 84] and r.land[:, 1].tolist() == [81, 101]


# ------------------------------------------------------------ records and verify_game
GAMES = [
    ("loaded", "app", 2, 11),
    ("2d6", "family", 3, 12),
    ("zero", "app", 2, 13),
    ("zero", "family", 2, 14),
    ("loaded", "restart", 2, 15),
    ("2d6", "nojump", 2, 16),
    ("zero", "chain", 2, 17),
]


@pytest.mark.parametrize(("die_name", "rules_name", "players", "seed"), GAMES, ids=[f"{d}-{r}" for d, r, *_ in GAMES])
def test_played_games_round_trip_replay_and_verify(die_name, rules_name, players, seed):
    board = PUZZLE if rules_name == "chain" else JUNGLE
    rules = rules_for(die_name, rules_name)
    record = Game(board, rules, players=players, rng=seed).play()
    again = GameRecord.from_json(record.to_json())
    assert again == record and again.rules.die == DICE[die_name]
    assert Game.replay(again).record() == record
    report = verify_game(record)
    assert report.passed, str(report)
    if die_name == "zero":
        assert 0 in record.dice  # a 0 was rolled and verified


def test_efron_a_plays_and_verifies_on_a_board_it_can_finish():
    board = Board(40, {3: 17, 22: 9, 30: 38})
    record = Game(board, Rules(die=EFRON_A, finish="none"), players=2, rng=4).play()
    assert set(record.dice) == {0, 4} and verify_game(record).passed


# ------------------------------------------------------------ statistics: simulator and engine
def board_for(rules_name: str) -> Board:
    return PUZZLE if rules_name == "chain" else JUNGLE


@pytest.mark.parametrize(("die_name", "rules_name"), CASES, ids=IDS)
def test_simulated_games_match_the_exact_analysis(die_name, rules_name):
    rules = rules_for(die_name, rules_name)
    report = crosscheck(
        board_for(rules_name), rules, 40_000, rng=[18, len(IDS), IDS.index(f"{die_name}-{rules_name}")], alpha=ALPHA
    )
    assert report.passed, report.summary()


def engine_p_value(board: Board, rules: Rules, games: int, seed: int, exact=None) -> float:
    """Smallest p of two tests of engine games against the exact analysis, times 2
    (Bonferroni): a z test of the mean turns (exact variance) and a chi-square of
    the number of turns (cells pooled to expected counts >= 5)."""
    exact = analyze(board, rules) if exact is None else exact
    rng = np.random.default_rng(seed)
    turns = np.array([len(Game(board, rules, players=1, rng=rng).play().turns()) for _ in range(games)])
    z = (turns.mean() - exact.expected_turns) / (exact.std_turns / math.sqrt(games))
    p_mean = 2 * stats.norm.sf(abs(z))
    horizon = int(turns.max())
    probs = np.array([float(exact.length.pmf(k)) for k in range(1, horizon + 1)])
    probs = np.append(probs, max(0.0, 1 - probs.sum()))
    observed = np.append(np.bincount(turns, minlength=horizon + 1)[1:], 0)
    obs, exp, o_acc, e_acc = [], [], 0.0, 0.0
    for o, e in zip(observed, probs * games):
        o_acc, e_acc = o_acc + o, e_acc + e
        if e_acc >= 5:
            obs.append(o_acc)
            exp.append(e_acc)
            o_acc = e_acc = 0.0
    obs[-1] += o_acc
    exp[-1] += e_acc
    obs_a, exp_a = np.array(obs), np.array(exp)
    p_dist = stats.chi2.sf(((obs_a - exp_a) ** 2 / exp_a).sum(), len(obs_a) - 1)
    return min(1.0, 2 * min(p_mean, p_dist))


FAST_ENGINE = [("loaded", "app"), ("2d6", "family"), ("zero", "restart")]


@pytest.mark.parametrize(("die_name", "rules_name"), FAST_ENGINE, ids=[f"{d}-{r}" for d, r in FAST_ENGINE])
def test_engine_games_match_the_exact_analysis(die_name, rules_name):
    rules = rules_for(die_name, rules_name)
    assert engine_p_value(board_for(rules_name), rules, 800, 20 + FAST_ENGINE.index((die_name, rules_name))) > ALPHA


@pytest.mark.slow
@pytest.mark.parametrize(("die_name", "rules_name"), CASES, ids=IDS)
def test_engine_games_match_the_exact_analysis_everywhere(die_name, rules_name):
    rules = rules_for(die_name, rules_name)
    assert engine_p_value(board_for(rules_name), rules, 5_000, 100 + IDS.index(f"{die_name}-{rules_name}")) > ALPHA


@pytest.mark.slow
@pytest.mark.parametrize(("die_name", "rules_name"), CASES, ids=IDS)
def test_many_simulated_games_match_the_exact_analysis(die_name, rules_name):
    rules = rules_for(die_name, rules_name)
    seed = [19, IDS.index(f"{die_name}-{rules_name}")]
    report = crosscheck(board_for(rules_name), rules, 1_000_000, rng=seed, alpha=ALPHA)
    assert report.passed, report.summary()


# ------------------------------------------------------------ planted mistakes are caught
@pytest.fixture
def fresh_tables():
    simcore._roll_tables.cache_clear()
    simcore._turn_table.cache_clear()
    yield
    simcore._roll_tables.cache_clear()
    simcore._turn_table.cache_clear()


def test_a_simulator_drawing_uniformly_over_the_values_is_caught(monkeypatch, fresh_tables):
    rules = Rules.preset("plain").replace(die=LOADED)
    assert crosscheck(JUNGLE, rules, 40_000, rng=31, alpha=ALPHA).passed
    simcore._roll_tables.cache_clear()
    monkeypatch.setattr(tables, "slots", lambda die: np.array(die.values, dtype=np.int64))
    report = crosscheck(JUNGLE, rules, 40_000, rng=31, alpha=ALPHA)
    assert not report.passed and report.checks[0].p_value < 1e-12


def test_a_simulator_redealing_from_the_whole_die_is_caught(monkeypatch, fresh_tables):
    # the capped six is dealt (as if from the whole die) instead of drawn again: it then does nothing
    rules = Rules(die=LOADED)
    real = tables.kernel

    class Dealt:
        def __init__(self, k):
            self._k = k

        def __getattr__(self, name):
            return getattr(self._k, name)

        def roll(self, *args):
            r = self._k.roll(*args)
            return dataclasses.replace(r, dealt=np.ones_like(r.dealt))

    monkeypatch.setattr(tables, "kernel", lambda board, rules: Dealt(real(board, rules)))
    report = crosscheck(JUNGLE, rules, 40_000, rng=32, alpha=ALPHA)
    assert not report.passed and report.checks[0].p_value < 1e-12


def test_an_engine_drawing_uniformly_over_the_values_is_caught(monkeypatch):
    rules = Rules.preset("plain").replace(die=LOADED)
    exact = analyze(JUNGLE, rules)
    monkeypatch.setattr(engine, "draw", lambda die, rng: die.values[int(rng.integers(len(die.values)))])
    assert engine_p_value(JUNGLE, rules, 500, 33, exact=exact) < 1e-9


def test_an_engine_redealing_from_the_whole_die_is_caught(monkeypatch):
    # a capped roll drawn from the whole die: its six cannot be dealt, and the engine says so
    rules = Rules(die=LOADED)
    monkeypatch.setattr(PlayKernel, "law", lambda self, capped: self.die)
    with pytest.raises(DiceError, match="cannot be dealt"):
        for seed in range(20):
            Game(JUNGLE, rules, players=1, rng=seed).play()

"""Races under a rule set with a choice: the two-player game solved exactly, and race/Odds with policies.

The game value is checked against values written here independently of the
package's kernels: a brute force over every pair of pure policies on a tiny
board (max-min and min-max), and a value iteration of seat 0's chance
(seat 0 maximising, seat 1 minimising) with its own statement of a roll.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov.errors import LimitError, PolicyError, RuleError
from snlmarkov.races.policygame import solve_race_game

TOL = 1e-9


# ----------------------------------------------------------------- independent mechanics
def _roll(board: snl.Board, x: int, v: int, finish: str = "stay") -> int:
    """Where one roll of ``v`` from ``x`` leaves the token (``N`` finished), ``stay`` or ``bounce`` finish."""
    n = board.size
    t = x + v
    if t > n:
        if finish == "stay":
            return x
        t = 2 * n - t
    return board.jumps.get(t, t)


def _bumped(e: int, y: int, n: int, bump: bool, bump_to: int = 1) -> int:
    return bump_to if bump and e == y and 1 <= e < n and e != bump_to else e


def _brute_force_value(board: snl.Board, dice: list[dict[int, float]], bump: bool) -> tuple[float, float]:
    """Max-min and min-max of seat 0's chance over every pair of pure policies (no bonus roll: one roll a turn)."""
    n = board.size
    states = [(x, y) for x in range(n) for y in range(n)]
    ends = {}  # (x, die) -> {end square: prob}
    for x in range(n):
        for d, die in enumerate(dice):
            out: dict[int, float] = {}
            for v, p in die.items():
                e = _roll(board, x, v)
                out[e] = out.get(e, 0.0) + p
            ends[x, d] = out
    # only states where the dice differ are decisions
    live = [s for s in states if len({tuple(sorted(ends[s[0], d].items())) for d in range(len(dice))}) > 1]
    choices = list(itertools.product(range(len(dice)), repeat=len(live)))
    index = {(s, x, y): i for i, (s, x, y) in enumerate((s, x, y) for s in (0, 1) for x in range(n) for y in range(n))}

    def value(pol0: tuple[int, ...], pol1: tuple[int, ...]) -> float:
        """Seat 0's chance from (0, 0), seat 0 to move; state (s, own square of the mover, other's square)."""
        size = len(index)
        a = np.eye(size)
        b = np.zeros(size)
        for s, pol in ((0, pol0), (1, pol1)):
            pick = dict(zip(live, pol))
            for x, y in states:
                row = index[s, x, y]
                for e, p in ends[x, pick.get((x, y), 0)].items():
                    if e == n:
                        b[row] += p if s == 0 else 0.0
                    else:
                        a[row, index[1 - s, y, _bumped(e, y, n, bump)]] -= p
        return float(np.linalg.solve(a, b)[index[0, 0, 0]])

    table = np.array([[value(p0, p1) for p1 in choices] for p0 in choices])
    return float(table.min(axis=1).max()), float(table.max(axis=0).min())


@pytest.mark.parametrize("bump", [False, True])
def test_game_value_is_the_max_min_over_every_pair_of_pure_policies(bump: bool) -> None:
    board = snl.Board(3)
    rules = snl.Rules.preset("plain").replace(choose_die=(snl.Die(2), snl.Die.faces(1, 3)), bump=bump)
    maxmin, minmax = _brute_force_value(board, [{1: 0.5, 2: 0.5}, {1: 0.5, 3: 0.5}], bump)
    assert maxmin == pytest.approx(minmax, abs=1e-12)  # a saddle point in pure policies
    p = snl.optimal_policy(board, rules, players=2, objective="win")
    assert abs(p[0].value - maxmin) < TOL
    assert abs(p[1].value - (1 - maxmin)) < TOL


def _seat0_values(board: snl.Board, dice: list[snl.Die], *, k: int, cap: int, bump: bool, finish: str) -> np.ndarray:
    """Seat 0's chance ``V[s, x, sixes, y]`` (seat ``s`` to move on ``x`` with ``sixes``, the other on ``y``), by value iteration.

    Bonus roll on the top value, a cap of ``cap`` sixes redealt from the die
    without its top; ``k`` > 1 is choose_move (``k`` of ``dice[0]`` rolled, one
    value moved), else choose_die. Seat 0 maximises, seat 1 minimises.
    """
    n = board.size
    v = np.zeros((2, n, cap + 1, n))

    def laws(die: snl.Die, capped: bool) -> dict[int, float]:
        d = die.without_top() if capped else die
        return dict(zip(d.values, map(float, d.probs)))

    def outcome(s: int, x: int, sixes: int, y: int, val: int, top: int, capped: bool, cur: np.ndarray) -> float:
        e = _roll(board, x, val, finish)
        if e == n:
            return 1.0 if s == 0 else 0.0
        stayed = finish == "stay" and x + val > n
        if val == top and not capped and not stayed:
            return cur[s, e, sixes + 1, y]
        return cur[1 - s, y, 0, _bumped(e, y, n, bump)]

    for _ in range(5000):
        new = np.empty_like(v)
        for s, x, sixes, y in itertools.product((0, 1), range(n), range(cap + 1), range(n)):
            capped = sixes >= cap
            pick = max if s == 0 else min
            if k == 1:
                new[s, x, sixes, y] = pick(
                    sum(p * outcome(s, x, sixes, y, val, die.top, capped, v) for val, p in laws(die, capped).items())
                    for die in dice
                )
            else:
                law = laws(dice[0], capped)
                total = 0.0
                for rolled in itertools.product(law, repeat=k):
                    p = float(np.prod([law[r] for r in rolled]))
                    total += p * pick(outcome(s, x, sixes, y, r, dice[0].top, capped, v) for r in rolled)
                new[s, x, sixes, y] = total
        change = np.abs(new - v).max()
        v = new
        if change < 1e-15:
            break
    return v


@pytest.mark.parametrize(
    ("rules", "bump", "finish"),
    [
        (snl.Rules(choose_die=(snl.Die(3), snl.Die(4)), max_sixes=1), False, "stay"),
        (snl.Rules(choose_die=(snl.Die(3), snl.Die(4)), max_sixes=1, bump=True), True, "stay"),
        (snl.Rules(die=snl.Die(3), choose_move=2, max_sixes=1, finish="bounce", bump=True), True, "bounce"),
    ],
    ids=["choose_die", "choose_die+bump", "choose_move+bump+bounce"],
)
def test_game_values_match_an_independent_value_iteration(rules: snl.Rules, bump: bool, finish: str) -> None:
    board = snl.Board(9, {2: 6, 8: 3})
    dice = list(rules.choose_die) or [rules.die]
    v = _seat0_values(board, dice, k=int(rules.choose_move or 1), cap=1, bump=bump, finish=finish)
    g = solve_race_game(board, rules)
    n = board.size
    ours = np.array([[g.win(x, y) for y in range(n)] for x in range(n)])
    assert np.abs(ours - v[0, :, 0, :]).max() < TOL  # seat 0 to move: its own chance
    assert np.abs((1 - ours) - v[1, :, 0, :]).max() < TOL  # seat 1 to move on x, seat 0 on y
    if rules.choose_die:  # every option's figure: the best is the state's value
        d = (0 * n + 4) * 1 + 0
        assert g.option_values(4, 0, 4, 5).max() == pytest.approx(g.values[d, 5], abs=1e-12)


# ----------------------------------------------------------------- the solved pair in a race
BOARD = snl.Board.builtin()


@pytest.fixture(scope="module")
def pair() -> tuple[snl.Policy, snl.Policy]:
    return snl.optimal_policy(BOARD, snl.Rules(choose_die=(4, 6)), players=2, objective="win")


def test_the_solved_pair_is_one_table_and_its_values_sum_to_one(pair: tuple[snl.Policy, snl.Policy]) -> None:
    p0, p1 = pair
    assert np.array_equal(p0.table.ranks, p1.table.ranks)
    assert p0.table.others == 1 and p0.objective == "win"
    assert p0.value + p1.value == pytest.approx(1.0, abs=1e-12)
    assert 0.5 < p0.value < 0.52  # moving first is worth a little
    assert p0.values[-1] == 1.0


def test_race_under_the_solved_pair_gives_the_game_value(pair: tuple[snl.Policy, snl.Policy]) -> None:
    rules = snl.Rules(choose_die=(4, 6))
    for mode in ("classic", "last_one_standing"):
        r = snl.race(BOARD, rules, 2, mode, policies=pair)
        assert r.method == "exact: joint chain (policies)" and r.policies == pair
        assert abs(r.win_probability[0] - pair[0].value) < TOL
    odds = snl.Odds(BOARD, rules, 2, policies=pair)
    game = solve_race_game(BOARD, rules)
    for state in (snl.GameState((90, 30), to_move=1), snl.GameState((5, 97))):
        m = state.to_move
        assert abs(odds.win_probability(state)[m] - game.win(state.positions[m], state.positions[1 - m])) < TOL


def test_no_fixed_die_beats_the_solved_policy(pair: tuple[snl.Policy, snl.Policy]) -> None:
    """Each seat's solved policy is a best response: a fixed die against it does no better."""
    rules = snl.Rules(choose_die=(4, 6))
    for die in (4, 6):
        first = snl.race(BOARD, rules, 2, policies=(snl.Policy.fixed(die), pair[1]))
        second = snl.race(BOARD, rules, 2, policies=(pair[0], snl.Policy.fixed(die)))
        assert first.win_probability[0] < pair[0].value - 1e-4
        assert second.win_probability[1] < pair[1].value - 1e-4


def test_last_one_standing_of_two_is_the_same_game() -> None:
    board, rules = snl.Board(20, {3: 11, 17: 4}), snl.Rules(choose_die=(4, 6), bump=True)
    a = snl.optimal_policy(board, rules, players=2, objective="win")
    b = snl.optimal_policy(board, rules, players=2, objective="win", mode="last_one_standing")
    assert np.array_equal(a[0].table.ranks, b[0].table.ranks)
    los = snl.race(board, rules, 2, "last_one_standing", policies=b)
    assert abs(los.win_probability[0] - a[0].value) < TOL
    assert np.allclose(los.place_probability.sum(axis=0), 1.0)


# ----------------------------------------------------------------- fixed dice: the plain rules
@pytest.mark.parametrize("base", [snl.Rules(), snl.Rules.preset("family")], ids=["app", "family+bump"])
@pytest.mark.parametrize("mode", ["classic", "last_one_standing"])
def test_fixed_dice_race_equals_the_plain_rules(base: snl.Rules, mode: str) -> None:
    board = snl.Board(30, {4: 14, 9: 27, 17: 7, 28: 12})
    rules = base.replace(choose_die=(4, 6))
    got = snl.race(board, rules, 2, mode, policies=(snl.Policy.fixed(6), snl.Policy.fixed(6)))
    want = snl.race(board, base, 2, mode)
    assert np.abs(got.win_probability - want.win_probability).max() < TOL
    assert np.abs(got.place_probability - want.place_probability).max() < TOL
    assert abs(got.expected_rounds - want.expected_rounds) < 1e-8
    assert abs(got.expected_total_turns - want.expected_total_turns) < 1e-8
    state = snl.GameState((20, 11), to_move=1)
    odds = snl.Odds(board, rules, 2, mode, policies=(snl.Policy.fixed(6), snl.Policy.fixed(6)))
    plain = snl.Odds(board, base, 2, mode)
    assert np.abs(odds.win_probability(state) - plain.win_probability(state)).max() < TOL


def test_each_seat_plays_its_own_die() -> None:
    """Seat 0 on the d4, seat 1 on the d6: the race of two independent tokens with their own lengths."""
    board = snl.Board(30, {4: 14, 9: 27, 17: 7, 28: 12})
    rules = snl.Rules(choose_die=(4, 6))
    got = snl.race(board, rules, 2, policies=(snl.Policy.fixed(4), snl.Policy.fixed(6)))
    f4 = snl.analyze(board, snl.Rules(die=4)).length.probabilities
    f6 = snl.analyze(board, snl.Rules()).length.probabilities
    h = max(f4.size, f6.size)
    f4, f6 = np.pad(f4, (0, h - f4.size)), np.pad(f6, (0, h - f6.size))
    s4 = 1 - np.cumsum(f4)
    s6_prev = 1 - np.concatenate([[0.0], np.cumsum(f6)[:-1]])
    assert abs(got.win_probability[0] - float(np.sum(f4 * s6_prev))) < TOL  # seat 0 wins in round r: K1 >= r
    assert abs(got.win_probability[1] - float(np.sum(f6 * s4))) < TOL


# ----------------------------------------------------------------- refusals
def test_a_race_on_choice_rules_needs_policies() -> None:
    rules = snl.Rules(choose_die=(4, 6))
    with pytest.raises(RuleError, match="policies="):
        snl.race(BOARD, rules, 2)
    with pytest.raises(RuleError, match="policies="):
        snl.Odds(BOARD, rules, 2)
    with pytest.raises(PolicyError, match="one Policy per seat"):
        snl.race(BOARD, rules, 2, policies=snl.Policy.fixed(4))
    with pytest.raises(PolicyError, match="one Policy per seat"):
        snl.race(BOARD, rules, 3, policies=(snl.Policy.fixed(4),) * 2)
    with pytest.raises(PolicyError, match="no choice"):
        snl.race(BOARD, snl.Rules(), 2, policies=(snl.Policy.fixed(4),) * 2)
    with pytest.raises(PolicyError, match="monte_carlo"):
        snl.race(BOARD, rules, 2, method="monte_carlo", policies=(snl.Policy.fixed(4),) * 2)


def test_race_policies_are_for_two_seats(pair: tuple[snl.Policy, snl.Policy]) -> None:
    with pytest.raises(PolicyError, match="race of 2"):
        snl.race(BOARD, snl.Rules(choose_die=(4, 6)), 3, policies=(pair[0], pair[1], pair[0]))
    with pytest.raises(PolicyError, match="players"):
        snl.optimal_policy(BOARD, snl.Rules(choose_die=(4, 6)), players=1, objective="win")
    with pytest.raises(PolicyError, match="turns="):
        snl.optimal_policy(BOARD, snl.Rules(choose_die=(4, 6)), players=2, objective="win", turns=3)


def test_a_game_too_large_is_refused_up_front(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SNLMARKOV_MEMORY_LIMIT", "10M")
    with pytest.raises(LimitError, match="race game of two players"):
        solve_race_game(BOARD, snl.Rules(choose_die=(4, 6)))


# ----------------------------------------------------------------- best responses
def _best_response_3(board: snl.Board, dice: list[snl.Die], other: snl.Die, bump: bool, me: int = 0) -> dict:
    """Seat ``me``'s best chance of finishing first among 3 (the others always roll ``other``), by value iteration.

    Bonus roll on the top value with a cap of one six (redealt without the
    top); the mover is bumped back to 1 when it ends on another token's square.
    """
    n = board.size
    squares = range(n)
    keys = [(s, pos, six) for s in range(3) for pos in itertools.product(squares, repeat=3) for six in (0, 1)]
    v = dict.fromkeys(keys, 0.0)

    def law(die: snl.Die, capped: bool) -> dict[int, float]:
        d = die.without_top() if capped else die
        return dict(zip(d.values, map(float, d.probs)))

    def roll(s: int, pos: tuple, six: int, die: snl.Die, cur: dict) -> float:
        total = 0.0
        for val, p in law(die, six >= 1).items():
            x = pos[s]
            e = _roll(board, x, val)
            if e == n:
                total += p * (1.0 if s == me else 0.0)
                continue
            if val == die.top and six < 1 and x + val <= n:
                nxt = list(pos)
                nxt[s] = e
                total += p * cur[s, tuple(nxt), six + 1]
                continue
            held = [pos[o] for o in range(3) if o != s]
            if bump and e in held and 1 <= e < n and e != 1:
                e = 1
            nxt = list(pos)
            nxt[s] = e
            total += p * cur[(s + 1) % 3, tuple(nxt), 0]
        return total

    for _ in range(3000):
        new = {}
        for s, pos, six in keys:
            if s == me:
                new[s, pos, six] = max(roll(s, pos, six, d, v) for d in dice)
            else:
                new[s, pos, six] = roll(s, pos, six, other, v)
        change = max(abs(new[key] - v[key]) for key in keys)
        v = new
        if change < 1e-14:
            break
    return v


def test_best_response_of_three_matches_an_independent_value_iteration() -> None:
    board = snl.Board(5, {2: 4})
    rules = snl.Rules(choose_die=(snl.Die(2), snl.Die(3)), max_sixes=1, bump=True)
    v = _best_response_3(board, [snl.Die(2), snl.Die(3)], snl.Die(3), bump=True)
    fixed = snl.Policy.fixed(3)
    out = snl.optimal_policy(board, rules, players=3, objective="win", policies=(None, fixed, fixed))
    assert out[1:] == (fixed, fixed) and out[0].table.others == 2
    assert abs(out[0].value - v[0, (0, 0, 0), 0]) < TOL
    for p in range(board.size):
        assert abs(out[0].values[p] - v[0, (p, 0, 0), 0]) < TOL
    last = _best_response_3(board, [snl.Die(2), snl.Die(3)], snl.Die(3), bump=True, me=2)
    later = snl.optimal_policy(board, rules, players=3, objective="win", policies=(fixed, fixed, None), seat=2)
    assert abs(later[2].value - last[0, (0, 0, 0), 0]) < TOL  # seats 0 and 1 move first
    assert later[2].value < out[0].value


def test_best_response_of_two_is_the_game_solution_against_the_solved_policy() -> None:
    board, rules = snl.Board(12, {3: 10, 11: 2}), snl.Rules(choose_die=(4, 6), bump=True)
    pair = snl.optimal_policy(board, rules, players=2, objective="win")
    br = snl.optimal_policy(board, rules, players=2, objective="win", policies=(None, pair[1]))
    assert abs(br[0].value - pair[0].value) < TOL
    br1 = snl.optimal_policy(board, rules, players=2, objective="win", policies=(pair[0], None), seat=1)
    assert abs(br1[1].value - pair[1].value) < TOL
    for die in (4, 6):  # against a fixed die: the race of the pair gives the same chance, above the game value
        mine = snl.optimal_policy(board, rules, players=2, objective="win", policies=(None, snl.Policy.fixed(die)))
        assert abs(snl.race(board, rules, 2, policies=mine).win_probability[0] - mine[0].value) < TOL
        assert mine[0].value >= pair[0].value - 1e-12
        fixed_both = snl.race(board, rules, 2, policies=(snl.Policy.fixed(die), snl.Policy.fixed(die)))
        assert mine[0].value >= fixed_both.win_probability[0] - 1e-12


# ----------------------------------------------------------------- against the simulator
Z_CRIT = 3.29  # two-sided, alpha = 1e-3 per comparison
SIM_GAMES = 200_000
SIM_BOARD = snl.Board(20, {3: 11, 17: 4})
SIM_RULES = snl.Rules(choose_die=(4, 6), bump=True)


def _z(games: snl.SimulationResult, seat: int, p: float) -> float:
    freq = float(np.mean(games.winner == seat))
    return (freq - p) / float(np.sqrt(p * (1 - p) / games.winner.size))


@pytest.fixture(scope="module")
def sim_pair() -> tuple[snl.Policy, snl.Policy]:
    return snl.optimal_policy(SIM_BOARD, SIM_RULES, players=2, objective="win")


@pytest.fixture(scope="module")
def simulated(sim_pair: tuple[snl.Policy, snl.Policy]) -> dict[str, snl.SimulationResult]:
    """The simulator playing the solved pair, and the solved policy against a seat that always rolls the d4."""
    against_d4 = (sim_pair[0], snl.Policy.fixed(4))
    return {
        "pair": snl.simulate(SIM_BOARD, SIM_RULES, SIM_GAMES, players=2, policy=sim_pair, rng=20261201),
        "against_d4": snl.simulate(SIM_BOARD, SIM_RULES, SIM_GAMES, players=2, policy=against_d4, rng=20261202),
    }


def test_the_simulator_playing_the_solved_pair_wins_as_the_game_value_says(
    sim_pair: tuple[snl.Policy, snl.Policy], simulated: dict[str, snl.SimulationResult]
) -> None:
    assert abs(_z(simulated["pair"], 0, sim_pair[0].value)) < Z_CRIT
    exact = snl.race(SIM_BOARD, SIM_RULES, 2, policies=(sim_pair[0], snl.Policy.fixed(4))).win_probability[0]
    assert abs(_z(simulated["against_d4"], 0, exact)) < Z_CRIT


def test_the_simulation_check_catches_planted_mistakes(
    sim_pair: tuple[snl.Policy, snl.Policy], simulated: dict[str, snl.SimulationResult]
) -> None:
    # the game solved without the bump rule
    no_bump = snl.optimal_policy(SIM_BOARD, SIM_RULES.replace(bump=False), players=2, objective="win")
    assert abs(_z(simulated["pair"], 0, no_bump[0].value)) > Z_CRIT
    # the exact race with the seats' policies the wrong way round
    swapped = snl.race(SIM_BOARD, SIM_RULES, 2, policies=(snl.Policy.fixed(4), sim_pair[0])).win_probability[1]
    assert abs(_z(simulated["against_d4"], 0, swapped)) > Z_CRIT


def test_odds_of_two_under_policies_read_a_table_that_agrees_with_the_forward_chain() -> None:
    board, rules = snl.Board(30, {4: 14, 9: 27, 17: 7, 28: 12}), snl.Rules.preset("family").replace(choose_die=(4, 6))
    pair = snl.optimal_policy(board, rules, players=2, objective="win")
    for policies in (pair, (snl.Policy.fixed(4), pair[1])):
        for mode in ("classic", "last_one_standing"):
            odds = snl.Odds(board, rules, 2, mode, policies=policies)
            for state in (snl.GameState((0, 0)), snl.GameState((20, 11), to_move=1), snl.GameState((27, 1))):
                forward = odds(state)  # the joint chain run forwards from the state
                assert np.abs(odds.place_probability(state) - forward.place_probability).max() < TOL


def test_a_race_policy_round_trips_through_json(pair: tuple[snl.Policy, snl.Policy], tmp_path) -> None:
    loaded = tuple(snl.Policy.load(p.save(tmp_path / f"seat{i}.json")) for i, p in enumerate(pair))
    assert all(np.array_equal(a.table.ranks, b.table.ranks) for a, b in zip(loaded, pair))
    assert loaded[1].value == pair[1].value and loaded[0].table.others == 1
    r = snl.race(BOARD, snl.Rules(choose_die=(4, 6)), 2, policies=loaded)
    assert abs(r.win_probability[0] - pair[0].value) < TOL

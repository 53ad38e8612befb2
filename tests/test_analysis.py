"""Single-player analysis against hand-derived values and independent computations."""

from fractions import Fraction

import numpy as np
import pytest

import snlmarkov as snl
from snlmarkov import Board, Rules, analyze, exact_expected_turns, roll_model, turn_model
from snlmarkov.analysis.single import expected_turns

PLAIN2 = Rules.preset("plain").replace(faces=2)
BONUS2 = Rules(faces=2, max_sixes=None)


def test_hand_derived_plain_two_faced_die():
    a = analyze(Board(3), PLAIN2)
    assert a.expected_turns == pytest.approx(3.0, abs=1e-12)
    assert a.var_turns == pytest.approx(2.0, abs=1e-12)
    np.testing.assert_allclose(a.expected_turns_from, [3, 2, 2, 0], atol=1e-12)
    np.testing.assert_allclose(a.occupancy, [1, 0.5, 1.5, 0], atol=1e-12)
    np.testing.assert_allclose(a.landings, [0, 0.5, 0.75, 1], atol=1e-12)
    np.testing.assert_allclose(a.hit_probability, [0, 0.5, 0.75, 1], atol=1e-12)
    assert a.expected_rolls == pytest.approx(3.0, abs=1e-12)
    d = a.length
    k = np.arange(2, 40)
    want = np.where(k == 2, 0.5, 2.0 ** (1 - k))
    np.testing.assert_allclose(d.pmf(k), want, atol=1e-15)
    assert d.pmf(0) == 0 and d.pmf(1) == 0 and d.minimum == 2 and d.mode == 2 and d.median() == 2
    assert d.tail_mass < 1e-12 and d.cdf(d.horizon) == pytest.approx(1 - d.tail_mass, abs=1e-15)


def test_hand_derived_bonus_roll():
    a = analyze(Board(3), BONUS2)
    assert a.expected_turns == pytest.approx(2.5, abs=1e-12)
    assert a.expected_rolls == pytest.approx(3.0, abs=1e-12)
    np.testing.assert_allclose(a.occupancy, [1, 0.5, 1.0, 0], atol=1e-12)
    np.testing.assert_allclose(a.landings, [0, 0.5, 0.75, 1], atol=1e-12)


def test_known_milton_bradley_value():
    # Althoen, King & Schilling (1993): 39.225 turns for one player, exact finish, no bonus roll
    a = analyze(Board.builtin("milton_bradley"), Rules.preset("plain"))
    exact = exact_expected_turns(Board.builtin("milton_bradley"), Rules.preset("plain"))
    assert a.expected_turns == pytest.approx(float(exact), rel=1e-13)
    assert round(a.expected_turns, 3) == 39.225


@pytest.mark.parametrize("board", ["jungle", "milton_bradley"])
@pytest.mark.parametrize("preset", ["app", "family", "plain"])
def test_invariants_on_builtin_boards(board, preset):
    b, r = Board.builtin(board), Rules.preset(preset)
    a = analyze(b, r)
    exact = exact_expected_turns(b, r)
    assert a.expected_turns == pytest.approx(float(exact), rel=1e-12)
    assert a.occupancy.sum() == pytest.approx(a.expected_turns, rel=1e-12)
    assert a.length.mean() == pytest.approx(a.expected_turns, rel=1e-10)
    assert a.length.var() == pytest.approx(a.var_turns, rel=1e-8)
    assert a.std_turns == pytest.approx(a.length.std(), rel=1e-8)  # the solve against the distribution's own sum
    assert a.expected_turns_from[0] == a.expected_turns and a.expected_turns_from[b.size] == 0
    # rolls: each turn has at least one roll; with no bonus exactly one (start_on_six adds the entry roll)
    if not r.bonus_on_six and not r.start_on_six:
        assert a.expected_rolls == pytest.approx(a.expected_turns, rel=1e-12)
    assert a.expected_rolls >= a.expected_turns * (1 - 1e-12)
    assert dict(a.jump_uses) == {s: pytest.approx(a.landings[s]) for s in b.jumps}
    assert a.landings[b.size] == pytest.approx(a.hit_probability[b.size])
    assert np.all((a.hit_probability >= 0) & (a.hit_probability <= 1 + 1e-12))
    assert np.all(a.hit_probability <= a.landings + 1e-12)


def roll_level_figures(board, rules):
    """Occupancy of turn starts, rolls and landings from the roll-level chain (dense)."""
    m = roll_model(board, rules)
    q = np.delete(np.delete(m.matrix.toarray(), m.absorbing, 0), m.absorbing, 1)
    keep = np.arange(m.n_states) != m.absorbing
    e0 = np.zeros(q.shape[0])
    e0[0] = 1.0
    visits = np.linalg.solve((np.eye(q.shape[0]) - q).T, e0)
    turns = visits[m.turn_start[keep]].sum()
    landings = visits @ m.landings.toarray()[keep]
    return turns, visits.sum(), landings


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(on_cap="forfeit", start_on_six=True), Rules.preset("family"), Rules(finish="none", max_sixes=None)],
    ids=["app", "forfeit+six", "family", "none-nocap"],
)
def test_turn_level_figures_match_roll_level_chain(rules):
    b = Board.builtin()
    a = analyze(b, rules)
    turns, rolls, landings = roll_level_figures(b, rules)
    assert a.expected_turns == pytest.approx(turns, rel=1e-12)
    assert a.expected_rolls == pytest.approx(rolls, rel=1e-12)
    np.testing.assert_allclose(a.landings, landings, rtol=1e-11, atol=1e-13)


def brute_hit_probability(board, rules):
    """Per target, a dense solve of the roll chain with landings on the target made absorbing."""
    from snlmarkov.chain.model import roll_transitions

    tr = roll_transitions(board, rules)
    n = tr.size
    out = np.zeros(board.size + 1)
    for t in range(1, board.size + 1):
        q = np.zeros((n, n))
        l = np.zeros(n)
        for s, g, p, land in zip(tr.src, tr.tgt, tr.prob, tr.landing):
            if land == t:
                l[s] += p
            elif g != board.size:
                q[s, g] += p
        out[t] = np.linalg.solve(np.eye(n) - q, l)[0]
    return out


@pytest.mark.parametrize(
    "rules", [Rules(), Rules(finish="bounce", on_cap="forfeit", start_on_six=True)], ids=["app", "mixed"]
)
def test_hit_probability_matches_brute_force(rules):
    b = Board.builtin()
    np.testing.assert_allclose(analyze(b, rules).hit_probability, brute_hit_probability(b, rules), atol=1e-12)


def test_hit_probability_of_ladder_to_finish():
    a = analyze(Board.builtin("milton_bradley"), Rules())
    assert a.hit_probability[100] < 1.0  # the ladder 80->100 finishes without landing on 100
    assert a.hit_probability[80] > 0.2


@pytest.mark.parametrize("dense", [True, False], ids=["dense", "sparse"])
def test_position_distributions(dense, monkeypatch):
    from snlmarkov.analysis import single

    if not dense:  # the sparse stepping of larger chains, on the same board
        monkeypatch.setattr(single, "DENSE_STEP_STATES", 0)
    b, r = Board.builtin(), Rules()
    a = analyze(b, r)
    d = a.position_distributions(25)
    t = turn_model(b, r).matrix.toarray()
    np.testing.assert_allclose(d[7], np.linalg.matrix_power(t, 7)[0], atol=1e-14)
    np.testing.assert_allclose(d[:, b.size], a.length.cdf(np.arange(26)), atol=1e-13)
    np.testing.assert_allclose(a.position_distribution(25), d[25])
    with pytest.raises(snl.SnlError):
        a.position_distributions(-1)


def test_jump_effects():
    b = Board.builtin()
    a = analyze(b)
    fx = a.jump_effects()
    assert [(e.start, e.end) for e in fx] == list(b.jumps.items())
    for e in fx:
        jumps = dict(b.jumps)
        del jumps[e.start]
        assert e.expected_turns_without == pytest.approx(analyze(Board(100, jumps)).expected_turns, rel=1e-12)
        assert e.difference == pytest.approx(a.expected_turns - e.expected_turns_without)
        assert e.kind == ("ladder" if e.end > e.start else "snake")
    by = {e.start: e for e in fx}
    assert by[28].difference < 0 and by[99].difference > 0  # the big ladder helps, the 99 snake hurts


def test_fast_expected_turns_path():
    b = Board.random(3000, rng=2)
    assert expected_turns(b, Rules()) == pytest.approx(analyze(b).expected_turns, rel=1e-12)


def test_bump_is_ignored_for_one_player():
    b = Board.builtin()
    assert analyze(b, Rules(bump=True)).expected_turns == analyze(b, Rules()).expected_turns


def test_analyze_defaults_and_errors():
    a = analyze()
    assert a.board == Board.builtin() and a.rules == Rules()
    with pytest.raises(snl.SnlError, match="board must be a Board"):
        analyze("jungle")
    with pytest.raises(snl.SnlError, match="rules must be a Rules"):
        analyze(Board.builtin(), "app")
    with pytest.raises(snl.UnwinnableBoardError):
        analyze(Board(6, {3: 1, 4: 2}), PLAIN2)


def test_summary_is_plain_data():
    import json

    s = analyze().summary()
    assert json.loads(json.dumps(s))["expected_turns"] == pytest.approx(55.614784073828, abs=1e-9)


def test_exact_fraction_values():
    assert exact_expected_turns(Board(3), PLAIN2) == Fraction(3)
    assert exact_expected_turns(Board(3), BONUS2) == Fraction(5, 2)
    # six-run cycles without a cap are summed exactly
    cyc = Board(6, {3: 1})
    r = Rules(faces=2, max_sixes=None)
    assert float(exact_expected_turns(cyc, r)) == pytest.approx(analyze(cyc, r).expected_turns, rel=1e-12)
    with pytest.raises(snl.UnwinnableBoardError):
        exact_expected_turns(Board(6, {3: 1, 4: 2}), PLAIN2)

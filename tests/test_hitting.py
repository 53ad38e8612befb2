"""hit_probabilities (local Woodbury solves) against brute-force per-target solves."""

import numpy as np
import pytest

from snlmarkov import Board, Rules
from snlmarkov.analysis.hitting import hit_probabilities


def brute(board, rules):
    """Per target, a dense solve of the roll chain with every landing on the target made absorbing."""
    from snlmarkov.chain.model import roll_transitions

    tr = roll_transitions(board, rules)
    n = tr.size
    base = np.zeros((n, n))
    np.add.at(base, (tr.src, tr.tgt), tr.prob)
    base[:, board.size] = 0.0  # finishing without landing on t: absorbed elsewhere
    out = np.zeros(board.size + 1)
    for t in range(1, board.size + 1):
        on_t = tr.landing == t
        q = base.copy()
        np.add.at(q, (tr.src[on_t], tr.tgt[on_t]), -tr.prob[on_t])
        q[:, board.size] = 0.0
        l = np.zeros(n)
        np.add.at(l, tr.src[on_t], tr.prob[on_t])
        out[t] = np.linalg.solve(np.eye(n) - q, l)[0]
    return out


RULES = [
    Rules(),
    Rules.preset("plain"),
    Rules.preset("family"),
    Rules(finish="bounce", on_cap="forfeit", start_on_six=True),
    Rules(max_sixes=None, finish="none"),
]


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.preset_name)
@pytest.mark.parametrize("window", [1, 40, None])
def test_matches_brute_force_on_a_random_board(rules, window):
    board = Board.random(90, rng=4)
    want = brute(board, rules)
    got = hit_probabilities(board, rules) if window is None else hit_probabilities(board, rules, window=window)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_matches_brute_force_with_long_snakes_and_ladders():
    board = Board(60, {3: 50, 58: 2, 30: 12, 44: 59, 20: 35})  # one block: the local systems are the whole chain
    for rules in (Rules(), Rules.preset("family")):
        np.testing.assert_allclose(hit_probabilities(board, rules, window=8), brute(board, rules), atol=1e-12)


def test_large_board_is_sane():
    board = Board.random(20_000, rng=1)
    h = hit_probabilities(board, Rules())
    assert h[0] == 0 and h[-1] == pytest.approx(1.0, abs=1e-9)
    assert np.all((h >= 0) & (h <= 1))
    # a square that starts a jump can only be landed on, never rested on; it is still hit sometimes
    starts = np.array(sorted(board.jumps))
    assert np.all(h[starts] > 0)


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.preset_name)
def test_long_snakes_cut_out_match_brute_force(rules, monkeypatch):
    """Overlapping long snakes: the local systems without them plus a low-rank correction."""
    from snlmarkov.analysis import hitting

    calls = []
    real = hitting._cut_correction
    monkeypatch.setattr(hitting, "_cut_correction", lambda a, cut: calls.append(cut.columns.size) or real(a, cut))
    board = Board(80, {70: 3, 50: 20, 78: 40, 30: 9, 12: 33, 60: 75})
    got = hit_probabilities(board, rules, window=4)
    want = brute(board, rules)
    if not (rules.bonus_on_six and rules.max_sixes is None):  # an unbounded turn reaches too many squares
        assert calls and calls[0] >= 3
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_long_snake_cut_agrees_with_the_whole_chain_path(monkeypatch):
    """1,000 squares under long snakes: the cut path and the whole-chain local systems agree to 1e-12."""
    from snlmarkov.analysis import hitting

    board = Board(1_000, {990: 10, 700: 240, 500: 30})
    calls = []
    real = hitting._cut_correction
    monkeypatch.setattr(hitting, "_cut_correction", lambda a, cut: calls.append(1) or real(a, cut))
    got = hit_probabilities(board, Rules())
    assert calls
    monkeypatch.setattr(hitting, "CUT_WINDOWS", 10**9)
    want = hit_probabilities(board, Rules())
    assert len(calls) == 1
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert got[-1] == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize(
    "rules", RULES + [Rules(die="2d6"), Rules.preset("family").replace(die="faces:0,1,2,3,4,5")], ids=str
)
def test_the_whole_chain_path_of_small_boards_matches_brute_force(rules, monkeypatch):
    """A small board with long snakes is by default one system for every target; it must equal brute force."""
    from snlmarkov.analysis import hitting

    groups = []
    real = hitting._solve_group
    monkeypatch.setattr(hitting, "_solve_group", lambda *a, **k: groups.append(a[3].size) or real(*a, **k))
    board = Board(40, {38: 3, 30: 11, 25: 2, 5: 33, 12: 36, 20: 39})  # snakes over the whole board
    got = hit_probabilities(board, rules)
    assert len(groups) == 1 and groups[0] > 30  # one system for every target
    np.testing.assert_allclose(got, brute(board, rules), rtol=0, atol=1e-12)


SMALL_BOARDS = [
    Board.random(300, rng=11),
    Board(200, {190: 12, 150: 40, 120: 3, 60: 170, 30: 95}),  # snakes over most of the board
    Board(150, {3: 20, 20: 60, 60: 10, 100: 140, 140: 90}, chain=True),
]


@pytest.mark.parametrize(
    "rules",
    RULES + [Rules(on_cap="restart"), Rules(on_cap="forfeit"), Rules(start_on_six=True), Rules(die="2d6")],
    ids=str,
)
@pytest.mark.parametrize("board", SMALL_BOARDS, ids=lambda b: f"{b.size}-{len(b.jumps)}")
def test_stacked_local_systems_agree_with_the_whole_chain_system(board, rules, monkeypatch):
    """The stacked groups (any window) and the one system of the whole chain give the same figures."""
    from snlmarkov.analysis import hitting

    whole = []
    real = hitting._solve_group
    monkeypatch.setattr(hitting, "_solve_group", lambda *a, **k: whole.append(1) or real(*a, **k))
    monkeypatch.setattr(hitting, "WHOLE_STATES", 10**6)
    want = hit_probabilities(board, rules)
    assert whole == [1]
    for window in (1, 24, 128):
        np.testing.assert_allclose(hit_probabilities(board, rules, window=window), want, rtol=0, atol=1e-12)
    assert whole == [1]


def test_only_targets_with_a_near_landing_get_a_system(monkeypatch):
    """On a board whose snakes are short most squares need no Woodbury system: h is the expected landings."""
    from snlmarkov.analysis import hitting

    solved = []
    real = hitting._solve_stack
    monkeypatch.setattr(hitting, "_solve_stack", lambda *a, **k: solved.append(a[4].size) or real(*a, **k))
    board = Board.random(3_000, rng=2)
    h = hit_probabilities(board, Rules(), window=64)
    assert 0 < sum(solved) < board.size // 2
    assert h[-1] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("board", SMALL_BOARDS, ids=lambda b: f"{b.size}-{len(b.jumps)}")
@pytest.mark.parametrize("bin_rows, entries", [(0, 1 << 22), (0, 64), (10**9, 1 << 22)])
def test_groups_binned_by_column_count_give_the_same_figures(board, bin_rows, entries, monkeypatch):
    """Every column count its own bin, or one bin a stack, or columns solved a few at a time: the same figures."""
    from snlmarkov.analysis import hitting

    rules = Rules.preset("family")
    monkeypatch.setattr(hitting, "WHOLE_STATES", 10**6)
    want = hit_probabilities(board, rules)  # the one system of the whole chain
    monkeypatch.setattr(hitting, "WHOLE_STATES", 0)
    bins = []
    real = hitting._bins
    monkeypatch.setattr(hitting, "_bins", lambda *a: bins.append(len(real(*a))) or real(*a))
    monkeypatch.setattr(hitting, "_BIN_ROWS", bin_rows)
    monkeypatch.setattr(hitting, "_BIN_RATIO", 1.0)  # a new bin at every drop in the column count
    monkeypatch.setattr(hitting, "_STACK_ENTRIES", entries)  # 64: a group a stack, a few columns a solve
    np.testing.assert_allclose(hit_probabilities(board, rules, window=16), want, rtol=0, atol=1e-12)
    if entries > 64:
        assert max(bins) > 1 if bin_rows == 0 else max(bins) == 1


def test_bins_hold_every_group_with_columns_once():
    from snlmarkov.analysis.hitting import _bins

    rng = np.random.default_rng(4)
    cols = rng.integers(0, 40, size=500)
    width = rng.integers(1, 130, size=500)
    bins = _bins(width, cols)
    got = np.concatenate(bins)
    assert sorted(got.tolist()) == np.flatnonzero(cols > 0).tolist()
    for b in bins:  # most columns first; within a bin no group under 0.85 of the first, but in a bin's first 512 rows
        c, w = cols[b], width[b]
        assert np.all(np.diff(c) <= 0)
        low = c < 0.85 * c[0]
        assert not low.any() or np.cumsum(w)[np.argmax(low) - 1] < 512

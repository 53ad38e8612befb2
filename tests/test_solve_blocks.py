"""Block-triangular direct solves and the operator path against SuperLU and dense solves."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from snlmarkov import Board, Rules, analyze
from snlmarkov.analysis.single import expected_turns
from snlmarkov.chain.model import _turn_system
from snlmarkov.chain.solve import BlockLU, block_bounds, factorize, solve_blocks, solve_operator
from snlmarkov.errors import SnlError

RULES = [
    Rules(),
    Rules.preset("plain"),
    Rules.preset("family"),
    Rules(on_cap="forfeit"),
    Rules(max_sixes=None),
    Rules(finish="none", start_on_six=True),
]


def _reference(a, b, transposed=False):
    """The whole matrix factorised by SuperLU in one piece (today's direct solve)."""
    lu = factorize(a)
    return lu.solve(b) if transposed else lu.solve(b, trans="T")


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.preset_name or repr(r)[:40])
@pytest.mark.parametrize("rows", [1, 7, 500])
def test_block_solves_agree_with_one_superlu(rules, rows):
    board = Board.random(3000, rng=5)
    a = _turn_system(board, rules)
    lu = BlockLU(a, rows=rows)
    rng = np.random.default_rng(1)
    b = rng.random((a.shape[0], 2))
    for transposed in (False, True):
        want = _reference(a, b, transposed)
        got = lu.solve_transposed(b) if transposed else lu.solve(b)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=0)
    np.testing.assert_allclose(solve_blocks(a, b[:, 0], rows=rows), _reference(a, b[:, 0]), rtol=1e-10, atol=0)


def test_random_boards_split_into_many_blocks_and_a_long_snake_into_few():
    board = Board.random(3000, rng=5)
    assert BlockLU(_turn_system(board, Rules()), rows=10).n_blocks > 100
    # a snake from 2998 to 1: every point from 2 to 2998 has a row behind it that slides back to 1
    long_snake = Board(3000, {2998: 1})
    lu = BlockLU(_turn_system(long_snake, Rules()), rows=1)
    assert lu.bounds[1] == 1 and lu.bounds[2] >= 2998  # row 2998 itself never lands on 2998


def test_block_bounds_are_clean_split_points():
    a = _turn_system(Board.random(5000, rng=2), Rules())
    bounds = block_bounds(a, rows=3)
    first_col = a.indices[a.indptr[:-1]]
    for b in bounds[1:-1]:
        assert first_col[b:].min() >= b  # no row at or after b reaches back before b
    assert bounds[0] == 0 and bounds[-1] == a.shape[0] and np.all(np.diff(bounds)[:-1] >= 3)


def test_dense_hand_example():
    # 0 -> 1 -> 2 with a step back from 2 to 1: blocks {0} and {1, 2}, then the absorbing 3
    q = np.array([[0, 1.0, 0, 0], [0, 0, 0.5, 0.5], [0, 0.5, 0, 0.5], [0, 0, 0, 0]])
    a = np.eye(4) - q
    lu = BlockLU(sp.csr_matrix(a), rows=1)
    assert lu.bounds.tolist() == [0, 1, 3, 4]
    b = np.array([1.0, 1.0, 1.0, 0.0])
    np.testing.assert_allclose(lu.solve(b), np.linalg.solve(a, b), rtol=1e-14)
    np.testing.assert_allclose(lu.solve_transposed(b), np.linalg.solve(a.T, b), rtol=1e-14)
    # by hand: x1 = 1 + x2/2, x2 = 1 + x1/2 -> x1 = x2 = 2; x0 = 1 + x1 = 3
    np.testing.assert_allclose(lu.solve(b)[:3], [3, 2, 2], rtol=1e-14)


def test_expected_turns_unchanged_and_analyze_consistent():
    board = Board.random(20000, rng=3)
    for rules in (Rules(), Rules.preset("family")):
        a = _turn_system(board, rules)
        b = np.ones(a.shape[0])
        b[-1] = 0
        want = _reference(a, b)[0]
        assert expected_turns(board, rules) == pytest.approx(want, rel=1e-10)
        assert analyze(board, rules).expected_turns == pytest.approx(want, rel=1e-10)


def test_linear_operator_path_with_block_preconditioner():
    board = Board.random(4000, rng=4)
    a = _turn_system(board, Rules.preset("family"))
    b = np.ones(a.shape[0])
    b[-1] = 0
    want = _reference(a, b)
    op = spla.aslinearoperator(a)
    # the preconditioner is exact but for the snakes dropped from its matrix: a low-rank difference
    near = sp.triu(a, format="csr")
    near.sort_indices()
    plu = BlockLU(near)
    m = spla.LinearOperator(a.shape, matvec=plu.solve)
    got = solve_operator(op, b, preconditioner=m)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_allclose(solve_operator(a, b), want, rtol=1e-10)  # a matrix takes the direct path


def test_operator_that_does_not_converge_is_refused():
    a = sp.csr_matrix(np.array([[1.0, 0], [0, 1e-300]]))
    with pytest.raises(SnlError, match="GMRES"):
        solve_operator(spla.aslinearoperator(a) * 1.0, np.array([1.0, 1.0]), maxiter=1, rtol=1e-300)


def test_empty_and_rectangular_systems_refused():
    with pytest.raises(SnlError, match="square"):
        BlockLU(sp.csr_matrix((2, 3)))
    with pytest.raises(SnlError, match="nothing to solve"):
        BlockLU(sp.csr_matrix((0, 0)))


@pytest.mark.parametrize("rules", [Rules(), Rules.preset("family"), Rules(on_cap="forfeit", max_sixes=1)])
def test_unit_absorbing_system_equals_the_sparse_sum(rules):
    from snlmarkov import turn_model
    from snlmarkov.chain.solve import _unit_absorbing

    m = turn_model(Board.random(2000, rng=8), rules).matrix
    n = m.shape[0]
    want = sp.identity(n, format="csr") - m + sp.csr_matrix(([1.0], ([n - 1], [n - 1])), shape=(n, n))
    got = _unit_absorbing(m, n - 1)
    np.testing.assert_array_equal(got.toarray(), want.toarray())
    check = got.copy()
    check.has_sorted_indices = False
    check.sort_indices()
    np.testing.assert_array_equal(check.indices, got.indices)  # built sorted


# ------------------------------------------------- long snakes overlapping end to end
#: snakes from near the top of each eighth to the bottom of the one before: one block without the cut
OVERLAPPING = Board(3000, {(i * 375 + 190): ((i - 1) * 375 + 90) for i in range(1, 8)} | {2990: 3})


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.preset_name or repr(r)[:40])
def test_cut_of_long_snakes_agrees_with_one_superlu(rules):
    """Long backward entries cut out and added back by Woodbury: the direct solve to 1e-10."""
    a = _turn_system(OVERLAPPING, rules)
    assert int(np.diff(BlockLU(a, rows=64, cut_rows=10**9).bounds).max()) > 2900  # one block without the cut
    lu = BlockLU(a, rows=64, cut_rows=128)
    if (
        rules.bonus_on_six and rules.max_sixes is None
    ):  # a turn of unbounded length reaches too many squares after a snake: no cut
        assert lu.cut_columns.size == 0
    else:
        assert lu.cut_columns.size >= 8 and int(np.diff(lu.bounds).max()) <= 128
    b = np.random.default_rng(3).random((a.shape[0], 3))
    for transposed in (False, True):
        want = _reference(a, b, transposed)
        got = lu.solve_transposed(b) if transposed else lu.solve(b)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=0)
        one = lu.solve_transposed(b[:, 1]) if transposed else lu.solve(b[:, 1])
        np.testing.assert_allclose(one, want[:, 1], rtol=1e-10, atol=0)


def test_cut_expected_turns_equal_the_exact_fraction(monkeypatch):
    """Through ``solve_blocks`` (the path of ``expected_turns``) with a cut forced at small sizes."""
    from snlmarkov import exact_expected_turns
    from snlmarkov.chain import solve

    board = Board(600, {590: 2, 400: 150, 300: 10, 200: 40, 120: 5})
    rules = Rules.preset("plain")
    want = float(exact_expected_turns(board, rules))
    monkeypatch.setattr(solve, "BLOCK_ROWS", 16)
    monkeypatch.setattr(solve, "CUT_ROWS", 40)
    lu = BlockLU(_turn_system(board, rules), rows=16, cut_rows=40)
    assert lu.cut_columns.size > 0
    got = float(solve.solve_blocks(_turn_system(board, rules), _ones_but_last(board), rows=16)[0])
    assert got == pytest.approx(want, rel=1e-12)


def _ones_but_last(board):
    b = np.ones(board.size + 1)
    b[-1] = 0.0
    return b


def test_too_many_long_snakes_keep_one_block_and_stay_exact(monkeypatch):
    from snlmarkov.chain import solve

    monkeypatch.setattr(solve, "MAX_CUT_COLUMNS", 4)
    a = _turn_system(OVERLAPPING, Rules())
    lu = BlockLU(a, rows=64, cut_rows=128)
    assert lu.cut_columns.size == 0 and lu.n_blocks <= 3
    b = np.random.default_rng(4).random(a.shape[0])
    np.testing.assert_allclose(lu.solve(b), _reference(a, b), rtol=1e-10, atol=0)


def test_diagonal_block_equals_scipy_slicing():
    """The diagonal block (rows inside copied whole, the rest filtered) against scipy's own slicing."""
    from snlmarkov.chain.solve import _diagonal_block, _row_slice

    rng = np.random.default_rng(0)
    for _ in range(400):
        n = int(rng.integers(1, 40))
        a = sp.random(n, n, density=float(rng.random() ** 2), format="lil", random_state=int(rng.integers(2**31)))
        if rng.random() < 0.3:
            a[int(rng.integers(n)), :] = 0  # an empty row
        a = a.tocsr()
        a.eliminate_zeros()
        a.sort_indices()
        lo = int(rng.integers(0, n))
        hi = int(rng.integers(lo + 1, n + 1))
        d = _diagonal_block(_row_slice(a, lo, hi), lo, hi)
        assert d.indptr[-1] == d.data.size == d.indices.size
        np.testing.assert_array_equal(d.toarray(), a[lo:hi, lo:hi].toarray())


# ------------------------------------------------------------- expected turns, rows built block by block
@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.preset_name or repr(r)[:40])
@pytest.mark.parametrize("rows", [40, 300])
def test_blocks_built_on_the_fly_agree_with_one_superlu(rules, rows):
    from snlmarkov.chain.solve import _expected_turns_by_blocks

    board = Board.random(1500, rng=5)
    a = _turn_system(board, rules)
    want = float(_reference(a, _ones_but_last(board))[0])
    assert _expected_turns_by_blocks(board, rules, rows=rows) == pytest.approx(want, rel=1e-10)


def test_blocks_built_on_the_fly_equal_the_exact_fraction():
    from snlmarkov import exact_expected_turns
    from snlmarkov.chain.solve import _expected_turns_by_blocks

    board = Board(100, {95: 2, 70: 40, 60: 30, 25: 20, 16: 3, 6: 17})
    for rules in (Rules.preset("plain"), Rules()):
        want = float(exact_expected_turns(board, rules))
        assert _expected_turns_by_blocks(board, rules, rows=16) == pytest.approx(want, rel=1e-12)


def test_blocks_built_on_the_fly_hand_over_to_the_whole_matrix(monkeypatch):
    """A stretch without a clean point past CUT_ROWS, or a row without a move up: the whole system is built."""
    from snlmarkov import UnwinnableBoardError, exact_expected_turns
    from snlmarkov.chain import solve

    board = Board(200, {190: 2, 150: 100, 120: 60})
    monkeypatch.setattr(solve, "CUT_ROWS", 40)
    plain = Rules.preset("plain")
    assert solve._expected_turns_by_blocks(board, plain, rows=16) is None  # 190 -> 2 spans the board
    assert expected_turns(board, plain) == pytest.approx(float(exact_expected_turns(board, plain)), rel=1e-12)
    trap = Board(6, {3: 1, 4: 2})  # faces 2: from 1 and 2 every move slides back into {1, 2}
    rules = Rules.preset("plain").replace(faces=2)
    assert solve._expected_turns_by_blocks(trap, rules, rows=2) is None
    with pytest.raises(UnwinnableBoardError):
        expected_turns(trap, rules)


def test_solve_by_row_blocks_against_a_dense_solve():
    from snlmarkov.chain.solve import solve_by_row_blocks

    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(2, 60))
        q = sp.random(n, n, density=0.2, random_state=int(rng.integers(2**31))).toarray()
        q = np.triu(q, -int(rng.integers(0, 4)))  # short backward moves only: many clean points
        q /= 2 * np.maximum(q.sum(axis=1, keepdims=True), 1.0)
        q[-1] = 0.0  # the last state absorbs
        a = sp.csr_matrix(np.eye(n) - q)
        b = rng.random(n)
        b[-1] = 0.0
        want = np.linalg.solve(a.toarray()[:-1, :-1], b[:-1])
        got = solve_by_row_blocks(lambda lo, hi, a=a: a[lo:hi], n - 1, b, rows=int(rng.integers(1, 8)))
        np.testing.assert_allclose(got[:-1], want, rtol=1e-12, atol=1e-14)
        assert got[-1] == 0.0

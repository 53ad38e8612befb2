"""Linear algebra on absorbing chains: one sparse factorisation, many solves.

The systems are ``(I - Q) x = b`` for a sub-stochastic ``Q``. Their
transpose is column diagonally dominant, so Gaussian elimination on it
needs no pivoting (every diagonal pivot is the largest in its column, what
partial pivoting would pick anyway): :func:`factorize` asks SuperLU to keep
the diagonal and spends its effort on the ordering only. Chains whose
states reach only nearby states (bandwidth below :data:`NATURAL_BANDWIDTH`,
the case of boards without long jumps) are factorised in their natural
order, where the fill stays inside the band; others get a minimum-degree
ordering, applied symmetrically so that the diagonal stays the pivot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import breadth_first_order

from ..board import Board
from ..errors import ModelError
from ..rules import Rules
from .model import TransitionModel, _rows_climb, _TurnPaths, can_finish

__all__ = ["AbsorbingSystem"]

#: Matrices whose lower plus upper bandwidth is at most this are factorised
#: in their natural order (little fill, no ordering cost).
NATURAL_BANDWIDTH = 256


#: Target number of rows of one diagonal block of :class:`BlockLU`. SuperLU
#: keeps its sizes in 32-bit integers and fails near 7e7 nonzeros in the
#: factors; blocks of this many rows stay far below that.
BLOCK_ROWS = 1 << 18


#: Slots (rows x outcomes of a turn, see ``_TurnPaths``) of one block of rows in
#: :func:`_expected_turns_by_blocks`: the builder's tables and SuperLU's working arrays then stay
#: in a core's cache (about 7,000 rows under the app rules, against 42,000 for the whole-matrix
#: builder).
SOLVE_SLOTS = 1 << 17

#: A diagonal block of :class:`BlockLU` longer than this many rows (a board
#: whose long snakes overlap end to end) is split further by cutting the
#: long backward entries out and adding them back by Woodbury's identity.
CUT_ROWS = 2 * BLOCK_ROWS

#: Most columns (squares long snakes lead to) that :class:`BlockLU` cuts out.
MAX_CUT_COLUMNS = 256


def _bandwidth(a: sp.csr_matrix) -> int:
    """Lower plus upper bandwidth of a CSR matrix with sorted indices and no empty row."""
    rows = np.arange(a.shape[0])
    first = a.indices[a.indptr[:-1]].astype(np.int64)
    last = a.indices[a.indptr[1:] - 1].astype(np.int64)
    return int(max(0, np.max(rows - first)) + max(0, np.max(last - rows)))


def factorize(a: sp.csr_matrix, *, canonical: bool = False) -> spla.SuperLU:
    """Sparse LU of the **transpose** of ``a`` (``a = I - Q``, CSR, sorted, diagonal present).

    The CSR arrays of ``a`` are the CSC arrays of ``a.T``: SuperLU gets them
    without a copy. Solve ``a x = b`` with ``lu.solve(b, trans="T")`` and
    ``a.T y = b`` with ``lu.solve(b)``. ``canonical``: the caller knows
    ``a`` has no duplicate entries (SuperLU's own check is then skipped).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[1.0, -0.5], [0.0, 1.0]]))
    >>> factorize(a).solve(np.array([1.0, 1.0]), trans="T").tolist()
    [1.5, 1.0]
    """
    a = _canonical_csr(a)
    n = a.shape[0]
    if n == 0:
        raise ModelError("no state of the chain can finish: nothing to solve")
    at = sp.csc_matrix((a.data, a.indices, a.indptr), shape=(n, n))
    if canonical:
        at.has_canonical_format = True
    if _bandwidth(a) <= NATURAL_BANDWIDTH:
        return spla.splu(at, permc_spec="NATURAL", diag_pivot_thresh=0.0, relax=1, panel_size=1)
    return spla.splu(at, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})


def _unit_absorbing(matrix: sp.csr_matrix, absorbing: int) -> sp.csr_matrix:
    """``I - M`` with the absorbing row made a unit row: nonsingular when every state can finish.

    Built in one O(nnz) pass over the canonical CSR arrays of ``M``: the
    entries are negated, ``1`` is added on the diagonals present and a
    diagonal entry is inserted in order in the rows that have none (no
    sparse additions, which cost about 3x more at 10^6 squares).
    """
    m = _canonical_csr(matrix)
    if not m.has_canonical_format:
        m = m.copy()
        m.sum_duplicates()
    n = m.shape[0]
    idx_type = np.int32 if max(m.nnz + n, n) < 2**31 - 1 else np.int64
    rows = np.repeat(np.arange(n, dtype=idx_type), np.diff(m.indptr))
    cols = m.indices.astype(idx_type, copy=False)
    on_diag = cols == rows
    missing = np.ones(n, dtype=bool)
    missing[rows[on_diag]] = False
    lower = np.bincount(rows[cols < rows], minlength=n)  # entries left of the diagonal, per row
    del rows
    gap = np.flatnonzero(missing)
    data = np.negative(m.data)
    data[on_diag] += 1.0
    at = m.indptr[gap] + lower[gap]  # where each missing diagonal entry goes, in the rows of m
    data = np.insert(data, at, 1.0)  # one pass: every row's entries shifted by the insertions before it
    indices = np.insert(cols, at, gap.astype(idx_type))
    before = np.zeros(n + 1, dtype=np.int64)  # diagonal entries inserted in the rows before each row
    np.cumsum(missing, out=before[1:])
    indptr = (m.indptr.astype(np.int64) + before).astype(idx_type)
    a = sp.csr_matrix((data, indices, indptr), shape=(n, n))
    a.has_canonical_format = True
    # the absorbing row: a unit row
    lo, hi = int(indptr[absorbing]), int(indptr[absorbing + 1])
    a.data[lo:hi] = np.where(a.indices[lo:hi] == absorbing, 1.0, 0.0)
    return a


@dataclass(frozen=True, eq=False)
class AbsorbingSystem:
    """``I - Q`` of a chain, factorised once, over the states that can finish.

    The factorisation is a :class:`BlockLU`: one SuperLU per diagonal block
    of the block upper triangular matrix, so there is no size limit other
    than memory, and factorising costs O(nnz) on banded boards.

    States from which a state that can never finish is reachable are left
    out of the system (their expected times are infinite); :func:`turn_model`
    has already refused boards where such a state is reachable from the start.

    When every transient state can finish (the usual case) the matrix
    factorised is the whole ``I - M`` with the absorbing row made a unit row:
    its solutions restricted to :attr:`states` are those of ``I - Q``, and no
    copy of ``Q`` is made to get there.

    Attributes
    ----------
    model : TransitionModel
    states : numpy.ndarray
        Indices (into the model) of the states in the system.
    q : scipy.sparse.csr_matrix
        ``Q`` restricted to ``states`` (built on first use).
    """

    model: TransitionModel
    states: np.ndarray = field(repr=False)
    _lu: Any = field(repr=False)  # a BlockLU
    _whole: bool = field(repr=False, default=False)

    @classmethod
    def of(cls, model: TransitionModel) -> AbsorbingSystem:
        """Factorise ``I - Q`` for ``model``.

        Examples
        --------
        >>> from snlmarkov import Board, Rules, turn_model
        >>> s = AbsorbingSystem.of(turn_model(Board(3), Rules.preset("plain").replace(faces=2)))
        >>> s.solve(np.ones(3)).round(6).tolist()
        [3.0, 2.0, 2.0]
        """
        m = model.matrix
        states = _safe_states(m, model.absorbing, model._can_finish)
        if states.size == model.n_states - 1:
            lu = BlockLU(_unit_absorbing(m, model.absorbing))
            return cls(model=model, states=states, _lu=lu, _whole=True)
        q = sp.csr_matrix(m)[states][:, states]
        a = (sp.identity(states.size, format="csr") - q).tocsr()
        a.sort_indices()
        return cls(model=model, states=states, _lu=BlockLU(a), _whole=False)

    @cached_property
    def q(self) -> sp.csr_matrix:
        """``Q`` restricted to :attr:`states` (CSR)."""
        m = sp.csr_matrix(self.model.matrix)
        a = self.model.absorbing
        if self._whole and a == m.shape[0] - 1:  # drop the last row and column without fancy indexing
            end = m.indptr[a]
            keep = m.indices[:end] != a
            kept = np.zeros(end + 1, dtype=np.int64)
            np.cumsum(keep, out=kept[1:])
            indptr = kept[m.indptr[: a + 1]].astype(m.indptr.dtype)
            q = sp.csr_matrix((m.data[:end][keep], m.indices[:end][keep], indptr), shape=(a, a))
            q.has_canonical_format = m.has_canonical_format  # rows and their order kept, one column dropped
        else:
            q = m[self.states][:, self.states]
        return q

    def _run(self, b: np.ndarray, transposed: bool) -> np.ndarray:
        b = np.asarray(b, dtype=float)
        lu: BlockLU = self._lu
        run = lu.solve_transposed if transposed else lu.solve
        if not self._whole:
            return run(b)
        full = np.zeros((self.model.n_states,) + b.shape[1:])
        full[self.states] = b
        return run(full)[self.states]

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``x`` with ``(I - Q) x = b`` (``b`` indexed like :attr:`states`).

        Cost: O(nnz) of the factors per right-hand side (:class:`BlockLU`).
        """
        return self._run(b, False)

    def solve_transposed(self, b: np.ndarray) -> np.ndarray:
        """``y`` with ``(I - Q)^T y = b``; cost as :meth:`solve`."""
        return self._run(b, True)

    def expand(self, x: np.ndarray, fill: float = np.inf, absorbing: float = 0.0) -> np.ndarray:
        """Spread a vector over :attr:`states` back onto every state of the model."""
        out = np.full(self.model.n_states, fill, dtype=float)
        out[self.states] = x
        out[self.model.absorbing] = absorbing
        return out

    def position(self, state: int) -> int:
        """Where model state ``state`` sits in :attr:`states`."""
        pos = int(np.searchsorted(self.states, state))
        if pos >= self.states.size or self.states[pos] != state:
            raise KeyError(state)
        return pos


def safe_states(matrix: sp.spmatrix, absorbing: int) -> np.ndarray:
    """Transient states from which the chain finishes with probability 1.

    A state is left out when it can reach a *trap*: a state from which the
    absorbing state cannot be reached.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix(np.array([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    >>> safe_states(m, 2).tolist()  # 1 is a trap and 0 can fall into it
    []
    """
    m = sp.csr_matrix(matrix)
    return _safe_states(m, absorbing, can_finish(m, absorbing))


def _safe_states(matrix: sp.spmatrix, absorbing: int, finishable: np.ndarray) -> np.ndarray:
    m = sp.csr_matrix(matrix)
    n = m.shape[0]
    traps = np.flatnonzero(~finishable)
    doomed = np.zeros(n, dtype=bool)
    if traps.size:
        # one extra node pointing at every trap: whatever reaches it backwards can reach a trap
        extra = sp.csr_matrix((np.ones(traps.size), (np.full(traps.size, n), traps)), shape=(n + 1, n + 1))
        back = (sp.block_diag([m.T, sp.csr_matrix((1, 1))]).tocsr() + extra).tocsr()
        doomed[breadth_first_order(back, n, directed=True, return_predecessors=False)[1:]] = True
    ok = ~doomed
    ok[absorbing] = False
    return np.flatnonzero(ok)


# --- block-triangular direct solves (no SuperLU size limit) -----------------------------------


def _canonical_csr(a: sp.spmatrix) -> sp.csr_matrix:
    """``a`` as CSR with sorted indices: ``a`` itself when it is one (a new wrapper forgets its flags: O(nnz) to check again)."""
    if not isinstance(a, sp.csr_matrix):
        a = sp.csr_matrix(a)
    if not a.has_sorted_indices:
        a = a.sorted_indices()
    return a


def block_bounds(a: sp.csr_matrix, rows: int = BLOCK_ROWS) -> np.ndarray:
    """Split points ``0 = b_0 < b_1 < ... < b_K = n`` where ``a`` is block upper triangular.

    A split point ``b`` is *clean* when no row ``i >= b`` has an entry in a
    column ``j < b``: the chain never moves back across it. A turn matrix is
    upper banded except for snakes and bounces, so on a board whose snakes
    are short most points are clean. Consecutive clean points are merged
    greedily into blocks of at least ``rows`` rows (the last block may be
    shorter); a chain with no clean point is one block.

    Cost: O(n) time and memory (one suffix minimum over the rows' first
    columns), plus a Python loop over the blocks.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[1.0, -1, 0, 0], [0, 1, -1, 0], [0, -1, 1, -0.5], [0, 0, 0, 1]]))
    >>> block_bounds(a, rows=1).tolist()  # 2 -> 1 goes back across the point 2
    [0, 1, 3, 4]
    """
    a = _canonical_csr(a)
    n = a.shape[0]
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    counts = np.diff(a.indptr)
    first = np.where(counts > 0, a.indices[np.minimum(a.indptr[:-1], max(a.nnz - 1, 0))], n).astype(np.int64)
    first = np.minimum(first, np.arange(n))  # an empty row (never in a system) moves nowhere
    suffix = np.minimum.accumulate(first[::-1])[::-1]
    clean = np.flatnonzero(suffix >= np.arange(n))  # 0 is always clean
    rows = max(1, int(rows))
    if rows == 1:  # every clean point is a bound
        return np.append(clean, n).astype(np.int64)
    out = [0]
    while True:
        k = int(np.searchsorted(clean, out[-1] + rows))
        if k >= clean.size:
            break
        out.append(int(clean[k]))
    out.append(n)
    return np.asarray(out, dtype=np.int64)


def _row_slice(a: sp.csr_matrix, lo: int, hi: int) -> sp.csr_matrix:
    """Rows ``lo:hi`` of ``a`` as a CSR view (no copy of the entries)."""
    ptr = a.indptr[lo : hi + 1]
    start, stop = int(ptr[0]), int(ptr[-1])
    out = sp.csr_matrix((a.data[start:stop], a.indices[start:stop], ptr - ptr[0]), shape=(hi - lo, a.shape[1]))
    out.has_sorted_indices = True
    return out


def _diagonal_block(rows: sp.csr_matrix, lo: int, hi: int) -> sp.csr_matrix:
    """Columns ``lo:hi`` of a row block (entries before ``lo`` are the cut ones of :class:`LongCut`).

    The rows before the first one with an entry outside ``lo:hi`` (on a
    banded block: all but its last few) are copied whole; only the rest is
    filtered entry by entry.
    """
    n = rows.shape[0]
    ptr_in = rows.indptr
    lens = np.diff(ptr_in)
    split = n  # rows before `split` lie inside lo:hi
    if rows.nnz:
        first = rows.indices[np.minimum(ptr_in[:-1], rows.nnz - 1)]  # (empty rows read anything: masked)
        last = rows.indices[ptr_in[1:] - 1]
        ok = (lens == 0) | ((first >= lo) & (last < hi))
        split = n if ok.all() else int(np.argmin(ok))
    head = int(ptr_in[split])
    tail_idx = rows.indices[head:]
    keep = (tail_idx < hi) & (tail_idx >= lo)
    ptr = np.empty(n + 1, dtype=np.int64)
    ptr[: split + 1] = ptr_in[: split + 1] - ptr_in[0]
    np.cumsum(_count_kept(keep, ptr_in[split:] - head), out=ptr[split + 1 :])
    ptr[split + 1 :] += head
    nnz = int(ptr[-1])
    data = np.empty(nnz)
    data[:head] = rows.data[:head]
    data[head:] = rows.data[head:][keep]
    indices = np.empty(nnz, dtype=rows.indices.dtype)
    np.subtract(rows.indices[:head], lo, out=indices[:head], casting="unsafe")
    indices[head:] = tail_idx[keep] - lo
    d = sp.csr_matrix((data, indices, ptr), shape=(hi - lo, hi - lo))
    d.has_sorted_indices = True
    return d


def _count_kept(keep: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Kept entries per row (a running count in 32 bits when it fits: 4x faster than 64 on a boolean array)."""
    dtype = np.int32 if keep.size < 2**31 - 1 else np.int64
    c = np.zeros(keep.size + 1, dtype=dtype)
    np.cumsum(keep, out=c[1:], dtype=dtype)
    return (c[indptr[1:]] - c[indptr[:-1]]).astype(np.int64, copy=False)


class BlockLU:
    """Direct solves with a block upper triangular ``a``, one SuperLU per diagonal block.

    ``a`` (CSR, ``I - Q`` of an absorbing chain) is split at the clean points
    of :func:`block_bounds`; each diagonal block is factorised by
    :func:`factorize`, and solves are block back (or, transposed, forward)
    substitutions. The result is the exact direct solve, with no limit on
    the size of ``a`` other than memory: SuperLU only ever sees blocks of
    about :data:`BLOCK_ROWS` rows.

    A block longer than ``cut_rows`` (snakes overlapping end to end) is
    split further by cutting the long backward entries out and adding them
    back by Woodbury's identity (at most :data:`MAX_CUT_COLUMNS` columns;
    :attr:`cut_columns`); each solve is then two block solves and one small
    dense one.

    Cost: factorising is linear in the nonzeros when the blocks are banded
    (each block's fill stays in its band); memory is that of the factors,
    about 1.2 x nnz(a) entries on random boards. Each solve reads every
    factor and every row of ``a`` once: O(nnz).

    Parameters
    ----------
    a : scipy.sparse matrix
        Square, nonsingular on every diagonal block.
    rows : int, default BLOCK_ROWS
        Target rows per diagonal block.
    cut_rows : int, default CUT_ROWS
        Longest diagonal block kept whole; longer ones are cut (see above).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[1.0, -0.5, 0], [0, 1.0, -0.5], [0, 0, 1.0]]))
    >>> lu = BlockLU(a, rows=1)
    >>> lu.n_blocks, lu.solve(np.ones(3)).tolist(), lu.solve_transposed(np.ones(3)).tolist()
    (3, [1.75, 1.5, 1.0], [1.0, 1.5, 1.75])

    A snake from the last state back to the first makes one block; cut, the
    blocks are single states again and the solve is the same:

    >>> q = np.diag([0.5, 0.5, 0.5], k=1); q[3, 0] = 0.25
    >>> a = sp.csr_matrix(np.eye(4) - q)
    >>> cut = BlockLU(a, rows=1, cut_rows=1)
    >>> BlockLU(a, rows=1).n_blocks, cut.n_blocks, cut.cut_columns.tolist()
    (1, 4, [0])
    >>> bool(np.allclose(cut.solve(np.ones(4)), np.linalg.solve(a.toarray(), np.ones(4)), rtol=1e-14))
    True
    >>> bool(np.allclose(cut.solve_transposed(np.ones(4)), np.linalg.solve(a.T.toarray(), np.ones(4)), rtol=1e-14))
    True
    """

    def __init__(self, a: sp.spmatrix, *, rows: int = BLOCK_ROWS, cut_rows: int = CUT_ROWS) -> None:
        a = _canonical_csr(a)
        if a.shape[0] != a.shape[1]:
            raise ModelError(f"the system must be square, got shape {a.shape}")
        if a.shape[0] == 0:
            raise ModelError("no state of the chain can finish: nothing to solve")
        self.a = a
        self.bounds = block_bounds(a, rows)
        self.cut: LongCut | None = None
        if int(np.diff(self.bounds).max()) > cut_rows:
            self.cut = LongCut.find(a, rows, cut_rows)
            if self.cut is not None:
                self.bounds = self.cut.bounds
        self._factors = []
        for lo, hi in zip(self.bounds[:-1].tolist(), self.bounds[1:].tolist()):
            self._factors.append(factorize(_diagonal_block(_row_slice(self.a, lo, hi), lo, hi)))
        if self.cut is not None:
            self.cut.prepare(self._solve_short)

    @property
    def n_blocks(self) -> int:
        """Number of diagonal blocks."""
        return len(self._factors)

    @property
    def shape(self) -> tuple[int, int]:
        return self.a.shape

    @property
    def cut_columns(self) -> np.ndarray:
        """The columns whose long backward entries were cut out (empty when none were)."""
        return self.cut.columns if self.cut is not None else np.zeros(0, dtype=np.int64)

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``x`` with ``a x = b`` (``b`` of shape ``(n,)`` or ``(n, k)``): block back substitution."""
        b = np.asarray(b, dtype=float)
        if self.cut is None:
            return self._solve_short(b)
        return self.cut.solve(b, self._solve_short)

    def solve_transposed(self, b: np.ndarray) -> np.ndarray:
        """``y`` with ``a.T y = b``: block forward substitution."""
        b = np.asarray(b, dtype=float)
        if self.cut is None:
            return self._solve_short_transposed(b)
        return self.cut.solve_transposed(b, self._solve_short_transposed)

    def _solve_short(self, b: np.ndarray) -> np.ndarray:
        x = np.zeros(b.shape)
        for k in range(self.n_blocks - 1, -1, -1):
            lo, hi = int(self.bounds[k]), int(self.bounds[k + 1])
            r = b[lo:hi] - _row_slice(self.a, lo, hi) @ x  # x is still 0 on this block and before it
            x[lo:hi] = self._factors[k].solve(r, trans="T")  # factors of the block's transpose
        return x

    def _solve_short_transposed(self, b: np.ndarray) -> np.ndarray:
        y = np.zeros(b.shape)
        acc = np.zeros(b.shape)  # sum over finished blocks j of a[rows_j].T y_j
        for k in range(self.n_blocks):
            lo, hi = int(self.bounds[k]), int(self.bounds[k + 1])
            y[lo:hi] = self._factors[k].solve(b[lo:hi] - acc[lo:hi])
            if k + 1 < self.n_blocks:
                acc += _row_slice(self.a, lo, hi).T @ y[lo:hi]
        return y


class LongCut:
    """The long backward entries of ``a``, cut out so that the rest splits into short blocks.

    ``a = short + e``, ``e`` nonzero only in the few :attr:`columns` ``J``
    (the squares long snakes lead to): ``e = E_J S_J^T``. ``short`` is
    never formed: its block solves are those of ``a`` split at
    :attr:`bounds`, with each diagonal block's entries before the block
    left out (in a back substitution they meet only unknowns still zero,
    in a forward one only finished ones). By Woodbury's
    identity ``a^-1 = s^-1 - s^-1 E_J (I + K)^-1 S_J^T s^-1`` with
    ``K = (s^-1 E_J)[J]``, a ``|J| x |J|`` matrix found once by ``|J|``
    solves with ``short``; then every solve with ``a`` (or its transpose) is
    two block solves with ``short`` and one small dense solve. ``short`` is
    ``I - Q`` of the chain whose long snakes end the game, an M-matrix like
    ``a``, and ``I + K`` is ``I - P`` for the substochastic ``P`` of "which
    long snake is taken first", so the identity adds no instability beyond
    the expected number of long snakes taken.
    """

    def __init__(self, bounds: np.ndarray, columns: np.ndarray, e_j: sp.csr_matrix) -> None:
        self.bounds, self.columns, self.e_j = bounds, columns, e_j
        self._k: Any = None

    @classmethod
    def find(cls, a: sp.csr_matrix, rows: int, cut_rows: int, *, start: int | None = None) -> LongCut | None:
        """Cut the backward entries longer than a span ``L`` (halved until every block is short).

        ``L`` starts at ``start`` (default ``rows``); blocks are those of
        :func:`block_bounds` with ``rows``. ``None`` when no span leaves at
        most :data:`MAX_CUT_COLUMNS` columns cut and every block at most
        ``cut_rows`` rows long.
        """
        n = a.shape[0]
        span = np.repeat(np.arange(n, dtype=np.int64), np.diff(a.indptr))  # the row of every entry ...
        span -= a.indices  # ... minus its column
        limit = max(1, min(int(rows if start is None else start), int(span.max())))
        while limit >= 1:
            long = span > limit
            columns = np.unique(a.indices[long]).astype(np.int64)
            if columns.size > MAX_CUT_COLUMNS:
                return None
            keep = ~long
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(_count_kept(keep, a.indptr), out=indptr[1:])
            short = sp.csr_matrix((a.data[keep], a.indices[keep], indptr), shape=a.shape)
            short.has_sorted_indices = True
            del keep
            bounds = block_bounds(short, rows)
            if int(np.diff(bounds).max()) <= cut_rows:
                where = np.flatnonzero(long)
                rows_cut = np.searchsorted(a.indptr, where, side="right") - 1
                e_j = sp.csr_matrix(
                    (a.data[where], (rows_cut, np.searchsorted(columns, a.indices[where]))), shape=(n, columns.size)
                )
                return cls(bounds, columns, e_j)
            del short
            limit //= 2
        return None

    def short(self, a: sp.csr_matrix) -> sp.csr_matrix:
        """``a`` without the cut entries (CSR, sorted)."""
        e = sp.csr_matrix((self.e_j.data, self.columns[self.e_j.indices], self.e_j.indptr), shape=a.shape)
        out = (a - e).tocsr()
        out.eliminate_zeros()
        out.sort_indices()
        return out

    def prepare(self, solve_short: Any) -> None:
        """Factorise ``I + K`` (``K = (s^-1 E_J)[J]``, by ``|J|`` solves in small batches)."""
        from scipy.linalg import lu_factor

        r = self.columns.size
        k = np.zeros((r, r))
        for c0 in range(0, r, 16):
            z = solve_short(self.e_j[:, c0 : c0 + 16].toarray())
            k[:, c0 : c0 + z.shape[1]] = z[self.columns]
        self._k = lu_factor(np.eye(r) + k)

    def solve(self, b: np.ndarray, solve_short: Any) -> np.ndarray:
        from scipy.linalg import lu_solve

        y = solve_short(b)
        c = lu_solve(self._k, y[self.columns])
        return y - solve_short(np.asarray(self.e_j @ c))

    def solve_transposed(self, b: np.ndarray, solve_short_t: Any) -> np.ndarray:
        from scipy.linalg import lu_solve

        w = solve_short_t(b)
        c = lu_solve(self._k, np.asarray(self.e_j.T @ w), trans=1)
        lifted = np.zeros(b.shape)
        lifted[self.columns] = c
        return w - solve_short_t(lifted)


def factorize_blocks(a: sp.spmatrix, *, rows: int = BLOCK_ROWS) -> BlockLU:
    """:class:`BlockLU` of ``a``: the exact direct solver without SuperLU's size cliff."""
    return BlockLU(a, rows=rows)


def solve_blocks(a: sp.spmatrix, b: np.ndarray, *, rows: int = BLOCK_ROWS) -> np.ndarray:
    """``x`` with ``a x = b``, factorising one diagonal block at a time and freeing it.

    The one-shot form of :meth:`BlockLU.solve`: the same figures, but only
    one block's factors are alive at any moment, so the memory beyond ``a``
    and ``b`` is that of one block. Cost: O(nnz(a)) on banded blocks.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[1.0, -0.5, 0], [0, 1.0, -0.5], [0, 0, 1.0]]))
    >>> solve_blocks(a, np.ones(3), rows=1).tolist()
    [1.75, 1.5, 1.0]
    """
    a = _canonical_csr(a)
    if a.shape[0] == 0:
        raise ModelError("no state of the chain can finish: nothing to solve")
    bounds = block_bounds(a, rows)
    if int(np.diff(bounds).max()) > CUT_ROWS:  # long snakes overlap: keep the factors for the cut's solves
        return BlockLU(a, rows=rows).solve(b)
    b = np.asarray(b, dtype=float)
    x = np.zeros(b.shape)
    for k in range(bounds.size - 2, -1, -1):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        rows_k = _row_slice(a, lo, hi)
        r = b[lo:hi] - rows_k @ x
        lu = factorize(_diagonal_block(rows_k, lo, hi))
        x[lo:hi] = lu.solve(r, trans="T")
        del lu
    return x


def solve_by_row_blocks(
    rows_of: Callable[[int, int], sp.csr_matrix], n: int, b: np.ndarray, *, rows: int = BLOCK_ROWS
) -> np.ndarray | None:
    """``x`` with ``a x = b``, the rows of ``a`` built a block at a time, last block first, and dropped once solved.

    ``a`` is square of the size of ``b``; its unknowns from ``n`` on are 0
    (absorbing states: their rows are not asked for), and ``rows_of(lo,
    hi)`` returns rows ``lo:hi`` of ``a`` (``hi <= n``) as canonical CSR.
    From ``hi = n`` down, rows ``hi - rows .. hi`` are built and cut at
    their lowest clean point ``lo`` (no row from ``lo`` on reaches a column
    before it: :func:`block_bounds`); the diagonal block ``lo:hi`` is
    factorised (:func:`factorize`) and solved by block back substitution,
    and the rows below ``lo`` are built again with the next block. So the
    whole of ``a`` is never held: memory is ``b``, ``x`` and one block.
    Without a clean point among the rows built, the block is extended down
    to the lowest column they reach; ``None`` when it would pass
    :data:`CUT_ROWS` rows (build ``a`` and use :class:`BlockLU`, which cuts
    long backward entries out).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[1.0, -0.5, 0, 0], [-0.25, 1.0, -0.5, 0], [0, 0, 1.0, -0.5], [0, 0, 0, 1.0]]))
    >>> b = np.array([1.0, 1.0, 1.0, 0.0])
    >>> solve_by_row_blocks(lambda lo, hi: a[lo:hi], 3, b, rows=1).tolist()  # 1 -> 0 joins rows 0 and 1
    [2.0, 2.0, 1.0, 0.0]
    """
    b = np.asarray(b, dtype=float)
    x = np.zeros(b.shape)
    rows = max(1, int(rows))
    hi, size = int(n), rows
    while hi > 0:
        lo = max(0, hi - size)
        blk = _canonical_csr(rows_of(lo, hi))
        first = _first_columns(blk, lo)
        suffix = np.minimum.accumulate(first[::-1])[::-1]
        clean = np.flatnonzero(suffix >= np.arange(lo, hi))  # rows from hi on reach only columns >= hi
        if not clean.size:  # no clean point: the block reaches at least down to the lowest column seen
            size = max(2 * size, hi - int(first.min()))
            if size > CUT_ROWS:
                return None
            continue
        k = int(clean[0])
        start = lo + k
        if start == 0 and blk.nnz and int(blk.indices.max()) < hi:  # the rows are the whole system left: no copy
            d = sp.csr_matrix((blk.data, blk.indices, blk.indptr), shape=(hi, hi))
            x[:hi] = factorize(d, canonical=True).solve(b[:hi], trans="T")
            break
        part = _row_slice(blk, k, hi - lo)
        r = b[start:hi] - part @ x  # x is still 0 on this block and before it
        x[start:hi] = factorize(_diagonal_block(part, start, hi), canonical=True).solve(r, trans="T")
        hi, size = start, rows
    return x


class _Climbs(Exception):
    """Raised by :func:`_expected_turns_by_blocks` when a row has no move to a higher square (the full check decides)."""


def _expected_turns_by_blocks(board: Board, rules: Rules, *, rows: int | None = None) -> float | None:
    """Expected turns from square 0, the rows of ``I - M`` built and solved a block at a time, last block first.

    The system of :func:`~snlmarkov.chain.model._turn_system` is never held whole: each block of
    rows is built (``_TurnPaths`` in :mod:`snlmarkov.chain.model`), cut at its lowest clean point
    (:func:`solve_by_row_blocks`), factorised,
    solved and dropped, so memory is O(N) for the solution plus one block.
    ``None`` when this path does not apply and the caller must build the
    whole system: some row has no move to a higher square (then the full
    check decides which squares can finish) or a stretch without a clean
    point is longer than :data:`CUT_ROWS`. ``rows``: rows built at once
    (default: :data:`SOLVE_SLOTS` slots, so that a block's tables and
    factors stay in a core's cache).
    """
    rules.check_board(board)
    n = board.size
    paths = _TurnPaths(board, rules, system=True)

    def rows_of(lo: int, hi: int) -> sp.csr_matrix:
        blk = paths.rows(lo, min(hi, n))
        if not _rows_climb(blk, lo):
            raise _Climbs
        if hi <= n:
            return blk
        ptr = np.append(blk.indptr, blk.nnz + 1)  # the finish: a unit row
        out = sp.csr_matrix((np.append(blk.data, 1.0), np.append(blk.indices, n), ptr), shape=(hi - lo, n + 1))
        out.has_canonical_format = True
        return out

    b = np.ones(n + 1)
    b[n] = 0.0  # the finish: its unknown is 0
    try:
        x = solve_by_row_blocks(rows_of, n + 1, b, rows=max(64, SOLVE_SLOTS // paths.slots) if rows is None else rows)
    except _Climbs:
        return None
    return None if x is None else float(x[0])


def _first_columns(a: sp.csr_matrix, lo: int) -> np.ndarray:
    """The lowest column of each row ``lo + i`` of a sorted CSR row block, at most ``lo + i`` (as in :func:`block_bounds`)."""
    own = np.arange(lo, lo + a.shape[0], dtype=np.int64)
    if not a.nnz:
        return own
    counts = np.diff(a.indptr)
    first = a.indices[np.minimum(a.indptr[:-1], a.nnz - 1)]
    return np.minimum(np.where(counts > 0, first, own), own)


def solve_operator(
    a: sp.spmatrix | spla.LinearOperator,
    b: np.ndarray,
    *,
    preconditioner: spla.LinearOperator | None = None,
    rtol: float = 1e-13,
    maxiter: int = 1000,
) -> np.ndarray:
    """``x`` with ``a x = b`` for a sparse matrix or a :class:`scipy.sparse.linalg.LinearOperator`.

    A sparse matrix is solved directly (:func:`solve_blocks`). An operator
    is solved by restarted GMRES (:func:`scipy.sparse.linalg.gmres`) to a
    relative residual ``rtol``, with ``preconditioner`` (an operator that
    applies an approximate inverse, e.g. a :class:`BlockLU` of a nearby
    matrix wrapped by :func:`scipy.sparse.linalg.aslinearoperator`-style
    ``LinearOperator(shape, matvec=lu.solve)``). Cost: one product with
    ``a`` and one preconditioner application per iteration; when the
    preconditioner is exact but for a rank-``r`` part of ``a``, GMRES ends
    in at most ``r + 1`` iterations.

    Raises
    ------
    ModelError
        If GMRES has not reached ``rtol`` after ``maxiter`` restarts.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[1.0, -0.5, 0], [0, 1.0, -0.5], [-0.25, 0, 1.0]]))
    >>> op = spla.aslinearoperator(a)
    >>> bool(np.allclose(solve_operator(op, np.ones(3)), spla.spsolve(a.tocsc(), np.ones(3)), rtol=1e-12))
    True
    """
    if sp.issparse(a):
        return solve_blocks(a, b)
    op = spla.aslinearoperator(a)
    b = np.asarray(b, dtype=float)
    x, info = spla.gmres(op, b, rtol=rtol, atol=0.0, restart=50, maxiter=maxiter, M=preconditioner)
    if info != 0:
        raise ModelError(f"GMRES did not reach a relative residual of {rtol:g} within {maxiter} restarts")
    return x

"""Probability that a roll ever lands on each square (exact, roll level).

With ``G = (I - Q)^-1`` for the roll-level chain, the chance of ever landing
on ``t`` needs the start's row of ``G`` (one solve with the transpose, for
every target at once) and the entries ``G[y, s]`` between the states ``s``
a roll onto ``t`` leaves from and the states ``y`` it leads to: a few
entries near each target, found by local solves (see
:func:`hit_probabilities`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from ..board import Board
from ..chain.model import roll_transitions
from ..chain.solve import BlockLU, LongCut, block_bounds, factorize
from ..chain.threads import single_blas_thread
from ..rules import Rules

__all__ = ["hit_probabilities", "WINDOW_STATES", "CUT_WINDOWS", "WHOLE_STATES"]

#: Targets are handled in groups whose local systems have about this many states.
WINDOW_STATES = 128

#: When some stretch between clean points is longer than this many windows
#: (long snakes overlapping), the long backward transitions are cut out and
#: added back as a low-rank correction (:class:`~snlmarkov.chain.solve.LongCut`).
CUT_WINDOWS = 8

#: Most unit right-hand sides solved at once in one local system.
_MAX_RHS = 512

#: A chain of at most this many roll states is one local system: one factorisation
#: and one dense block of ``G`` serve every target (cheaper than many small windows).
WHOLE_STATES = 1024


@single_blas_thread
def hit_probabilities(board: Board, rules: Rules, *, window: int | None = None) -> np.ndarray:  # noqa: PLR0915
    """``P(a roll ever lands on t)`` for every square ``t``, starting from 0.

    "Lands" is as for landing counts: the square a roll reaches before a jump
    acts, bounce targets and mid-turn landings included, and on a chained
    board every square of the chain where a jump acts.

    Method. Let ``E_t`` be the roll transitions ``s -> y`` (probability
    ``p``) that land on ``t``. Avoiding ``t`` is the chain without them; by
    the Sherman-Morrison-Woodbury identity its absorption into "landed on
    t" from the start ``x0`` is

        ``h_t = l[x0] - u[x0] (I + U_t)^-1 l_Y``,

    where ``l = G l_t`` and ``u = G U_t`` for the column ``l_t`` and the
    matrix ``U_t`` of those transitions. Everything at ``x0`` is the
    start's row of ``G`` (the occupancy, one transposed solve shared by all
    targets); everything at the states ``Y`` the transitions lead to needs
    only ``G[y, s]`` for ``y`` in ``Y`` and ``s`` a source. The roll states
    are ordered by square, where ``I - Q`` is block upper triangular
    (:func:`~snlmarkov.chain.solve.block_bounds`); ``G[y, s]`` is zero
    unless ``y`` comes before the end of the block of ``s``, and is exact
    from the local system between the clean points around ``y`` and ``s``.
    Neighbouring targets share one local sparse solve.

    Cost: one sparse factorisation of the roll chain and one transposed
    solve; on a chain of at most :data:`WHOLE_STATES` states, one more solve
    with a unit right-hand side per source serves every target at once.
    Larger chains take about ``n / window`` local solves of ``window`` states,
    each with as many unit right-hand sides as the group has sources: near
    linear in the board size on boards whose snakes are short. A board
    whose snakes overlap end to end has no clean point for long stretches;
    then the long backward transitions (the squares they lead to, ``J``)
    are cut out: ``I - Q = S + E_J S_J^T`` with ``S`` block triangular in
    short blocks, and ``G[y, s] = G_S[y, s] - Z[y] (I + K)^-1 W[s]`` with
    ``Z = S^-1 E_J``, ``W = S^-T S_J`` and ``K = Z[J]`` (``2 |J|`` more
    solves with ``S``); the local systems are those of ``S``. Only if more
    than :data:`~snlmarkov.chain.solve.MAX_CUT_COLUMNS` columns would have
    to be cut are the local systems the whole chain, and the cost ``n^2``.

    ``window`` is the number of states of each local system: by default the
    whole chain when it has at most :data:`WHOLE_STATES` states, else
    :data:`WINDOW_STATES`.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> h = hit_probabilities(Board(3), Rules.preset("plain").replace(faces=2))
    >>> h.round(6).tolist()
    [0.0, 0.5, 0.75, 1.0]
    """
    tr = roll_transitions(board, rules)
    n_sq = board.size
    absorbing = n_sq
    m = sp.csr_matrix((tr.prob, (tr.src, tr.tgt)), shape=(tr.size, tr.size))
    reach = breadth_first_order(m, 0, directed=True, return_predecessors=False)
    states = np.setdiff1d(reach, [absorbing])  # reachable transient states (all can finish)
    # order the states by square, then sixes, then origin: I - Q is then banded on random boards
    squares, sixes, origin = tr.squares, tr.sixes, tr.origins
    states = states[np.lexsort((origin[states], sixes[states], squares[states]))]
    pos = np.full(tr.size, -1, dtype=np.int64)
    pos[states] = np.arange(states.size)
    k = states.size
    out = np.zeros(n_sq + 1)
    if k == 0:
        return out

    inner = (pos[tr.src] >= 0) & (pos[tr.tgt] >= 0)
    q = sp.csr_matrix((tr.prob[inner], (pos[tr.src[inner]], pos[tr.tgt[inner]])), shape=(k, k))
    a = (sp.identity(k, format="csr") - q).tocsr()
    a.sum_duplicates()
    a.sort_indices()
    x0 = int(pos[0])
    e0 = np.zeros(k)
    e0[x0] = 1.0
    occ = BlockLU(a).solve_transposed(e0)  # G[x0, :]

    # the landing transitions, grouped by target
    at, on = tr.landed_at, tr.landed_on  # every landing, chained jumps included
    keep = pos[tr.src[at]] >= 0
    at, on = at[keep], on[keep]
    src, tgt, prob, land = pos[tr.src[at]], pos[tr.tgt[at]], tr.prob[at], on
    order = np.argsort(land, kind="stable")
    src, tgt, prob, land = src[order], tgt[order], prob[order], land[order]
    bounds = np.searchsorted(land, np.arange(n_sq + 2))
    targets = np.flatnonzero(bounds[2:] > bounds[1:-1]) + 1  # squares 1..N that some roll lands on
    if targets.size == 0:
        return out

    # l[x0] for every target: the expected number of landings on it
    landed = np.bincount(land, weights=occ[src] * prob, minlength=n_sq + 1)

    if window is None and k <= WHOLE_STATES:  # small chain: every target from one system, the whole chain
        _solve_group(a, occ, landed, targets, bounds, src, tgt, prob, 0, k, out)
        return np.clip(out, 0.0, 1.0)

    window = WINDOW_STATES if window is None else max(1, int(window))
    # clean points of I - Q: G[y, s] = 0 when y is at or after the first clean point after s
    clean = block_bounds(a, rows=1)
    low_rank = None
    if int(np.diff(clean).max()) > CUT_WINDOWS * window:
        cut = LongCut.find(a, 1, CUT_WINDOWS * max(1, int(window)), start=k)
        if cut is not None:  # the local systems are those of S = a without the cut entries
            a, low_rank = _cut_correction(a, cut)
            clean = block_bounds(a, rows=1)
    lo_t = np.minimum.reduceat(src, bounds[targets])
    hi_t = np.maximum.reduceat(src, bounds[targets])
    end_t = clean[np.searchsorted(clean, hi_t, side="right")]  # first clean point after the last source
    near = (tgt >= 0) & (tgt < np.repeat(end_t, np.diff(bounds)[targets]))
    tmin = np.where(near, tgt, k)
    lo_t = np.minimum(lo_t, np.minimum.reduceat(tmin, bounds[targets]))
    start_t = clean[np.searchsorted(clean, lo_t, side="right") - 1]  # last clean point at or before

    first = 0
    window = max(1, int(window))
    while first < targets.size:
        # a group of consecutive targets whose union of windows stays near `window` states
        last = first + 1
        w_lo, w_hi = int(start_t[first]), int(end_t[first])
        while last < targets.size:
            lo2, hi2 = min(w_lo, int(start_t[last])), max(w_hi, int(end_t[last]))
            if hi2 - lo2 > window:
                break
            w_lo, w_hi = lo2, hi2
            last += 1
        group = targets[first:last]
        _solve_group(a, occ, landed, group, bounds, src, tgt, prob, w_lo, w_hi, out, low_rank)
        first = last
    return np.clip(out, 0.0, 1.0)


def _cut_correction(a: sp.csr_matrix, cut: LongCut) -> tuple[sp.csr_matrix, tuple[np.ndarray, np.ndarray]]:
    """``S`` (``a`` without the cut entries) and the factors ``(Z (I + K)^-1, W)`` of ``G - G_S``."""
    from scipy.linalg import lu_factor, lu_solve

    short = cut.short(a)
    lu = BlockLU(short)
    r = cut.columns.size
    z = lu.solve(cut.e_j.toarray())  # S^-1 E_J
    lifted = np.zeros((a.shape[0], r))
    lifted[cut.columns, np.arange(r)] = 1.0
    w = lu.solve_transposed(lifted)  # S^-T S_J: row s is G_S[J, s]
    k = z[cut.columns]
    zm = lu_solve(lu_factor(np.eye(r) + k), z.T, trans=1).T  # Z (I + K)^-1
    return short, (-zm, w)


def _solve_group(
    a: sp.csr_matrix,
    occ: np.ndarray,
    landed: np.ndarray,
    group: np.ndarray,
    bounds: np.ndarray,
    src: np.ndarray,
    tgt: np.ndarray,
    prob: np.ndarray,
    w_lo: int,
    w_hi: int,
    out: np.ndarray,
    low_rank: tuple[np.ndarray, np.ndarray] | None = None,
) -> None:
    """Hit probabilities of the targets in ``group``, from the local system on states ``w_lo:w_hi``.

    ``w_lo`` and ``w_hi`` are clean points: no state at or after ``w_lo``
    moves before it, and no state at or after ``w_hi`` can reach a state
    before it, so ``G[w_lo:w_hi, s] = (I - Q)[w_lo:w_hi, w_lo:w_hi]^-1 e_s``
    for every source ``s`` in the window. With ``low_rank = (U, W)`` (the
    long transitions cut out of ``a``), ``G[y, s]`` is that plus
    ``U[y] . W[s]`` for every ``y``.
    """
    sel = np.concatenate([np.arange(bounds[t], bounds[t + 1]) for t in group])
    sources = np.unique(src[sel])
    ptr = a.indptr[w_lo : w_hi + 1]
    block = sp.csr_matrix(
        (a.data[ptr[0] : ptr[-1]], a.indices[ptr[0] : ptr[-1]], ptr - ptr[0]), shape=(w_hi - w_lo, a.shape[1])
    )[:, w_lo:w_hi].tocsr()
    block.sort_indices()
    lu = factorize(block)
    g = np.empty((w_hi - w_lo, sources.size))
    for c0 in range(0, sources.size, _MAX_RHS):
        cols = sources[c0 : c0 + _MAX_RHS]
        rhs = np.zeros((w_hi - w_lo, cols.size))
        rhs[cols - w_lo, np.arange(cols.size)] = 1.0
        g[:, c0 : c0 + cols.size] = lu.solve(rhs, trans="T")  # factors of the transpose
    # every target of the group at once: edges i (sorted by target), the states Y_t they lead to
    counts = bounds[group + 1] - bounds[group]
    tid = np.repeat(np.arange(group.size), counts)
    s_i, y_i, p_i = src[sel], tgt[sel], prob[sel]
    c_i = np.searchsorted(sources, s_i)
    move = y_i >= 0  # transitions to a transient state (not the finish)
    kk = a.shape[0] + 1
    uk, inv = np.unique(tid[move] * kk + y_i[move], return_inverse=True)
    ys_t, ys_y = uk // kk, uk % kk  # (target, state) of every entry of every Y_t
    n_y = np.bincount(ys_t, minlength=group.size)
    off = np.zeros(group.size + 1, dtype=np.int64)
    np.cumsum(n_y, out=off[1:])
    width = int(n_y.max()) if n_y.size else 0
    out[group] = landed[group]
    if width == 0:
        return
    col_move = inv - off[tid[move]]  # column of each moving edge in its target's Y_t
    # pairs (y' in Y_t, edge i of t): G[y', s_i]
    rep = n_y[tid]
    pe = np.repeat(np.arange(tid.size), rep)
    starts = np.repeat(np.cumsum(rep) - rep, rep)
    pj = np.repeat(off[tid], rep) + (np.arange(pe.size) - starts)
    yy = ys_y[pj]
    inside = yy < w_hi
    gv = np.zeros(pe.size)
    gv[inside] = g[yy[inside] - w_lo, c_i[pe[inside]]]
    if low_rank is not None:
        u, w = low_rank
        gv += np.einsum("ij,ij->i", u[yy], w[s_i[pe]])
    gp = gv * p_i[pe]
    t_of = ys_t[pj]
    row = pj - off[t_of]
    lhs = np.zeros((group.size, width, width))
    rhs = np.zeros((group.size, width))
    np.add.at(rhs, (t_of, row), gp)  # l[Y_t] = G[Y_t, :] l_t
    col_i = np.full(tid.size, -1, dtype=np.int64)
    col_i[move] = col_move
    mp = col_i[pe] >= 0
    np.add.at(lhs, (t_of[mp], row[mp], col_i[pe[mp]]), gp[mp])  # u[Y_t] = G[Y_t, :] U_t
    lhs += np.eye(width)
    u0 = np.zeros((group.size, width))
    np.add.at(u0, (tid[move], col_move), occ[s_i[move]] * p_i[move])  # u[x0] = G[x0, :] U_t
    corr = np.linalg.solve(lhs, rhs[..., None])[..., 0]  # padded rows and columns: identity, 0
    out[group] -= np.einsum("ij,ij->i", u0, corr)

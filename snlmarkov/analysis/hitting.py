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
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import breadth_first_order

from ..board import Board
from ..chain.model import RollChain, roll_chain, roll_transitions
from ..chain.solve import BlockLU, LongCut, block_bounds, factorize
from ..chain.threads import single_blas_thread
from ..rules import Rules

__all__ = ["hit_probabilities"]

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
def hit_probabilities(board: Board, rules: Rules, *, window: int | None = None) -> np.ndarray:
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
    are ordered by square (:func:`~snlmarkov.chain.model.roll_chain`), where
    ``I - Q`` is block upper triangular
    (:func:`~snlmarkov.chain.solve.block_bounds`); ``G[y, s]`` is zero
    unless ``y`` comes before the end of the block of ``s``, and is exact
    from the local system between the clean points around ``y`` and ``s``.
    A target none of whose ``y`` comes before the end of the last source's
    block (most targets on a board whose snakes are short) has ``h_t = l[x0]``,
    the expected number of landings on it.

    Cost: one sparse factorisation of the roll chain and one transposed
    solve; on a chain of at most :data:`WHOLE_STATES` states, one more solve
    with a unit right-hand side per source serves every target at once.
    On larger chains the other targets are taken in groups whose local
    systems have about ``window`` states; the local systems of many groups
    are stacked into block diagonal matrices, each factorised once and
    solved with one unit right-hand side per state ``y`` of a group (the
    rows ``G[y, :]``), the groups of one stack binned by how many such
    states they have (a stack's every column is solved over all its rows);
    then every target's small Woodbury system is solved in one batched
    call. Near linear in the board size on boards whose snakes are
    short, with memory bounded by the stacks. A board whose snakes overlap
    end to end has no clean point for long stretches; then the long
    backward transitions (the squares they lead to, ``J``) are cut out:
    ``I - Q = S + E_J S_J^T`` with ``S`` block triangular in short blocks,
    and ``G[y, s] = G_S[y, s] - Z[y] (I + K)^-1 W[s]`` with ``Z = S^-1
    E_J``, ``W = S^-T S_J`` and ``K = Z[J]`` (``2 |J|`` more solves with
    ``S``); the local systems are those of ``S``, and every target needs
    its Woodbury system. Only if more than
    :data:`~snlmarkov.chain.solve.MAX_CUT_COLUMNS` columns would have to be
    cut are the local systems the whole chain, and the cost ``n^2``.

    ``window`` is the number of states of each local system: by default the
    whole chain when it has at most :data:`WHOLE_STATES` states, else
    :data:`WINDOW_STATES`.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> h = hit_probabilities(Board(3), Rules.preset("plain").replace(faces=2))
    >>> h.round(6).tolist()
    [0.0, 0.5, 0.75, 1.0]
    >>> bool(np.allclose(hit_probabilities(Board(3), Rules.preset("plain").replace(faces=2), window=1), h, atol=1e-15))
    True
    """
    if window is None and board.size * (1 + (rules.max_sixes or 1)) <= WHOLE_STATES:
        return _whole_chain(board, rules)
    return _windowed(board, rules, WINDOW_STATES if window is None else max(1, int(window)))


def _whole_chain(board: Board, rules: Rules) -> np.ndarray:
    """Every target from one local system, the whole chain (small chains)."""
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
    lu = factorize(a)  # factors of the transpose, shared with the solves for G[:, s]
    occ = lu.solve(e0)  # G[x0, :]

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
    _solve_group(lu, occ, landed, targets, bounds, src, tgt, prob, out)
    return np.clip(out, 0.0, 1.0)


#: Most entries (rows x right-hand sides) of one stack of local systems, and most rows.
_STACK_ENTRIES = 1 << 22
_STACK_ROWS = 1 << 16


def _windowed(board: Board, rules: Rules, window: int) -> np.ndarray:  # noqa: PLR0915
    """The targets whose local systems matter, in groups of about ``window`` states, stacked."""
    ch = roll_chain(board, rules)
    a = ch.system
    k, f = ch.prob.shape
    n_sq = board.size
    out = np.zeros(n_sq + 1)
    e0 = np.zeros(k)
    e0[ch.start] = 1.0
    occ = BlockLU(a).solve_transposed(e0)  # G[x0, :]

    # l[x0] for every target: the expected number of landings on it
    lands = ch.landing >= 0
    land_p = ch.landing[lands]
    weight = occ[:, None] * ch.prob
    landed = np.bincount(land_p, weights=weight[lands], minlength=n_sq + 1)
    ex_slot, ex_sq = ch.extra
    if ex_slot.size:
        landed += np.bincount(ex_sq, weights=weight.ravel()[ex_slot], minlength=n_sq + 1)
    del weight
    out[1:] = landed[1:]

    # clean points; G[y, s] = 0 when y is at or after the first clean point after s
    clean = block_bounds(a, rows=1)
    low_rank = None
    if int(np.diff(clean).max()) > CUT_WINDOWS * window:
        cut = LongCut.find(a, 1, CUT_WINDOWS * window, start=k)
        if cut is not None:  # the local systems are those of S = a without the cut entries
            a, low_rank = _cut_correction(a, cut)
            clean = block_bounds(a, rows=1)
    block_end = np.repeat(clean[1:], np.diff(clean))  # the first clean point after each state

    active, end = _active_targets(ch, n_sq, lands, land_p, block_end, low_rank is not None)
    del land_p
    if not active.any():
        return np.clip(out, 0.0, 1.0)

    # the landings of the active targets as (slot, square), sorted by square (one sorted run per value)
    slot_l, sq_l = [], []
    for j in range(f):
        rows_j = np.flatnonzero(lands[:, j] & active[np.maximum(ch.landing[:, j], 0)])
        slot_l.append(rows_j * f + j)
        sq_l.append(ch.landing[rows_j, j])
    if ex_slot.size:
        pick = active[ex_sq]
        slot_l.append(ex_slot[pick])
        sq_l.append(ex_sq[pick])
    del lands
    slot, land = np.concatenate(slot_l), np.concatenate(sq_l)
    del slot_l, sq_l
    order = np.argsort(land, kind="stable")
    slot, land = slot[order], land[order]
    del order
    src = slot // f
    tgt = ch.target.ravel()[slot].astype(np.int64)
    prob = ch.prob.ravel()[slot]
    del slot
    targets = np.flatnonzero(active)
    first = np.searchsorted(land, targets)
    counts = np.diff(np.append(first, land.size))
    end_t = end[targets]
    near_e = (tgt >= 0) & (tgt < np.repeat(end_t, counts))
    lo_t = np.minimum(np.minimum.reduceat(src, first), np.minimum.reduceat(np.where(near_e, tgt, k), first))
    start_t = clean[np.searchsorted(clean, lo_t, side="right") - 1]  # the last clean point at or before

    # groups of consecutive targets whose union of windows stays near `window` states
    gid = _groups(start_t, end_t, window)
    g_first = np.flatnonzero(np.diff(gid, prepend=-1))
    g_lo = np.minimum.reduceat(start_t, g_first)
    g_hi = np.maximum.reduceat(end_t, g_first)
    ys_e = (tgt >= 0) if low_rank is not None else near_e  # the states Y_t of every target's system

    # stacks of consecutive groups: rows x (most near states of a group) bounded
    n_near = np.bincount(np.repeat(gid, counts)[near_e], minlength=g_first.size)  # an upper bound per group
    width = g_hi - g_lo
    t_end = np.append(g_first[1:], targets.size)
    e_first = np.append(first, land.size)
    g0 = 0
    while g0 < g_first.size:
        g1, rows, cols = g0, 0, 1
        while g1 < g_first.size:
            r2, c2 = rows + int(width[g1]), max(cols, int(n_near[g1]))
            if g1 > g0 and (r2 > _STACK_ROWS or r2 * c2 > _STACK_ENTRIES):
                break
            rows, cols = r2, c2
            g1 += 1
        t0, t1 = int(g_first[g0]), int(t_end[g1 - 1])
        e0_, e1_ = int(e_first[t0]), int(e_first[t1])
        _solve_stack(
            a,
            occ,
            landed,
            out,
            targets[t0:t1],
            counts[t0:t1],
            gid[t0:t1] - g0,
            g_lo[g0:g1],
            g_hi[g0:g1],
            end_t[t0:t1],
            src[e0_:e1_],
            tgt[e0_:e1_],
            prob[e0_:e1_],
            near_e[e0_:e1_],
            ys_e[e0_:e1_],
            low_rank,
        )
        g0 = g1
    return np.clip(out, 0.0, 1.0)


def _active_targets(
    ch: RollChain, n_sq: int, lands: np.ndarray, land_p: np.ndarray, block_end: np.ndarray, every: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The squares that need a Woodbury system, and ``end[t]``: the first clean point after every source of ``t``.

    A landing is *near* when it leads before ``end`` of its square: only
    then can ``G[y, s]`` be nonzero. Without a low-rank part (``every``
    False) only the squares with a near landing are active; with one, every
    square landed on.
    """
    end = np.zeros(n_sq + 1, dtype=np.int64)
    np.maximum.at(end, land_p, np.broadcast_to(block_end[:, None], lands.shape)[lands])
    ex_slot, ex_sq = ch.extra
    f = ch.prob.shape[1]
    if ex_slot.size:
        np.maximum.at(end, ex_sq, block_end[ex_slot // f])
    active = np.zeros(n_sq + 1, dtype=bool)
    if every:
        active[land_p] = True
        active[ex_sq] = True
    else:
        tgt_p = ch.target[lands]
        active[land_p[(tgt_p >= 0) & (tgt_p < end[land_p])]] = True
        if ex_slot.size:
            tgt_x = ch.target.ravel()[ex_slot]
            active[ex_sq[(tgt_x >= 0) & (tgt_x < end[ex_sq])]] = True
    active[0] = False
    return active, end


def _groups(start: np.ndarray, end: np.ndarray, window: int) -> np.ndarray:
    """Group number of each target: consecutive targets while the union of their windows stays within ``window``.

    A target whose window lies inside the group's (wider than ``window``
    when one target's window is) joins it too: it shares its system.
    """
    gid = np.empty(start.size, dtype=np.int64)
    g, lo, hi = -1, 0, 0
    for i, (s, e) in enumerate(zip(start.tolist(), end.tolist())):
        lo2, hi2 = min(lo, s), max(hi, e)
        if g < 0 or hi2 - lo2 > max(window, hi - lo):
            g, lo, hi = g + 1, s, e
        else:
            lo, hi = lo2, hi2
        gid[i] = g
    return gid


def _stacked(a: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray) -> sp.csr_matrix:
    """The diagonal blocks ``a[lo_g:hi_g, lo_g:hi_g]`` of every group as one block diagonal CSR, in order."""
    width = hi - lo
    off = np.zeros(width.size + 1, dtype=np.int64)
    np.cumsum(width, out=off[1:])
    n_rows = int(off[-1])
    grp = np.repeat(np.arange(width.size), width)
    state = np.arange(n_rows, dtype=np.int64) + np.repeat(lo - off[:-1], width)  # the state of each row
    first_e = a.indptr[state].astype(np.int64)  # the rows' entries in ``a``, not a copy of all its pointers
    per_row = a.indptr[state + 1] - first_e
    row_first = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(per_row, out=row_first[1:])
    entry = np.arange(int(row_first[-1]), dtype=np.int64) + np.repeat(first_e - row_first[:-1], per_row)
    col = a.indices[entry].astype(np.int64)
    g_e = np.repeat(grp, per_row)
    keep = (col >= lo[g_e]) & (col < hi[g_e])
    kept = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(np.repeat(np.arange(n_rows), per_row)[keep], minlength=n_rows), out=kept[1:])
    idx = (col[keep] - lo[g_e[keep]] + off[:-1][g_e[keep]]).astype(np.int32)
    m = sp.csr_matrix((a.data[entry[keep]], idx, kept.astype(np.int32)), shape=(n_rows, n_rows))
    m.has_sorted_indices = True
    return m


#: A bin of groups (see :func:`_bins`) ends before a group with fewer columns than this share of its first
#: group's, once it has at least :data:`_BIN_ROWS` rows.
_BIN_RATIO = 0.85
_BIN_ROWS = 512


def _bins(width: np.ndarray, cols: np.ndarray) -> list[np.ndarray]:
    """The groups with columns, most columns first, cut into bins of similar column counts.

    Every column of a stacked system is solved over all its rows, so a
    group stacked with groups of more columns pays for theirs: binned, the
    work is within about ``1 / _BIN_RATIO`` of the groups' own.

    Examples
    --------
    >>> [b.tolist() for b in _bins(np.array([600, 600, 600, 10]), np.array([10, 0, 3, 9]))]
    [[0, 3], [2]]
    """
    order = np.argsort(-cols, kind="stable")
    order = order[cols[order] > 0]
    out, start, rows = [], 0, 0
    for i, g in enumerate(order.tolist()):
        if rows >= _BIN_ROWS and cols[g] < _BIN_RATIO * cols[order[start]]:
            out.append(order[start:i])
            start, rows = i, 0
        rows += int(width[g])
    if start < order.size:
        out.append(order[start:])
    return out


def _split(labels: np.ndarray, count: int) -> list[np.ndarray]:
    """The positions of each label ``0 .. count - 1`` in ``labels``, in order.

    Examples
    --------
    >>> [p.tolist() for p in _split(np.array([1, 0, 1, 2]), 3)]
    [[1], [0, 2], [3]]
    """
    order = np.argsort(labels, kind="stable")
    cuts = np.searchsorted(labels[order], np.arange(count + 1))
    return [order[cuts[i] : cuts[i + 1]] for i in range(count)]


def _solve_stack(  # noqa: PLR0913, PLR0915
    a: sp.csr_matrix,
    occ: np.ndarray,
    landed: np.ndarray,
    out: np.ndarray,
    targets: np.ndarray,
    counts: np.ndarray,
    gid: np.ndarray,
    g_lo: np.ndarray,
    g_hi: np.ndarray,
    end_t: np.ndarray,
    src: np.ndarray,
    tgt: np.ndarray,
    prob: np.ndarray,
    near: np.ndarray,
    ys: np.ndarray,
    low_rank: tuple[np.ndarray, np.ndarray] | None,
) -> None:
    """Hit probabilities of ``targets`` (the landings ``src -> tgt`` of each, in order), from their groups' systems.

    Group ``g`` has the local system on states ``g_lo[g]:g_hi[g]`` (clean
    points: no state at or after ``g_lo`` moves before it, none at or after
    ``g_hi`` reaches a state before it), so ``G[y, s]`` for ``y, s`` in it
    is the local system's. The groups' systems are stacked block
    diagonally, in bins of groups with about as many near states
    (:func:`_bins`), and each bin is solved transposed once, one column per
    near state ``y`` of a group (its row ``G[y, :]``). ``near`` marks the
    landings that lead before ``end_t`` of their target, where ``G[y, s]``
    can be nonzero; ``ys`` those whose states enter the target's Woodbury
    system. With ``low_rank = (U, W)`` (the long transitions cut out of
    ``a``), ``G[y, s]`` is the local value plus ``U[y] . W[s]`` for every
    ``y``.
    """
    kk = a.shape[0] + 1
    n_t = targets.size
    tid = np.repeat(np.arange(n_t), counts)
    # the states Y_t of every target: (target, state) pairs, each once
    uk, inv = np.unique(tid[ys] * kk + tgt[ys], return_inverse=True)
    ys_t, ys_y = uk // kk, uk % kk
    n_y = np.bincount(ys_t, minlength=n_t)
    width = int(n_y.max()) if n_y.size else 0
    if width == 0:
        return
    off = np.zeros(n_t + 1, dtype=np.int64)
    np.cumsum(n_y, out=off[1:])
    col_move = inv - off[tid[ys]]  # column of each Y edge in its target's Y_t
    # the near states of every group: one right-hand side each
    y_near = ys_y < end_t[ys_t]
    g_of = gid[ys_t]
    gk, g_inv = np.unique(g_of[y_near] * kk + ys_y[y_near], return_inverse=True)
    gk_g, gk_y = gk // kk, gk % kk
    g_cols = np.bincount(gk_g, minlength=g_lo.size)
    g_off = np.zeros(g_lo.size + 1, dtype=np.int64)
    np.cumsum(g_cols, out=g_off[1:])
    column = np.full(uk.size, -1, dtype=np.int64)  # the right-hand side of every (target, y), -1: G_S[y, .] = 0 here
    column[np.flatnonzero(y_near)] = g_inv - g_off[gk_g[g_inv]]
    # pairs (y' in Y_t, landing i of t): G[y', s_i]
    rep = n_y[tid]
    pe = np.repeat(np.arange(tid.size), rep)
    starts = np.repeat(np.cumsum(rep) - rep, rep)
    pj = np.repeat(off[tid], rep) + (np.arange(pe.size) - starts)
    yy = ys_y[pj]
    s_i = src[pe]
    gv = np.zeros(pe.size)
    c = column[pj]
    local = np.flatnonzero(c >= 0)
    if local.size:
        # the groups in bins of similar column counts: every column of a stack is solved over all its rows
        bins = _bins(g_hi - g_lo, g_cols)
        bin_of = np.full(g_lo.size, -1, dtype=np.int64)
        row0 = np.zeros(g_lo.size, dtype=np.int64)  # the first row of each group in its bin's stack
        for b, part in enumerate(bins):
            bin_of[part] = b
            widths = g_hi[part] - g_lo[part]
            row0[part] = np.cumsum(widths) - widths
        g_p = gid[tid[pe[local]]]
        at_row = row0[g_p] + s_i[local] - g_lo[g_p]  # where G[y, s_i] is in the solution of y's column
        at_col, y_col = c[local], np.arange(gk.size) - g_off[gk_g]
        y_row = row0[gk_g] + gk_y - g_lo[gk_g]
        for part, ll, ly in zip(bins, _split(bin_of[g_p], len(bins)), _split(bin_of[gk_g], len(bins))):
            stack = _stacked(a, g_lo[part], g_hi[part])
            lu = factorize(stack)  # factors of the transpose: solves give rows G[y, :] on the stack
            n_cols = int(g_cols[part].max())
            step = max(1, _STACK_ENTRIES // stack.shape[0])  # columns per solve
            for c0 in range(0, n_cols, step):
                pick = ly[(y_col[ly] >= c0) & (y_col[ly] < c0 + step)]
                rhs = np.zeros((stack.shape[0], min(step, n_cols - c0)))
                rhs[y_row[pick], y_col[pick] - c0] = 1.0
                z = lu.solve(rhs)
                use = ll[(at_col[ll] >= c0) & (at_col[ll] < c0 + step)]
                gv[local[use]] = z[at_row[use], at_col[use] - c0]
            del stack, lu
    if low_rank is not None:
        u, w = low_rank
        gv += np.einsum("ij,ij->i", u[yy], w[s_i])
    gp = gv * prob[pe]
    t_of = ys_t[pj]
    row = pj - off[t_of]
    rhs_t = np.bincount(t_of * width + row, weights=gp, minlength=n_t * width).reshape(n_t, width)
    col_i = np.full(tid.size, -1, dtype=np.int64)
    col_i[ys] = col_move
    mp = col_i[pe] >= 0
    lhs: np.ndarray = np.bincount(
        (t_of[mp] * width + row[mp]) * width + col_i[pe[mp]], weights=gp[mp], minlength=n_t * width * width
    ).reshape(n_t, width, width)
    lhs += np.eye(width)
    u0 = np.bincount(tid[ys] * width + col_move, weights=occ[src[ys]] * prob[ys], minlength=n_t * width)
    corr = np.linalg.solve(lhs, rhs_t[..., None])[..., 0]  # padded rows and columns: identity, 0
    out[targets] = landed[targets] - np.einsum("ij,ij->i", u0.reshape(n_t, width), corr)


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
    lu: spla.SuperLU,
    occ: np.ndarray,
    landed: np.ndarray,
    group: np.ndarray,
    bounds: np.ndarray,
    src: np.ndarray,
    tgt: np.ndarray,
    prob: np.ndarray,
    out: np.ndarray,
) -> None:
    """Hit probabilities of the targets in ``group`` from the whole chain's system (``G[:, s]`` for every source).

    ``lu`` factorises the transpose of the chain's ``I - Q``.
    """
    k = lu.shape[0]
    sel = np.concatenate([np.arange(bounds[t], bounds[t + 1]) for t in group])
    sources = np.unique(src[sel])
    g = np.empty((k, sources.size))
    for c0 in range(0, sources.size, _MAX_RHS):
        cols = sources[c0 : c0 + _MAX_RHS]
        rhs = np.zeros((k, cols.size))
        rhs[cols, np.arange(cols.size)] = 1.0
        g[:, c0 : c0 + cols.size] = lu.solve(rhs, trans="T")  # factors of the transpose
    # every target of the group at once: edges i (sorted by target), the states Y_t they lead to
    counts = bounds[group + 1] - bounds[group]
    tid = np.repeat(np.arange(group.size), counts)
    s_i, y_i, p_i = src[sel], tgt[sel], prob[sel]
    c_i = np.searchsorted(sources, s_i)
    move = y_i >= 0  # transitions to a transient state (not the finish)
    kk = k + 1
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
    gv = g[yy, c_i[pe]]
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

"""Probability that a roll ever lands on each square (exact, roll level)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import breadth_first_order

from ..board import Board
from ..chain.model import roll_transitions
from ..rules import Rules

__all__ = ["hit_probabilities"]


def hit_probabilities(board: Board, rules: Rules, *, block: int = 256) -> np.ndarray:
    """``P(a roll ever lands on t)`` for every square ``t``, starting from 0.

    "Lands" is as for landing counts: the square a roll reaches before a jump
    acts, bounce targets and mid-turn landings included, and on a chained
    board every square of the chain where a jump acts.

    For each target ``t`` the chain that avoids landing on ``t`` differs from
    the full chain by the few transitions that land on ``t``; the
    Sherman-Morrison-Woodbury identity turns every target into a small
    correction of one sparse LU factorisation of the full roll-level chain.

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
    pos = np.full(tr.size, -1, dtype=np.int64)
    pos[states] = np.arange(states.size)
    k = states.size
    at, on = tr.landed_at, tr.landed_on  # every landing, chained jumps included
    keep = pos[tr.src[at]] >= 0
    at, on = at[keep], on[keep]
    src, tgt, prob, land = pos[tr.src[at]], tr.tgt[at], tr.prob[at], on
    inner = (pos[tr.src] >= 0) & (pos[tr.tgt] >= 0)
    q = sp.csr_matrix((tr.prob[inner], (pos[tr.src[inner]], pos[tr.tgt[inner]])), shape=(k, k))
    lu = spla.splu((sp.identity(k, format="csc") - q).tocsc())
    x0 = pos[0]

    to_transient = pos[tgt] >= 0
    order = np.argsort(land, kind="stable")
    src, tgt, prob, land, to_transient = src[order], tgt[order], prob[order], land[order], to_transient[order]
    bounds = np.searchsorted(land, np.arange(n_sq + 2))
    out = np.zeros(n_sq + 1)
    targets = [t for t in range(1, n_sq + 1) if bounds[t + 1] > bounds[t]]
    for first in range(0, len(targets), block):
        chunk = targets[first : first + block]
        cols, specs, width = [], [], 0
        for t in chunk:
            lo, hi = bounds[t], bounds[t + 1]
            l_col = np.zeros(k)
            np.add.at(l_col, src[lo:hi], prob[lo:hi])
            ys = np.unique(pos[tgt[lo:hi][to_transient[lo:hi]]])
            u = np.zeros((k, ys.size))
            sel = to_transient[lo:hi]
            np.add.at(u, (src[lo:hi][sel], np.searchsorted(ys, pos[tgt[lo:hi][sel]])), prob[lo:hi][sel])
            specs.append((t, width, ys))
            cols += [l_col[:, None], u]
            width += 1 + ys.size
        z = lu.solve(np.hstack(cols))
        for t, c, ys in specs:
            z_l = z[:, c]
            z_u = z[:, c + 1 : c + 1 + ys.size]
            if ys.size:
                corr = np.linalg.solve(np.eye(ys.size) + z_u[ys], z_l[ys])
                out[t] = z_l[x0] - z_u[x0] @ corr
            else:
                out[t] = z_l[x0]
    return np.clip(out, 0.0, 1.0)

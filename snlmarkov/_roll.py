"""One die roll, vectorised: the rule mechanics shared by the exact models.

This module is private to the matrix code (``model``, ``analysis``). The
playable engine and the simulator apply the rules with code of their own, so
that cross-checking the two paths compares independent implementations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .board import Board
from .rules import Rules

__all__ = ["RollOutcomes", "one_roll"]


@dataclass(frozen=True)
class RollOutcomes:
    """Every outcome of one roll from a batch of in-turn states.

    All arrays have one entry per (state, outcome) pair.

    Attributes
    ----------
    index : ndarray of int
        Which state of the batch the outcome belongs to.
    prob : ndarray of float
        Its probability given that state (they sum to 1 per state).
    landing : ndarray of int
        The square the roll lands on before a jump acts, or -1 when the
        roll lands nowhere (failed or successful entry, overshoot under
        ``stay``, a six voided by ``forfeit``).
    square : ndarray of int
        Where the token is after the roll (jump applied).
    cont : ndarray of bool
        True when the turn goes on (a six earned another roll, or the
        entering six); the next roll is then made with one more six.
    face : ndarray of int
        The value the die shows for this outcome.
    """

    index: np.ndarray
    prob: np.ndarray
    landing: np.ndarray
    square: np.ndarray
    cont: np.ndarray
    face: np.ndarray


def one_roll(board: Board, rules: Rules, cur: np.ndarray, sixes: np.ndarray, origin: np.ndarray) -> RollOutcomes:
    """All outcomes of the next roll from the states ``(cur, sixes, origin)``.

    ``cur`` is the token's square, ``sixes`` how many sixes the turn holds so
    far (0 at the start of a turn) and ``origin`` where the turn began (used
    by ``forfeit``). Squares are ``0..N-1``; the finish is absorbing and never
    rolled from.
    """
    n_sq = board.size
    f = rules.faces
    dest = board.destination()
    itype = np.int32 if n_sq < 2**30 and cur.size < 2**31 else np.int64
    dest = dest.astype(itype)
    cur = np.asarray(cur, dtype=itype)
    sixes = np.asarray(sixes, dtype=itype)
    origin = np.asarray(origin, dtype=itype)
    idx_all = np.arange(cur.size, dtype=itype)
    parts: list[tuple[np.ndarray, ...]] = []

    moving = np.ones(cur.size, dtype=bool)
    if rules.start_on_six:
        entering = (cur == 0) & (sixes == 0)
        moving &= ~entering
        e = idx_all[entering]
        if e.size:
            none = np.full(e.size, -1, dtype=itype)
            zero = np.zeros(e.size, dtype=itype)
            # a six enters (the token stays on 0 and rolls again); anything else ends the turn
            for k in range(1, f + 1):
                enters = np.full(e.size, k == f)
                parts.append((e, np.full(e.size, 1.0 / f), none, zero, enters, np.full(e.size, k, dtype=itype)))

    capped = np.zeros(cur.size, dtype=bool)
    if rules.max_sixes is not None:
        capped = sixes >= rules.max_sixes
    for k in range(1, f + 1):
        if k < f:
            sel = idx_all[moving]
            p = np.where(capped[sel] & (rules.on_cap == "redeal"), 1.0 / (f - 1), 1.0 / f)
        else:
            sel = idx_all[moving & ~(capped & (rules.on_cap == "redeal"))]
            p = np.full(sel.size, 1.0 / f)
            if rules.on_cap == "forfeit":
                void = capped[sel]
                v = sel[void]
                if v.size:
                    parts.append(
                        (v, p[void], np.full(v.size, -1, dtype=itype), origin[v], np.zeros(v.size, dtype=bool),
                         np.full(v.size, f, dtype=itype))
                    )
                sel, p = sel[~void], p[~void]
        if not sel.size:
            continue
        c = cur[sel]
        t = c + k
        over = t > n_sq
        if rules.finish == "bounce":
            t = np.where(over, 2 * n_sq - t, t)
        elif rules.finish == "none":
            t = np.minimum(t, n_sq)
        stay = over if rules.finish == "stay" else np.zeros(sel.size, dtype=bool)
        landing = np.where(stay, -1, t)
        square = np.where(stay, c, dest[np.where(stay, 0, t)])
        cont = np.zeros(sel.size, dtype=bool)
        if k == f and rules.bonus_on_six:
            cont = ~stay & (square != n_sq) & ~capped[sel]
        parts.append((sel, p, landing, square, cont, np.full(sel.size, k, dtype=itype)))

    if not parts:
        empty = np.zeros(0, dtype=itype)
        return RollOutcomes(empty, np.zeros(0), empty, empty, np.zeros(0, dtype=bool), empty)
    cols = [np.concatenate(col) for col in zip(*parts)]
    return RollOutcomes(cols[0], cols[1].astype(float), cols[2], cols[3], cols[4], cols[5])

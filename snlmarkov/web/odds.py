"""Live odds for the web game: each seat's chance of winning from the state of a game.

The one function the rooms call is :func:`win_odds`. It answers from the
state between two turns (every seat's square, who has finished, who moves
next) and says how it got its numbers: ``"exact"`` or ``"none"`` (no figure
for these rules; the page then hides the bars).

Without the bump rule tokens do not interact, so each seat's number of turns
still needed, ``K_i``, is an independent copy of the single-token length from
its own square. With ``S_s(r) = P(K > r | start s)`` from the turn matrix
(one matrix-vector product per round, for every start square at once, cached
per board and rules), seat ``i`` (``o_i``-th to move from now) wins in round
``r`` with probability ``f_i(r) * prod_{o_j < o_i} S_j(r) * prod_{o_j > o_i} S_j(r-1)``.
A seat that has already finished first has won (probability 1).

Examples
--------
>>> from snlmarkov import Board, Rules
>>> o = win_odds(Board(4), Rules.preset("plain"), "classic", positions=(0, 0), finished=(), current=0)
>>> o.method, [round(p, 6) for p in o.win_probability]
('exact', [0.6, 0.4])
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..board import Board
from ..rules import Rules

__all__ = ["LiveOdds", "win_odds"]

#: survival mass below which the tail is dropped
_TAIL = 1e-13
#: rounds computed at most (a board that takes longer reports method "none")
_MAX_ROUNDS = 20_000


@dataclass(frozen=True)
class LiveOdds:
    """Each seat's chance of winning, and how it was computed.

    Attributes
    ----------
    win_probability : tuple of float
        One per seat (0 for a seat that cannot win any more); empty when
        ``method == "none"``.
    method : {"exact", "none"}
        ``"none"`` when no figure is available for these rules.
    """

    win_probability: tuple[float, ...]
    method: str

    def to_dict(self) -> dict:
        """The odds as plain JSON-ready data."""
        return {"win": list(self.win_probability), "method": self.method}


@functools.lru_cache(maxsize=64)
def _survival_table(board: Board, rules: Rules) -> np.ndarray | None:
    """``S[s, r] = P(a token on square s needs more than r more turns)``, ``r = 0..R``."""
    from ..chain.model import turn_model

    m = turn_model(board, rules).matrix.tocsr()
    n = board.size
    u = np.ones(n + 1)
    u[n] = 0.0
    cols = [u]
    for _ in range(_MAX_ROUNDS):
        u = m @ u
        u[n] = 0.0
        cols.append(u)
        if u.max() < _TAIL:
            return np.stack(cols, axis=1)
    return None


def win_odds(
    board: Board,
    rules: Rules,
    mode: str,
    *,
    positions: tuple[int, ...],
    finished: tuple[int, ...],
    current: int,
) -> LiveOdds:
    """Each seat's chance of winning (finishing first) from a state between turns.

    Parameters
    ----------
    board, rules : Board, Rules
    mode : {"classic", "last_one_standing"}
        Either way the winner is the first seat to finish.
    positions : tuple of int
        Every seat's square.
    finished : tuple of int
        Seats already on the finish, in order.
    current : int
        The seat to move next.

    Returns
    -------
    LiveOdds

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> win_odds(Board(4), Rules.preset("plain"), "classic", positions=(4, 2), finished=(0,), current=1).win_probability
    (1.0, 0.0)
    >>> win_odds(Board(10), Rules.preset("family"), "classic", positions=(0, 0), finished=(), current=0).method
    'none'
    """
    k = len(positions)
    if finished:
        return LiveOdds(tuple(1.0 if i == finished[0] else 0.0 for i in range(k)), "exact")
    if rules.bump:
        return LiveOdds((), "none")
    table = _survival_table(board, rules)
    if table is None:
        return LiveOdds((), "none")
    order = [(current + j) % k for j in range(k)]
    surv = table[list(positions)]  # (k, R+1): S_i(r)
    prev = np.concatenate([np.ones((k, 1)), surv[:, :-1]], axis=1)  # S_i(r-1)
    pmf = prev - surv  # P(K_i = r), r >= 1 (column 0 is 0)
    win = np.zeros(k)
    for rank, i in enumerate(order):
        term = pmf[i].copy()
        for j in order[:rank]:
            term *= surv[j]
        for j in order[rank + 1 :]:
            term *= prev[j]
        win[i] = term.sum()
    total = win.sum()
    if total > 0:
        win /= total  # the dropped tail (< 1e-13) shared out
    return LiveOdds(tuple(float(p) for p in win), "exact")

"""Live odds for the web game: each seat's chance of winning from the state of a game.

The rooms call two functions. :func:`prepare` solves what a table needs
(board, rules, seats, mode) once; it can take seconds (the bump rule's joint
chain), so the rooms run it in a worker thread. :func:`win_odds` then answers
from any state between two turns in well under a millisecond, and says how it
got its numbers: ``"exact"``, ``"pending"`` (not prepared yet) or ``"none"``
(no figure for these rules; the page hides the bars).

The figures come from the project's :class:`snlmarkov.Odds` (exact, the bump
rule included for up to 3 players). Where that class is not available, the
tokens are taken as independent (exact without the bump rule): each seat's
number of turns still needed, ``K_i``, has the single-token distribution from
its own square; with ``S_s(r) = P(K > r | start s)`` from the turn matrix,
seat ``i`` (``o_i``-th to move from now) wins in round ``r`` with probability
``f_i(r) * prod_{o_j < o_i} S_j(r) * prod_{o_j > o_i} S_j(r-1)``.

Examples
--------
>>> from snlmarkov import Board, Rules
>>> prepare(Board(4), Rules.preset("plain"), 2, "classic")
>>> o = win_odds(Board(4), Rules.preset("plain"), "classic", positions=(0, 0), finished=(), current=0)
>>> o.method, [round(p, 6) for p in o.win_probability]
('exact', [0.6, 0.4])
"""

from __future__ import annotations

import importlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..board import Board
from ..errors import SnlError
from ..rules import Rules

__all__ = ["LiveOdds", "win_odds", "prepare", "is_prepared"]

#: survival mass below which the tail is dropped (fallback)
_TAIL = 1e-13
#: rounds computed at most by the fallback (a board that takes longer has no figure)
_MAX_ROUNDS = 20_000
#: tables kept solved at once
_CACHE = 64

_solved: OrderedDict[tuple, Any] = OrderedDict()
_lock = threading.Lock()
_NONE = "none"  # marks a table with no figure


@dataclass(frozen=True)
class LiveOdds:
    """Each seat's chance of winning, and how it was computed.

    Attributes
    ----------
    win_probability : tuple of float
        One per seat (0 for a seat that cannot win any more); empty unless
        ``method == "exact"``.
    method : {"exact", "pending", "none"}
        ``"pending"`` until :func:`prepare` has solved the table, ``"none"``
        when no figure is available for these rules.
    """

    win_probability: tuple[float, ...]
    method: str

    def to_dict(self) -> dict:
        """The odds as plain JSON-ready data."""
        return {"win": list(self.win_probability), "method": self.method}


def _key(board: Board, rules: Rules, players: int, mode: str) -> tuple:
    return (board, rules, int(players), mode)


def is_prepared(board: Board, rules: Rules, players: int, mode: str) -> bool:
    """Whether :func:`prepare` has solved this table."""
    with _lock:
        return _key(board, rules, players, mode) in _solved


def prepare(board: Board, rules: Rules, players: int, mode: str) -> None:
    """Solve what the odds of this table need (blocking; seconds for the bump rule's joint chain)."""
    key = _key(board, rules, players, mode)
    if is_prepared(board, rules, players, mode):
        return
    try:
        odds_class = importlib.import_module("snlmarkov.races.odds").Odds
    except (ImportError, AttributeError):  # not in this version of snlmarkov: the independent-token figure
        odds_class = None
    solved: Any
    try:
        if odds_class is not None:
            solved = odds_class(board, rules, players=players, mode=mode)
        elif rules.bump:
            solved = _NONE
        else:
            table = _survival_table(board, rules)
            solved = _NONE if table is None else table
    except SnlError:  # e.g. bump with more than 3 players: no exact figure
        solved = _NONE
    with _lock:
        _solved[key] = solved
        while len(_solved) > _CACHE:
            _solved.popitem(last=False)


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
        ``method="pending"`` if the table was not prepared (this function
        never solves anything itself).

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> prepare(Board(4), Rules.preset("plain"), 2, "classic")
    >>> win_odds(Board(4), Rules.preset("plain"), "classic", positions=(4, 2), finished=(0,), current=1).win_probability
    (1.0, 0.0)
    >>> win_odds(Board(9), Rules(), "classic", positions=(0, 0), finished=(), current=0).method
    'pending'
    """
    k = len(positions)
    with _lock:
        solved = _solved.get(_key(board, rules, k, mode))
    if solved is None:
        return LiveOdds((), "pending")
    if isinstance(solved, str):
        return LiveOdds((), "none")
    if not isinstance(solved, np.ndarray):  # the project's Odds
        from ..state import GameState

        state = GameState(tuple(positions), to_move=current, places=tuple(finished))
        return LiveOdds(tuple(float(p) for p in solved.win_probability(state)), "exact")
    if finished:
        return LiveOdds(tuple(1.0 if i == finished[0] else 0.0 for i in range(k)), "exact")
    order = [(current + j) % k for j in range(k)]
    surv = solved[list(positions)]  # (k, R+1): S_i(r)
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

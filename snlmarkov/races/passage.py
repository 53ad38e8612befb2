"""Turns to finish of a lone token from every square, in one backward sweep.

``P(T_s = t)``, ``T_s`` the number of turns a token on square ``s`` needs to
reach the finish, for every square at once: the races from a state without
``bump`` combine the distributions of the racing seats' squares
(:func:`snlmarkov.races.independent.independent_from`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..analysis.distribution import LengthDistribution
from ..chain.model import TransitionModel, can_finish
from ..errors import LimitError, UnwinnableBoardError
from .joint import reachable

__all__ = []

#: The largest first-passage table (squares x turns) :func:`first_passage` builds.
MAX_TABLE_ENTRIES = 50_000_000

#: The largest table whose distributions :meth:`FirstPassage.rows` keeps by square (with their survival):
#: two more copies of it, so that a query reads rows instead of gathering columns.
ROW_TABLE_ENTRIES = 4_000_000


class FirstPassage:
    """Turns-to-finish distributions of one token from every square.

    ``pmf(s)`` is ``P(T_s = t)`` for ``t = 0..horizon(s)``, ``T_s`` the
    number of turns a lone token on square ``s`` needs to reach the finish;
    each square's distribution stops, as
    :func:`~snlmarkov.analysis.distribution.absorption_times` does, at the
    first ``t`` where less than ``tail`` is left (``tail_mass(s)``), so the
    distribution from square 0 is the single-player length distribution.

    Attributes
    ----------
    table : numpy.ndarray
        ``(horizon + 1, N + 1)``: ``table[t, s] = P(T_s = t)``.
    horizons : numpy.ndarray
        Per square, the last ``t`` of its distribution.
    tails : numpy.ndarray
        Per square, ``P(T_s > horizons[s])``.
    reachable : numpy.ndarray
        Bool per square: a token can rest there between turns.
    """

    def __init__(self, table: np.ndarray, horizons: np.ndarray, tails: np.ndarray, reachable: np.ndarray) -> None:
        self.table = table
        self.horizons = horizons
        self.tails = tails
        self.reachable = reachable
        self._by_square: tuple[np.ndarray, np.ndarray] | None = None

    def pmf(self, square: int) -> np.ndarray:
        """``P(T_s = t)`` for ``t = 0..horizons[s]`` (a view; do not write)."""
        return self.table[: self.horizons[square] + 1, square]

    def rows(self, squares: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The squares' distributions as the rows of arrays, to the longest of their horizons.

        Returns the pmfs (0 beyond each square's horizon), the tails, and
        the survival ``P(T_s > t)`` (the tail included; from the top, so
        that small values keep their digits). Read from a copy of the table
        by square, built on first use when the table has at most
        :data:`ROW_TABLE_ENTRIES` entries (else computed for the squares).

        Examples
        --------
        >>> from snlmarkov import Board, Rules, turn_model
        >>> fp = first_passage(turn_model(Board(2), Rules.preset("plain").replace(faces=2, finish="none")), 1e-3)
        >>> f, tails, s = fp.rows([1, 0])
        >>> f.tolist(), tails.tolist(), s.tolist()
        ([[0.0, 1.0, 0.0], [0.0, 0.5, 0.5]], [0.0, 0.0], [[1.0, 0.0, 0.0], [1.0, 0.5, 0.0]])
        """
        at = np.asarray(squares, dtype=np.intp)
        width = int(self.horizons[at].max()) + 1
        tails = self.tails[at]
        if self._by_square is None and self.table.size <= ROW_TABLE_ENTRIES:
            pmf = self._masked(np.arange(self.table.shape[1]), self.table.shape[0])
            self._by_square = (pmf, survival_rows(pmf, self.tails))
        if self._by_square is not None:
            pmf, surv = self._by_square
            return pmf[at, :width], tails, surv[at, :width]
        f = self._masked(at, width)
        return f, tails, survival_rows(f, tails)

    def _masked(self, at: np.ndarray, width: int) -> np.ndarray:
        """The pmfs of the squares ``at`` as rows of ``width`` entries, 0 beyond each square's horizon."""
        f = self.table[:width, at].T.copy()
        f[np.arange(width)[None, :] > self.horizons[at][:, None]] = 0.0
        return f

    def length(self, square: int) -> LengthDistribution:
        """The distribution as a :class:`LengthDistribution` (unit ``"turns"``)."""
        return LengthDistribution(self.pmf(square), tail_mass=float(self.tails[square]), unit="turns")


def _too_large(squares: int, detail: str) -> LimitError:
    """The refusal of a turns-to-finish table of ``squares`` columns that needs more rows than the cap leaves."""
    return LimitError(
        f"the turns-to-finish table would exceed {MAX_TABLE_ENTRIES:,} entries "
        f"(snlmarkov.races.passage.MAX_TABLE_ENTRIES): {squares:,} squares leave room for fewer than "
        f"{_table_rows(squares) - 1:,} turns, and {detail}; use a board of fewer squares, or "
        "race(..., state=..., method='monte_carlo') to estimate a state by simulation"
    )


def _table_rows(squares: int) -> int:
    """The rows (turns + 1) past which :func:`first_passage` refuses a table of ``squares`` columns."""
    return max(MAX_TABLE_ENTRIES // squares, 2)


def check_table_size(board: Any, rules: Any, tail: float) -> None:
    """Refuse up front a turns-to-finish table that :func:`first_passage` would refuse, building no model.

    :func:`first_passage` keeps one row of ``N + 1`` entries per turn until
    the token from square 0 has at most ``tail`` left. A token needs at
    least ``D`` rolls to finish from square 0, ``D`` found by a
    breadth-first search over the board that lets every roll move up to
    the die's top value and keeps both the landing square and where its
    jumps lead (a superset of where a token can be: snakes, bounces,
    caps and start rules only slow it). A turn is at most
    ``max_sixes + 1`` rolls, and with a bonus on a six its rolls are at
    most geometric with the top value's chance ``p``, so by Markov's
    inequality the table covers at least ``max(D / (max_sixes + 1), (1 -
    tail) (1 - p) D)`` turns. The search stops as soon as that bound
    passes the cap: its cost is ``O(N)`` per roll, within
    ``O(MAX_TABLE_ENTRIES)`` in all.

    Raises
    ------
    LimitError
        When that lower bound alone passes :data:`MAX_TABLE_ENTRIES`.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> check_table_size(Board.builtin(), Rules(), 1e-13)  # passes
    >>> try:
    ...     check_table_size(Board(10**6), Rules(), 1e-13)
    ... except LimitError as exc:
    ...     print(exc)  # doctest: +ELLIPSIS
    the turns-to-finish table would exceed 50,000,000 entries (...): 1,000,001 squares leave room for fewer than 48 turns, ...
    """
    size = int(board.size)
    dice = tuple(rules.choose_die) or (rules.die,)
    top = max(int(d.top) for d in dice)
    if top < 1:  # pragma: no cover - every die moves
        return
    keep = 1.0 - float(tail) - 1e-9

    def turns(rolls: int) -> int:
        """A lower bound of the turns a token needing ``rolls`` rolls takes (``tail`` aside)."""
        if not rules.bonus_on_six:
            return rolls
        bound = 1 if rules.max_sixes is None else math.ceil(rolls / (int(rules.max_sixes) + 1))
        if rules.choose_move is None:  # each roll earns a bonus with chance at most p
            p = max(float(d.top_prob) for d in dice)
            bound = max(bound, math.ceil(keep * (1.0 - p) * rolls))
        return bound

    rows = _table_rows(size + 1)
    dest = board.destination()
    starts = np.flatnonzero(dest[:size] != np.arange(size))
    ends = dest[starts]
    del dest
    seen = np.zeros(size, dtype=bool)
    seen[0] = True
    rolls = 0  # ``seen``: every square a token can be on after at most ``rolls`` rolls
    while True:
        finishing = bool(seen[max(size - top, 0) :].any())
        least = rolls + 1 if finishing else rolls + 2  # a lower bound of the rolls to the finish
        if turns(least) + 1 >= rows:
            needed = turns(least)
            raise _too_large(
                size + 1,
                f"a token needs at least {least:,} rolls, so at least {needed:,} turns, to finish from square 0",
            )
        if finishing:
            return
        rolls += 1
        count = np.cumsum(seen, dtype=np.int32)
        reach = count.copy()
        reach[top + 1 :] -= count[: -top - 1]  # squares up to ``top`` past one already reached
        landed = reach > 0
        landed[ends[landed[starts]]] = True
        if np.array_equal(landed, seen):
            return  # no new square: the model's own checks judge a board that cannot be finished
        seen = landed


def survival_rows(f: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """``P(T > t) = tail + sum_{u > t} f(u)`` for every row of ``f`` (pmfs to ``t = width - 1``), summed from the top.

    Examples
    --------
    >>> survival_rows(np.array([[0.0, 0.5, 0.25]]), np.array([0.25])).tolist()
    [[1.0, 0.5, 0.25]]
    """
    s = np.empty_like(f)
    np.cumsum(f[:, :0:-1], axis=1, out=s[:, -2::-1])
    s[:, -1] = 0.0
    s += tails[:, None]
    return s


def first_passage(model: TransitionModel, tail: float, origins: tuple[int, ...] = (0,)) -> FirstPassage:
    """Turns-to-finish distributions from every square, in one backward sweep.

    ``P(T_s = 1)`` is the one-turn finishing probability of each square and
    ``P(T_s = t + 1) = sum_q Q[s, q] P(T_q = t)`` (``Q`` the turn matrix
    among unfinished squares): one sparse product per turn gives the next
    row for every square at once. The sweep goes on until every square a
    token can reach from ``origins`` has less than ``tail`` left.

    Cost: ``horizon`` sparse matrix-vector products; memory ``(horizon + 1)
    * (N + 1)`` floats (refused beyond :data:`MAX_TABLE_ENTRIES`).

    Examples
    --------
    A board of 2 squares and a 2-faced die without exact finish: every
    turn finishes from square 1, half of them from square 0.

    >>> from snlmarkov import Board, Rules, turn_model
    >>> fp = first_passage(turn_model(Board(2), Rules.preset("plain").replace(faces=2, finish="none")), 1e-3)
    >>> fp.pmf(1).tolist(), fp.pmf(0)[:4].tolist()
    ([0.0, 1.0], [0.0, 0.5, 0.5])
    """
    n = model.absorbing
    m = sp.csr_matrix(model.matrix)
    q = m[:n, :n].tocsr()
    exit = np.asarray(m[:n, n].todense()).ravel()
    seen = reachable(model, origins)
    watch = np.flatnonzero(seen[:n])
    # a square from which the finish cannot be reached at all keeps its probability for ever; every
    # other reachable square loses it geometrically, however many turns the board asks for
    trapped = watch[~can_finish(m, n)[watch]]
    if trapped.size:
        raise UnwinnableBoardError(f"a token on square {int(trapped[0])} never finishes", int(trapped[0]))
    rows = [np.zeros(n + 1)]
    rows[0][n] = 1.0
    f = exit.copy()
    surv = np.ones(n)
    horizons = np.zeros(n + 1, dtype=np.int64)
    tails = np.zeros(n + 1)
    open_ = np.ones(n, dtype=bool)
    t = 0
    max_rows = _table_rows(n + 1)
    while open_[watch].any():
        t += 1
        rows.append(np.append(f, 0.0))
        surv = q @ surv
        closing = open_ & (surv <= tail)
        horizons[:n][closing] = t
        tails[:n][closing] = np.maximum(surv[closing], 0.0)
        open_ &= ~closing
        f = q @ f
        if t + 1 >= max_rows:
            raise _too_large(n + 1, f"probability {surv[watch].max():.3g} still in play after {t} turns")
    # squares nobody reaches: stop them with the others (their figures are never asked for)
    horizons[:n][open_] = t
    tails[:n][open_] = np.clip(surv[open_], 0.0, 1.0)
    table = np.array(rows)
    table.setflags(write=False)
    return FirstPassage(table, horizons, tails, seen)

"""Turns to finish of a lone token from every square, in one backward sweep.

``P(T_s = t)``, ``T_s`` the number of turns a token on square ``s`` needs to
reach the finish, for every square at once: the races from a state without
``bump`` combine the distributions of the racing seats' squares
(:func:`snlmarkov.races.independent.independent_from`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..analysis.distribution import LengthDistribution
from ..chain.model import TransitionModel
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
    rows = [np.zeros(n + 1)]
    rows[0][n] = 1.0
    f = exit.copy()
    surv = np.ones(n)
    horizons = np.zeros(n + 1, dtype=np.int64)
    tails = np.zeros(n + 1)
    open_ = np.ones(n, dtype=bool)
    t = 0
    max_rows = max(MAX_TABLE_ENTRIES // (n + 1), 2)
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
            raise LimitError(
                f"the turns-to-finish table would exceed {MAX_TABLE_ENTRIES} entries "
                f"(probability {surv[watch].max():.3g} still in play after {t} turns)"
            )
        if t % 2000 == 0 and (surv[watch] > 1 - 1e-12).any():
            stuck = int(watch[np.argmax(surv[watch])])
            raise UnwinnableBoardError(f"a token on square {stuck} never finishes", stuck)
    # squares nobody reaches: stop them with the others (their figures are never asked for)
    horizons[:n][open_] = t
    tails[:n][open_] = np.clip(surv[open_], 0.0, 1.0)
    table = np.array(rows)
    table.setflags(write=False)
    return FirstPassage(table, horizons, tails, seen)

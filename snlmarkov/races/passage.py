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

    def pmf(self, square: int) -> np.ndarray:
        """``P(T_s = t)`` for ``t = 0..horizons[s]`` (a view; do not write)."""
        return self.table[: self.horizons[square] + 1, square]

    def lengths(self, squares: list[int]) -> list[tuple[np.ndarray, float]]:
        """``(pmf, tail mass)`` of each square's distribution, in the order given."""
        return [(self.pmf(s), float(self.tails[s])) for s in squares]

    def length(self, square: int) -> LengthDistribution:
        """The distribution as a :class:`LengthDistribution` (unit ``"turns"``)."""
        return LengthDistribution(self.pmf(square), tail_mass=float(self.tails[square]), unit="turns")


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

"""Exact races of tokens that do not interact (no ``bump``).

Without the bump rule every seat's token moves as if it were alone, so the
number of turns seat ``i`` needs, ``K_i``, is an independent copy of the
single-player length ``K`` (pmf ``f``, survival ``S(r) = P(K > r)``). Seats
move in order ``0, 1, ...`` in every round, so seat ``i`` finishes in round
``K_i`` and the finishing order sorts the pairs ``(K_i, i)``:

- classic: seat ``i`` wins in round ``r`` with probability
  ``f(r) * S(r)**i * S(r-1)**(k-1-i)``; the game lasts ``(r-1)*k + i + 1``
  turns;
- last one standing: the game lasts ``max K_i`` rounds and ``sum K_i``
  turns; the probability of an order ``(s_1, ..., s_k)`` follows from a
  recursion over its positions, ``g_1 = f`` and
  ``g_{m+1}(r) = f(r) * (G_m(r-1) + [s_m < s_{m+1}] g_m(r))`` with ``G_m``
  the cumulative sum of ``g_m``; places come from binomial counts of the
  seats finishing ahead, computed separately (the tests check one against
  the other).

Everything here is exact up to the tail mass of the single-player
distribution (below ``1e-13`` by default), which is carried through.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..analysis.distribution import LengthDistribution
from ..errors import ModelError

__all__ = ["independent_race"]


def _survival(length: LengthDistribution) -> tuple[np.ndarray, np.ndarray]:
    """``S(r) = P(K > r)`` and ``S(r - 1)`` for ``r = 0..horizon`` (tail included)."""
    f = length.probabilities
    # summed from the top so that small survival probabilities keep their precision
    s = length.tail_mass + np.concatenate([np.cumsum(f[::-1])[::-1][1:], [0.0]])
    s_prev = np.concatenate([[1.0], s[:-1]])
    return s, s_prev


def independent_race(length: LengthDistribution, players: int, mode: str) -> dict[str, Any]:
    """Exact race figures for ``players`` independent tokens.

    Parameters
    ----------
    length : LengthDistribution
        The single-player number of turns from square 0 (unit ``"turns"``).
    players : int
        Seats, at least 1.
    mode : {"classic", "last_one_standing"}

    Returns
    -------
    dict
        Keyword arguments for :class:`snlmarkov.races.core.RaceResult`:
        ``win_probability``, ``place_probability``, ``order_probability``,
        ``rounds_distribution``, ``turns_distribution``.

    Examples
    --------
    A token that finishes each turn with probability 1/2: with two seats,
    seat 0 wins with probability ``(1/2) / (1 - 1/4) = 2/3``.

    >>> import numpy as np
    >>> from snlmarkov.analysis.distribution import LengthDistribution
    >>> r = np.arange(200)
    >>> geo = LengthDistribution(np.where(r > 0, 0.5 ** r, 0.0), tail_mass=0.5 ** 199)
    >>> out = independent_race(geo, 2, "classic")
    >>> out["win_probability"].round(12).tolist()
    [0.666666666667, 0.333333333333]
    >>> out["turns_distribution"].mean()  # every turn ends the game with probability 1/2
    2.0
    """
    k = int(players)
    f = np.asarray(length.probabilities, dtype=float)
    if f[0] != 0.0:
        raise ModelError("a token cannot finish in zero turns: the length distribution is not one of a game")
    horizon = f.size - 1
    s, s_prev = _survival(length)
    seats = np.arange(k)

    if mode == "classic":
        # win[i, r]: seat i is the first to finish, in round r
        win = f[None, :] * s[None, :] ** seats[:, None] * s_prev[None, :] ** (k - 1 - seats)[:, None]
        tail = float(s[-1] ** k)
        rounds = LengthDistribution(win.sum(axis=0), tail_mass=tail, unit="rounds")
        turns_pmf = np.zeros(horizon * k + 1)
        r = np.arange(1, horizon + 1)
        for i in range(k):
            turns_pmf[(r - 1) * k + i + 1] = win[i, 1:]
        turns = LengthDistribution(turns_pmf, tail_mass=tail, unit="turns")
        p_win = win.sum(axis=1)
        return {
            "win_probability": p_win,
            "place_probability": p_win[:, None].copy(),
            "order_probability": {(i,): float(p_win[i]) for i in range(k)},
            "rounds_distribution": rounds,
            "turns_distribution": turns,
        }

    # last one standing
    cdf = np.cumsum(f)  # P(K <= r), summed from the bottom so that small values keep their precision
    cdf_prev = np.concatenate([[0.0], cdf[:-1]])
    # P(max K_i = r) = F(r)**k - F(r-1)**k, factored so that no two close numbers are subtracted
    rounds_pmf = f * sum(cdf**j * cdf_prev ** (k - 1 - j) for j in range(k))
    rounds = LengthDistribution(rounds_pmf, tail_mass=float(-np.expm1(k * np.log1p(-length.tail_mass))), unit="rounds")
    turns_pmf = np.array([1.0])
    for _ in range(k):
        turns_pmf = np.convolve(turns_pmf, f)
    turns = LengthDistribution(turns_pmf, tail_mass=float(-np.expm1(k * np.log1p(-length.tail_mass))), unit="turns")

    # places: seat i is placed j+1 when exactly j other seats finish ahead of it;
    # seat m < i is ahead of a finish in round r when K_m <= r, seat m > i when K_m <= r - 1
    place = np.zeros((k, k))
    for i in range(k):
        counts = np.ones((horizon + 1, 1))  # distribution of the number of seats ahead, per round
        for m in range(k):
            if m == i:
                continue
            q = cdf if m < i else cdf_prev
            grown = np.zeros((horizon + 1, counts.shape[1] + 1))
            grown[:, :-1] += counts * (1.0 - q)[:, None]
            grown[:, 1:] += counts * q[:, None]
            counts = grown
        place[i] = f @ counts

    orders = list(itertools.permutations(range(k)))
    seq = np.array(orders, dtype=np.int64)  # (orders, k)
    g = np.broadcast_to(f, (len(orders), f.size)).copy()
    for m in range(1, k):
        ahead = np.cumsum(g, axis=1)
        ahead_prev = np.concatenate([np.zeros((len(orders), 1)), ahead[:, :-1]], axis=1)
        same_round = (seq[:, m - 1] < seq[:, m])[:, None]
        g = f[None, :] * (ahead_prev + np.where(same_round, g, 0.0))
    p_order = g.sum(axis=1)
    return {
        "win_probability": place[:, 0].copy(),
        "place_probability": place,
        "order_probability": {o: float(p) for o, p in zip(orders, p_order)},
        "rounds_distribution": rounds,
        "turns_distribution": turns,
    }

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

From a state (:func:`independent_from`) each racing seat has its own
distribution, its turns to finish from its square
(:func:`~snlmarkov.races.passage.first_passage`), and the seats play on in
cyclic order from the seat to move; the same recursions give the figures,
with the seats already finished keeping their places.

Everything here is exact up to the tail mass of the single-player
distributions, which is carried through.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..analysis.distribution import LengthDistribution
from ..errors import ModelError
from ..state import GameState
from .order import play_order

__all__ = []


def _survival(f: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """``S(r) = P(K > r)`` and ``S(r - 1)`` for ``r = 0..horizon`` (``tail`` the mass beyond it)."""
    # summed from the top so that small survival probabilities keep their precision
    s = tail + np.concatenate([np.cumsum(f[::-1])[::-1][1:], [0.0]])
    return s, np.concatenate([[1.0], s[:-1]])


def _places_among(f: np.ndarray, cdf: np.ndarray, cdf_prev: np.ndarray) -> np.ndarray:
    """``[j, p]``: the chance that the seat playing ``j``-th is placed ``p + 1`` among the ``m`` racing seats.

    It is placed ``p + 1`` when exactly ``p`` others finish ahead of it; the
    seat ``l`` is ahead of a finish on ``j``'s ``r``-th turn when ``K_l <=
    r`` (``l < j``, it plays first) or ``K_l <= r - 1`` (``l > j``). Rows of
    ``f``, ``cdf`` and ``cdf_prev``: each seat's pmf, ``P(K <= r)`` and
    ``P(K <= r - 1)``, in playing order.
    """
    m, width = f.shape
    out = np.zeros((m, m))
    for j in range(m):
        counts = np.ones((width, 1))  # distribution of the number of seats ahead, per round
        for other in range(m):
            if other == j:
                continue
            q = cdf[other] if other < j else cdf_prev[other]
            grown = np.zeros((width, counts.shape[1] + 1))
            grown[:, :-1] += counts * (1.0 - q)[:, None]
            grown[:, 1:] += counts * q[:, None]
            counts = grown
        out[j] = f[j] @ counts
    return out


def _order_chances(f: np.ndarray, perms: list[tuple[int, ...]]) -> np.ndarray:
    """The chance of each finishing order ``perms`` (of playing positions; rows of ``f`` their pmfs)."""
    seq = np.array(perms, dtype=np.int64)
    g = f[seq[:, 0]].copy()
    for pos in range(1, seq.shape[1]):
        ahead = np.cumsum(g, axis=1)
        ahead_prev = np.hstack([np.zeros((len(perms), 1)), ahead[:, :-1]])
        same_round = (seq[:, pos - 1] < seq[:, pos])[:, None]
        g = f[seq[:, pos]] * (ahead_prev + np.where(same_round, g, 0.0))
    return g.sum(axis=1)


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
    s, s_prev = _survival(f, length.tail_mass)
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

    rows = np.broadcast_to(f, (k, f.size))
    place = _places_among(rows, np.broadcast_to(cdf, rows.shape), np.broadcast_to(cdf_prev, rows.shape))
    orders = list(itertools.permutations(range(k)))
    p_order = _order_chances(rows, orders)
    return {
        "win_probability": place[:, 0].copy(),
        "place_probability": place,
        "order_probability": {o: float(p) for o, p in zip(orders, p_order)},
        "rounds_distribution": rounds,
        "turns_distribution": turns,
    }


def independent_from(  # noqa: C901, PLR0915
    lengths: list[tuple[np.ndarray, float]],
    state: GameState,
    mode: str,
    *,
    order_probabilities: bool = True,
    places_only: bool = False,
) -> dict[str, Any]:
    """Exact race figures from ``state`` for tokens that do not interact.

    Parameters
    ----------
    lengths : list of (numpy.ndarray, float)
        For every seat still racing, in the order of
        :func:`~snlmarkov.races.order.play_order`:
        the pmf of its turns to finish (``pmf[0] = 0``) and its tail mass.
    state : GameState
        A state that is not over.
    mode : {"classic", "last_one_standing"}
    order_probabilities : bool, default True
        Compute every finishing order (``players!`` of them under last one
        standing, the costly part); when False, only orders of one racing
        seat are filled in exactly and the others are left at 0.
    places_only : bool, default False
        Return only ``win_probability`` and ``place_probability`` (no
        orders, no length distributions): the quick query.

    Returns
    -------
    dict
        Keyword arguments for :class:`~snlmarkov.races.core.RaceResult`.

    Examples
    --------
    Two tokens that finish each turn with probability 1/2, seat 1 to move:
    seat 1 wins with probability 2/3.

    >>> r = np.arange(80)
    >>> geo = (np.where(r > 0, 0.5 ** r, 0.0), 0.5 ** 79)
    >>> out = independent_from([geo, geo], GameState((3, 3), to_move=1), "classic")
    >>> out["win_probability"].round(12).tolist()
    [0.333333333333, 0.666666666667]
    """
    k = state.players
    order, wraps = play_order(state)
    m = len(order)
    horizon = max(f.size for f, _ in lengths) - 1
    f = np.zeros((m, horizon + 1))
    tails = np.zeros(m)
    for j, (pmf, tail) in enumerate(lengths):
        f[j, : pmf.size] = pmf
        tails[j] = tail
    s = np.empty_like(f)
    s_prev = np.empty_like(f)
    for j in range(m):
        s[j], s_prev[j] = _survival(f[j], tails[j])
    w = np.array(wraps)
    r = np.arange(horizon + 1)

    if mode == "classic":
        # win[j, r]: the seat in position j finishes first, on its own r-th turn
        ahead = np.cumprod(np.vstack([np.ones(horizon + 1), s[:-1]]), axis=0)  # positions before j: S(r)
        behind = np.cumprod(np.vstack([np.ones(horizon + 1), s_prev[::-1][:-1]]), axis=0)[::-1]  # after j: S(r-1)
        win = f * ahead * behind
        if places_only:
            p = np.zeros(k)
            p[list(order)] = win.sum(axis=1)
            return {"win_probability": p, "place_probability": p[:, None].copy()}
        tail = float(np.prod(s[:, -1]))
        rounds_pmf = np.zeros(horizon + 2)
        turns_pmf = np.zeros(horizon * m + 1)
        for j in range(m):
            rounds_pmf[r[1:] + w[j]] += win[j, 1:]
            turns_pmf[(r[1:] - 1) * m + j + 1] += win[j, 1:]
        p = np.zeros(k)
        p[list(order)] = win.sum(axis=1)
        return {
            "win_probability": p,
            "place_probability": p[:, None].copy(),
            "order_probability": {(i,): float(p[i]) for i in range(k)},
            "rounds_distribution": LengthDistribution(rounds_pmf, tail_mass=tail, unit="rounds"),
            "turns_distribution": LengthDistribution(turns_pmf, tail_mass=tail, unit="turns"),
        }

    done = len(state.places)
    cdf = np.cumsum(f, axis=1)
    cdf_prev = np.hstack([np.zeros((m, 1)), cdf[:, :-1]])
    # places: the seat in position j is placed done + 1 + (positions finishing ahead of it)
    place = np.zeros((k, k))
    place[list(order), done : done + m] = _places_among(f, cdf, cdf_prev)
    for i, seat in enumerate(state.places):
        place[seat, i] = 1.0
    if places_only:
        return {"win_probability": place[:, 0].copy(), "place_probability": place}
    tail_all = float(-np.expm1(np.sum(np.log1p(-tails))))
    # rounds left: max_j (K_j + wrap_j); P(max = r) telescoped so that no two close numbers are subtracted
    shifted = np.zeros((m, horizon + 2))
    shifted_prev = np.zeros((m, horizon + 2))
    fs = np.zeros((m, horizon + 2))
    for j in range(m):
        shifted[j, w[j] : w[j] + horizon + 1] = cdf[j]
        shifted[j, w[j] + horizon + 1 :] = cdf[j, -1]
        shifted_prev[j, 1:] = shifted[j, :-1]
        fs[j, w[j] : w[j] + horizon + 1] = f[j]
    rounds_pmf = np.zeros(horizon + 2)
    for j in range(m):
        before = np.prod(shifted_prev[:j], axis=0) if j else 1.0
        after = np.prod(shifted[j + 1 :], axis=0) if j < m - 1 else 1.0
        rounds_pmf += before * fs[j] * after
    turns_pmf = np.array([1.0])
    for j in range(m):
        turns_pmf = np.convolve(turns_pmf, f[j])
    orders = {o: 0.0 for o in itertools.permutations(range(k))}
    prefix = tuple(state.places)
    if m == 1:
        orders[prefix + order] = float(f[0].sum())
    elif order_probabilities:
        perms = list(itertools.permutations(range(m)))
        for perm, p in zip(perms, _order_chances(f, perms)):
            orders[prefix + tuple(order[j] for j in perm)] = float(p)
    return {
        "win_probability": place[:, 0].copy(),
        "place_probability": place,
        "order_probability": orders,
        "rounds_distribution": LengthDistribution(rounds_pmf, tail_mass=tail_all, unit="rounds"),
        "turns_distribution": LengthDistribution(turns_pmf, tail_mass=tail_all, unit="turns"),
    }

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
import math
from typing import Any

import numpy as np

from ..analysis.distribution import LengthDistribution
from ..errors import ModelError
from ..state import GameState
from .order import play_order
from .passage import survival_rows
from .result import LazyLength, LazyOrders

__all__ = []


def _survival(f: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """``S(r) = P(K > r)`` and ``S(r - 1)`` for ``r = 0..horizon`` (``tail`` the mass beyond it)."""
    s = survival_rows(f[None, :], np.array([tail]))[0]
    return s, np.concatenate([[1.0], s[:-1]])


def _places_among(f: np.ndarray, cdf: np.ndarray, cdf_prev: np.ndarray) -> np.ndarray:
    """``[j, p]``: the chance that the seat playing ``j``-th is placed ``p + 1`` among the ``m`` racing seats.

    It is placed ``p + 1`` when exactly ``p`` others finish ahead of it; the
    seat ``l`` is ahead of a finish on ``j``'s ``r``-th turn when ``K_l <=
    r`` (``l < j``, it plays first) or ``K_l <= r - 1`` (``l > j``). Rows of
    ``f``, ``cdf`` and ``cdf_prev``: each seat's pmf, ``P(K <= r)`` and
    ``P(K <= r - 1)``, in playing order.

    The count ahead of ``j`` in round ``r`` has the generating function
    ``prod_{l < j} (1 - cdf_l + cdf_l z) * prod_{l > j} (1 - cdf_prev_l +
    cdf_prev_l z)``: the products over the seats before every ``j`` and
    after it are built once each (``m`` steps apiece), and
    ``sum_r f_j(r) [z^a] prefix_j [z^b] suffix_j`` is one matrix product per
    ``j``; place ``p`` sums the terms with ``a + b = p``.

    Examples
    --------
    Two seats that each finish every turn with probability 1/2 (rounds
    1..60): the first to play is placed first with probability 2/3.

    >>> r = np.arange(61)
    >>> f = np.tile(np.where(r > 0, 0.5 ** r, 0.0), (2, 1))
    >>> cdf = np.cumsum(f, axis=1)
    >>> _places_among(f, cdf, np.hstack([np.zeros((2, 1)), cdf[:, :-1]])).round(12).tolist()
    [[0.666666666667, 0.333333333333], [0.333333333333, 0.666666666667]]
    """
    m, width = f.shape
    # pre[j][a, r]: the chance that a of the seats before j have finished by round r; suf[j][b, r]: that b of the
    # seats after j have finished by round r - 1 (one small array each: a query allocates no large block)
    pre = [np.ones((1, width))]
    for j in range(1, m):
        nxt = np.empty((j + 1, width))
        np.multiply(pre[-1], 1.0 - cdf[j - 1], out=nxt[:j])
        nxt[j] = 0.0
        nxt[1:] += pre[-1] * cdf[j - 1]
        pre.append(nxt)
    suf = [np.ones((1, width))]
    for j in range(m - 2, -1, -1):
        nxt = np.empty((m - j, width))
        np.multiply(suf[-1], 1.0 - cdf_prev[j + 1], out=nxt[:-1])
        nxt[-1] = 0.0
        nxt[1:] += suf[-1] * cdf_prev[j + 1]
        suf.append(nxt)
    out = np.zeros((m, m))
    for j in range(m):
        both = (pre[j] * f[j]) @ suf[m - 1 - j].T  # [a, b]: sum_r f_j(r) pre_j[a, r] suf_j[b, r]
        for a in range(j + 1):
            out[j, a : a + m - j] += both[a]
    return out


def _order_chances(f: np.ndarray) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """The chance of every finishing order of the playing positions (rows of ``f`` their pmfs).

    Returns the chances and the orders, in the order of
    :func:`itertools.permutations`. The recursion of the module runs over
    the orders' prefixes, each once: ``g`` of a prefix is the chance that
    its seats finish first, in its order, the last of them in round ``r``.

    Examples
    --------
    >>> r = np.arange(61)
    >>> p, orders = _order_chances(np.tile(np.where(r > 0, 0.5 ** r, 0.0), (2, 1)))
    >>> orders, p.round(12).tolist()
    ([(0, 1), (1, 0)], [0.666666666667, 0.333333333333])
    """
    m = f.shape[0]
    seq = np.arange(m)[:, None]  # the prefixes, one per row
    g = np.array(f, dtype=float)
    for _ in range(1, m):
        ahead_prev = np.zeros_like(g)  # G(r - 1): the prefix done by the round before
        np.cumsum(g[:, :-1], axis=1, out=ahead_prev[:, 1:])
        used = np.zeros((seq.shape[0], m), dtype=bool)
        used[np.arange(seq.shape[0])[:, None], seq] = True
        parent, child = np.nonzero(~used)  # every prefix's next seat, in increasing order
        prev = ahead_prev[parent]
        same_round = seq[parent, -1] < child  # it plays after the prefix's last seat in the same round
        prev[same_round] += g[parent[same_round]]
        g = f[child] * prev
        seq = np.hstack([seq[parent], child[:, None]])
    return g.sum(axis=1), [tuple(int(x) for x in row) for row in seq]


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
    p_order, orders = _order_chances(rows)
    return {
        "win_probability": place[:, 0].copy(),
        "place_probability": place,
        "order_probability": {o: float(p) for o, p in zip(orders, p_order)},
        "rounds_distribution": rounds,
        "turns_distribution": turns,
    }


def independent_from(
    f: np.ndarray, tails: np.ndarray, s: np.ndarray, state: GameState, mode: str, *, places_only: bool = False
) -> dict[str, Any]:
    """Exact race figures from ``state`` for tokens that do not interact.

    The chances of winning and of every place are computed at once; the
    finishing orders and the length distributions when first read
    (:class:`~snlmarkov.races.result.LazyOrders`,
    :class:`~snlmarkov.races.result.LazyLength`), the expected rounds and
    turns left from closed forms without them.

    Parameters
    ----------
    f : numpy.ndarray
        ``(m, horizon + 1)``: for every seat still racing, in the order of
        :func:`~snlmarkov.races.order.play_order`, the pmf of its turns to
        finish (``f[:, 0] = 0``; 0 beyond its own horizon).
    tails : numpy.ndarray
        ``(m,)``: the mass beyond each seat's horizon.
    s : numpy.ndarray
        Like ``f``: each seat's survival ``P(K > r)``, its tail included
        (:func:`~snlmarkov.races.passage.survival_rows`).
    state : GameState
        A state that is not over.
    mode : {"classic", "last_one_standing"}
    places_only : bool, default False
        Return only ``win_probability`` and ``place_probability``: the
        quick query.

    Returns
    -------
    dict
        Keyword arguments for :class:`~snlmarkov.races.core.RaceResult`.

    Examples
    --------
    Two tokens that finish each turn with probability 1/2, seat 1 to move:
    seat 1 wins with probability 2/3.

    >>> from snlmarkov.races.passage import survival_rows
    >>> r = np.arange(80)
    >>> f, tails = np.tile(np.where(r > 0, 0.5 ** r, 0.0), (2, 1)), np.full(2, 0.5 ** 79)
    >>> out = independent_from(f, tails, survival_rows(f, tails), GameState((3, 3), to_move=1), "classic")
    >>> out["win_probability"].round(12).tolist(), round(out["turns_distribution"].mean(), 12)
    ([0.333333333333, 0.666666666667], 2.0)
    """
    order, wraps = play_order(state)
    if mode == "classic":
        return _classic_from(f, s, state.players, list(order), np.array(wraps), places_only)
    return _last_from(f, tails, state, list(order), np.array(wraps), places_only)


def _classic_from(
    f: np.ndarray, s: np.ndarray, k: int, seats: list[int], w: np.ndarray, places_only: bool
) -> dict[str, Any]:
    """:func:`independent_from` in classic (``seats`` in playing order, ``w`` whether each waits a round)."""
    m, width = f.shape
    horizon = width - 1
    r = np.arange(width)
    # win[j, r]: the seat in position j finishes first, on its own r-th turn: those before it have
    # not finished by their r-th turn, S(r), those after it not by their (r-1)-th, S(r-1)
    # (products row by row: numpy's cumprod down the columns is many times slower)
    win = f.copy()
    ahead = np.ones(width)
    for j in range(1, m):
        ahead *= s[j - 1]
        win[j] *= ahead
    behind = np.ones(width - 1)
    for j in range(m - 2, -1, -1):
        behind *= s[j + 1, :-1]
        win[j, 1:] *= behind
    p = np.zeros(k)
    p_order = win.sum(axis=1)
    p[seats] = p_order
    if places_only:
        return {"win_probability": p, "place_probability": p[:, None].copy()}
    by_round = win @ r  # sum_r r win[j, r]
    mean_rounds = float(np.sum(by_round + w * p_order))
    mean_turns = float(np.sum(m * (by_round - p_order) + (np.arange(m) + 1) * p_order))

    def classic_lengths() -> tuple[LengthDistribution, LengthDistribution]:
        tail = float(np.prod(s[:, -1]))
        rounds_pmf = np.zeros(horizon + 2)
        turns_pmf = np.zeros(horizon * m + 1)
        for j in range(m):
            rounds_pmf[r[1:] + w[j]] += win[j, 1:]
            turns_pmf[(r[1:] - 1) * m + j + 1] += win[j, 1:]
        return (
            LengthDistribution(rounds_pmf, tail_mass=tail, unit="rounds"),
            LengthDistribution(turns_pmf, tail_mass=tail, unit="turns"),
        )

    lengths = _once(classic_lengths)
    return {
        "win_probability": p,
        "place_probability": p[:, None].copy(),
        "order_probability": LazyOrders(lambda: {(i,): float(p[i]) for i in range(k)}),
        "rounds_distribution": LazyLength(lambda: lengths()[0], "rounds", mean_rounds),
        "turns_distribution": LazyLength(lambda: lengths()[1], "turns", mean_turns),
    }


def _last_from(
    f: np.ndarray, tails: np.ndarray, state: GameState, seats: list[int], w: np.ndarray, places_only: bool
) -> dict[str, Any]:
    """:func:`independent_from` under last one standing."""
    k = state.players
    m, width = f.shape
    horizon = width - 1
    r = np.arange(width)
    done = len(state.places)
    cdf = np.cumsum(f, axis=1)
    cdf_prev = np.zeros_like(cdf)
    cdf_prev[:, 1:] = cdf[:, :-1]
    # places: the seat in position j is placed done + 1 + (positions finishing ahead of it)
    place = np.zeros((k, k))
    place[seats, done : done + m] = _places_among(f, cdf, cdf_prev)
    for i, seat in enumerate(state.places):
        place[seat, i] = 1.0
    if places_only:
        return {"win_probability": place[:, 0].copy(), "place_probability": place}
    # rounds left: max_j (K_j + wrap_j); P(max <= r) is the product of the shifted cdfs, and P(max = r) is
    # telescoped, sum_j prod_{l < j} P(K_l + w_l <= r - 1) P(K_j + w_j = r) prod_{l > j} P(K_l + w_l <= r), so that
    # no two close numbers are subtracted
    tail_all = float(-np.expm1(np.sum(np.log1p(-tails))))
    shifted = np.zeros((m, horizon + 2))
    shifted_prev = np.zeros((m, horizon + 2))
    fs = np.zeros((m, horizon + 2))
    for j in range(m):
        shifted[j, w[j] : w[j] + horizon + 1] = cdf[j]
        shifted[j, w[j] + horizon + 1 :] = cdf[j, -1]
        fs[j, w[j] : w[j] + horizon + 1] = f[j]
    shifted_prev[:, 1:] = shifted[:, :-1]
    after = np.ones((m, horizon + 2))  # row by row: numpy's cumprod down the columns is many times slower
    for j in range(m - 2, -1, -1):
        np.multiply(after[j + 1], shifted[j + 1], out=after[j])
    before = np.ones(horizon + 2)
    rounds_pmf = np.zeros(horizon + 2)
    for j in range(m):
        if j:
            before *= shifted_prev[j - 1]
        rounds_pmf += before * fs[j] * after[j]
    mean_rounds = float(np.dot(np.arange(horizon + 2), rounds_pmf))
    mass = cdf[:, -1].tolist()
    others = [math.prod(mass[:j] + mass[j + 1 :]) for j in range(m)]
    mean_turns = float(np.dot(f @ r, others))  # the turns left are the sum of every seat's turns

    def rounds() -> LengthDistribution:
        return LengthDistribution(rounds_pmf, tail_mass=tail_all, unit="rounds")

    def turns() -> LengthDistribution:
        turns_pmf = np.array([1.0])
        for j in range(m):
            turns_pmf = np.convolve(turns_pmf, f[j])
        return LengthDistribution(turns_pmf, tail_mass=tail_all, unit="turns")

    def orders() -> dict[tuple[int, ...], float]:
        out = dict.fromkeys(itertools.permutations(range(k)), 0.0)
        prefix = tuple(state.places)
        chances, perms = _order_chances(f)
        for perm, chance in zip(perms, chances):
            out[prefix + tuple(seats[j] for j in perm)] = float(chance)
        return out

    return {
        "win_probability": place[:, 0].copy(),
        "place_probability": place,
        "order_probability": LazyOrders(orders),
        "rounds_distribution": LazyLength(rounds, "rounds", mean_rounds),
        "turns_distribution": LazyLength(turns, "turns", mean_turns),
    }


def _once(compute: Any) -> Any:
    """``compute``, called at most once (its result kept)."""
    kept: list[Any] = []

    def get() -> Any:
        if not kept:
            kept.append(compute())
        return kept[0]

    return get

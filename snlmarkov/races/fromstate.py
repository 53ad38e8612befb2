"""Race figures from any state of a game (not only from the start).

A state (:class:`~snlmarkov.state.GameState`) gives every token's square,
the seats already finished and the seat to move. From there:

- Without ``bump`` the racing tokens move independently, each from its own
  square: seat ``i`` needs ``K_i`` more turns, ``K_i`` distributed as the
  first-passage time of a single token from its square (its turns-to-finish
  distribution, :func:`first_passage`). The seats play on in cyclic order
  from the seat to move, so the figures follow from these distributions and
  that order exactly as in :mod:`snlmarkov.races.independent`
  (:func:`independent_from`), each seat with its own distribution.
- With ``bump`` the joint chain is run forwards from the state
  (:func:`joint_from`): the probability tensor starts as a point mass on
  the state instead of the start.

Both count what is *left*: turns still to be played, and rounds with the
round in progress counted as the first (a state where seat 2 of 3 is to
move is in the middle of a round; that round counts as one, and the next
round begins when play passes back to an earlier seat, as
:attr:`Game.round <snlmarkov.game.engine.Game.round>` counts them). Seats
already finished keep their places; finishing orders that do not begin with
them have probability 0.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..analysis.distribution import LengthDistribution
from ..chain.model import TransitionModel
from ..errors import GameError, SnlError
from ..state import GameState
from .bump import (
    DROP_FRACTION,
    JointMover,
    SettledTensor,
    SettleWatch,
    _add,
    _next_in,
    end_of_round,
    geometric_rounds,
    settled,
)

__all__ = [
    "FirstPassage",
    "first_passage",
    "play_order",
    "independent_from",
    "joint_from",
    "finished_figures",
    "MAX_TABLE_ENTRIES",
]

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

    def length(self, square: int) -> LengthDistribution:
        """The distribution as a :class:`LengthDistribution` (unit ``"turns"``)."""
        return LengthDistribution(self.pmf(square), tail_mass=float(self.tails[square]), unit="turns")


def _reachable(model: TransitionModel, origins: tuple[int, ...]) -> np.ndarray:
    from scipy.sparse.csgraph import breadth_first_order

    m = sp.csr_matrix(model.matrix)
    seen = np.zeros(model.absorbing + 1, dtype=bool)
    for origin in origins:
        if not seen[origin]:
            seen[breadth_first_order(m, origin, directed=True, return_predecessors=False)] = True
    return seen


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
    reachable = _reachable(model, origins)
    watch = np.flatnonzero(reachable[:n])
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
            raise SnlError(
                f"the turns-to-finish table would exceed {MAX_TABLE_ENTRIES} entries "
                f"(probability {surv[watch].max():.3g} still in play after {t} turns)"
            )
        if t % 2000 == 0 and (surv[watch] > 1 - 1e-12).any():
            stuck = int(watch[np.argmax(surv[watch])])
            raise SnlError(f"a token on square {stuck} never finishes")
    # squares nobody reaches: stop them with the others (their figures are never asked for)
    horizons[:n][open_] = t
    tails[:n][open_] = np.clip(surv[open_], 0.0, 1.0)
    table = np.array(rows)
    table.setflags(write=False)
    return FirstPassage(table, horizons, tails, reachable)


def play_order(state: GameState) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The racing seats in the order they play from ``state``, and which of them wait a round.

    Returns
    -------
    (tuple of int, tuple of int)
        The seats still racing, the seat to move first and then cyclically;
        and for each, 1 if its next turn falls in the next round (its index
        is below the seat to move), else 0.

    Examples
    --------
    >>> play_order(GameState((5, 7, 9), to_move=1))
    ((1, 2, 0), (0, 0, 1))
    """
    racing = state.racing
    order = tuple(sorted(racing, key=lambda s: (s < state.to_move, s)))
    return order, tuple(int(s < state.to_move) for s in order)


def _survival(f: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    s = tail + np.concatenate([np.cumsum(f[::-1])[::-1][1:], [0.0]])
    return s, np.concatenate([[1.0], s[:-1]])


def finished_figures(state: GameState, mode: str) -> dict[str, Any]:
    """Figures of a state that is over (nothing left to play).

    Examples
    --------
    >>> out = finished_figures(GameState((10, 4), places=(0,)), "classic")
    >>> out["win_probability"].tolist(), out["rounds_distribution"].mean()
    ([1.0, 0.0], 0.0)
    """
    k = state.players
    places = state.places
    if mode == "classic":
        (winner,) = places if places else (state.positions.index(max(state.positions)),)
        win = np.zeros(k)
        win[winner] = 1.0
        place = win[:, None].copy()
        orders: dict[tuple[int, ...], float] = {(i,): float(win[i]) for i in range(k)}
    else:
        place = np.zeros((k, k))
        place[list(places), np.arange(k)] = 1.0
        win = place[:, 0].copy()
        orders = {o: float(o == tuple(places)) for o in itertools.permutations(range(k))}
    nothing = LengthDistribution(np.array([1.0]), tail_mass=0.0, unit="rounds")
    return {
        "win_probability": win,
        "place_probability": place,
        "order_probability": orders,
        "rounds_distribution": nothing,
        "turns_distribution": LengthDistribution(np.array([1.0]), tail_mass=0.0, unit="turns"),
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
        For every seat still racing, in the order of :func:`play_order`:
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
    # places: position j is placed done + 1 + (positions finishing ahead of it); position l < j is ahead of a
    # finish on j's r-th turn when K_l <= r, position l > j when K_l <= r - 1
    place = np.zeros((k, k))
    for j in range(m):
        counts = np.ones((horizon + 1, 1))
        for other in range(m):
            if other == j:
                continue
            q = cdf[other] if other < j else cdf_prev[other]
            grown = np.empty((horizon + 1, counts.shape[1] + 1))
            grown[:, :-1] = counts * (1.0 - q)[:, None]
            grown[:, -1] = 0.0
            grown[:, 1:] += counts * q[:, None]
            counts = grown
        place[order[j], done : done + m] = f[j] @ counts
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
        seq = np.array(perms, dtype=np.int64)
        g = f[seq[:, 0]].copy()
        for pos in range(1, m):
            ahead_c = np.cumsum(g, axis=1)
            ahead_prev = np.hstack([np.zeros((len(perms), 1)), ahead_c[:, :-1]])
            same_round = (seq[:, pos - 1] < seq[:, pos])[:, None]
            g = f[seq[:, pos]] * (ahead_prev + np.where(same_round, g, 0.0))
        for perm, p in zip(perms, g.sum(axis=1)):
            orders[prefix + tuple(order[j] for j in perm)] = float(p)
    return {
        "win_probability": place[:, 0].copy(),
        "place_probability": place,
        "order_probability": orders,
        "rounds_distribution": LengthDistribution(rounds_pmf, tail_mass=tail_all, unit="rounds"),
        "turns_distribution": LengthDistribution(turns_pmf, tail_mass=tail_all, unit="turns"),
    }


# ---------------------------------------------------------------- the joint chain from a state


def point_tensor(mover: JointMover, state: GameState) -> np.ndarray:
    """The state as a point mass in the joint tensor of its racing seats (axis 0 the seat to move).

    Raises
    ------
    GameError
        If a racing token is on a square where no turn can end.
    """
    order, _ = play_order(state)
    n = mover.n
    index = 0
    for seat in order:
        p = state.positions[seat]
        at = int(np.searchsorted(mover.squares, p))
        if at >= n or mover.squares[at] != p:
            raise GameError(f"GameState.positions[{seat}] = {p}: no turn ends on that square under these rules")
        index = index * n + at
    x = np.zeros(n ** len(order))
    x[index] = 1.0
    return x


def joint_from(
    model: TransitionModel, rules: Any, state: GameState, mode: str, *, tail: float, max_rounds: int = 1_000_000
) -> dict[str, Any]:
    """Exact race figures from ``state`` under ``bump``: the joint chain run forwards from it.

    The same iteration as :func:`snlmarkov.races.bump.joint_race`, started
    from a point mass on the state's squares: the seats still racing play in
    cyclic order from the seat to move, the round in progress is round 1,
    and finishing orders begin with the seats already finished. Under last
    one standing the joint tensor is extrapolated once its rounds have
    settled, as there (:class:`snlmarkov.races.bump.SettleWatch`; the first,
    partial round never counts as settled).

    Examples
    --------
    A board of 4 squares and a 2-faced die (plain rules, stay): seat 0 on 3
    waits for a 1; seat 1 on 2, to move, finishes with a 2 and is bumped
    back to 1 by a 1 (seat 0 holds 3). Seat 1 wins with probability 6/11
    (worked by hand in the tests).

    >>> from snlmarkov import Board, Rules, turn_model
    >>> rules = Rules.preset("plain").replace(faces=2, bump=True)
    >>> out = joint_from(turn_model(Board(4), rules), rules, GameState((3, 2), to_move=1), "classic", tail=1e-14)
    >>> (out["win_probability"] * 11).round(9).tolist()
    [5.0, 6.0]
    """
    mover = JointMover.of(model, rules)
    full = point_tensor(mover, state)
    order, _ = play_order(state)
    if mode == "classic":
        return _classic(mover, full, state, order, tail, max_rounds)
    return _last_one_standing(mover, full, state, order, tail, max_rounds)


def _slots(order: tuple[int, ...], to_move: int):
    """``(round, seat)`` of every turn from the state: the racing seats cyclically, rounds counted from 1."""
    cycle = tuple(sorted(order))
    rnd, first = 1, True
    while True:
        for s in cycle:
            if first and s < to_move:
                continue
            yield rnd, s
        first = False
        rnd += 1


def _classic(mover, full, state, order, tail, max_rounds) -> dict[str, Any]:
    k, m = state.players, len(order)
    win = np.zeros(k)
    rounds_pmf, turns_pmf = [0.0], [0.0]
    alive = 1.0
    last_round = 1
    seats = list(sorted(order))  # the slots of every full round (the first, partial one starts at to_move)
    this: list[float] = []
    prev: np.ndarray | None = None
    prev_ratio: np.ndarray | None = None
    for rnd, s in _slots(order, state.to_move):
        if rnd != last_round:
            alive = float(full.sum())
            if last_round > 1:  # a full round: once its ratios have settled, the rest is geometric (as in bump)
                vec = np.array(this + [alive])
                is_settled, ratio = settled(prev, vec, prev_ratio)
                prev, prev_ratio = vec, ratio
                powers = geometric_rounds(float(ratio[-1]), alive, tail) if is_settled and alive >= tail else None
                if powers is not None:
                    win[seats] += vec[:-1] * float(powers.sum())
                    rounds_pmf.extend((float(vec[:-1].sum()) * powers).tolist())
                    turns_pmf.extend((powers[:, None] * vec[None, :-1]).ravel().tolist())
                    alive *= float(powers[-1])
                    break
            this = []
            if alive < tail:
                break
            if rnd > max_rounds:
                raise SnlError(f"the race had not ended after {max_rounds} rounds (probability {alive:.3g} in play)")
            last_round = rnd
        full, out = mover.move(full, m)
        p = float(out.sum())
        this.append(p)
        win[s] += p
        turns_pmf.append(p)
        while len(rounds_pmf) <= rnd:
            rounds_pmf.append(0.0)
        rounds_pmf[rnd] += p
    return {
        "win_probability": win,
        "place_probability": win[:, None].copy(),
        "order_probability": {(i,): float(win[i]) for i in range(k)},
        "rounds_distribution": LengthDistribution(np.array(rounds_pmf), tail_mass=alive, unit="rounds"),
        "turns_distribution": LengthDistribution(np.array(turns_pmf), tail_mass=alive, unit="turns"),
    }


def _last_one_standing(mover, full, state, order, tail, max_rounds) -> dict[str, Any]:  # noqa: C901, PLR0915
    k = state.players
    racing = tuple(sorted(order))
    m0 = len(racing)
    prefix0 = tuple(state.places)
    drop = tail * DROP_FRACTION
    by_order: dict[tuple[int, ...], np.ndarray] = {}
    orders: dict[tuple[int, ...], float] = defaultdict(float)
    rounds_pmf = [0.0]
    by_turn: dict[tuple[tuple[int, ...], int], np.ndarray] = {}
    turns_pmf = [0.0]
    dropped = {"rounds": 0.0, "turns": 0.0}
    tail_of = {"rounds": 0.0, "turns": 0.0}
    live = {"rounds": True, "turns": True}
    t = 0
    current = 1

    if m0 == 1:  # one token left: it finishes in its own time
        only = racing[0]
        prefix = prefix0 + (only,)
    watch = SettleWatch()  # once the joint tensor's rounds are geometric, it is extrapolated (as in bump)
    outflows: dict[int, np.ndarray] = {}
    for rnd, s in _slots(order, state.to_move):
        if rnd != current:
            full, in_play = end_of_round(full, by_order, by_turn, live, dropped, tail_of, drop, tail)
            if not live["rounds"] and not live["turns"]:
                break
            if rnd > max_rounds:
                raise SnlError(f"the race had not ended after {max_rounds} rounds (probability {in_play:.3g} in play)")
            if isinstance(full, np.ndarray):
                full = watch.feed(outflows, float(full.sum())) or full
            if isinstance(full, SettledTensor):
                full.next_round()
            outflows = {}
            current = rnd
        t += 1
        if live["rounds"]:
            while len(rounds_pmf) <= rnd:
                rounds_pmf.append(0.0)
        out_full = None
        if isinstance(full, np.ndarray):
            full, out_full = mover.move(full, m0)
            outflows[s] = out_full.copy()
        elif full is not None:
            out_full = full.outflow(s)
        rest = tuple(a for a in racing if a != s)
        if live["rounds"]:
            movers = [p for p in by_order if s not in p]
            for p, x, out in mover.move_all(movers, by_order, lambda p: k - len(p)):
                by_order[p] = x
                child = p + (s,)
                if len(child) == k:
                    w = float(out.sum())
                    orders[child] += w
                    rounds_pmf[rnd] += w
                else:
                    _add(by_order, child, out)
            if out_full is not None:
                if m0 == 1:
                    w = float(out_full.sum())
                    orders[prefix] += w
                    rounds_pmf[rnd] += w
                else:
                    _add(by_order, prefix0 + (s,), out_full.copy())
        if live["turns"]:
            turns_pmf.append(0.0)
            nxt_store: dict = {}
            for (alive, seat), y, out in mover.move_all(list(by_turn), by_turn, lambda key: len(key[0])):
                _add(nxt_store, (alive, _next_in(alive, seat)), y)
                left = tuple(a for a in alive if a != seat)
                if left:
                    _add(nxt_store, (left, _next_in(left, seat)), out)
                else:
                    turns_pmf[t] += float(out.sum())
            if out_full is not None:
                if rest:
                    _add(nxt_store, (rest, _next_in(rest, s)), out_full)
                else:
                    turns_pmf[t] += float(out_full.sum())
            by_turn = nxt_store

    place = np.zeros((k, k))
    for o, p in orders.items():
        place[list(o), np.arange(k)] += p
    all_orders = {o: 0.0 for o in itertools.permutations(range(k))}
    all_orders.update(orders)
    return {
        "win_probability": place[:, 0].copy(),
        "place_probability": place,
        "order_probability": all_orders,
        "rounds_distribution": LengthDistribution(np.array(rounds_pmf), tail_mass=tail_of["rounds"], unit="rounds"),
        "turns_distribution": LengthDistribution(np.array(turns_pmf), tail_mass=tail_of["turns"], unit="turns"),
    }

"""Exact races under the ``bump`` rule: the joint chain of every token.

With ``bump`` the tokens interact, so the race is a Markov chain over the
positions of all unfinished tokens and the seat to move. Its structure makes
it cheap to run forwards without ever forming its matrix:

- A seat's turn moves only its own token: the square where the turn ends has
  the distribution of row ``p`` of :func:`snlmarkov.chain.model.turn_model`
  (the rolls inside a turn do not depend on the other tokens; only the
  final resting square counts). So one turn is the sparse turn matrix
  applied along one axis of the joint probability tensor, then the bump:
  mass that ended on a square ``1..N-1`` held by another token is moved to
  ``bump_to`` (tokens on 0 or ``N`` occupy nothing), and mass that reached
  ``N`` leaves the tensor.
- The tensor is kept with the axis of the seat to move first and the others
  in playing order. One turn is then a single sparse-times-dense product
  ``(n+1, n) @ (n, n**(m-1))``; transposing the result puts the next seat
  first, so the axes rotate with the play and no other reshuffle is needed.
- Only squares where a token can rest are kept (square 0, ``bump_to``, and
  the squares turns can end on from them): jump starts drop out, which
  makes the three-player tensor of the jungle board about half the size of
  ``100**3``.
- Under last one standing, a finishing token leaves and the rest play on in
  the chain of one token fewer, which is the same kind of chain; the mass
  that leaves a tensor flows into the smaller one. Tensors are kept per
  finishing order so far, which gives the probability of every order.

The iteration runs until less than ``tail`` of the probability is still in
play, which gives the exact distributions of rounds and total turns (rounds
and turns follow different clocks once seats have left, so two sets of
smaller tensors are kept, one per clock; the full-size tensor, where both
clocks agree, is shared). Expected values are the means of those
distributions. A tensor left holding less than ``tail / 1000`` is dropped
and its mass is added to the stated tail, so ``probabilities + tail_mass``
still sums to one.

The full-size tensor is the costly one, and after some rounds it only
shrinks: each round multiplies it by the same ratio. Once that has settled
to :data:`SETTLE_TOL` it is no longer moved:

- under ``classic`` the remaining rounds are summed as a geometric series
  (the per-round ratio of the mass in play and of every seat's finishing
  mass has settled);
- under ``last one standing`` what it sends on is a tensor, not a number,
  so :class:`SettleWatch` asks that every seat's outflow *vector* scales
  by the ratio of the mass in play (``||o_r - rho o_{r-1}||_1 <=
  SETTLE_TOL ||o_r||_1``) and that the ratio is that of the round before.
  From then on round ``j`` injects ``o_s * rho**j`` from seat ``s`` into
  the smaller tensors of both clocks, and ``alive * rho**j`` stands for
  the full tensor's mass wherever it is counted (mass in play, dropping,
  stopping the clocks, the stall check): a :class:`SettledTensor`. The
  smaller tensors are still iterated to the tail. On the jungle board with
  three players under family rules the switch comes at round 163 of 2,405.

Both are exact to the tolerance stated at :data:`SETTLE_TOL`; a chain
that never settles (a leading eigenvalue of the joint chain that is
defective or shared with another of the same modulus, as on some tiny
boards) is iterated every round as before.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from ..analysis.distribution import LengthDistribution
from ..chain.model import TransitionModel
from ..errors import ModelError, SnlError

__all__ = [
    "JointMover",
    "joint_race",
    "resting_squares",
    "end_of_round",
    "SettleWatch",
    "SettledTensor",
    "geometric_rounds",
    "settled",
]

#: A tensor holding less than this fraction of ``tail`` is dropped (its mass
#: is added to the tail).
DROP_FRACTION = 1e-3

#: The joint chain's per-round ratio of the mass in play (and of each seat's
#: finishing mass) is taken as settled when it changes by less than this,
#: relative, from one round to the next; the remaining rounds are then the
#: geometric series of that ratio, summed to the same horizon (the first
#: round whose mass in play is below ``tail``). Each extrapolated round is
#: exact to this relative tolerance times its distance from the switch,
#: so what the tail adds to every figure is within about
#: ``SETTLE_TOL * alive / (1 - ratio)**2`` of the iterated value (below
#: 1e-12 on the jungle board); ``tail_mass`` is the mass still in play at
#: the horizon, as when every round is iterated.
#:
#: Under last one standing the same tolerance applies to every seat's
#: outflow vector in the 1-norm (:class:`SettleWatch`): the mass injected
#: into the smaller tensors in round ``j`` after the switch is within
#: ``SETTLE_TOL * j`` of the iterated one, relative, and the smaller chains
#: only carry it on, so every probability (place, order, each entry of the
#: length distributions) is within ``SETTLE_TOL * alive * ratio / (1 -
#: ratio)**2`` of the fully iterated value (``alive`` the mass at the
#: switch): 1.0e-11 for three players on the jungle board under family
#: rules (measured: 3e-16), 6.0e-11 for two. ``tail_mass`` is, as there,
#: the mass in play (extrapolated mass included) when both clocks stop.
SETTLE_TOL = 1e-12

#: Longest geometric tail summed in closed form (a longer one is iterated).
MAX_GEOMETRIC_ROUNDS = 10_000_000

#: Rounds between checks that the probability still in play keeps falling.
STALL_WINDOW = 2000


def resting_squares(model: TransitionModel, bump_to: int) -> np.ndarray:
    """The squares ``0..N-1`` where a token can end a turn.

    Square 0 (the start), ``bump_to`` (where a bumped token is placed) and
    every square a turn can end on from those, found by a breadth-first
    search of the turn matrix.

    Examples
    --------
    >>> from snlmarkov import Board, Rules, turn_model
    >>> m = turn_model(Board(6, {2: 5}), Rules.preset("plain"))
    >>> resting_squares(m, 1).tolist()  # the ladder foot 2 is never a resting square
    [0, 1, 3, 4, 5]
    """
    n = model.absorbing
    m = sp.csr_matrix(model.matrix)
    seen = np.zeros(n + 1, dtype=bool)
    for origin in (0, int(bump_to)):
        if not seen[origin]:
            seen[breadth_first_order(m, origin, directed=True, return_predecessors=False)] = True
    seen[n] = False
    return np.flatnonzero(seen)


@dataclass(frozen=True, eq=False)
class JointMover:
    """One seat's turn applied to a joint probability tensor.

    A tensor of ``m`` tokens is a flat array of ``n**m`` entries, ``n`` the
    number of resting squares; axis 0 is the seat to move, the other axes
    the seats after it in playing order.

    Attributes
    ----------
    squares : numpy.ndarray
        The resting squares, in increasing order (square 0 first).
    step : scipy.sparse.csr_matrix
        ``(n + 1, n)``: the turn matrix restricted to the resting squares,
        transposed; the last row is the finish.
    bump : bool
        Whether the bump rule acts.
    bump_index : int
        Position of ``bump_to`` in :attr:`squares`.

    Examples
    --------
    Two tokens on a board of 3 squares with a two-faced die; the mover is
    on square 1, the other token on square 2:

    >>> import numpy as np
    >>> from snlmarkov import Board, Rules, turn_model
    >>> rules = Rules.preset("plain").replace(faces=2, bump=True)
    >>> mover = JointMover.of(turn_model(Board(3), rules), rules)
    >>> mover.squares.tolist()
    [0, 1, 2]
    >>> x = np.zeros(9); x[1 * 3 + 2] = 1.0
    >>> nxt, out = mover.move(x, 2)
    >>> float(out.sum())  # a roll of 2 finishes
    0.5
    >>> float(nxt[2 * 3 + 1])  # a roll of 1 lands on 2, held by the other token: back to 1
    0.5
    """

    squares: np.ndarray = field(repr=False)
    step: sp.csr_matrix = field(repr=False)
    bump: bool
    bump_index: int
    _tables: dict = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, model: TransitionModel, rules: Any) -> JointMover:
        """Build the mover from a turn model and its rules."""
        squares = resting_squares(model, rules.bump_to)
        n = model.absorbing
        cols = np.append(squares, n)
        sub = sp.csr_matrix(model.matrix)[squares][:, cols]
        lost = np.abs(np.asarray(sub.sum(axis=1)).ravel() - 1.0).max()
        if lost > 1e-12:  # the resting squares are closed under turns by construction
            raise ModelError("a turn left the resting squares: the joint chain would lose mass")
        step = sp.csr_matrix(sub.T)
        step.sum_duplicates()
        pos = int(np.searchsorted(squares, rules.bump_to))
        return cls(squares=squares, step=step, bump=bool(rules.bump), bump_index=pos)

    @property
    def n(self) -> int:
        """Number of resting squares."""
        return int(self.squares.size)

    def _bump_table(self, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The bumped entries of a ``(n, n**(m-1))`` result: flat index, row (square) and column."""
        if m not in self._tables:
            n = self.n
            width = n ** (m - 1)
            col = np.arange(width, dtype=np.int64)
            # a mover resting on e is bumped when e is on the board, not bump_to itself, and held by another token
            bumpable = (self.squares >= 1) & (np.arange(n) != self.bump_index)
            src, where = [], []
            for axis in range(m - 1):
                held = (col // n ** (m - 2 - axis)) % n
                hit = bumpable[held]
                src.append(held[hit] * width + col[hit])
                where.append(col[hit])
            src_all, first = np.unique(np.concatenate(src), return_index=True)
            self._tables[m] = (src_all, src_all // width, np.concatenate(where)[first])
        return self._tables[m]

    def move(self, x: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
        """One turn of the seat on axis 0 of an ``m``-token tensor.

        Parameters
        ----------
        x : numpy.ndarray
            Flat tensor of ``n**m`` probabilities.
        m : int
            Tokens in the tensor.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            The tensor after the turn, rotated so that the next seat is on
            axis 0 and the mover on the last axis; and the mass that reached
            the finish, a flat tensor of the other ``m - 1`` tokens in the
            same order (the next seat first).
        """
        n = self.n
        width = n ** (m - 1)
        y = np.ascontiguousarray(self.step @ x.reshape(n, width))
        out = y[n].copy()
        if self.bump and m > 1:
            src, _, col = self._bump_table(m)
            flat = y.reshape(-1)
            moved = flat[src]
            flat[src] = 0.0
            y[self.bump_index] += np.bincount(col, weights=moved, minlength=width)
        return np.ascontiguousarray(y[:n].T).reshape(-1), out

    def move_many(self, xs: list[np.ndarray], m: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`move` applied to several ``m``-token tensors at once.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            Row ``b`` of the first array is the moved tensor ``b``, row ``b``
            of the second its finished mass.
        """
        if len(xs) == 1:
            nxt, out = self.move(xs[0], m)
            return nxt[None, :], out[None, :]
        n = self.n
        width = n ** (m - 1)
        batch = len(xs)
        stacked = np.stack([x.reshape(n, width) for x in xs], axis=1).reshape(n, batch * width)
        y = np.ascontiguousarray(self.step @ stacked).reshape(n + 1, batch, width)
        out = y[n].copy()
        if self.bump and m > 1:
            _, row, col = self._bump_table(m)
            moved = y[row, :, col]  # (entries, batch)
            y[row, :, col] = 0.0
            where = (col[:, None] + width * np.arange(batch)[None, :]).ravel()
            y[self.bump_index] += np.bincount(where, weights=moved.ravel(), minlength=batch * width).reshape(
                batch, width
            )
        return np.ascontiguousarray(y[:n].transpose(1, 2, 0)).reshape(batch, n * width), out

    def move_all(self, keys: list, store: dict, size_of: Any) -> list:
        """:meth:`move_many` of the tensors ``store[key]`` for ``keys``, batched by ``size_of(key)`` (tokens).

        Returns ``[(key, moved, finished), ...]``.
        """
        groups: dict[int, list] = defaultdict(list)
        for key in keys:
            groups[size_of(key)].append(key)
        done: list = []
        for m, group in groups.items():
            nxt, out = self.move_many([store[key] for key in group], m)
            done.extend(zip(group, nxt, out))
        return done


def _next_in(alive: tuple[int, ...], seat: int) -> int:
    """The first seat of ``alive`` after ``seat`` in playing order (cyclic)."""
    for a in alive:
        if a > seat:
            return a
    return alive[0]


def _add(store: dict, key: Any, x: np.ndarray) -> None:
    if key in store:
        store[key] += x
    else:
        store[key] = x


class _Stall:
    """Refuse a chain whose probability in play stops falling (a trap)."""

    def __init__(self, max_rounds: int) -> None:
        self.max_rounds = max_rounds
        self.last = 2.0

    def check(self, rnd: int, alive: float) -> None:
        if rnd > self.max_rounds:
            raise SnlError(
                f"the race had not ended after {self.max_rounds} rounds (probability {alive:.3g} still in play)"
            )
        if rnd % STALL_WINDOW == 0:
            if alive > self.last * (1.0 - 1e-9):
                raise SnlError(
                    f"the race cannot end from some positions: probability {alive:.3g} has stayed in play "
                    f"for {STALL_WINDOW} rounds"
                )
            self.last = alive


def joint_race(
    model: TransitionModel,
    rules: Any,
    players: int,
    mode: str,
    *,
    tail: float,
    max_rounds: int = 1_000_000,
    progress: bool = False,
) -> dict[str, Any]:
    """Exact race figures from the joint chain of all tokens.

    Parameters
    ----------
    model : TransitionModel
        The turn model of the board and rules.
    rules : Rules
        The rules (``bump`` and ``bump_to`` are read here).
    players : int
        Seats, at least 2.
    mode : {"classic", "last_one_standing"}
    tail : float
        Stop when less than this probability is still in play.
    max_rounds : int
        Refuse to go on beyond this many rounds.
    progress : bool
        Show the rounds as they are run (a tqdm bar on standard error, with
        the probability still in play).

    Returns
    -------
    dict
        Keyword arguments for :class:`snlmarkov.races.core.RaceResult`.

    Examples
    --------
    A two-faced die on a board of 4 squares without exact finish: seat 0
    wins with probability 25/32 (47/64 without the bump; worked by hand in
    the tests).

    >>> from snlmarkov import Board, Rules, turn_model
    >>> rules = Rules.preset("plain").replace(faces=2, finish="none", bump=True)
    >>> out = joint_race(turn_model(Board(4), rules), rules, 2, "classic", tail=1e-14)
    >>> (out["win_probability"] * 32).round(9).tolist()
    [25.0, 7.0]
    """
    mover = JointMover.of(model, rules)
    k = int(players)
    full = np.zeros(mover.n**k)
    full[0] = 1.0  # every token on square 0 (index 0), seat 0 to move
    stall = _Stall(max_rounds)
    with _RoundsBar(progress, f"exact race, {k} players") as bar:
        if mode == "classic":
            return _classic(mover, full, k, tail, stall, bar)
        return _last_one_standing(mover, full, k, tail, stall, bar)


class _RoundsBar:
    """Rounds of the joint chain as they are run, with the probability still in play (tqdm, or nothing)."""

    def __init__(self, show: bool, desc: str) -> None:
        self.bar: Any = None
        if show:
            from tqdm.auto import tqdm

            self.bar = tqdm(unit="round", desc=desc, dynamic_ncols=True)

    def __enter__(self) -> _RoundsBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()

    def round(self, alive: float) -> None:
        """One more round done, ``alive`` still in play."""
        if self.bar is not None:
            self.bar.set_postfix_str(f"in play {alive:.2e}", refresh=False)
            self.bar.update(1)


def settled(prev: np.ndarray | None, cur: np.ndarray, prev_ratio: np.ndarray | None) -> tuple[bool, np.ndarray]:
    """Whether the round-on-round ratios of ``cur`` (per-seat finishes and mass in play) have settled.

    Settled: every ratio equals the ratio of the mass in play, and that
    ratio equals the previous round's, to :data:`SETTLE_TOL` relative.
    """
    if prev is None or np.any(prev <= 0) or np.any(cur <= 0):
        return False, np.full(cur.shape, np.nan)
    ratio = cur / prev
    rho = ratio[-1]
    ok = prev_ratio is not None and bool(
        np.all(np.abs(ratio - rho) <= SETTLE_TOL * rho) and np.all(np.abs(ratio - prev_ratio) <= SETTLE_TOL * rho)
    )
    return ok, ratio


def geometric_rounds(rho: float, alive: float, tail: float) -> np.ndarray | None:
    """``rho**1 .. rho**extra``: the settled rounds left to the horizon (``alive * rho**extra < tail``).

    ``None`` when the series does not shrink or would be longer than
    :data:`MAX_GEOMETRIC_ROUNDS` (the rounds are then iterated).

    Examples
    --------
    >>> geometric_rounds(0.5, 1e-3, 1e-6).tolist()
    [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625, 0.001953125, 0.0009765625]
    """
    extra = int(np.ceil(np.log(tail / alive) / np.log(rho))) if 0 < rho < 1 else 0
    if 0 < extra <= MAX_GEOMETRIC_ROUNDS:
        return rho ** np.arange(1, extra + 1)
    return None


def _classic(
    mover: JointMover, full: np.ndarray, k: int, tail: float, stall: _Stall, bar: _RoundsBar
) -> dict[str, Any]:
    win = np.zeros(k)
    rounds_pmf, turns_pmf = [0.0], [0.0]
    alive, rnd = 1.0, 0
    prev: np.ndarray | None = None
    prev_ratio: np.ndarray | None = None
    while alive >= tail:
        rnd += 1
        in_round = 0.0
        this = np.zeros(k + 1)
        for s in range(k):
            full, out = mover.move(full, k)
            w = float(out.sum())
            win[s] += w
            in_round += w
            turns_pmf.append(w)
            this[s] = w
        rounds_pmf.append(in_round)
        alive = float(full.sum())
        this[k] = alive
        stall.check(rnd, alive)
        bar.round(alive)
        is_settled, ratio = settled(prev, this, prev_ratio)
        prev, prev_ratio = this, ratio
        if is_settled and alive >= tail:  # the rest is a geometric series: extend it to the same horizon
            powers = geometric_rounds(float(ratio[-1]), alive, tail)
            if powers is not None:
                win += this[:k] * float(powers.sum())
                rounds_pmf.extend((in_round * powers).tolist())
                turns_pmf.extend((powers[:, None] * this[None, :k]).ravel().tolist())
                alive *= float(powers[-1])
                break
    return {
        "win_probability": win,
        "place_probability": win[:, None].copy(),
        "order_probability": {(i,): float(win[i]) for i in range(k)},
        "rounds_distribution": LengthDistribution(np.array(rounds_pmf), tail_mass=alive, unit="rounds"),
        "turns_distribution": LengthDistribution(np.array(turns_pmf), tail_mass=alive, unit="turns"),
    }


class SettledTensor:
    """A joint tensor whose rounds have settled, extrapolated instead of moved.

    Round ``j`` after the switch sends ``outflows[s] * ratio**j`` from seat
    ``s``'s turn into the chain of one token fewer, and leaves
    ``mass * ratio**j`` in play (see :class:`SettleWatch`). It stands in for
    the tensor in :func:`end_of_round` (which reads only :meth:`sum`).

    Examples
    --------
    >>> import numpy as np
    >>> t = SettledTensor({0: np.array([0.2, 0.1])}, ratio=0.5, mass=0.4)
    >>> t.next_round()
    >>> t.outflow(0).tolist(), t.sum()
    ([0.1, 0.05], 0.2)
    """

    def __init__(self, outflows: dict[int, np.ndarray], ratio: float, mass: float) -> None:
        self.outflows = outflows
        self.ratio = float(ratio)
        self.mass = float(mass)
        self.rounds = 0
        self.factor = 1.0

    def next_round(self) -> None:
        """Advance to the next round (call at its start)."""
        self.rounds += 1
        self.factor = self.ratio**self.rounds

    def outflow(self, seat: int) -> np.ndarray:
        """The mass that seat ``seat``'s turn of this round sends to the finish (a fresh array)."""
        return self.outflows[seat] * self.factor

    def sum(self) -> float:
        """The mass still in the tensor after this round."""
        return self.mass * self.factor


def _scales(cur: np.ndarray, prev: np.ndarray, ratio: float) -> bool:
    """Whether ``cur`` is ``ratio * prev`` to :data:`SETTLE_TOL` in the 1-norm (and not empty)."""
    size = float(np.abs(cur).sum())
    return size > 0 and float(np.abs(cur - ratio * prev).sum()) <= SETTLE_TOL * size


class SettleWatch:
    """Detect when a joint tensor's rounds have become geometric.

    Fed each round's per-seat finished-mass tensors ``o_s`` and the mass
    ``a`` left in play, it reports the tensor settled at round ``r`` when
    ``rho = a_r / a_{r-1}`` is in ``(0, 1)``, equals ``a_{r-1} / a_{r-2}``
    to :data:`SETTLE_TOL` relative, and every seat's outflow *vector*
    scales by it: ``||o_{s,r} - rho o_{s,r-1}||_1 <= SETTLE_TOL ||o_{s,r}||_1``
    (under last one standing these vectors, not only their sums, flow on
    into the smaller chains) and none is zero.

    Examples
    --------
    >>> import numpy as np
    >>> w = SettleWatch()
    >>> [w.feed({0: np.array([1.0, 2.0]) * 0.5**r}, 4 * 0.5**r) is not None for r in range(3)]
    [False, False, True]
    """

    def __init__(self) -> None:
        self.prev: dict[int, np.ndarray] = {}
        self.prev_mass = 0.0
        self.prev_ratio = float("nan")

    def feed(self, outflows: dict[int, np.ndarray], mass: float) -> SettledTensor | None:
        """Record one round; the settled stand-in for the tensor once its rounds are geometric, else None."""
        ratio = mass / self.prev_mass if self.prev_mass > 0 else float("nan")
        ok = (
            0.0 < ratio < 1.0
            and abs(ratio - self.prev_ratio) <= SETTLE_TOL * ratio
            and set(outflows) == set(self.prev)
            and all(_scales(o, self.prev[s], ratio) for s, o in outflows.items())
        )
        self.prev, self.prev_mass, self.prev_ratio = outflows, mass, ratio
        return SettledTensor(outflows, ratio, mass) if ok else None


def _last_one_standing(  # noqa: C901, PLR0915
    mover: JointMover, full: np.ndarray | None, k: int, tail: float, stall: _Stall, bar: _RoundsBar | None = None
) -> dict[str, Any]:
    seats = tuple(range(k))
    drop = tail * DROP_FRACTION
    # round clock: tensors by finishing order so far (all share the clock of the full tensor)
    by_order: dict[tuple[int, ...], np.ndarray] = {}
    orders: dict[tuple[int, ...], float] = defaultdict(float)
    rounds_pmf = [0.0]
    # turn clock: tensors by (seats still racing, seat to move)
    by_turn: dict[tuple[tuple[int, ...], int], np.ndarray] = {}
    turns_pmf = [0.0]
    dropped = {"rounds": 0.0, "turns": 0.0}
    tail_of = {"rounds": 0.0, "turns": 0.0}
    live = {"rounds": True, "turns": True}
    rnd = t = 0

    alive_cache: dict[tuple[int, ...], tuple[int, ...]] = {}

    def alive_of(prefix: tuple[int, ...]) -> tuple[int, ...]:
        if prefix not in alive_cache:
            alive_cache[prefix] = tuple(a for a in seats if a not in prefix)
        return alive_cache[prefix]

    watch = SettleWatch()
    current: np.ndarray | SettledTensor | None = full
    while live["rounds"] or live["turns"]:
        rnd += 1
        if live["rounds"]:
            rounds_pmf.append(0.0)
        if isinstance(current, SettledTensor):
            current.next_round()
        outflows: dict[int, np.ndarray] = {}
        for s in seats:
            t += 1
            out_full = None
            if isinstance(current, np.ndarray):
                current, out_full = mover.move(current, k)
                outflows[s] = out_full.copy()
            elif current is not None:
                out_full = current.outflow(s)
            rest = alive_of((s,))
            if live["rounds"]:
                movers = [prefix for prefix in by_order if s not in prefix]
                for prefix, x, out in mover.move_all(movers, by_order, lambda p: k - len(p)):
                    by_order[prefix] = x
                    child = prefix + (s,)
                    if len(child) == k:
                        w = float(out.sum())
                        orders[child] += w
                        rounds_pmf[rnd] += w
                    else:
                        _add(by_order, child, out)
                if out_full is not None:
                    _add(by_order, (s,), out_full.copy())
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
                    _add(nxt_store, (rest, _next_in(rest, s)), out_full)
                by_turn = nxt_store

        current, in_play = end_of_round(current, by_order, by_turn, live, dropped, tail_of, drop, tail)
        if not live["rounds"] and not live["turns"]:
            break
        stall.check(rnd, in_play)
        if bar is not None:
            bar.round(in_play)
        if isinstance(current, np.ndarray):  # once its rounds are geometric, stop moving the full tensor
            current = watch.feed(outflows, float(current.sum())) or current

    place = np.zeros((k, k))
    for order, p in orders.items():
        place[list(order), np.arange(k)] += p
    return {
        "win_probability": place[:, 0].copy(),
        "place_probability": place,
        "order_probability": dict(orders),
        "rounds_distribution": LengthDistribution(np.array(rounds_pmf), tail_mass=tail_of["rounds"], unit="rounds"),
        "turns_distribution": LengthDistribution(np.array(turns_pmf), tail_mass=tail_of["turns"], unit="turns"),
    }


def end_of_round(
    full: np.ndarray | SettledTensor | None,
    by_order: dict[Any, np.ndarray],
    by_turn: dict[Any, np.ndarray],
    live: dict[str, bool],
    dropped: dict[str, float],
    tail_of: dict[str, float],
    drop: float,
    tail: float,
) -> tuple[np.ndarray | SettledTensor | None, float]:
    """End of a round of the last-one-standing loop: drop what is negligible, stop a clock once it is done.

    ``by_order`` (the rounds clock) and ``by_turn`` (the turns clock) are
    pruned in place of entries below ``drop``, whose mass goes to
    ``dropped``; a clock whose mass in play falls below ``tail`` is stopped
    (``live``) with its tail mass in ``tail_of``. Returns the joint tensor
    ``full`` (``None`` once negligible; a :class:`SettledTensor` counts
    its extrapolated mass) and the largest mass still in play.
    """
    full_mass = float(full.sum()) if full is not None else 0.0
    if full is not None and full_mass < drop:
        for clock in ("rounds", "turns"):
            if live[clock]:
                dropped[clock] += full_mass
        full, full_mass = None, 0.0
    in_play = 0.0
    clocks: tuple[tuple[str, dict[Any, np.ndarray]], ...] = (("rounds", by_order), ("turns", by_turn))
    for clock, store in clocks:
        if not live[clock]:
            continue
        total = full_mass
        for key in list(store):
            mass = float(store[key].sum())
            if mass < drop:
                dropped[clock] += mass
                del store[key]
            else:
                total += mass
        if total < tail:
            live[clock] = False
            tail_of[clock] = total + dropped[clock]
            store.clear()
        in_play = max(in_play, total)
    return full, in_play

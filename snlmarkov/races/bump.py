"""The exact race under ``bump``: the joint chain of every token run forwards.

The race starts from a point mass on a state (the start, or any moment of a
game) and is run a turn at a time (:class:`~snlmarkov.races.joint.JointMover`),
the racing seats in cyclic order from the seat to move
(:func:`~snlmarkov.races.order.rounds_of`). One loop per mode serves the race
from the start and the race from a state:

- ``classic``: the mass that reaches the finish on a seat's turn is that
  seat's win, in that round and turn;
- ``last_one_standing``: a finishing token leaves and the rest play on in
  the chain of one token fewer, which is the same kind of chain; the mass
  that leaves a tensor flows into the smaller one. Tensors are kept per
  finishing order so far, which gives the probability of every order.
  Rounds and turns follow different clocks once seats have left, so two
  sets of smaller tensors are kept, one per clock (the full-size tensor,
  where both clocks agree, is shared).

The iteration runs until less than ``tail`` of the probability is still in
play, which gives the exact distributions of rounds and total turns; the
expected values are their means. A tensor left holding less than ``tail *
DROP_FRACTION`` is dropped and its mass is added to the stated tail, so
``probabilities + tail_mass`` still sums to one.

The full-size tensor is the costly one, and after some rounds it only
shrinks: each full round multiplies it by the same ratio. Once that has
settled to :data:`SETTLE_TOL` it is no longer moved:

- under ``classic`` the remaining rounds are summed as a geometric series
  (the per-round ratio of the mass in play and of every seat's finishing
  mass has settled, :func:`settled`);
- under ``last_one_standing`` what it sends on is a tensor, not a number,
  so :class:`SettleWatch` asks that every seat's outflow *vector* scales
  by the ratio of the mass in play and that the ratio is that of the round
  before. From then on a :class:`SettledTensor` stands for the full tensor:
  round ``j`` injects ``o_s * rho**j`` from seat ``s`` into the smaller
  tensors of both clocks, which are still iterated to the tail.

A chain that never settles (a leading eigenvalue of the joint chain that is
defective or shared with another of the same modulus, as on some tiny
boards) is iterated every round.
"""

from __future__ import annotations

import itertools
from collections import defaultdict, deque
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeAlias

import numpy as np

from ..analysis.distribution import LengthDistribution
from ..chain.model import TransitionModel
from ..errors import BoardError, LimitError, SnlError
from ..state import GameState
from .joint import BATCH_ENTRIES, IN_PLACE_SLICE, IN_PLACE_TOKENS, JointMover, JointTensor, _add, _next_in
from .order import play_order, rounds_of

__all__ = []

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
#: ``SETTLE_TOL * alive / (1 - ratio)**2`` of the iterated value;
#: ``tail_mass`` is the mass still in play at the horizon, as when every
#: round is iterated.
#:
#: Under last one standing the same tolerance applies to every seat's
#: outflow vector in the 1-norm (:class:`SettleWatch`): the mass injected
#: into the smaller tensors in round ``j`` after the switch is within
#: ``SETTLE_TOL * j`` of the iterated one, relative, and the smaller chains
#: only carry it on, so every probability (place, order, each entry of the
#: length distributions) is within ``SETTLE_TOL * alive * ratio / (1 -
#: ratio)**2`` of the fully iterated value (``alive`` the mass at the
#: switch). ``tail_mass`` is, as there, the mass in play (extrapolated mass
#: included) when both clocks stop.
SETTLE_TOL = 1e-12

#: The full tensor of a race: a flat array moved by :meth:`JointMover.move`, or moved in place.
_Full: TypeAlias = np.ndarray | JointTensor

#: Longest geometric tail summed in closed form (a longer one is iterated).
MAX_GEOMETRIC_ROUNDS = 10_000_000

#: Rounds between checks that the probability still in play keeps falling.
STALL_WINDOW = 2000


class _Stall:
    """Refuse a chain whose probability in play stops falling (a trap)."""

    def __init__(self, max_rounds: int) -> None:
        self.max_rounds = max_rounds
        self.last = 2.0

    def check(self, rnd: int, alive: float) -> None:
        if rnd > self.max_rounds:
            raise LimitError(
                f"the race had not ended after {self.max_rounds} rounds (probability {alive:.3g} still in play)"
            )
        if rnd % STALL_WINDOW == 0:
            if alive > self.last * (1.0 - 1e-9):
                raise BoardError(
                    f"the race cannot end from some positions: probability {alive:.3g} has stayed in play "
                    f"for {STALL_WINDOW} rounds"
                )
            self.last = alive


def joint_race(
    model: TransitionModel | None,
    rules: Any,
    players: int,
    mode: str,
    *,
    tail: float,
    state: GameState | None = None,
    max_rounds: int = 1_000_000,
    progress: bool = False,
    movers: tuple[JointMover, ...] = (),
) -> dict[str, Any]:
    """Exact race figures from the joint chain of all tokens, from the start or from ``state``.

    Parameters
    ----------
    model : TransitionModel or None
        The turn model of the board and rules (every seat's token moves by
        it), or None with ``movers``.
    rules : Rules
        The rules (``bump`` and ``bump_to`` are read here).
    players : int
        Seats, at least 2.
    mode : {"classic", "last_one_standing"}
    tail : float
        Stop when less than this probability is still in play.
    state : GameState, optional
        Start from this state (not over, one square per seat) instead of the
        start: the racing seats play in cyclic order from the seat to move,
        the round in progress is round 1, and finishing orders begin with
        the seats already finished.
    max_rounds : int
        Refuse to go on beyond this many rounds.
    movers : tuple of JointMover, optional
        One mover per seat, on the same squares, when the seats' tokens move
        differently (each playing its policy under a choice rule:
        :meth:`~snlmarkov.races.seatchains.SeatChains.movers`).
    progress : bool
        Show the rounds as they are run (a tqdm bar on standard error, with
        the probability still in play).

    Returns
    -------
    dict
        Keyword arguments for :class:`snlmarkov.races.core.RaceResult`.

    Raises
    ------
    GameError
        If a racing token of ``state`` is on a square where no turn ends.

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

    From a state, on a board of 4 squares (stay): seat 0 on 3 waits for a
    1; seat 1 on 2, to move, finishes with a 2 and is bumped back to 1 by a
    1 (seat 0 holds 3). Seat 1 wins with probability 6/11.

    >>> rules = Rules.preset("plain").replace(faces=2, bump=True)
    >>> out = joint_race(turn_model(Board(4), rules), rules, 2, "classic", tail=1e-14, state=GameState((3, 2), 1))
    >>> (out["win_probability"] * 11).round(9).tolist()
    [5.0, 6.0]
    """
    if not movers:
        if model is None:
            raise SnlError("joint_race needs a turn model or one mover per seat")
        movers = (JointMover.of(model, rules),) * int(players)
    state = GameState.initial(int(players)) if state is None else state
    order, _ = play_order(state)
    point = movers[0].point([state.positions[s] for s in order], order)
    m, n = len(order), movers[0].n
    full: _Full = point
    if m >= IN_PLACE_TOKENS and n ** (m - 2) >= IN_PLACE_SLICE and all(type(mv) is JointMover for mv in movers):
        full = JointTensor(point, tuple(order), movers)  # the large tensor moved in its own buffers
    stall = _Stall(max_rounds)
    with _RoundsBar(progress, f"exact race, {len(order)} players") as bar:
        if mode == "classic":
            return _classic(movers, full, state, tail, stall, bar)
        return _last_one_standing(movers, full, state, tail, stall, bar)


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


def _move_full(
    movers: tuple[JointMover, ...], full: _Full, s: int, m: int, *, ordered: bool
) -> tuple[_Full, np.ndarray]:
    """Seat ``s``'s turn in the full tensor: the tensor after it, and the mass that finished.

    ``ordered``: the finished mass with the other tokens in playing order
    from the next seat (else, for a :class:`JointTensor`, in its axes'
    order: only its sum is read).
    """
    if isinstance(full, JointTensor):
        return full, full.move(s, ordered=ordered)
    return movers[s].move(full, m)


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
    movers: tuple[JointMover, ...], full: _Full, state: GameState, tail: float, stall: _Stall, bar: _RoundsBar
) -> dict[str, Any]:
    k, m = state.players, len(state.racing)
    win = np.zeros(k)
    rounds_pmf, turns_pmf = [0.0], [0.0]
    alive = 1.0
    prev: np.ndarray | None = None
    prev_ratio: np.ndarray | None = None
    for rnd, seats in enumerate(rounds_of(state), start=1):
        in_round = 0.0
        this = []
        for s in seats:
            full, out = _move_full(movers, full, s, m, ordered=False)
            w = float(out.sum())
            win[s] += w
            in_round += w
            turns_pmf.append(w)
            this.append(w)
        rounds_pmf.append(in_round)
        alive = float(full.sum())
        stall.check(rnd, alive)
        bar.round(alive)
        if len(seats) == m:  # a full round: once its ratios have settled, the rest is a geometric series
            vec = np.array(this + [alive])
            is_settled, ratio = settled(prev, vec, prev_ratio)
            prev, prev_ratio = vec, ratio
            powers = geometric_rounds(float(ratio[-1]), alive, tail) if is_settled and alive >= tail else None
            if powers is not None:  # extend it to the same horizon
                win[list(seats)] += vec[:-1] * float(powers.sum())
                rounds_pmf.extend((in_round * powers).tolist())
                turns_pmf.extend((powers[:, None] * vec[None, :-1]).ravel().tolist())
                alive *= float(powers[-1])
                break
        if alive < tail:
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


def _prune(store: dict, below: float) -> tuple[float, float]:
    """Drop the tensors of ``store`` holding less than ``below``: (the mass dropped, the mass kept)."""
    lost = kept = 0.0
    for key in list(store):
        mass = float(store[key].sum())
        if mass < below:
            lost += mass
            del store[key]
        else:
            kept += mass
    return lost, kept


#: After the full tensor settles, the rounds clock hands its outflow to one response (:class:`_Clocks`)
#: when the tensors it feeds have more entries than this.
HANDOVER_ENTRIES = BATCH_ENTRIES


class _OrderChains:
    """Tensors of the rounds clock by finishing order so far, moved a turn at a time.

    A tensor that no longer gets mass from the full tensor (:meth:`watch`)
    and has more than :data:`HANDOVER_ENTRIES` entries is watched; once its
    rounds are geometric (:class:`SettleWatch`) it is replaced by a
    :class:`SettledTensor` and no longer moved.
    """

    def __init__(self, movers: tuple[JointMover, ...], k: int, places: tuple[int, ...]) -> None:
        self.movers, self.k, self.places = movers, k, places
        self.store: dict[tuple[int, ...], Any] = {}
        self.watches: dict[tuple[int, ...], SettleWatch] = {}
        self.round_out: dict[tuple[int, ...], dict[int, np.ndarray]] = {}

    def new_round(self) -> None:
        for x in self.store.values():
            if isinstance(x, SettledTensor):
                x.next_round()
        self.round_out = {}

    def turn(self, s: int, emit: Any) -> None:
        """Seat ``s`` moves in every tensor it races in; ``emit(order, mass)`` for each complete order."""
        movable = [p for p in self.store if s not in p]
        plain = [p for p in movable if not isinstance(self.store[p], SettledTensor)]
        for prefix, x, out in self.movers[s].move_all(plain, self.store, lambda p: self.k - len(p)):
            self.store[prefix] = x
            self.finish(prefix, s, out, emit)
        for prefix in movable:
            x = self.store[prefix]
            if isinstance(x, SettledTensor):
                self.finish(prefix, s, x.outflow(s), emit)

    def finish(self, prefix: tuple[int, ...], s: int, out: np.ndarray, emit: Any) -> None:
        """``out``, the mass of tensor ``prefix`` whose seat ``s`` finished, to its child (or counted)."""
        if prefix in self.watches:
            self.round_out.setdefault(prefix, {})[s] = out.copy()
        child = prefix + (s,)
        if len(child) == self.k:
            emit(child, float(out.sum()))
        else:
            _add(self.store, child, out)

    def watch(self) -> None:
        """The full tensor feeds these tensors no more: watch its direct children for geometric rounds."""
        direct = len(self.places) + 1
        self.watches = {
            p: SettleWatch()
            for p, x in self.store.items()
            if len(p) == direct and isinstance(x, np.ndarray) and x.size > HANDOVER_ENTRIES
        }

    def end_round(self) -> None:
        for p, w in list(self.watches.items()):
            x = self.store.get(p)
            settled_x = None if x is None else w.feed(self.round_out.get(p, {}), float(x.sum()))
            if x is None or settled_x is not None:
                del self.watches[p]
            if settled_x is not None:
                self.store[p] = settled_x


class _TurnChains:
    """The turns clock's tensors when one mover moves every seat, by token count (keys ``((), m)``).

    :meth:`watch` names the key of a tensor that gets no more mass from the
    full tensor; once its turns are geometric (:class:`SettleWatch`, a
    turn for a round) it is replaced by a :class:`SettledTensor`.
    """

    def __init__(self, mover: JointMover) -> None:
        self.mover = mover
        self.watch_key: tuple | None = None
        self.watcher = SettleWatch()

    def watch(self, key: tuple) -> None:
        self.watch_key, self.watcher = key, SettleWatch()

    def turn(self, store: dict, inject: np.ndarray | None, rest: int) -> tuple[dict, float]:
        """One turn of every tensor of ``store`` (and ``inject`` into the tensors of ``rest`` tokens): the new
        store and the mass whose last token came home."""
        nxt: dict = {}
        home = 0.0
        plain = [key for key, x in store.items() if not isinstance(x, SettledTensor)]
        moved = self.mover.move_all(plain, store, lambda key: key[1])
        for key, x in store.items():
            if isinstance(x, SettledTensor):
                x.next_round()
                moved.append((key, x, x.outflow(0)))
        watched = None
        for key, y, out in moved:
            if key == self.watch_key and not isinstance(y, SettledTensor):
                watched = out.copy()
            _add(nxt, key, y)
            if key[1] > 1:
                _add(nxt, ((), key[1] - 1), out)
            else:
                home += float(out.sum())
        if inject is not None and rest:
            _add(nxt, ((), rest), inject)
        elif inject is not None:  # the last token home
            home += float(inject.sum())
        if watched is not None and self.watch_key in nxt:
            settled_x = self.watcher.feed({0: watched}, float(nxt[self.watch_key].sum()))
            if settled_x is not None:
                nxt[self.watch_key], self.watch_key = settled_x, None
        return nxt, home


class _Clocks:
    """The smaller tensors of a last-one-standing race, on both clocks, and what they have counted.

    Rounds clock: tensors by finishing order so far (all share the clock of
    the full tensor). Turns clock: tensors by (seats still racing, seat to
    move); when every seat moves by the same mover, by the number of tokens
    alone (``((), m)``): the turns clock counts only when the last token is
    home, and a tensor's axes are in playing order from the seat to move,
    so the tensors of one size move alike whichever seats they hold and
    are moved as one.

    Once the full tensor has settled (:meth:`hand_over`), its outflow into
    the rounds clock is the same every round but for the factor
    ``ratio**j``, so by linearity and shift invariance what it causes is one
    response (the tensors fed a single round of that outflow, moved on
    their own) filtered: ``w(j) = ratio * (u(j) + w(j - 1))`` for every
    order's mass and for the mass in play. Neither the response nor the
    tensors already fed get mass from the full tensor any more, so their
    largest tensors settle in turn (:class:`_OrderChains`).
    """

    def __init__(self, movers: tuple[JointMover, ...], state: GameState) -> None:
        self.movers, self.k = movers, state.players
        self.shared = all(mv is movers[0] for mv in movers)
        self.places = tuple(state.places)
        self.racing = tuple(sorted(state.racing))
        self.chains = _OrderChains(movers, self.k, self.places)
        self.by_order = self.chains.store
        self.response: _OrderChains | None = None
        self.inject: dict[int, np.ndarray] = {}
        self.ratio = 0.0
        self.response_round = 0
        self.response_drop = 0.0
        self.gain = 0.0  # what the filter multiplies a mass by over the rounds to come: ratio / (1 - ratio)
        self.u_orders: dict[tuple[int, ...], float] = defaultdict(float)
        self.w_orders: dict[tuple[int, ...], float] = {}
        self.w_mass = 0.0
        self.turn_chains = _TurnChains(movers[0])
        self.turn_response: dict | None = None  # the turns clock's response, when handed over too
        self.turn_response_chains = _TurnChains(movers[0])
        self.turn_tau = 0
        self.turn_rings: tuple[deque, deque] = (deque(), deque())  # w of the last rounds' turns: finished, in play
        self.turn_w_mass = 0.0
        self.orders: dict[tuple[int, ...], float] = defaultdict(float)
        self.rounds_pmf = [0.0]
        self.by_turn: dict[tuple[tuple[int, ...], int], np.ndarray] = {}  # ((), m) keys when self.shared
        self.turns_pmf = [0.0]
        self.dropped = {"rounds": 0.0, "turns": 0.0}
        self.tail_of = {"rounds": 0.0, "turns": 0.0}
        self.live = {"rounds": True, "turns": True}

    def new_round(self) -> None:
        if self.live["rounds"]:
            self.rounds_pmf.append(0.0)
            self.chains.new_round()
            if self.response is not None:
                self.response_round += 1
                self.response.new_round()
                self.u_orders = defaultdict(float)

    def wants_hand_over(self) -> bool:
        """Whether the rounds clock should take the settled full tensor's outflow as one filtered response."""
        return self.live["rounds"] and self.movers[0].n ** (len(self.racing) - 1) > HANDOVER_ENTRIES

    def hand_over(self, settled: SettledTensor, drop: float) -> None:
        """From the next round on, the settled full tensor feeds the rounds clock through one response."""
        self.response = _OrderChains(self.movers, self.k, self.places)
        self.inject = {s: o.copy() for s, o in settled.outflows.items()}
        self.ratio = settled.ratio
        self.gain = self.ratio / (1.0 - self.ratio)
        self.response_drop = drop / self.gain  # what the filter makes of it is below ``drop``
        self.chains.watch()
        if self.shared and self.live["turns"]:  # the turns clock: one round is len(racing) turns
            period = len(self.racing)
            self.turn_response = {}
            self.turn_rings = (deque([0.0] * period), deque([0.0] * period))
            self.turn_chains.watch(((), period - 1))

    def turn(self, s: int, rnd: int, t: int, out_full: np.ndarray | None) -> None:
        """Seat ``s`` plays turn ``t`` (of round ``rnd``) in every smaller tensor; ``out_full`` finished in the full one."""
        if self.live["rounds"]:

            def emit(order: tuple[int, ...], w: float) -> None:
                self.orders[order] += w
                self.rounds_pmf[rnd] += w

            self.chains.turn(s, emit)
            if self.response is not None:
                u_orders = self.u_orders

                def emit_response(order: tuple[int, ...], w: float) -> None:
                    u_orders[order] += w

                self.response.turn(s, emit_response)
                if self.response_round == 1:
                    self.response.finish(self.places, s, self.inject[s].copy(), emit_response)
            elif out_full is not None:
                self.chains.finish(self.places, s, out_full.copy(), emit)
        if self.live["turns"]:
            self.turns_pmf.append(0.0)
            if not self.shared:
                self.by_turn = self._seats_turn(s, t, out_full)
            elif self.turn_response is None:
                self.by_turn, home = self.turn_chains.turn(self.by_turn, out_full, len(self.racing) - 1)
                self.turns_pmf[t] += home
            else:
                self._handed_turn(s, t)

    def _handed_turn(self, s: int, t: int) -> None:
        """Turn ``t`` of the turns clock once the settled full tensor's outflow is a filtered response."""
        assert self.turn_response is not None
        self.by_turn, home = self.turn_chains.turn(self.by_turn, None, 0)
        self.turns_pmf[t] += home
        self.turn_tau += 1
        period = len(self.racing)
        inject = self.inject[s].copy() if self.turn_tau <= period else None
        chains = self.turn_response_chains
        self.turn_response, u = chains.turn(self.turn_response, inject, period - 1)
        if self.turn_tau == period:  # fed a round: from now on on its own
            chains.watch(((), period - 1))
        lost, mass_u = _prune(self.turn_response, self.response_drop)
        self.dropped["turns"] += self.gain * lost
        finished, in_play = self.turn_rings
        w = self.ratio * (u + finished.popleft())
        finished.append(w)
        self.turns_pmf[t] += w
        self.turn_w_mass = self.ratio * (mass_u + in_play.popleft())
        in_play.append(self.turn_w_mass)

    def _seats_turn(self, s: int, t: int, out_full: np.ndarray | None) -> dict:
        """Turn ``t`` of the turns clock, tensors by (seats racing, seat to move): the tensors after it."""
        nxt_store: dict = {}
        moved = []
        for who in sorted({key[1] for key in self.by_turn}):  # each tensor's own seat to move
            keys = [key for key in self.by_turn if key[1] == who]
            moved.extend(self.movers[who].move_all(keys, self.by_turn, lambda key: len(key[0])))
        for (alive, seat), y, out in moved:
            _add(nxt_store, (alive, _next_in(alive, seat)), y)
            left = tuple(a for a in alive if a != seat)
            if left:
                _add(nxt_store, (left, _next_in(left, seat)), out)
            else:
                self.turns_pmf[t] += float(out.sum())
        rest = tuple(a for a in self.racing if a != s)
        if out_full is not None and rest:
            _add(nxt_store, (rest, _next_in(rest, s)), out_full)
        elif out_full is not None:  # the last token home
            self.turns_pmf[t] += float(out_full.sum())
        return nxt_store

    def end_round(self, rnd: int) -> None:
        """The rounds clock at the end of round ``rnd``: settled tensors, and the response filtered in."""
        if not self.live["rounds"]:
            return
        self.chains.end_round()
        response = self.response
        if response is None:
            return
        if self.response_round == 1:
            response.watch()
        response.end_round()
        lost, mass_u = _prune(response.store, self.response_drop)
        self.dropped["rounds"] += self.gain * lost
        r = self.ratio
        for order in set(self.u_orders) | set(self.w_orders):
            w = r * (self.u_orders.get(order, 0.0) + self.w_orders.get(order, 0.0))
            self.w_orders[order] = w
            self.orders[order] += w
            self.rounds_pmf[rnd] += w
        self.w_mass = r * (mass_u + self.w_mass)

    def handed(self) -> dict[str, float]:
        """The clocks the settled full tensor feeds through a response, with that response's mass in play."""
        out = {}
        if self.response is not None:
            out["rounds"] = self.w_mass
        if self.turn_response is not None:
            out["turns"] = self.turn_w_mass
        return out

    def figures(self) -> dict[str, Any]:
        k = self.k
        place = np.zeros((k, k))
        for order, p in self.orders.items():
            place[list(order), np.arange(k)] += p
        rounds, turns = np.array(self.rounds_pmf), np.array(self.turns_pmf)
        return {
            "win_probability": place[:, 0].copy(),
            "place_probability": place,
            "order_probability": {o: self.orders.get(o, 0.0) for o in itertools.permutations(range(k))},
            "rounds_distribution": LengthDistribution(rounds, tail_mass=self.tail_of["rounds"], unit="rounds"),
            "turns_distribution": LengthDistribution(turns, tail_mass=self.tail_of["turns"], unit="turns"),
        }


def _last_one_standing(
    movers: tuple[JointMover, ...], full: _Full, state: GameState, tail: float, stall: _Stall, bar: _RoundsBar
) -> dict[str, Any]:
    clocks = _Clocks(movers, state)
    m = len(clocks.racing)
    drop = tail * DROP_FRACTION
    watch = SettleWatch()
    current: np.ndarray | JointTensor | SettledTensor | None = full
    t = 0
    for rnd, seats in enumerate(rounds_of(state), start=1):
        clocks.new_round()
        if isinstance(current, SettledTensor):
            current.next_round()
        outflows: dict[int, np.ndarray] = {}
        for s in seats:
            t += 1
            out_full = None
            if isinstance(current, (np.ndarray, JointTensor)):
                current, out_full = _move_full(movers, current, s, m, ordered=True)
                outflows[s] = out_full.copy()
            elif current is not None:
                out_full = current.outflow(s)
            clocks.turn(s, rnd, t, out_full)
        clocks.end_round(rnd)
        current, in_play = end_of_round(
            current,
            clocks.by_order,
            clocks.by_turn,
            clocks.live,
            clocks.dropped,
            clocks.tail_of,
            drop,
            tail,
            handed=clocks.handed(),
        )
        if not clocks.live["rounds"] and not clocks.live["turns"]:
            break
        stall.check(rnd, in_play)
        bar.round(in_play)
        if isinstance(current, (np.ndarray, JointTensor)):  # once its rounds are geometric, stop moving the full tensor
            current = watch.feed(outflows, float(current.sum())) or current
            if isinstance(current, SettledTensor) and clocks.wants_hand_over():
                clocks.hand_over(current, drop)
    return clocks.figures()


def end_of_round(
    full: np.ndarray | JointTensor | SettledTensor | None,
    by_order: dict[Any, np.ndarray],
    by_turn: dict[Any, np.ndarray],
    live: dict[str, bool],
    dropped: dict[str, float],
    tail_of: dict[str, float],
    drop: float,
    tail: float,
    *,
    handed: Mapping[str, float] = MappingProxyType({}),
) -> tuple[np.ndarray | JointTensor | SettledTensor | None, float]:
    """End of a round of the last-one-standing loop: drop what is negligible, stop a clock once it is done.

    ``by_order`` (the rounds clock) and ``by_turn`` (the turns clock) are
    pruned in place of entries below ``drop``, whose mass goes to
    ``dropped``; a clock whose mass in play falls below ``tail`` is stopped
    (``live``) with its tail mass in ``tail_of``. Returns the joint tensor
    ``full`` (``None`` once negligible; a :class:`SettledTensor` counts
    its extrapolated mass) and the largest mass still in play.
    ``handed``: the clocks the full tensor feeds through a filtered
    response (:meth:`_Clocks.hand_over`), with its mass in play: the full
    tensor's whole future reaches them that way, so none of it is dropped
    there.
    """
    full_mass = float(full.sum()) if full is not None else 0.0
    if full is not None and full_mass < drop:
        for clock in ("rounds", "turns"):
            if live[clock] and clock not in handed:
                dropped[clock] += full_mass
        full, full_mass = None, 0.0
    in_play = 0.0
    clocks: tuple[tuple[str, dict[Any, np.ndarray]], ...] = (("rounds", by_order), ("turns", by_turn))
    for clock, store in clocks:
        if not live[clock]:
            continue
        lost, kept = _prune(store, drop)
        dropped[clock] += lost
        total = full_mass + handed.get(clock, 0.0) + kept
        if total < tail:
            live[clock] = False
            tail_of[clock] = total + dropped[clock]
            store.clear()
        in_play = max(in_play, total)
    return full, in_play

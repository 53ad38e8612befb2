"""Races of several players: who wins, in which order, and how long it takes.

:func:`race` answers, for ``k`` seats on one board under one rule set, how
likely each seat is to finish first (and, under last one standing, in each
place and every finishing order) and how many rounds and turns the game
lasts, as a frozen :class:`RaceResult`. Seat 0 moves first in every round.

How the figures are obtained (``RaceResult.method``):

``"exact: independent players"``
    Without ``bump`` (or with one player) the tokens do not interact: the
    race follows exactly from the single-player turn-count distribution
    and the seat order (:mod:`snlmarkov.races.independent`).
``"exact: joint chain (bump)"``
    With ``bump``, 2 or 3 players (and on request, ``method="exact"``, 4 or
    more: see below): the joint chain of every token's square and the seat
    to move, run forwards to a tail below ``tail``
    (:mod:`snlmarkov.races.bump`).
``"Monte Carlo: N games, 95% CI"``
    With ``bump`` and 4 or more players (the joint chain has ``n**k`` states
    per seat to move, ``10**8`` and more on a standard board): estimates from
    :func:`snlmarkov.sim.core.simulate`, with standard errors and confidence
    intervals (:meth:`RaceResult.confidence_interval`). Such a result says
    ``exact=False``; it never claims to be exact.

Large exact joint chains: ``method="auto"`` builds joint chains of up to
:data:`MAX_EXACT_STATES` states. ``method="exact"`` goes further, up to
:data:`MAX_EXACT_JOINT_STATES` states and the memory limit of
:func:`snlmarkov.limits.check_memory` (about :data:`JOINT_BYTES_PER_STATE`
bytes per square combination, checked before anything is allocated): 4
players with ``bump`` on the jungle board (82 resting squares, 181 million
states) take about 2.5 minutes under ``classic`` and 5 under
``last_one_standing``, 1.2-1.4 GB, on one core; ``progress=True`` shows the
rounds as they are run.

In ``classic`` mode only the winner is placed, so ``place_probability`` has
a single column (place 1, equal to ``win_probability``) and the finishing
"orders" are the one-seat tuples ``(winner,)``; ``expected_place`` is only
defined under ``last_one_standing`` and raises :class:`SnlError` otherwise.
"""

from __future__ import annotations

import itertools
import math
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis.distribution import DEFAULT_TAIL, LengthDistribution
from ..analysis.single import analyze
from ..board import Board
from ..chain.model import turn_model
from ..errors import BoardError, GameError, LimitError, RuleError, SnlError
from ..limits import MAX_PLAYERS, check_memory, check_rng, show_value
from ..rules import MODES, Rules
from ..state import GameState
from .bump import joint_race, resting_squares
from .defaults import DEFAULT_GAMES, METHODS
from .independent import independent_race

__all__ = [
    "RaceResult",
    "race",
    "MODES",
    "METHODS",
    "MAX_PLAYERS",
    "EXACT_JOINT_PLAYERS",
    "MAX_EXACT_STATES",
    "MAX_EXACT_JOINT_STATES",
    "JOINT_BYTES_PER_STATE",
    "DEFAULT_GAMES",
    "joint_chain_states",
]

#: With ``bump``, ``method="auto"`` solves the joint chain for up to this many players.
EXACT_JOINT_PLAYERS = 3
#: The largest joint chain (states) ``method="auto"`` builds.
MAX_EXACT_STATES = 20_000_000
#: The largest joint chain (states) ``method="exact"`` builds (4 players on a
#: board of up to about 100 resting squares).
MAX_EXACT_JOINT_STATES = 400_000_000
#: Memory estimate of a large classic joint chain, in bytes per square
#: combination (``n**k``): the tensor, the turn's product and its rotated
#: copy (measured: 27 bytes, 1.22 GB for 4 players on the jungle board).
JOINT_BYTES_PER_STATE = 32

_METHOD_INDEPENDENT = "exact: independent players"
_METHOD_JOINT = "exact: joint chain (bump)"

_SE_KEYS = ("win_probability", "place_probability", "expected_rounds", "expected_total_turns", "expected_place")


def _frozen(a: Any) -> np.ndarray:
    out = np.array(a, dtype=float)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class RaceResult:
    """Who wins a race of ``players`` seats, in which order, and how long it lasts.

    Build it with :func:`race`. Arrays are read-only.

    Attributes
    ----------
    board, rules : Board, Rules
    players : int
        Seats; seat 0 moves first in every round.
    mode : {"classic", "last_one_standing"}
    method : str
        How the figures were obtained: ``"exact: independent players"``,
        ``"exact: joint chain (bump)"`` or ``"Monte Carlo: N games, 95% CI"``.
    exact : bool
        True when the figures are exact (to floating point and the stated
        tail mass), False for Monte Carlo estimates.
    games : int
        Simulated games behind the estimates; 0 for exact figures.
    win_probability : numpy.ndarray
        Shape ``(players,)``: the chance each seat finishes first.
    place_probability : numpy.ndarray
        ``[seat, place - 1]``: the chance the seat finishes in that place.
        Shape ``(players, players)`` under last one standing (each row and
        each column sums to 1); ``(players, 1)`` in classic, where only the
        winner is placed (the column is ``win_probability``).
    order_probability : Mapping[tuple[int, ...], float]
        The chance of every finishing order, seats listed first to last:
        all ``players!`` orders under last one standing; in classic the
        one-seat tuples ``(winner,)``. Summed over the orders that put a
        seat in a place it gives ``place_probability``.
    rounds_distribution, turns_distribution : LengthDistribution
        The number of rounds, and of turns of all seats together, until the
        game ends (the first finish in classic, the last under last one
        standing). Exact up to their ``tail_mass``, or empirical for
        Monte Carlo results.
    standard_error : Mapping[str, numpy.ndarray or float]
        Standard error of each estimated figure, by name
        (``win_probability``, ``place_probability``, ``expected_rounds``,
        ``expected_total_turns`` and, under last one standing,
        ``expected_place``); zeros for exact results.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> r = snl.race(snl.Board.builtin("milton_bradley"), snl.Rules.preset("plain"), players=2)
    >>> r.method
    'exact: independent players'
    >>> r.win_probability.round(4).tolist()
    [0.5079, 0.4921]
    >>> round(r.expected_rounds, 4), round(r.expected_total_turns, 4)
    (26.331, 52.154)
    >>> r.place_probability.shape, r.order_probability[(1,)] == float(r.win_probability[1])
    ((2, 1), True)
    """

    board: Board
    rules: Rules
    players: int
    mode: str
    method: str
    exact: bool
    games: int
    win_probability: np.ndarray = field(repr=False)
    place_probability: np.ndarray = field(repr=False)
    order_probability: Mapping[tuple[int, ...], float] = field(repr=False)
    rounds_distribution: LengthDistribution = field(repr=False)
    turns_distribution: LengthDistribution = field(repr=False)
    standard_error: Mapping[str, Any] = field(repr=False, default_factory=dict)

    def __post_init__(self) -> None:  # noqa: C901
        if not isinstance(self.board, Board):
            raise BoardError(f"board must be a Board, got {type(self.board).__name__}")
        if not isinstance(self.rules, Rules):
            raise RuleError(f"rules must be a Rules, got {type(self.rules).__name__}")
        k = _players(self.players)
        mode = _mode(self.mode)
        if not isinstance(self.method, str) or not self.method:
            raise SnlError("method must be a non-empty description")
        if not isinstance(self.exact, bool):
            raise SnlError(f"exact must be True or False, got {self.exact!r}")
        if isinstance(self.games, bool) or not isinstance(self.games, (int, np.integer)) or self.games < 0:
            raise SnlError(f"games must be a non-negative integer, got {self.games!r}")
        if self.exact != (self.games == 0):
            raise SnlError("exact figures come from 0 simulated games, estimates from at least 1")
        places = k if mode == "last_one_standing" else 1
        win = _frozen(self.win_probability)
        place = _frozen(self.place_probability)
        if win.shape != (k,) or place.shape != (k, places):
            raise SnlError(f"expected win_probability of shape ({k},) and place_probability of shape ({k}, {places})")
        for name, a in (("win_probability", win), ("place_probability", place)):
            if not np.isfinite(a).all() or a.min() < -1e-12 or a.max() > 1 + 1e-9:
                raise SnlError(f"{name} must hold probabilities")
        orders = {}
        for order, p in dict(self.order_probability).items():
            order = tuple(int(s) for s in order)
            if len(order) != places or len(set(order)) != places or not all(0 <= s < k for s in order):
                raise SnlError(f"{order} is not a finishing order of {k} seats in {mode} mode")
            if not -1e-12 <= p <= 1 + 1e-9:
                raise SnlError(f"the probability of order {order} is {p}")
            orders[order] = float(p)
        if len(orders) != math.perm(k, places):
            raise SnlError(f"expected {math.perm(k, places)} finishing orders, got {len(orders)}")
        for name in ("rounds_distribution", "turns_distribution"):
            if not isinstance(getattr(self, name), LengthDistribution):
                raise SnlError(f"{name} must be a LengthDistribution")
        shapes = {
            "win_probability": (k,),
            "place_probability": (k, places),
            "expected_rounds": (),
            "expected_total_turns": (),
        }
        if mode == "last_one_standing":
            shapes["expected_place"] = (k,)
        given = dict(self.standard_error)
        unknown = set(given) - set(shapes)
        if unknown:
            raise SnlError(f"no standard error is defined for {', '.join(sorted(unknown))}")
        se = {}
        for name, shape in shapes.items():
            value = np.array(given.get(name, np.zeros(shape)), dtype=float)
            if value.shape != shape or not np.isfinite(value).all() or (value < 0).any():
                raise SnlError(f"standard error of {name} must be non-negative, of shape {shape}")
            if self.exact and value.any():
                raise SnlError("exact figures have no standard error")
            value.setflags(write=False)
            se[name] = value if shape else float(value)
        object.__setattr__(self, "players", k)
        object.__setattr__(self, "games", int(self.games))
        object.__setattr__(self, "win_probability", win)
        object.__setattr__(self, "place_probability", place)
        object.__setattr__(self, "order_probability", types.MappingProxyType(orders))
        object.__setattr__(self, "standard_error", types.MappingProxyType(se))

    # ------------------------------------------------------------ figures
    @property
    def expected_rounds(self) -> float:
        """Expected number of rounds until the game ends."""
        return self.rounds_distribution.mean()

    @property
    def expected_total_turns(self) -> float:
        """Expected number of turns of all seats together until the game ends."""
        return self.turns_distribution.mean()

    @property
    def expected_place(self) -> np.ndarray:
        """Expected finishing place (1 = first) of each seat, under last one standing.

        Raises
        ------
        SnlError
            In classic mode, where only the winner is placed.

        Examples
        --------
        >>> import snlmarkov as snl
        >>> r = snl.race(snl.Board.builtin(), snl.Rules(), players=3, mode="last_one_standing")
        >>> r.expected_place.round(4).tolist()
        [1.9898, 2.0, 2.0102]
        """
        if self.mode != "last_one_standing":
            raise SnlError("expected_place is defined under last_one_standing only: classic places only the winner")
        out = self.place_probability @ np.arange(1, self.players + 1)
        out.setflags(write=False)
        return out

    @property
    def tail_mass(self) -> float:
        """Probability left beyond the horizon of the length distributions (0 for estimates)."""
        return max(self.rounds_distribution.tail_mass, self.turns_distribution.tail_mass)

    def confidence_interval(self, name: str, level: float = 0.95) -> tuple[Any, Any]:
        """A two-sided normal confidence interval ``(low, high)`` for one figure.

        For exact results the interval is the value itself.

        Parameters
        ----------
        name : str
            ``"win_probability"``, ``"place_probability"``,
            ``"expected_rounds"``, ``"expected_total_turns"`` or (last one
            standing) ``"expected_place"``.
        level : float, default 0.95
            Coverage, in ``(0, 1)``.

        Examples
        --------
        >>> import snlmarkov as snl
        >>> r = snl.race(snl.Board(2), snl.Rules.preset("plain"), players=2, method="monte_carlo", games=1000, rng=1)
        >>> low, high = r.confidence_interval("expected_total_turns")
        >>> bool(low < r.expected_total_turns < high)
        True
        """
        if name not in self.standard_error:
            raise SnlError(f"no figure named {name!r}; figures: {', '.join(self.standard_error)}")
        if not 0.0 < level < 1.0:
            raise SnlError(f"level must be in (0, 1), got {level}")
        from scipy.stats import norm

        value = getattr(self, name)
        half = norm.ppf(0.5 + level / 2.0) * np.asarray(self.standard_error[name])
        if np.ndim(value) == 0:
            return float(value - half), float(value + half)
        return np.asarray(value) - half, np.asarray(value) + half

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain data (for JSON).

        Examples
        --------
        >>> import snlmarkov as snl, json
        >>> d = snl.race(snl.Board.builtin(), snl.Rules(), players=2).to_dict()
        >>> d["method"], len(d["seats"]), "orders" in json.dumps(d)
        ('exact: independent players', 2, True)
        """
        seats = []
        for i in range(self.players):
            seat: dict[str, Any] = {
                "seat": i,
                "win_probability": float(self.win_probability[i]),
                "place_probability": self.place_probability[i].tolist(),
            }
            if self.mode == "last_one_standing":
                seat["expected_place"] = float(self.expected_place[i])
            seats.append(seat)
        out: dict[str, Any] = {
            "board": self.board.name or "custom",
            "board_size": self.board.size,
            "rules": self.rules.to_dict(),
            "preset": self.rules.preset_name,
            "players": self.players,
            "mode": self.mode,
            "method": self.method,
            "exact": self.exact,
            "games": self.games,
            "seats": seats,
            "expected_rounds": self.expected_rounds,
            "expected_total_turns": self.expected_total_turns,
            "median_rounds": _plain(self.rounds_distribution.median()),
            "median_total_turns": _plain(self.turns_distribution.median()),
            "std_rounds": self.rounds_distribution.std(),
            "std_total_turns": self.turns_distribution.std(),
            "tail_mass": self.tail_mass,
            "orders": [{"order": list(o), "probability": p} for o, p in self.order_probability.items()],
        }
        if not self.exact:
            out["standard_error"] = {
                name: (np.asarray(v).tolist() if np.ndim(v) else float(v)) for name, v in self.standard_error.items()
            }
        return out


def _plain(x: Any) -> Any:
    return int(x) if isinstance(x, (int, np.integer)) else float(x)


def _players(value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise GameError(f"players must be an integer 1..{MAX_PLAYERS}, got {show_value(value)}")
    if not 1 <= value <= MAX_PLAYERS:
        raise GameError(f"players must be 1..{MAX_PLAYERS}, got {show_value(value)}")
    return int(value)


def _board_rules(board: Board | None, rules: Rules | None) -> tuple[Board, Rules]:
    """The board and rules of a race (the jungle board and ``Rules()`` by default), checked."""
    board = Board.builtin() if board is None else board
    rules = Rules() if rules is None else rules
    if not isinstance(board, Board):
        raise BoardError(f"board must be a Board, got {type(board).__name__}")
    if not isinstance(rules, Rules):
        raise RuleError(f"rules must be a Rules, got {type(rules).__name__}")
    return board, rules


def _tail(value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float)) or not 0.0 < value < 1e-3:
        raise SnlError(f"tail must be in (0, 1e-3), got {value!r}")
    return float(value)


def _mode(value: Any) -> str:
    if value not in MODES:
        raise GameError(f"mode must be one of {', '.join(map(repr, MODES))}; got {value!r}")
    return str(value)


def joint_chain_states(board: Board, rules: Rules, players: int) -> int:
    """Number of states of the joint chain of a race with ``bump``.

    ``players * n**players``: the resting square of every token (``n``
    squares where a token can end a turn: 0, ``bump_to`` and the squares
    turns reach, jump starts excluded) and the seat to move.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> joint_chain_states(snl.Board.builtin(), snl.Rules.preset("family"), 3)
    1654104
    """
    n = resting_squares(turn_model(board, rules), rules.bump_to).size
    return int(players) * n ** int(players)


def race(
    board: Board | None = None,
    rules: Rules | None = None,
    players: int = 2,
    mode: str = "classic",
    *,
    method: str = "auto",
    games: int = DEFAULT_GAMES,
    rng: Any = None,
    tail: float = DEFAULT_TAIL,
    progress: bool = False,
    state: GameState | None = None,
) -> RaceResult:
    """Analyse a race of ``players`` seats on ``board`` under ``rules``.

    Parameters
    ----------
    board : Board, optional
        Defaults to the jungle board.
    rules : Rules, optional
        Defaults to ``Rules()`` (the ``app`` preset).
    players : int, default 2
        Seats, 1 to 6; seat 0 moves first in every round.
    mode : {"classic", "last_one_standing"}, default "classic"
        ``classic``: the first token home wins and the game ends;
        ``last_one_standing``: finished tokens are skipped and the game goes
        on until every token is home.
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        ``auto``: exact whenever it is affordable (always without ``bump``;
        with ``bump`` for up to 3 players), else Monte Carlo. ``exact``:
        exact or an error: with ``bump`` the joint chain may have at most
        :data:`MAX_EXACT_JOINT_STATES` states within the memory limit (4
        players on the jungle board: about 2.5 minutes under ``classic``, 5
        under ``last_one_standing``, 1.2-1.4 GB; 5 players there are
        refused). ``monte_carlo``: always simulate.
    games : int, default 100000
        Games to simulate when the figures are estimated.
    rng : None, int >= 0, SeedSequence or numpy.random.Generator
        Seed or generator for the simulation, checked by
        :func:`snlmarkov.limits.check_rng` whatever the method (a bad seed is
        refused even when the figures are exact and do not use it).
    tail : float, default 1e-13
        Exact length distributions are computed until less than this much
        probability is left beyond their horizon.
    progress : bool, default False
        Show a progress bar (on standard error) while simulating, or the
        rounds of an exact joint chain as they are run.
    state : GameState, optional
        Answer from this state of a game (every token's square, the seats
        finished, the seat to move; one square per seat) instead of the
        start: the figures are then the chances from there and the rounds
        and turns *left* (the round in progress counts as the first; see
        :mod:`snlmarkov.races.fromstate`). Exact without ``bump``, and with
        ``bump`` while at most 3 seats are still racing; else estimated by
        simulating from the state. A state that is over gives its outcome
        with certainty. From the start state the figures are those of the
        race itself.

    Returns
    -------
    RaceResult

    Raises
    ------
    GameError
        For ``players`` outside 1..6 or an unknown ``mode``.
    SnlError
        For an unknown ``method``, bad ``games`` or ``tail``.
    LimitError
        For an exact joint chain over its limits (states or memory).
    RuleError
        If the rules cannot be played on the board.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> r = snl.race(snl.Board.builtin(), snl.Rules.preset("family"), players=2, mode="last_one_standing")
    >>> r.method, r.exact
    ('exact: joint chain (bump)', True)
    >>> r.win_probability.round(4).tolist(), round(r.expected_rounds, 3)
    ([0.5031, 0.4969], 137.989)
    >>> sorted(r.order_probability) == [(0, 1), (1, 0)]
    True

    From a moment of a game: Ann on 90, Bob on 30, Bob to move.

    >>> later = snl.race(snl.Board.builtin(), snl.Rules(), players=2, state=snl.GameState((90, 30), to_move=1))
    >>> later.win_probability.round(4).tolist(), round(later.expected_rounds, 2)
    ([0.6764, 0.3236], 22.18)
    """
    board, rules = _board_rules(board, rules)
    k = _players(players)
    mode = _mode(mode)
    rng = check_rng(rng)
    if method not in METHODS:
        raise SnlError(f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}")
    if isinstance(games, (bool, np.bool_)) or not isinstance(games, (int, np.integer)) or games < 1:
        raise SnlError(f"games must be a positive integer, got {games!r}")
    tail = _tail(tail)
    rules.check_board(board)
    common: dict[str, Any] = {"board": board, "rules": rules, "players": k, "mode": mode}
    if state is not None:
        if not isinstance(state, GameState):
            raise GameError(f"state must be a GameState; got {type(state).__name__}")
        if state.players != k:
            raise GameError(f"state has {state.players} seats' squares for players={k}")
        state.validate(board, rules, mode)
        if state != GameState.initial(k):
            return _race_from(common, state, method, games, rng, tail, progress)

    if method == "monte_carlo":
        return _monte_carlo(common, games, rng, progress)
    if not rules.bump or k == 1:  # the tokens do not interact
        length = analyze(board, rules, tail=tail).length
        figures = independent_race(length, k, mode)
        return RaceResult(**common, method=_METHOD_INDEPENDENT, exact=True, games=0, **figures)
    model = turn_model(board, rules)
    squares = resting_squares(model, rules.bump_to).size
    states = k * squares**k
    if method == "auto" and (k > EXACT_JOINT_PLAYERS or states > MAX_EXACT_STATES):
        return _monte_carlo(common, games, rng, progress)
    _check_joint_size(states, squares**k, k)
    figures = joint_race(model, rules, k, mode, tail=tail, progress=progress)
    orders = figures["order_probability"]
    places = k if mode == "last_one_standing" else 1
    for order in itertools.permutations(range(k), places):  # orders no game can produce have probability 0
        orders.setdefault(order, 0.0)
    return RaceResult(**common, method=_METHOD_JOINT, exact=True, games=0, **figures)


_METHOD_OVER = "exact: the game is over"


def _check_joint_size(states: int, combinations: int, k: int) -> None:
    """Refuse an exact joint chain over its limits, before anything is allocated."""
    if states > MAX_EXACT_JOINT_STATES:
        raise LimitError(
            f"the joint chain of {k} players on this board has {states} states, more than "
            f"{MAX_EXACT_JOINT_STATES}; use method='monte_carlo'"
        )
    if states > MAX_EXACT_STATES:
        check_memory(
            JOINT_BYTES_PER_STATE * float(combinations),
            f"the exact joint chain of {k} players ({states} states)",
            hint="use method='monte_carlo' instead",
        )


def _race_from(
    common: dict[str, Any], state: GameState, method: str, games: int, rng: Any, tail: float, progress: bool
) -> RaceResult:
    """:func:`race` from a state other than the start (checked by the caller)."""
    from .fromstate import finished_figures, first_passage, independent_from, joint_from, play_order

    board, rules, mode = common["board"], common["rules"], common["mode"]
    if state.is_over(board, mode):
        return RaceResult(**common, method=_METHOD_OVER, exact=True, games=0, **finished_figures(state, mode))
    if method == "monte_carlo":
        return _monte_carlo(common, games, rng, progress, start=state)
    model = turn_model(board, rules)
    order, _ = play_order(state)
    m = len(order)
    if not rules.bump or m == 1:
        origins = (0, rules.bump_to) if rules.bump else (0,)
        fp = first_passage(model, tail, origins)
        for seat in order:
            if not fp.reachable[state.positions[seat]]:
                raise GameError(f"GameState.positions[{seat}] = {state.positions[seat]}: no token rests on that square")
        lengths = [(fp.pmf(state.positions[s]), float(fp.tails[state.positions[s]])) for s in order]
        figures = independent_from(lengths, state, mode)
        return RaceResult(**common, method=_METHOD_INDEPENDENT, exact=True, games=0, **figures)
    states = m * resting_squares(model, rules.bump_to).size ** m
    if method == "auto" and (m > EXACT_JOINT_PLAYERS or states > MAX_EXACT_STATES):
        return _monte_carlo(common, games, rng, progress, start=state)
    if states > MAX_EXACT_STATES:
        raise LimitError(
            f"the joint chain of the {m} seats still racing has {states} states, more than "
            f"{MAX_EXACT_STATES}; use method='monte_carlo'"
        )
    figures = joint_from(model, rules, state, mode, tail=tail)
    return RaceResult(**common, method=_METHOD_JOINT, exact=True, games=0, **figures)


def _monte_carlo(common: dict[str, Any], games: int, rng: Any, progress: bool, start: Any = None) -> RaceResult:
    from .montecarlo import monte_carlo_race

    figures = monte_carlo_race(
        common["board"],
        common["rules"],
        common["players"],
        common["mode"],
        int(games),
        rng=rng,
        progress=progress,
        start=start,
    )
    return RaceResult(
        **common, method=f"Monte Carlo: {int(games)} games, 95% CI", exact=False, games=int(games), **figures
    )

"""The result of a race: :class:`RaceResult`, frozen and checked on construction."""

from __future__ import annotations

import functools
import math
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis.distribution import LengthDistribution
from ..args import mode_arg, players_arg
from ..board import Board
from ..errors import BoardError, RuleError, SnlError
from ..rules import Rules

__all__ = ["RaceResult"]

_METHOD_INDEPENDENT = "exact: independent players"
_METHOD_JOINT = "exact: joint chain (bump)"
_METHOD_OVER = "exact: the game is over"
_METHOD_POLICIES = "exact: joint chain (policies)"

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
        ``"exact: joint chain (bump)"``, ``"exact: joint chain (policies)"``
        (seats whose tokens interact under their policies) or
        ``"Monte Carlo: N games, 95% CI"``.
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
    policies : tuple of Policy
        Under a rule set with a choice, the policy each seat plays (the
        figures assume it); else ``()``.

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
    policies: tuple[Any, ...] = field(repr=False, default=())

    def __post_init__(self) -> None:  # noqa: C901
        if not isinstance(self.board, Board):
            raise BoardError(f"board must be a Board, got {type(self.board).__name__}")
        if not isinstance(self.rules, Rules):
            raise RuleError(f"rules must be a Rules, got {type(self.rules).__name__}")
        k = players_arg(self.players)
        mode = mode_arg(self.mode)
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
            if not ((a >= -1e-12) & (a <= 1 + 1e-9)).all():  # nan fails both
                raise SnlError(f"{name} must hold probabilities")
        if isinstance(self.order_probability, LazyOrders):  # checked when first read
            orders: Mapping[tuple[int, ...], float] = self.order_probability.checked_by(k, places, mode)
        else:
            orders = types.MappingProxyType(_checked_orders(self.order_probability, k, places, mode))
        for name in ("rounds_distribution", "turns_distribution"):
            if not isinstance(getattr(self, name), LengthDistribution):
                raise SnlError(f"{name} must be a LengthDistribution")
        given = dict(self.standard_error)
        se = _no_error(k, mode) if self.exact and not given else _checked_errors(given, k, places, mode, self.exact)
        object.__setattr__(self, "players", k)
        object.__setattr__(self, "games", int(self.games))
        object.__setattr__(self, "win_probability", win)
        object.__setattr__(self, "place_probability", place)
        object.__setattr__(self, "order_probability", orders)
        object.__setattr__(self, "standard_error", se)

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


def _error_shapes(k: int, places: int, mode: str) -> dict[str, tuple[int, ...]]:
    shapes = {
        "win_probability": (k,),
        "place_probability": (k, places),
        "expected_rounds": (),
        "expected_total_turns": (),
    }
    if mode == "last_one_standing":
        shapes["expected_place"] = (k,)
    return shapes


def _checked_errors(
    given: dict[str, Any], k: int, places: int, mode: str, exact: bool
) -> Mapping[str, np.ndarray | float]:
    """The standard errors, one per figure (0 where not given), each checked and read-only."""
    shapes = _error_shapes(k, places, mode)
    unknown = set(given) - set(shapes)
    if unknown:
        raise SnlError(f"no standard error is defined for {', '.join(sorted(unknown))}")
    se: dict[str, np.ndarray | float] = {}
    for name, shape in shapes.items():
        value = np.array(given.get(name, np.zeros(shape)), dtype=float)
        if value.shape != shape or not np.isfinite(value).all() or (value < 0).any():
            raise SnlError(f"standard error of {name} must be non-negative, of shape {shape}")
        if exact and value.any():
            raise SnlError("exact figures have no standard error")
        value.setflags(write=False)
        se[name] = value if shape else float(value)
    return types.MappingProxyType(se)


@functools.lru_cache(maxsize=64)
def _no_error(k: int, mode: str) -> Mapping[str, np.ndarray | float]:
    """The standard errors of exact figures (all zero, read-only), shared by every exact result of ``k`` seats."""
    return _checked_errors({}, k, k if mode == "last_one_standing" else 1, mode, True)


def _checked_orders(given: Mapping[tuple[int, ...], float], k: int, places: int, mode: str) -> dict:
    """The finishing orders as a plain dict, each checked (a finishing order of ``k`` seats, a probability)."""
    orders = {}
    for order, p in dict(given).items():
        order = tuple(int(s) for s in order)
        if len(order) != places or len(set(order)) != places or not all(0 <= s < k for s in order):
            raise SnlError(f"{order} is not a finishing order of {k} seats in {mode} mode")
        if not -1e-12 <= p <= 1 + 1e-9:
            raise SnlError(f"the probability of order {order} is {p}")
        orders[order] = float(p)
    if len(orders) != math.perm(k, places):
        raise SnlError(f"expected {math.perm(k, places)} finishing orders, got {len(orders)}")
    return orders


class LazyOrders(Mapping):
    """The finishing orders of a result, computed (and checked, as :class:`RaceResult` checks them) on first read.

    ``compute()`` returns the mapping of every order to its probability.

    Examples
    --------
    >>> calls = []
    >>> lazy = LazyOrders(lambda: calls.append(1) or {(0,): 0.25, (1,): 0.75}).checked_by(2, 1, "classic")
    >>> len(calls)
    0
    >>> lazy[(1,)], len(lazy), len(calls)
    (0.75, 2, 1)
    """

    def __init__(self, compute: Any) -> None:
        self._compute = compute
        self._check: tuple[int, int, str] | None = None
        self._orders: Mapping[tuple[int, ...], float] | None = None

    def checked_by(self, k: int, places: int, mode: str) -> LazyOrders:
        """Check the orders, once computed, as those of ``k`` seats with ``places`` places in ``mode``."""
        self._check = (k, places, mode)
        return self

    def _get(self) -> Mapping[tuple[int, ...], float]:
        if self._orders is None:
            orders = self._compute()
            if self._check is not None:
                orders = _checked_orders(orders, *self._check)
            self._orders = types.MappingProxyType(dict(orders))
            self._compute = None
        return self._orders

    def __getitem__(self, order: tuple[int, ...]) -> float:
        return self._get()[order]

    def __iter__(self) -> Any:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(dict(self._get())) if self._orders is not None else "LazyOrders(computed on first read)"


class LazyLength(LengthDistribution):
    """A length distribution computed on first use; its mean, when known, is answered without it.

    ``compute()`` returns the :class:`LengthDistribution`; ``mean`` is its
    mean when known at once (else it is the computed distribution's).

    Examples
    --------
    >>> d = LazyLength(lambda: LengthDistribution(np.array([0.0, 0.5, 0.5])), "turns", mean=1.5)
    >>> d.mean(), d
    (1.5, LengthDistribution(mean=1.5, unit='turns', computed on first use))
    >>> d.probabilities.tolist(), d.median()
    ([0.0, 0.5, 0.5], 1)
    """

    _known_mean: float | None
    _compute: Any
    _done: LengthDistribution | None

    def __init__(self, compute: Any, unit: str, mean: float | None = None) -> None:  # no dataclass init: nothing yet
        object.__setattr__(self, "_known_mean", None if mean is None else float(mean))
        object.__setattr__(self, "_compute", compute)
        object.__setattr__(self, "_done", None)
        object.__setattr__(self, "unit", unit)

    def _real(self) -> LengthDistribution:
        done = self._done
        if done is None:
            done = self._compute()
            object.__setattr__(self, "_done", done)
            object.__setattr__(self, "_compute", None)
        return done

    @property
    def probabilities(self) -> np.ndarray:
        return self._real().probabilities

    @property
    def tail_mass(self) -> float:
        return self._real().tail_mass

    @property
    def tail_rate(self) -> float:
        return self._real().tail_rate

    @property
    def tail_constant(self) -> float:
        return self._real().tail_constant

    @property
    def _cdf(self) -> np.ndarray:
        return self._real()._cdf

    def mean(self) -> float:
        """The expected count (known at once, or from the computed distribution)."""
        return self._known_mean if self._known_mean is not None else self._real().mean()

    def __repr__(self) -> str:
        if self._known_mean is None:
            return f"LengthDistribution(unit={self.unit!r}, computed on first use)"
        return f"LengthDistribution(mean={self._known_mean!r}, unit={self.unit!r}, computed on first use)"


def _plain(x: Any) -> Any:
    return int(x) if isinstance(x, (int, np.integer)) else float(x)

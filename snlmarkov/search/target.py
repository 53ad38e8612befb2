"""What a designed board should achieve (:class:`Target`) and what shape it may take (:class:`Constraints`).

A :class:`Target` is a set of :class:`Goal` s, each one exact figure of the
board compared with a value: the mean or spread of the game length, a
quantile, ``P(length > t)``, the first seat's advantage in a race of ``k``
players, or the smallest share of games that use a ladder. Both classes are
frozen and validated on construction; a bad value raises
:class:`~snlmarkov.errors.TargetError`.

How far a board is from a target (:meth:`Target.distance`): every goal that
is missed adds how far it is missed, in units of its scale (the target value
itself for figures counted in turns, so 1.0 means "off by 100%"; 0.05 for
probabilities, so 1.0 means "off by 5 percentage points"). A board meets the
target when the distance is 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import TargetError
from ..limits import show_value

__all__ = ["Goal", "Target", "Constraints"]

#: The figures a goal may be about.
FIGURES = ("mean", "sd", "quantile", "longer_than", "first_seat_advantage", "ladder_share")
#: How a goal compares: hit the value (within its tolerance), stay at or below it, or at or above it.
OPS = ("==", "<=", ">=")
#: Probabilities are compared in units of 5 percentage points.
PROBABILITY_SCALE = 0.05

_TURN_FIGURES = ("mean", "sd", "quantile")


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TargetError(f"{what} must be a number; got {show_value(value)}")
    try:
        out = float(value)
    except OverflowError:  # an integer past the largest float
        raise TargetError(f"{what} must be finite; got {show_value(value)}") from None
    if not math.isfinite(out):
        raise TargetError(f"{what} must be finite; got {value!r}")
    return out


@dataclass(frozen=True)
class Goal:
    """One figure of a board compared with a value.

    Parameters
    ----------
    figure : str
        One of :data:`FIGURES`: ``"mean"`` and ``"sd"`` (turns of one player),
        ``"quantile"`` (turns; ``at`` is the level, in (0, 1)),
        ``"longer_than"`` (``P(length > at)``), ``"first_seat_advantage"``
        (seat 0's win chance minus ``1 / at`` in a race of ``at`` players) or
        ``"ladder_share"`` (the smallest share of games that use a ladder,
        over the board's ladders).
    op : {"==", "<=", ">="}
    value : float
    at : float, default 0
        The quantile's level, ``t`` of ``P(length > t)``, or the number of
        players; unused by the other figures.
    tolerance : float, default 0
        For ``"=="``: the goal is met within this absolute distance.

    Examples
    --------
    >>> Goal("quantile", "<=", 60, at=0.9).label
    'q90 <= 60'
    >>> Goal("mean", "~", 25)
    Traceback (most recent call last):
    ...
    snlmarkov.errors.TargetError: a goal compares with one of '==', '<=', '>='; got '~'
    """

    figure: str
    op: str
    value: float
    at: float = 0.0
    tolerance: float = 0.0

    def __post_init__(self) -> None:
        if self.figure not in FIGURES:
            raise TargetError(f"unknown figure {self.figure!r}; figures: {', '.join(FIGURES)}")
        if self.op not in OPS:
            raise TargetError(f"a goal compares with one of {', '.join(map(repr, OPS))}; got {self.op!r}")
        value = _number(self.value, f"the {self.figure} goal")
        tol = _number(self.tolerance, f"the tolerance of the {self.figure} goal")
        at = _number(self.at, f"the level of the {self.figure} goal")
        if tol < 0:
            raise TargetError(f"a tolerance cannot be negative; got {tol}")
        if self.figure in ("mean", "sd", "quantile") and value < 0:
            raise TargetError(f"a {self.figure} of turns cannot be negative; got {value}")
        if self.figure in ("longer_than", "ladder_share") and not 0.0 <= value <= 1.0:
            raise TargetError(f"a {self.figure} goal is a probability in [0, 1]; got {value}")
        if self.figure == "first_seat_advantage" and not -1.0 <= value <= 1.0:
            raise TargetError(f"a first-seat advantage lies in [-1, 1]; got {value}")
        if self.figure == "quantile" and not 0.0 < at < 1.0:
            raise TargetError(f"a quantile's level lies strictly between 0 and 1; got {at}")
        if self.figure == "longer_than" and (at < 0 or not at.is_integer()):
            raise TargetError(f"P(length > t) takes a whole number of turns t >= 0; got {at}")
        if self.figure == "first_seat_advantage" and (not at.is_integer() or not 2 <= at <= 6):
            raise TargetError(f"the first-seat advantage is for 2 to 6 players; got {at}")
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "tolerance", tol)
        object.__setattr__(self, "at", at)

    @property
    def label(self) -> str:
        """A short name for the goal, e.g. ``"mean == 25 +- 0.5"``, ``"P(>60) <= 0.05"``."""
        name = self.key
        tol = f" +- {self.tolerance:g}" if self.op == "==" and self.tolerance else ""
        return f"{name} {self.op} {self.value:g}{tol}"

    @property
    def key(self) -> str:
        """The name of the figure the goal reads (a key of the figures of a designed board)."""
        if self.figure == "quantile":
            return f"q{100 * self.at:g}"
        if self.figure == "longer_than":
            return f"P(>{int(self.at)})"
        if self.figure == "first_seat_advantage":
            return f"advantage({int(self.at)})"
        return self.figure

    @property
    def scale(self) -> float:
        """The unit a miss is measured in: the value itself for turns (at least 1), 0.05 for probabilities."""
        if self.figure in _TURN_FIGURES:
            return max(abs(self.value), 1.0)
        return PROBABILITY_SCALE

    def miss(self, x: np.ndarray) -> np.ndarray:
        """How far each figure ``x`` misses the goal, in units of :attr:`scale` (0 where met; inf for nan)."""
        x = np.asarray(x, dtype=float)
        if self.op == "==":
            gap = np.abs(x - self.value) - self.tolerance
        elif self.op == "<=":
            gap = x - self.value
        else:
            gap = self.value - x
        out = np.maximum(gap, 0.0) / self.scale
        return np.where(np.isnan(x), np.inf, out)

    def offset(self, x: np.ndarray) -> np.ndarray:
        """``|x - value| / scale`` for ``"=="`` goals (how centred a board is in its tolerance), else 0."""
        x = np.asarray(x, dtype=float)
        if self.op != "==":
            return np.zeros(x.shape)
        return np.where(np.isnan(x), np.inf, np.abs(x - self.value) / self.scale)


def _pairs(value: Any, what: str) -> list[tuple[float, float]]:
    if not isinstance(value, Mapping):
        raise TargetError(f"{what} takes a mapping, e.g. {{0.9: 60}}; got {type(value).__name__}")
    return [(_number(k, f"a key of {what}"), _number(v, f"a value of {what}")) for k, v in value.items()]


@dataclass(frozen=True, init=False)
class Target:
    """What a designed board should achieve: a tuple of :class:`Goal` s.

    Parameters
    ----------
    *goals : Goal
        Goals given directly.
    mean, sd : float, optional
        Expected turns and their standard deviation to hit, within
        ``tolerance`` (relative).
    min_mean, max_mean, min_sd, max_sd : float, optional
        Bounds on the same.
    quantiles : mapping of float to float, optional
        ``{q: turns}``: quantiles of the length to hit (within ``tolerance``,
        at least one turn).
    max_quantiles : mapping of float to float, optional
        ``{q: turns}``: e.g. ``{0.95: 60}`` "19 games in 20 end within 60 turns".
    longer_than, max_longer_than, min_longer_than : mapping of int to float, optional
        ``{t: p}``: ``P(length > t)`` to hit (within ``probability_tolerance``),
        to stay at or below, or at or above.
    first_seat_advantage, max_first_seat_advantage : mapping of int to float, optional
        ``{players: a}``: seat 0's win chance minus ``1 / players`` (a race of
        independent tokens, classic mode), to hit or to stay below.
    min_ladder_share : float, optional
        Every ladder is used in at least this share of games.
    tolerance : float, default 0.02
        Relative tolerance of the goals in turns given by ``mean``, ``sd``
        and ``quantiles``.
    probability_tolerance : float, default 0.01
        Absolute tolerance of ``longer_than`` and ``first_seat_advantage``.

    Raises
    ------
    TargetError
        For no goal at all, or a goal out of range (the message says which).

    Examples
    --------
    >>> from snlmarkov import Target
    >>> t = Target(mean=25, max_sd=15, max_quantiles={0.95: 60})
    >>> [g.label for g in t.goals]
    ['mean == 25 +- 0.5', 'sd <= 15', 'q95 <= 60']
    >>> Target(max_longer_than={60: 1.5})
    Traceback (most recent call last):
    ...
    snlmarkov.errors.TargetError: a longer_than goal is a probability in [0, 1]; got 1.5
    """

    goals: tuple[Goal, ...]

    def __init__(  # noqa: C901
        self,
        *goals: Goal,
        mean: float | None = None,
        sd: float | None = None,
        min_mean: float | None = None,
        max_mean: float | None = None,
        min_sd: float | None = None,
        max_sd: float | None = None,
        quantiles: Mapping[float, float] | None = None,
        max_quantiles: Mapping[float, float] | None = None,
        longer_than: Mapping[int, float] | None = None,
        max_longer_than: Mapping[int, float] | None = None,
        min_longer_than: Mapping[int, float] | None = None,
        first_seat_advantage: Mapping[int, float] | None = None,
        max_first_seat_advantage: Mapping[int, float] | None = None,
        min_ladder_share: float | None = None,
        tolerance: float = 0.02,
        probability_tolerance: float = 0.01,
    ) -> None:
        rel = _number(tolerance, "tolerance")
        ptol = _number(probability_tolerance, "probability_tolerance")
        if rel < 0 or ptol < 0:
            raise TargetError("tolerances cannot be negative")
        out: list[Goal] = []
        for g in goals:
            if not isinstance(g, Goal):
                raise TargetError(f"positional arguments of Target are Goals; got {type(g).__name__}")
            out.append(g)
        for name, value, op in (("mean", mean, "=="), ("sd", sd, "==")):
            if value is not None:
                v = _number(value, name)
                out.append(Goal(name, op, v, tolerance=rel * abs(v)))
        for name, value, fig, op in (
            ("min_mean", min_mean, "mean", ">="),
            ("max_mean", max_mean, "mean", "<="),
            ("min_sd", min_sd, "sd", ">="),
            ("max_sd", max_sd, "sd", "<="),
        ):
            if value is not None:
                out.append(Goal(fig, op, _number(value, name)))
        for q, turns in _pairs(quantiles or {}, "quantiles"):
            out.append(Goal("quantile", "==", turns, at=q, tolerance=max(1.0, rel * abs(turns))))
        for q, turns in _pairs(max_quantiles or {}, "max_quantiles"):
            out.append(Goal("quantile", "<=", turns, at=q))
        for t, p in _pairs(longer_than or {}, "longer_than"):
            out.append(Goal("longer_than", "==", p, at=t, tolerance=ptol))
        for t, p in _pairs(max_longer_than or {}, "max_longer_than"):
            out.append(Goal("longer_than", "<=", p, at=t))
        for t, p in _pairs(min_longer_than or {}, "min_longer_than"):
            out.append(Goal("longer_than", ">=", p, at=t))
        for k, a in _pairs(first_seat_advantage or {}, "first_seat_advantage"):
            out.append(Goal("first_seat_advantage", "==", a, at=k, tolerance=ptol))
        for k, a in _pairs(max_first_seat_advantage or {}, "max_first_seat_advantage"):
            out.append(Goal("first_seat_advantage", "<=", a, at=k))
        if min_ladder_share is not None:
            out.append(Goal("ladder_share", ">=", _number(min_ladder_share, "min_ladder_share")))
        if not out:
            raise TargetError("a target needs at least one goal (e.g. Target(mean=25))")
        object.__setattr__(self, "goals", tuple(out))

    def __repr__(self) -> str:
        return f"Target({', '.join(g.label for g in self.goals)})"

    def needs(self, figure: str) -> bool:
        """True when some goal reads ``figure``."""
        return any(g.figure == figure for g in self.goals)

    def distance(self, figures: Mapping[str, np.ndarray]) -> np.ndarray:
        """Summed misses of every goal (0 where the target is met), from figures keyed by :attr:`Goal.key`."""
        total = np.zeros(np.shape(next(iter(figures.values()))))
        for g in self.goals:
            total = total + g.miss(figures[g.key])
        return total

    def offset(self, figures: Mapping[str, np.ndarray]) -> np.ndarray:
        """Summed :meth:`Goal.offset`: how far from the centre of each ``"=="`` goal (a tie-breaker)."""
        total = np.zeros(np.shape(next(iter(figures.values()))))
        for g in self.goals:
            total = total + g.offset(figures[g.key])
        return total


def _squares(value: Any, what: str) -> frozenset[int]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TargetError(f"{what} takes a collection of squares; got {show_value(value)}")
    out = set()
    for s in value:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TargetError(f"{what}: squares are whole numbers; got {show_value(s)}")
        out.add(int(s))
    return frozenset(out)


def _length(value: Any, what: str) -> float:
    if value == math.inf:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise TargetError(f"{what} must be a whole number of squares >= 1 (or math.inf); got {show_value(value)}")
    return math.inf if value > 2**53 else float(value)  # no longer jump fits on any board


@dataclass(frozen=True)
class Constraints:
    """What shape a designed board may take.

    Parameters
    ----------
    min_ladder_length, max_ladder_length : int, default 1 and inf
        How many squares a ladder may climb.
    min_snake_length, max_snake_length : int, default 1 and inf
        How many squares a snake may drop.
    must_jump : collection of int
        Squares that must hold the start of a ladder or a snake.
    no_jump : collection of int
        Squares where no ladder or snake may start or end.

    Raises
    ------
    TargetError
        For a length below 1, a minimum above its maximum, or a square both
        required and forbidden.

    Examples
    --------
    >>> from snlmarkov import Constraints
    >>> Constraints(max_snake_length=30, no_jump={99}).max_snake_length
    30.0
    >>> Constraints(min_ladder_length=20, max_ladder_length=10)
    Traceback (most recent call last):
    ...
    snlmarkov.errors.TargetError: min_ladder_length 20 is above max_ladder_length 10
    """

    min_ladder_length: float = 1
    max_ladder_length: float = math.inf
    min_snake_length: float = 1
    max_snake_length: float = math.inf
    must_jump: frozenset[int] = field(default_factory=frozenset)
    no_jump: frozenset[int] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        for name in ("min_ladder_length", "max_ladder_length", "min_snake_length", "max_snake_length"):
            object.__setattr__(self, name, _length(getattr(self, name), name))
        for kind in ("ladder", "snake"):
            lo, hi = getattr(self, f"min_{kind}_length"), getattr(self, f"max_{kind}_length")
            if lo > hi:
                raise TargetError(f"min_{kind}_length {lo:g} is above max_{kind}_length {hi:g}")
        must, never = _squares(self.must_jump, "must_jump"), _squares(self.no_jump, "no_jump")
        both = sorted(must & never)
        if both:
            raise TargetError(f"square {show_value(both[0])} is both in must_jump and in no_jump")
        object.__setattr__(self, "must_jump", must)
        object.__setattr__(self, "no_jump", never)

    def check(self, size: int, ladders: int, snakes: int) -> None:
        """Refuse constraints no board of this size and jump count can meet (the message says why)."""
        for s in sorted(self.must_jump | self.no_jump):
            if not 1 <= s <= size - 1:
                raise TargetError(f"square {show_value(s)} is not a square 1..{size - 1} where a jump may start")
        if len(self.must_jump) > ladders + snakes:
            raise TargetError(
                f"{len(self.must_jump)} squares must hold a jump, but the board has {ladders + snakes} jumps"
            )
        if ladders and self.min_ladder_length > size - 1:
            raise TargetError(f"no ladder on a board of {size} squares climbs {self.min_ladder_length:g}")
        if snakes and self.min_snake_length > size - 2:
            raise TargetError(f"no snake on a board of {size} squares drops {self.min_snake_length:g}")
        free = size - 1 - len(self.no_jump)
        if 2 * (ladders + snakes) > free + len(self.must_jump) and ladders + snakes > free:
            raise TargetError(f"{ladders + snakes} jumps do not fit on the {free} squares left free")

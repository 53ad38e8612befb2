"""Seats at the table: a player's name, token colour, and who chooses for it.

Under a rule set with a choice (``docs/rules.md``, "Choices") a seat is a
human, who chooses through the engine (:meth:`Game.choose
<snlmarkov.game.engine.Game.choose>`, :meth:`Game.pick
<snlmarkov.game.engine.Game.pick>`), or an AI seat that plays a policy: a
:class:`~snlmarkov.policy.Policy`, or the strength ``"random"`` or
``"greedy"``. The strength ``"optimal"`` is a solved policy, which the
engine cannot make: pass ``policy=snl.optimal_policy(board, rules)``.

Examples
--------
>>> from snlmarkov.game.seats import Seat
>>> Seat("Ann", "red")
Seat(name='Ann', colour='red')
>>> Seat("Bot", "blue", policy="greedy").strength
'greedy'
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import GameError, LimitError
from ..limits import MAX_SEATS, clean_text, show_value
from ..policy import Policy
from .events import _is_int

__all__ = ["Seat", "COLOURS"]

#: The strengths of a seat: a human chooses through the engine; the others play a policy.
STRENGTHS = ("human", "random", "greedy", "optimal")

#: Default token colours, given to seats in order (then cycling).
COLOURS = ("red", "blue", "green", "yellow", "purple", "orange")


@dataclass(frozen=True)
class Seat:
    """A player at the table: a name, a token colour and, for an AI seat, its policy.

    Parameters
    ----------
    name : str
        The player's name (not empty, at most 100 characters of valid text;
        surrounding spaces are removed). Control characters are escaped
        whenever a name is printed.
    colour : str
        The token's colour (the same rules).
    policy : Policy or {"random", "greedy"}, optional
        Who chooses for the seat under a rule set with a choice: ``None`` (a
        human: the game waits for :meth:`Game.choose
        <snlmarkov.game.engine.Game.choose>` or :meth:`Game.pick
        <snlmarkov.game.engine.Game.pick>`), a :class:`~snlmarkov.policy.Policy`
        (a solved one for an ``"optimal"`` seat), or a strength:
        ``"greedy"`` (:meth:`Policy.greedy`) or ``"random"``
        (:meth:`Policy.random`, seeded from the seat's name, so that a seeded
        game plays the same). Under rules without a choice the seat just
        rolls. Neither compared by ``==`` nor stored in a record (a record
        holds the choices made).

    Raises
    ------
    GameError
        For a bad name or colour, or a policy that is neither a Policy nor a
        strength (``"optimal"`` names a solved policy: pass it).

    Examples
    --------
    >>> Seat("Ann", "red")
    Seat(name='Ann', colour='red')
    >>> Seat.default(7)
    Seat(name='Player 8', colour='blue')
    """

    name: str
    colour: str
    policy: Policy | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for attr in ("name", "colour"):
            value = getattr(self, attr)
            if not isinstance(value, str) or not value.strip():
                raise GameError(f"a seat's {attr} must be a non-empty string; got {clean_text(repr(value))[:60]}")
            if len(value) > 100:
                raise GameError(f"a seat's {attr} holds at most 100 characters; got {len(value)}")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise GameError(f"a seat's {attr} {clean_text(value)!r} is not valid text (a lone surrogate)") from None
            object.__setattr__(self, attr, value.strip())
        pol: Any = self.policy  # a strength's name until made a Policy here
        if pol == "optimal":
            raise GameError(
                "an optimal seat plays a solved policy, which the engine cannot make: "
                "pass policy=snlmarkov.optimal_policy(board, rules)"
            )
        if pol == "greedy":
            object.__setattr__(self, "policy", Policy.greedy())
        elif pol == "random":
            seed = int.from_bytes(hashlib.sha256(self.name.encode("utf-8")).digest()[:7], "little")
            object.__setattr__(self, "policy", Policy("random", seed=seed))
        elif pol is not None and not isinstance(pol, Policy):
            raise GameError(
                f"a seat's policy must be a Policy, 'random', 'greedy' or None (a human); got {show_value(pol)}"
            )

    def __repr__(self) -> str:
        extra = "" if self.policy is None else f", strength={self.strength!r}"
        return f"Seat(name={self.name!r}, colour={self.colour!r}{extra})"

    @property
    def strength(self) -> str:
        """``"human"`` (no policy), ``"random"``, ``"greedy"``, ``"optimal"`` (a solved policy) or the policy's name.

        Examples
        --------
        >>> from snlmarkov import Policy
        >>> Seat("Ann", "red").strength, Seat("Bot", "red", policy=Policy.fixed(6)).strength
        ('human', 'always d6')
        """
        pol = self.policy
        if pol is None:
            return "human"
        return {"random": "random", "greedy": "greedy", "table": "optimal"}.get(pol.kind, pol.name)

    @property
    def is_human(self) -> bool:
        """Whether the game waits for this seat's choices (it has no policy)."""
        return self.policy is None

    def without_policy(self) -> Seat:
        """The same seat as a human (how a record's seats replay)."""
        return Seat(self.name, self.colour)

    @classmethod
    def default(cls, index: int, name: str | None = None) -> Seat:
        """The seat at 0-based ``index`` with default name ``"Player <index+1>"``
        (unless ``name`` is given) and colour ``COLOURS[index % 6]``.

        Examples
        --------
        >>> Seat.default(0), Seat.default(1, "Bob")
        (Seat(name='Player 1', colour='red'), Seat(name='Bob', colour='blue'))
        """
        if not _is_int(index) or index < 0:
            raise GameError(f"a seat index must be an integer >= 0; got {index!r}")
        return cls(f"Player {index + 1}" if name is None else name, COLOURS[index % len(COLOURS)])

    def to_dict(self) -> dict[str, str]:
        """The seat as plain data (round-trips through ``Seat(**d)``).

        Examples
        --------
        >>> Seat("Ann", "red").to_dict()
        {'name': 'Ann', 'colour': 'red'}
        """
        return {"name": self.name, "colour": self.colour}


def _make_seats(players: Any) -> tuple[Seat, ...]:
    """Seats from a count or from a sequence of names and Seats."""
    if _is_int(players):
        if players < 1:
            raise GameError(f"players must be at least 1; got {show_value(players)}")
        if players > MAX_SEATS:
            raise LimitError(
                f"a game seats at most {MAX_SEATS} players (snlmarkov.limits.MAX_SEATS); got {show_value(players)}"
            )
        return tuple(Seat.default(i) for i in range(int(players)))
    if isinstance(players, (str, bytes)) or not isinstance(players, Iterable):
        raise GameError(f"players must be a count or a list of names or Seats; got {players!r}")
    seats = []
    for i, item in enumerate(players):
        if isinstance(item, Seat):
            seats.append(item)
        elif isinstance(item, str):
            seats.append(Seat.default(i, item))
        else:
            raise GameError(f"players[{i}] must be a name or a Seat; got {item!r}")
        if len(seats) > MAX_SEATS:
            raise LimitError(f"a game seats at most {MAX_SEATS} players (snlmarkov.limits.MAX_SEATS)")
    if not seats:
        raise GameError("players must name at least one seat")
    names = [s.name for s in seats]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise GameError(f"seat names must be distinct; {dup[0]!r} is used twice")
    return tuple(seats)

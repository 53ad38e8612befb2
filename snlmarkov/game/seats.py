"""Seats at the table: a player's name and token colour.

Examples
--------
>>> from snlmarkov.game.seats import Seat
>>> Seat("Ann", "red")
Seat(name='Ann', colour='red')
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import GameError, LimitError
from ..limits import MAX_SEATS, clean_text, show_value
from .events import _is_int

__all__ = ["Seat", "COLOURS"]

#: Default token colours, given to seats in order (then cycling).
COLOURS = ("red", "blue", "green", "yellow", "purple", "orange")


@dataclass(frozen=True)
class Seat:
    """A player at the table: a name and a token colour.

    Parameters
    ----------
    name : str
        The player's name (not empty, at most 100 characters of valid text;
        surrounding spaces are removed). Control characters are escaped
        whenever a name is printed.
    colour : str
        The token's colour (the same rules).

    Examples
    --------
    >>> Seat("Ann", "red")
    Seat(name='Ann', colour='red')
    >>> Seat.default(7)
    Seat(name='Player 8', colour='blue')
    """

    name: str
    colour: str

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

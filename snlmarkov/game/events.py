"""Events: what happened in a game, one small immutable record per step.

Every event names the ``seat`` (0-based index) it concerns and the global
``turn`` (0-based: the first turn of the game is turn 0, a skipped turn is a
turn too) in which it happened, and has a ``kind`` string. A turn's events
come in the order they happened:

* a roll: :class:`Roll`, then what it did: :class:`Enter` or
  :class:`FailedEnter` (six to start), :class:`Forfeit` (a six on a capped
  roll under ``on_cap="forfeit"``), :class:`Restart` (a six on a capped roll
  under ``on_cap="restart"``), :class:`Overshoot` (``finish="stay"``),
  or :class:`Bounce` (``finish="bounce"``) followed by :class:`Move`, or just
  :class:`Move`; then :class:`Ladder` or :class:`Snake` if the landing square
  starts a jump (on a chained board, one event per jump of the chain, in
  order; none after a bounce when ``jump_after_bounce`` is off);
* :class:`BonusRoll` when a six earned another roll, and :class:`CapReached`
  just before a roll made after the turn already holds ``max_sixes`` sixes;
* at the end of the turn, :class:`Bump` if the token ended on an occupied
  square, :class:`Finish` if it reached the finish, :class:`GameOver` if the
  game ended;
* a skipped turn holds a single :class:`Skip`.

Under a rule set with a choice (``docs/rules.md``, "Choices") each roll is
preceded by the mover's choice: :class:`ChooseDie` (``choose_die``: the die
picked, before the roll it is rolled for), or :class:`RolledDice` (the ``k``
dice thrown under ``choose_move``) and :class:`ChooseMove` (the value
picked); the :class:`Roll` that follows is the value that moves. A
:class:`CapReached` comes before the choice.

Events convert to plain data with :meth:`Event.to_dict` and back with
:func:`event_from_dict`, and say what happened in words with
:meth:`Event.describe`.

Examples
--------
>>> from snlmarkov.game.events import Roll, Move, event_from_dict
>>> e = Roll(seat=0, turn=3, value=6, capped=False)
>>> e.to_dict()
{'kind': 'roll', 'seat': 0, 'turn': 3, 'value': 6, 'capped': False}
>>> event_from_dict(e.to_dict()) == e
True
>>> Move(seat=1, turn=4, start=3, end=9).describe("Bob")
'Bob moves from 3 to 9'
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import GameError
from ..limits import MAX_CHOICES

__all__ = []


def _positive() -> Any:
    """A field that must be an integer >= 1 (the default for int fields is >= 0)."""
    return field(metadata={"min": 1})


@dataclass(frozen=True)
class Event:
    """Base class of all events: who (``seat``) and when (``turn``).

    Parameters
    ----------
    seat : int
        Index of the seat the event concerns (0-based).
    turn : int
        Global index of the turn (0-based, counting every seat's turns).

    Raises
    ------
    GameError
        If a field has the wrong type or is out of range.

    Examples
    --------
    >>> from snlmarkov.game.events import Skip
    >>> Skip(seat=2, turn=7)
    Skip(seat=2, turn=7)
    >>> Skip(seat=-1, turn=0)
    Traceback (most recent call last):
    ...
    snlmarkov.errors.GameError: Skip.seat must be an integer >= 0; got -1
    """

    kind: ClassVar[str] = "event"

    seat: int
    turn: int

    def __post_init__(self) -> None:
        for field_name, field_type, low in _field_specs(type(self)):  # type: ignore[arg-type]
            value = getattr(self, field_name)
            name = f"{type(self).__name__}.{field_name}"
            if field_type == "bool":
                if not isinstance(value, bool):
                    raise GameError(f"{name} must be True or False; got {value!r}")
            elif field_type == "str":
                if not isinstance(value, str) or not 0 < len(value) <= 200 or not value.isprintable():
                    raise GameError(f"{name} must be a short printable string; got {value!r}"[:200])
            elif field_type == "int":
                if type(value) is int and value >= low:
                    continue  # the common case, kept fast: games make many events
                if not _is_int(value) or value < low:
                    raise GameError(f"{name} must be an integer >= {low}; got {value!r}")
                object.__setattr__(self, field_name, int(value))
            else:  # a tuple of seat indices (or die values)
                what = "die values" if field_name == "values" else "seat indices"
                if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                    raise GameError(f"{name} must be a sequence of {what}; got {value!r}"[:300])
                items = tuple(value)
                if field_name == "values" and len(items) > MAX_CHOICES:
                    raise GameError(f"{name} holds {len(items)} dice; at most {MAX_CHOICES} are thrown")
                if not all(_is_int(v) and v >= 0 for v in items):
                    raise GameError(f"{name} must hold {what} >= 0; got {items!r}"[:300])
                object.__setattr__(self, field_name, tuple(int(v) for v in items))

    def to_dict(self) -> dict[str, Any]:
        """The event as plain JSON-ready data, with its ``kind``.

        Examples
        --------
        >>> from snlmarkov.game.events import GameOver
        >>> GameOver(seat=1, turn=9, finishing_order=(1, 0)).to_dict()
        {'kind': 'game_over', 'seat': 1, 'turn': 9, 'finishing_order': [1, 0]}
        """
        out: dict[str, Any] = {"kind": self.kind}
        for name, _, _ in _field_specs(type(self)):  # type: ignore[arg-type]
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out

    def describe(self, name: str) -> str:
        """What happened, in words, for a player called ``name``.

        Examples
        --------
        >>> from snlmarkov.game.events import Ladder
        >>> Ladder(seat=0, turn=0, start=1, end=38).describe("Ann")
        'Ann climbs the ladder from 1 to 38'
        """
        return f"{name}: {self.kind}"


@dataclass(frozen=True)
class Roll(Event):
    """A throw of the die.

    ``value`` is a value of the rules' die (0 for a die with a 0 face: such a
    roll moves nothing and no other event follows it). ``capped`` is True
    when the turn already held ``max_sixes`` sixes: under
    ``on_cap="redeal"`` the value was drawn from the die without its top
    value; under ``"forfeit"`` the top value voids the turn (a
    :class:`Forfeit` follows); under ``"restart"`` it sends the token home (a
    :class:`Restart` follows).

    Examples
    --------
    >>> Roll(seat=0, turn=0, value=3, capped=True).describe("Ann")
    'Ann rolls a 3 (capped roll)'
    """

    kind: ClassVar[str] = "roll"

    value: int
    capped: bool = False

    def describe(self, name: str) -> str:
        return f"{name} rolls a {self.value}" + (" (capped roll)" if self.capped else "")


@dataclass(frozen=True)
class ChooseDie(Event):
    """Under ``choose_die``: the mover picks die number ``die`` (0-based, in
    ``rules.choose_die``; ``spec`` is its text form) for the roll that follows.

    Examples
    --------
    >>> ChooseDie(seat=0, turn=0, die=1, spec="d6").describe("Ann")
    'Ann chooses the d6'
    """

    kind: ClassVar[str] = "choose_die"

    die: int
    spec: str

    def describe(self, name: str) -> str:
        return f"{name} chooses the {self.spec}"


@dataclass(frozen=True)
class RolledDice(Event):
    """Under ``choose_move``: the ``k`` dice thrown (``values``, in the order
    drawn); ``capped`` as for :class:`Roll` (drawn from the die without its
    top value at the cap under ``redeal``). A :class:`ChooseMove` follows.

    Examples
    --------
    >>> RolledDice(seat=0, turn=0, values=(2, 5), capped=False).describe("Ann")
    'Ann rolls 2 and 5'
    """

    kind: ClassVar[str] = "rolled_dice"

    values: tuple[int, ...]
    capped: bool = False

    def describe(self, name: str) -> str:
        shown = ", ".join(map(str, self.values[:-1])) + f" and {self.values[-1]}" if self.values else "nothing"
        return f"{name} rolls {shown}" + (" (capped roll)" if self.capped else "")


@dataclass(frozen=True)
class ChooseMove(Event):
    """Under ``choose_move``: the mover moves by ``value``, one of the dice
    just rolled (a :class:`Roll` of that value follows).

    Examples
    --------
    >>> ChooseMove(seat=0, turn=0, value=5).describe("Ann")
    'Ann moves by the 5'
    """

    kind: ClassVar[str] = "choose_move"

    value: int

    def describe(self, name: str) -> str:
        return f"{name} moves by the {self.value}"


@dataclass(frozen=True)
class Enter(Event):
    """Six to start: the six just rolled brings the token into play (it does
    not move it); the player rolls again at once and moves from square 0.

    Examples
    --------
    >>> Enter(seat=0, turn=0).describe("Ann")
    'Ann is in play and rolls again'
    """

    kind: ClassVar[str] = "enter"

    def describe(self, name: str) -> str:
        return f"{name} is in play and rolls again"


@dataclass(frozen=True)
class FailedEnter(Event):
    """Six to start: the roll just made was not a six, the token stays on 0
    and the turn ends.

    Examples
    --------
    >>> FailedEnter(seat=0, turn=0).describe("Ann")
    'Ann needs a six to start'
    """

    kind: ClassVar[str] = "failed_enter"

    def describe(self, name: str) -> str:
        return f"{name} needs a six to start"


@dataclass(frozen=True)
class Move(Event):
    """The token moves by a roll from ``start`` to the landing square ``end``
    (before any jump; after counting back under ``bounce``).

    Examples
    --------
    >>> Move(seat=0, turn=0, start=0, end=4).describe("Ann")
    'Ann moves from 0 to 4'
    """

    kind: ClassVar[str] = "move"

    start: int
    end: int

    def describe(self, name: str) -> str:
        return f"{name} moves from {self.start} to {self.end}"


@dataclass(frozen=True)
class Bounce(Event):
    """``finish="bounce"``: the roll overshot the finish; the token counts up
    to it and back, landing on ``target`` (a :class:`Move` to ``target``
    follows).

    Examples
    --------
    >>> Bounce(seat=0, turn=0, target=98).describe("Ann")
    'Ann overshoots the finish and bounces back to 98'
    """

    kind: ClassVar[str] = "bounce"

    target: int

    def describe(self, name: str) -> str:
        return f"{name} overshoots the finish and bounces back to {self.target}"


@dataclass(frozen=True)
class Overshoot(Event):
    """``finish="stay"``: a roll of ``value`` from ``square`` would pass the
    finish, so the token stays on ``square`` and the turn ends.

    Examples
    --------
    >>> Overshoot(seat=0, turn=0, square=97, value=5).describe("Ann")
    'Ann cannot move 5 from 97 and stays'
    """

    kind: ClassVar[str] = "overshoot"

    square: int
    value: int = _positive()

    def describe(self, name: str) -> str:
        return f"{name} cannot move {self.value} from {self.square} and stays"


@dataclass(frozen=True)
class Ladder(Event):
    """The token landed on the foot of a ladder at ``start`` and climbs to ``end``.

    Examples
    --------
    >>> Ladder(seat=0, turn=0, start=28, end=84).describe("Ann")
    'Ann climbs the ladder from 28 to 84'
    """

    kind: ClassVar[str] = "ladder"

    start: int
    end: int

    def describe(self, name: str) -> str:
        return f"{name} climbs the ladder from {self.start} to {self.end}"


@dataclass(frozen=True)
class Snake(Event):
    """The token landed on a snake's head at ``start`` and slides to ``end``.

    Examples
    --------
    >>> Snake(seat=0, turn=0, start=99, end=27).describe("Ann")
    'Ann slides down the snake from 99 to 27'
    """

    kind: ClassVar[str] = "snake"

    start: int
    end: int

    def describe(self, name: str) -> str:
        return f"{name} slides down the snake from {self.start} to {self.end}"


@dataclass(frozen=True)
class BonusRoll(Event):
    """The six just moved earned another roll in the same turn.

    Examples
    --------
    >>> BonusRoll(seat=0, turn=0).describe("Ann")
    'Ann rolled a six and rolls again'
    """

    kind: ClassVar[str] = "bonus_roll"

    def describe(self, name: str) -> str:
        return f"{name} rolled a six and rolls again"


@dataclass(frozen=True)
class CapReached(Event):
    """The turn holds ``sixes`` (= ``max_sixes``) sixes: the next roll, which
    follows at once, is a capped roll.

    Examples
    --------
    >>> CapReached(seat=0, turn=0, sixes=2).describe("Ann")
    'Ann has rolled 2 sixes this turn: the next roll is capped'
    """

    kind: ClassVar[str] = "cap_reached"

    sixes: int = _positive()

    def describe(self, name: str) -> str:
        plural = "six" if self.sixes == 1 else "sixes"
        return f"{name} has rolled {self.sixes} {plural} this turn: the next roll is capped"


@dataclass(frozen=True)
class Forfeit(Event):
    """``on_cap="forfeit"``: a six on the capped roll voids the whole turn;
    the token goes back to ``back_to``, the square where the turn began.

    Examples
    --------
    >>> Forfeit(seat=0, turn=0, back_to=12).describe("Ann")
    'Ann rolled one six too many: the turn is void, back to 12'
    """

    kind: ClassVar[str] = "forfeit"

    back_to: int

    def describe(self, name: str) -> str:
        return f"{name} rolled one six too many: the turn is void, back to {self.back_to}"


@dataclass(frozen=True)
class Restart(Event):
    """``on_cap="restart"``: a six on the capped roll ends the turn at once
    and sends the token from ``from_square`` back to square 0, off the board
    (under six to start it must enter again). The six moves nothing and
    lands nowhere.

    Examples
    --------
    >>> Restart(seat=0, turn=0, from_square=12).describe("Ann")
    'Ann rolled one six too many: back to the start from 12'
    """

    kind: ClassVar[str] = "restart"

    from_square: int

    def describe(self, name: str) -> str:
        return f"{name} rolled one six too many: back to the start from {self.from_square}"


@dataclass(frozen=True)
class Bump(Event):
    """``bump``: the turn ended on ``from_square``, where another token
    stands, so the token is placed on ``to_square`` (``bump_to``; no jump
    there acts). ``from_square`` may equal ``to_square`` when both tokens
    stand on ``bump_to``.

    Examples
    --------
    >>> Bump(seat=0, turn=0, from_square=40, to_square=1).describe("Ann")
    'Ann ends on an occupied square (40) and goes back to 1'
    """

    kind: ClassVar[str] = "bump"

    from_square: int
    to_square: int

    def describe(self, name: str) -> str:
        return f"{name} ends on an occupied square ({self.from_square}) and goes back to {self.to_square}"


@dataclass(frozen=True)
class Skip(Event):
    """The seat's turn was skipped (a stalled player): no roll, no move.

    Examples
    --------
    >>> Skip(seat=0, turn=0).describe("Ann")
    'Ann is skipped'
    """

    kind: ClassVar[str] = "skip"

    def describe(self, name: str) -> str:
        return f"{name} is skipped"


@dataclass(frozen=True)
class Finish(Event):
    """The token reached the finish and takes finishing ``place`` (1 = first).

    Examples
    --------
    >>> Finish(seat=0, turn=0, place=2).describe("Ann")
    'Ann reaches the finish in place 2'
    """

    kind: ClassVar[str] = "finish"

    place: int = _positive()

    def describe(self, name: str) -> str:
        return f"{name} reaches the finish in place {self.place}"


@dataclass(frozen=True)
class GameOver(Event):
    """The game has ended; ``finishing_order`` lists seat indices, the
    winner first (in ``classic`` mode it holds only the winner). ``seat`` is
    the seat whose turn ended the game.

    Examples
    --------
    >>> GameOver(seat=1, turn=9, finishing_order=(1,)).describe("Bob")
    'game over after the turn of Bob'
    """

    kind: ClassVar[str] = "game_over"

    finishing_order: tuple[int, ...] = ()

    def describe(self, name: str) -> str:
        return f"game over after the turn of {name}"


#: Event classes by their ``kind``.
EVENT_TYPES: Mapping[str, type[Event]] = types.MappingProxyType(
    {
        cls.kind: cls
        for cls in (
            Roll,
            ChooseDie,
            RolledDice,
            ChooseMove,
            Enter,
            FailedEnter,
            Move,
            Bounce,
            Overshoot,
            Ladder,
            Snake,
            BonusRoll,
            CapReached,
            Forfeit,
            Restart,
            Bump,
            Skip,
            Finish,
            GameOver,
        )
    }
)


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event from :meth:`Event.to_dict` data.

    Raises
    ------
    GameError
        If the kind is unknown, a field is missing or extra, or a value is
        invalid.

    Examples
    --------
    >>> event_from_dict({"kind": "snake", "seat": 0, "turn": 5, "start": 16, "end": 6})
    Snake(seat=0, turn=5, start=16, end=6)
    >>> event_from_dict({"kind": "teleport", "seat": 0, "turn": 5})
    Traceback (most recent call last):
    ...
    snlmarkov.errors.GameError: unknown event kind 'teleport'
    """
    if not isinstance(data, Mapping):
        raise GameError(f"an event must be a mapping with a 'kind'; got {data!r}")
    kind = data.get("kind")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise GameError(f"unknown event kind {kind!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    given = set(data) - {"kind"}
    if given != names:
        missing, extra = sorted(names - given), sorted(map(str, given - names))
        raise GameError(f"{kind} event: missing {missing or 'nothing'}, unexpected {extra or 'nothing'}")
    return cls(**{name: data[name] for name in names})


@functools.cache
def _field_specs(cls: type) -> tuple[tuple[str, str, int], ...]:
    """``(name, type, minimum)`` of each field of an event class."""
    return tuple((f.name, str(f.type), f.metadata.get("min", 0)) for f in dataclasses.fields(cls))


def _is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (numpy integers included, bools not)."""
    return type(value) is int or (isinstance(value, numbers.Integral) and not isinstance(value, bool))

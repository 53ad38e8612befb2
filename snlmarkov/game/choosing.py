"""Choices in a game: what the mover must decide, and the AI seats that decide by a policy.

Under a rule set with a choice (``docs/rules.md``, "Choices") the engine
stops before every roll under ``choose_die`` (which die?) and after every
throw of the ``k`` dice under ``choose_move`` (which value?). It describes
the choice as a :class:`Decision`; a seat with a policy answers it at once
(:func:`seat_choosers`, the policy resolved on the play side with
:func:`~snlmarkov.playkernel.resolve_policy`), and for a human seat the game
waits for :meth:`Game.choose <snlmarkov.game.engine.Game.choose>` or
:meth:`Game.pick <snlmarkov.game.engine.Game.pick>`.

Examples
--------
>>> from snlmarkov import Board, Rules
>>> from snlmarkov.game.seats import Seat
>>> rules = Rules(choose_die=(4, 6))
>>> d = Decision(seat=0, turn=0, kind="die", square=0, sixes=0, origin=0, capped=False,
...              options=rules.choose_die, others=(0,))
>>> choose = seat_choosers(Board(10, {5: 9}), rules, (Seat("Bot", "red", policy="greedy"), Seat("Ann", "blue")))
>>> choose[0](d), choose[1] is None
(1, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..board import Board
from ..errors import GameError
from ..playkernel import resolve_policy
from ..rules import Rules
from .seats import Seat

__all__ = ["Decision"]

#: What a decision chooses: a die (``choose_die``), or a value among the dice thrown (``choose_move``).
DECISION_KINDS = ("die", "move")


@dataclass(frozen=True)
class Decision:
    """A choice the mover must make before the turn goes on.

    Attributes
    ----------
    seat, turn : int
        Who chooses, in which turn (as the events say).
    kind : {"die", "move"}
        ``"die"``: pick one of :attr:`options` (the dice of
        ``rules.choose_die``) with :meth:`Game.choose
        <snlmarkov.game.engine.Game.choose>` (its index, or the die);
        ``"move"``: pick one of :attr:`options` (the values just thrown)
        with :meth:`Game.pick <snlmarkov.game.engine.Game.pick>`.
    square : int
        Where the mover's token stands now (the turn may have moved it).
    sixes : int
        The sixes of the turn so far (the entering six included).
    origin : int
        The square the turn began on.
    capped : bool
        The roll is made at the cap (``sixes >= max_sixes``).
    options : tuple
        The dice offered (:class:`~snlmarkov.dice.Die`), or the values thrown (int).
    others : tuple of int
        The other seats' squares, in seat order without the mover's (what a
        race policy reads; a finished seat is on the finish).
    """

    seat: int
    turn: int
    kind: str
    square: int
    sixes: int
    origin: int
    capped: bool
    options: tuple[Any, ...]
    others: tuple[int, ...]

    def __post_init__(self) -> None:
        if self.kind not in DECISION_KINDS:
            raise GameError(f"a decision's kind is 'die' or 'move'; got {self.kind!r}")

    def describe(self, name: str) -> str:
        """What the mover is asked, in words.

        Examples
        --------
        >>> Decision(0, 3, "move", 40, 0, 40, False, (2, 5), ()).describe("Ann")
        'Ann rolled 2 and 5 on 40: which value does Ann move by?'
        """
        if self.kind == "die":
            dice = ", ".join(f"{i}: {d.spec}" for i, d in enumerate(self.options))
            return f"{name} is on {self.square}: which die does {name} roll? ({dice})"
        shown = ", ".join(map(str, self.options[:-1])) + f" and {self.options[-1]}"
        return f"{name} rolled {shown} on {self.square}: which value does {name} move by?"


#: A seat's chooser: the answer to a decision (a die's index, or the value moved).
Chooser = Callable[[Decision], int]


def seat_choosers(board: Board, rules: Rules, seats: Sequence[Seat]) -> tuple[Chooser | None, ...]:
    """For each seat, the function that answers its decisions by its policy; ``None`` for a human seat.

    Each policy is resolved once for the board and rules (a greedy one from
    the play kernel). A race policy (one that reads other tokens' squares)
    must read exactly the other seats of this game.

    Raises
    ------
    PolicyError
        If a policy does not fit the board or the rules.
    GameError
        If a race policy reads another number of tokens than the other seats.
    """
    if not rules.choice:
        return tuple(None for _ in seats)
    out: list[Chooser | None] = []
    resolved: dict[int, Any] = {}
    for i, seat in enumerate(seats):
        if seat.policy is None:
            out.append(None)
            continue
        key = id(seat.policy)
        if key not in resolved:
            resolved[key] = resolve_policy(seat.policy, board, rules)
        table = resolved[key]
        if table.others not in (0, len(seats) - 1):
            raise GameError(
                f"seat {i} ({seat.name}) plays a policy for a race of {table.others + 1} tokens; "
                f"this game has {len(seats)} seats"
            )
        out.append(_chooser(table, rules.choice == "die", table.others > 0))
    return tuple(out)


def _chooser(table: Any, die: bool, race: bool) -> Chooser:
    def choose(d: Decision) -> int:
        others = d.others if race else ()
        if die:
            return int(table.die_index(d.square, d.sixes, d.origin, others))
        return int(table.pick(d.square, d.sixes, d.origin, d.options, others))

    return choose

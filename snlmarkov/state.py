"""The state of a game between two turns: every token's square, who has finished, who moves next.

A :class:`GameState` is what ``docs/rules.md`` calls the state of a game: the
square of every seat's token, the seats already finished (in finishing
order) and the seat to move next. It is plain configuration (it imports
nothing but the board, the rules and the errors), so the playable engine,
the simulator and the exact race models all speak it:
``Game(..., state=s)`` and ``simulate(..., state=s)`` start there,
``race(..., state=s)`` and :class:`~snlmarkov.races.odds.Odds` give the odds
from there.

A state on its own only knows its seats; :meth:`GameState.validate` checks
it against a board, a rule set and a mode (squares on the board, finished
seats on the finish, the seat to move still racing, no two tokens sharing a
square the bump rule keeps single). Every refusal is a
:class:`~snlmarkov.errors.GameError` naming the field.

Examples
--------
>>> from snlmarkov import Board, GameState, Rules
>>> s = GameState((90, 30), to_move=1)
>>> s.players, s.racing
(2, (0, 1))
>>> s.validate(Board.builtin(), Rules(), "classic") is s
True
>>> GameState((90, 130)).validate(Board.builtin(), Rules(), "classic")
Traceback (most recent call last):
...
snlmarkov.errors.GameError: GameState.positions[1] = 130 is off the board (squares 0..100)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .board import Board
from .errors import GameError, LimitError
from .limits import MAX_BOARD_SIZE, MAX_SEATS, limit, show_value
from .rules import MODES, Rules

__all__ = ["GameState"]


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise GameError(f"GameState.{what} must be an integer; got {show_value(value)}")
    return int(value.__index__())


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)):
        raise GameError(f"GameState.{what} must be a sequence of integers; got {show_value(value)}")
    try:
        items = tuple(value)
    except TypeError:
        raise GameError(f"GameState.{what} must be a sequence of integers; got {show_value(value)}") from None
    return tuple(_int(v, f"{what}[{i}]") for i, v in enumerate(items))


@dataclass(frozen=True)
class GameState:
    """A game between two turns.

    Parameters
    ----------
    positions : sequence of int
        The square of every seat's token, seat 0 first (0 = off the board,
        ``N`` = finished).
    to_move : int, default 0
        The seat that plays the next turn. Once the game is over it is the
        seat that played the last turn (as :attr:`Game.current_seat
        <snlmarkov.game.engine.Game.current_seat>`).
    places : sequence of int, default ()
        The seats that have finished, in the order they finished (under
        ``classic`` at most the winner).

    Raises
    ------
    GameError
        For a field that is not what it should be, naming it: no seats, a
        negative square, ``to_move`` not a seat, a seat finished twice.

    See Also
    --------
    GameState.validate : the checks that need the board, rules and mode.

    Examples
    --------
    >>> GameState.initial(3)
    GameState(positions=(0, 0, 0), to_move=0, places=())
    >>> GameState([100, 40, 100], to_move=1, places=[2, 0]).racing
    (1,)
    >>> GameState((3, 4), to_move=2)
    Traceback (most recent call last):
    ...
    snlmarkov.errors.GameError: GameState.to_move must be a seat 0..1; got 2
    """

    positions: tuple[int, ...]
    to_move: int = 0
    places: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        positions = _ints(self.positions, "positions")
        if not positions:
            raise GameError("GameState.positions must hold at least one seat's square")
        if len(positions) > MAX_SEATS:
            raise LimitError(f"GameState.positions holds {len(positions):,} seats; a game seats at most {MAX_SEATS}")
        largest = MAX_BOARD_SIZE if max(positions) <= MAX_BOARD_SIZE else limit("board_size")
        for i, p in enumerate(positions):
            if p < 0:
                raise GameError(f"GameState.positions[{i}] = {show_value(p)} is not a square (squares are >= 0)")
            if p > largest:  # on no board: refused here, so that no message or repr writes it out
                raise GameError(
                    f"GameState.positions[{i}] = {show_value(p)} is not a square of any board (at most {largest:,})"
                )
        k = len(positions)
        to_move = _int(self.to_move, "to_move")
        if not 0 <= to_move < k:
            raise GameError(f"GameState.to_move must be a seat 0..{k - 1}; got {show_value(to_move)}")
        places = _ints(self.places, "places")
        for i, seat in enumerate(places):
            if not 0 <= seat < k:
                raise GameError(f"GameState.places[{i}] = {show_value(seat)} is not a seat 0..{k - 1}")
        if len(set(places)) != len(places):
            raise GameError(f"GameState.places lists a seat twice: {places}")
        object.__setattr__(self, "positions", positions)
        object.__setattr__(self, "to_move", to_move)
        object.__setattr__(self, "places", places)

    @classmethod
    def initial(cls, players: int) -> GameState:
        """The start of a game: every token on square 0, seat 0 to move.

        Examples
        --------
        >>> GameState.initial(2)
        GameState(positions=(0, 0), to_move=0, places=())
        """
        k = _int(players, "players")
        if k < 1:
            raise GameError(f"a game state needs at least one seat; got players={k}")
        return cls((0,) * k)

    @property
    def players(self) -> int:
        """Number of seats."""
        return len(self.positions)

    @property
    def racing(self) -> tuple[int, ...]:
        """The seats that have not finished, in seat order."""
        return tuple(i for i in range(self.players) if i not in self.places)

    def is_over(self, board: Board, mode: str) -> bool:
        """Whether the game is over: a token on the finish (``classic``), every token there (``last_one_standing``).

        Examples
        --------
        >>> from snlmarkov import Board
        >>> s = GameState((10, 4), to_move=0, places=(0,))
        >>> s.is_over(Board(10), "classic"), s.is_over(Board(10), "last_one_standing")
        (True, False)
        """
        home = sum(p == board.size for p in self.positions)
        return home >= 1 if mode == "classic" else home == self.players

    def validate(self, board: Board, rules: Rules, mode: str) -> GameState:  # noqa: C901
        """Check the state against a board, a rule set and a mode; return it.

        A state is refused when some token is off the board; when the seats
        on the finish are not the seats in :attr:`places` (under ``classic``,
        ``places`` may be left empty for the winner, and at most one token
        can be home); when the game is not over and :attr:`to_move` has
        finished; when a token rests on the start of a jump (it would have
        taken it; only a bounce with ``jump_after_bounce`` off, or a bumped
        token on ``bump_to``, leaves one there); and, under ``bump``, when two
        tokens share a square ``1..N-1`` other than ``bump_to``.

        Raises
        ------
        GameError
            Naming the field and the limit.

        Examples
        --------
        >>> from snlmarkov import Board, Rules
        >>> family = Rules.preset("family")
        >>> GameState((12, 12), to_move=1).validate(Board.builtin(), family, "classic")
        Traceback (most recent call last):
        ...
        snlmarkov.errors.GameError: GameState.positions: seats 0 and 1 share square 12, which the bump rule forbids
        >>> GameState((100, 7), to_move=1).validate(Board.builtin(), family, "last_one_standing")
        Traceback (most recent call last):
        ...
        snlmarkov.errors.GameError: GameState.positions[0] = 100 is the finish but seat 0 is not in places
        """
        if not isinstance(board, Board):
            raise GameError(f"board must be a Board; got {type(board).__name__}")
        if not isinstance(rules, Rules):
            raise GameError(f"rules must be a Rules; got {type(rules).__name__}")
        if mode not in MODES:
            raise GameError(f"mode must be one of {', '.join(map(repr, MODES))}; got {mode!r}")
        size = board.size
        for i, p in enumerate(self.positions):
            if p > size:
                raise GameError(f"GameState.positions[{i}] = {show_value(p)} is off the board (squares 0..{size})")
        home = [i for i, p in enumerate(self.positions) if p == size]
        if mode == "classic" and len(home) > 1:
            raise GameError(
                f"GameState.positions: seats {home[0]} and {home[1]} are both home; classic ends at the first"
            )
        for seat in self.places:
            if self.positions[seat] != size:
                raise GameError(
                    f"GameState.places lists seat {seat}, whose token is on {self.positions[seat]}, not the finish {size}"
                )
        if not (mode == "classic" and not self.places):
            for i in home:
                if i not in self.places:
                    raise GameError(f"GameState.positions[{i}] = {size} is the finish but seat {i} is not in places")
        if not self.is_over(board, mode) and self.to_move in self.places:
            raise GameError(f"GameState.to_move = {self.to_move} has finished; the seat to move must still be racing")
        jumps = board.jumps
        jump_may_stay = rules.finish == "bounce" and not getattr(rules, "jump_after_bounce", True)
        for i, p in enumerate(self.positions):
            if p in jumps and not jump_may_stay and not (rules.bump and p == rules.bump_to):
                raise GameError(
                    f"GameState.positions[{i}] = {p} is the start of a jump to {jumps[p]}: a token that lands there takes it, so no turn ends there"
                )
        if rules.bump:
            seen: dict[int, int] = {}
            for i, p in enumerate(self.positions):
                if 0 < p < size and p != rules.bump_to:
                    if p in seen:
                        raise GameError(
                            f"GameState.positions: seats {seen[p]} and {i} share square {p}, which the bump rule forbids"
                        )
                    seen[p] = i
        return self

    def to_dict(self) -> dict[str, Any]:
        """The state as plain data (round-trips through ``GameState(**d)``).

        Examples
        --------
        >>> GameState((80, 30), to_move=1).to_dict()
        {'positions': [80, 30], 'to_move': 1, 'places': []}
        """
        return {"positions": list(self.positions), "to_move": self.to_move, "places": list(self.places)}

"""The playable game: seats, turns and rolls, following ``docs/rules.md`` step by step.

:class:`Game` throws the rules' die (a seeded generator or a scripted list of
rolls), asks the play kernel (:mod:`snlmarkov.playkernel`, shared with the
simulator) what each roll does, and logs it as events
(:mod:`snlmarkov.game.events`); it shares no code with the transition
matrices, so it can be used to check them. :meth:`Game.record` gives a
:class:`~snlmarkov.game.record.GameRecord` that :meth:`Game.replay` plays again
exactly.

Examples
--------
>>> from snlmarkov import Board, Game, Rules
>>> game = Game(Board(10, {3: 8}), Rules.preset("plain"), players=["Ann", "Bob"], dice=[3, 4, 2])
>>> [e.describe("Ann") for e in game.take_turn()]
['Ann rolls a 3', 'Ann moves from 0 to 3', 'Ann climbs the ladder from 3 to 8']
>>> game.take_turn()[-1]
Move(seat=1, turn=1, start=0, end=4)
>>> events = game.take_turn()
>>> game.is_over, game.winner, game.positions
(True, 0, (10, 4))
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ..args import board_arg, mode_arg, rules_arg
from ..board import Board
from ..dice import Die
from ..errors import DiceError, GameError, LimitError
from ..limits import MAX_RECORD_BOARD_SIZE, check_rng
from ..playkernel import RollStory, describe_values, draw, kernel
from ..reach import check_winnable
from ..rules import MODES, Rules
from ..state import GameState
from .events import (
    BonusRoll,
    Bounce,
    Bump,
    CapReached,
    Enter,
    Event,
    FailedEnter,
    Finish,
    Forfeit,
    GameOver,
    Ladder,
    Move,
    Overshoot,
    Restart,
    Roll,
    Skip,
    Snake,
    _is_int,
)
from .record import GameRecord
from .seats import COLOURS, Seat, _make_seats

__all__ = ["Game", "Seat", "MODES", "COLOURS"]


class Game:
    """A game of Snakes & Ladders in progress.

    Parameters
    ----------
    board : Board, optional
        The board; :meth:`Board.builtin` (``jungle``) by default.
    rules : Rules, optional
        The rules; ``Rules()`` (the ``app`` preset) by default.
    players : int or sequence of str or Seat, default 2
        How many seats (default names and colours), or the seats themselves:
        names (given default colours by position) or :class:`Seat` objects,
        freely mixed. Names must be distinct.
    mode : {"classic", "last_one_standing"}, default "classic"
        ``classic``: the first token on the finish wins and the game ends.
        ``last_one_standing``: finished tokens take places and are skipped;
        the game ends when every token has finished.
    rng : None, int >= 0, SeedSequence or numpy.random.Generator, optional
        Seed or generator for the die, checked by
        :func:`snlmarkov.limits.check_rng`; rolls are drawn exactly from
        ``rules.die`` (:func:`snlmarkov.playkernel.draw`). Not allowed
        together with ``dice``.
    dice : iterable of int, optional
        Scripted rolls used instead of a random die, in order (for tests and
        replays); each must be a value of ``rules.die`` (0 too, when the die
        has it). A capped roll under ``on_cap="redeal"`` is taken as is and
        must be a value of the die without its top value.
    state : GameState, optional
        Start from this state (every token's square, the seats finished, the
        seat to move) instead of the beginning; it must have one square per
        seat, pass :meth:`GameState.validate <snlmarkov.state.GameState.validate>`
        and not be over. Turn and round counts start again from there
        (:attr:`total_turns` 0, :attr:`round` 1).

    Raises
    ------
    GameError
        For invalid players, mode, or both ``rng`` and ``dice``; for a
        ``state`` that does not fit the seats, board, rules or mode, or is
        over.
    RuleError
        If the rules cannot be played on the board (``rules.check_board``).
    UnwinnableBoardError
        If a token could reach a square from which the finish is
        unreachable (the game could never end).
    SeedError
        For a seed numpy cannot use.

    Notes
    -----
    A turn follows ``docs/rules.md`` with the project's readings ("six" is the
    die's top value): the entering six
    (six to start) is a roll and counts towards the cap; a roll that reaches
    the finish, or overshoots it under ``stay``, ends the turn even on a six;
    ``forfeit`` sends the token back to where the turn began (voiding an entry
    made in that turn) and ``restart`` to square 0; on a chained board every
    jump of the chain is taken and logged, one event each; with
    ``jump_after_bounce`` off the bounce square's jump is not taken; a roll of
    0 logs only its :class:`~snlmarkov.game.events.Roll` and ends the turn;
    only the final square of a turn can cause a bump, and
    the bump applies however the turn ended (including a token that stayed,
    or was sent back by ``forfeit``, on a square another token holds, and a
    token on ``bump_to`` joined there by another: it is placed on ``bump_to``
    again). A skipped turn counts in :attr:`turns_taken` (it was the seat's
    turn) but makes no roll.

    If the scripted dice run out, or offer an impossible roll, in the middle
    of a turn, :class:`~snlmarkov.errors.DiceError` is raised and the game
    state is left as it was before the turn (the scripted rolls drawn in that
    turn are used up).

    Examples
    --------
    >>> from snlmarkov import Board, Game, Rules
    >>> game = Game(Board(10), Rules(), players=1, dice=[6, 2, 2])
    >>> [e.kind for e in game.take_turn()]
    ['roll', 'move', 'bonus_roll', 'roll', 'move']
    >>> game.positions, game.rolls_taken, game.is_over
    ((8,), (2,), False)
    >>> record = Game(players=3, rng=7).play()
    >>> record.finishing_order
    (0,)
    """

    def __init__(
        self,
        board: Board | None = None,
        rules: Rules | None = None,
        players: int | Sequence[str | Seat] | None = None,
        mode: str = "classic",
        *,
        rng: Any = None,
        dice: Iterable[int] | None = None,
        state: GameState | None = None,
    ) -> None:
        board, rules, mode = board_arg(board), rules_arg(rules), mode_arg(mode)
        if players is None:  # the state's seats, else two
            players = state.players if isinstance(state, GameState) else 2
        rules.check_board(board)
        if board.size > MAX_RECORD_BOARD_SIZE:
            raise LimitError(
                f"a game is played on boards of at most {MAX_RECORD_BOARD_SIZE:,} squares (its record must fit "
                f"snlmarkov.limits.MAX_RECORD_BOARD_SIZE); this board has {board.size:,}"
            )
        if dice is not None and rng is not None:
            raise GameError("give either rng (a random die) or dice (scripted rolls), not both")
        self._board = board
        self._rules = rules
        self._mode = mode
        self._seats = _make_seats(players)
        check_winnable(board, rules, len(self._seats) > 1)
        self._kernel = kernel(board, rules)
        if dice is None:
            self._rng: np.random.Generator | None = check_rng(rng)
            self._script: Iterator[Any] | None = None
        else:
            try:
                self._script = iter(dice)
            except TypeError:
                raise DiceError(f"dice must be an iterable of rolls; got {type(dice).__name__}") from None
            self._rng = None
        n = len(self._seats)
        if state is None:
            state = GameState.initial(n)
        if not isinstance(state, GameState):
            raise GameError(f"state must be a GameState; got {type(state).__name__}")
        if state.players != n:
            raise GameError(f"players has {n} seats, but the state has {state.players} tokens")
        state.validate(board, rules, mode)
        if state.is_over(board, mode):
            raise GameError("the state is over: a game cannot start from it")
        self._start = state
        self._positions = list(state.positions)
        self._turns = [0] * n
        self._rolls = [0] * n
        self._finished: list[int] = list(state.places)
        self._current = state.to_move
        self._round = 1
        self._total_turns = 0
        self._over = False
        self._log: list[Event] = []

    # ------------------------------------------------------------ state
    @property
    def board(self) -> Board:
        """The board."""
        return self._board

    @property
    def rules(self) -> Rules:
        """The rules."""
        return self._rules

    @property
    def mode(self) -> str:
        """``"classic"`` or ``"last_one_standing"``."""
        return self._mode

    @property
    def seats(self) -> tuple[Seat, ...]:
        """The seats, in playing order."""
        return self._seats

    @property
    def positions(self) -> tuple[int, ...]:
        """Each seat's square (0 = off the board, ``board.size`` = finished)."""
        return tuple(self._positions)

    @property
    def state(self) -> GameState:
        """The game between turns: every token's square, the seats finished, the seat to move.

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules
        >>> game = Game(Board(10), Rules.preset("plain"), players=2, dice=[4])
        >>> _ = game.take_turn()
        >>> game.state
        GameState(positions=(4, 0), to_move=1, places=())
        >>> Game(Board(10), Rules.preset("plain"), players=2, state=game.state, dice=[6]).take_turn()[-1]
        Move(seat=1, turn=0, start=0, end=6)
        """
        return GameState(tuple(self._positions), to_move=self._current, places=tuple(self._finished))

    @property
    def current_seat(self) -> int:
        """Index of the seat to play next; once the game is over, the seat
        that played the last turn."""
        return self._current

    @property
    def finishing_order(self) -> tuple[int, ...]:
        """Seat indices in the order they reached the finish."""
        return tuple(self._finished)

    @property
    def has_winner(self) -> bool:
        """Whether some token has reached the finish."""
        return bool(self._finished)

    @property
    def winner(self) -> int:
        """Index of the first seat to reach the finish.

        Raises
        ------
        GameError
            If no token has finished yet (see :attr:`has_winner`).
        """
        if not self._finished:
            raise GameError("no one has finished yet: there is no winner")
        return self._finished[0]

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self._over

    @property
    def turns_taken(self) -> tuple[int, ...]:
        """Turns each seat has had, skipped turns included."""
        return tuple(self._turns)

    @property
    def rolls_taken(self) -> tuple[int, ...]:
        """Rolls each seat has made (every throw of the die counts)."""
        return tuple(self._rolls)

    @property
    def total_turns(self) -> int:
        """Turns played so far by all seats (the global index of the next turn)."""
        return self._total_turns

    @property
    def round(self) -> int:
        """The round being played, from 1: a new round starts each time play
        passes from a later seat back to an earlier one (or to the same seat,
        when only one is still racing)."""
        return self._round

    @property
    def log(self) -> tuple[Event, ...]:
        """Every event so far, in order."""
        return tuple(self._log)

    # ------------------------------------------------------------ playing
    def take_turn(self) -> list[Event]:
        """Play the current seat's turn, all its rolls, and pass play on.

        Returns
        -------
        list of Event
            The events of this turn, in order.

        Raises
        ------
        GameError
            If the game is over.
        DiceError
            If scripted dice run out or offer an impossible roll (the game is
            then unchanged).

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules
        >>> game = Game(Board(10), Rules(start_on_six=True), players=1, dice=[4, 6, 3])
        >>> [e.kind for e in game.take_turn()]
        ['roll', 'failed_enter']
        >>> [e.kind for e in game.take_turn()]
        ['roll', 'enter', 'roll', 'move']
        >>> game.positions
        (3,)
        """
        self._check_playable()
        seat, turn = self._current, self._total_turns
        events: list[Event] = []
        position = self._play_rolls(seat, turn, events)
        position = self._apply_bump(seat, turn, position, events)
        # commit: nothing above changed the game's state
        self._positions[seat] = position
        self._rolls[seat] += sum(isinstance(e, Roll) for e in events)
        if position == self._board.size:
            self._finished.append(seat)
            events.append(Finish(seat=seat, turn=turn, place=len(self._finished)))
            if self._mode == "classic" or len(self._finished) == len(self._seats):
                self._over = True
                events.append(GameOver(seat=seat, turn=turn, finishing_order=tuple(self._finished)))
        self._end_turn(seat, events)
        return events

    def skip_turn(self) -> list[Event]:
        """Skip the current seat's turn (a stalled player): no roll, no move.

        Returns
        -------
        list of Event
            A single :class:`~snlmarkov.game.events.Skip`.

        Examples
        --------
        >>> from snlmarkov import Game
        >>> game = Game(players=2, dice=[])
        >>> game.skip_turn()
        [Skip(seat=0, turn=0)]
        >>> game.current_seat, game.turns_taken, game.rolls_taken
        (1, (1, 0), (0, 0))
        """
        self._check_playable()
        seat = self._current
        events: list[Event] = [Skip(seat=seat, turn=self._total_turns)]
        self._end_turn(seat, events)
        return events

    def play(self, max_turns: int = 10_000) -> GameRecord:
        """Play turns until the game is over and return its record.

        Parameters
        ----------
        max_turns : int, default 10000
            A guard: at most this many more turns (all seats together).

        Raises
        ------
        GameError
            If the game is already over, or still not over after
            ``max_turns`` turns.

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules
        >>> Game(Board(4), Rules.preset("plain"), players=2, dice=[1, 2, 3]).play().finishing_order
        (0,)
        >>> Game(Board(4), Rules.preset("plain"), dice=[5] * 20).play(max_turns=10)
        Traceback (most recent call last):
        ...
        snlmarkov.errors.GameError: the game is not over after 10 turns (max_turns=10)
        """
        if not _is_int(max_turns) or max_turns < 1:
            raise GameError(f"max_turns must be an integer >= 1; got {max_turns!r}")
        self._check_playable()
        for _ in range(max_turns):
            self.take_turn()
            if self._over:
                return self.record()
        raise GameError(f"the game is not over after {max_turns} turns (max_turns={max_turns})")

    # ------------------------------------------------------------ records
    def record(self) -> GameRecord:
        """The game so far as a :class:`~snlmarkov.game.record.GameRecord`.

        Examples
        --------
        >>> from snlmarkov import Board, Game
        >>> game = Game(Board(10), players=1, dice=[4])
        >>> _ = game.take_turn()
        >>> game.record().dice, game.record().positions
        ((4,), (4,))
        """
        return GameRecord(
            board=self._board,
            rules=self._rules,
            seats=self._seats,
            mode=self._mode,
            log=tuple(self._log),
            dice=tuple(e.value for e in self._log if isinstance(e, Roll)),
            positions=tuple(self._positions),
            finishing_order=tuple(self._finished),
            start=self._start,
        )

    @classmethod
    def replay(cls, record: GameRecord) -> Game:
        """Play a recorded game again with its board, rules, seats, mode and dice.

        Turns the record logs as skipped are skipped again. The replay stops
        after as many turns as the record holds (a record of an unfinished
        game replays to the same point).

        Returns
        -------
        Game
            The replayed game; its log, positions and finishing order equal
            the record's.

        Raises
        ------
        GameError
            If the replay does not reproduce the record (an edited record),
            or the record's dice are not all used.

        Examples
        --------
        >>> from snlmarkov import Game
        >>> record = Game(players=2, rng=3).play()
        >>> again = Game.replay(record)
        >>> again.log == record.log, again.record() == record
        (True, True)
        """
        if not isinstance(record, GameRecord):
            raise GameError(f"replay needs a GameRecord; got {type(record).__name__}")
        game = cls(record.board, record.rules, list(record.seats), record.mode, dice=record.dice, state=record.start)
        for summary in record.turns():
            if summary.skipped:
                game.skip_turn()
            else:
                game.take_turn()
        if game._script is not None and next(game._script, None) is not None:
            raise GameError("the record holds more dice than its turns use")
        if game.record() != record:
            raise GameError("the record does not replay: its log differs from the game its dice give")
        return game

    @classmethod
    def resume(cls, record: GameRecord, *, rng: Any = None) -> Game:
        """Go on with a recorded, unfinished game: replayed, then played with a random die.

        The record is replayed as :meth:`replay` does (and checked the same
        way); the turns after it roll the die ``rng`` (a seed or generator,
        as for :class:`Game`).

        Raises
        ------
        GameError
            If the record does not replay, or is over.

        Examples
        --------
        >>> from snlmarkov import Board, Game
        >>> game = Game(Board(10), players=2, rng=5)
        >>> _ = game.take_turn()
        >>> again = Game.resume(game.record(), rng=1)
        >>> again.log == game.log, again.total_turns
        (True, 1)
        >>> _ = again.take_turn()
        >>> again.total_turns
        2
        """
        game = cls.replay(record)
        if game.is_over:
            raise GameError("the record is over: there is nothing to resume")
        game._script, game._rng = None, check_rng(rng)
        return game

    # ------------------------------------------------------------ display
    def __str__(self) -> str:
        from .textboard import render

        drawing = render(self._board, self.positions, self._seats)
        if self._over:
            status = f"Game over after {self._total_turns} turns."
        else:
            seat = self._seats[self._current]
            status = f"Turn {self._total_turns + 1}, round {self._round}: {seat.name} ({seat.colour}) to play."
        return f"{drawing}\n{status}"

    def __repr__(self) -> str:
        names = [s.name for s in self._seats]
        return (
            f"Game(board={self._board!r}, rules={self._rules!r}, players={names!r}, mode={self._mode!r}, "
            f"turns={self._total_turns}, positions={self.positions!r}, over={self._over})"
        )

    # ------------------------------------------------------------ internals
    def _check_playable(self) -> None:
        if self._over:
            raise GameError("the game is over: no more turns can be played")

    def _play_rolls(self, seat: int, turn: int, events: list[Event]) -> int:
        """Make every roll of one turn; return the square where it ends (before any bump).

        What each roll does comes from the play kernel (:mod:`snlmarkov.playkernel`);
        this method only draws the rolls and logs the events the kernel's story holds.
        """
        kern = self._kernel
        start = position = self._positions[seat]
        sixes = 0
        while True:
            capped = kern.is_capped(sixes)
            if capped:
                events.append(CapReached(seat=seat, turn=turn, sixes=sixes))
            value = self._roll(seat, turn, kern.law(capped), sixes=sixes)
            story = kern.story(position, sixes, start, value)
            if not story.dealt:  # the draw and the kernel disagree on the die: a bug, never a game
                raise DiceError(f"a roll of {value} after {sixes} sixes cannot be dealt under these rules")
            events.append(Roll(seat=seat, turn=turn, value=value, capped=capped))
            events.extend(_roll_events(seat, turn, story))
            position, sixes = story.square, story.sixes
            if not story.more:
                return position
            if story.bonus:
                events.append(BonusRoll(seat=seat, turn=turn))

    def _apply_bump(self, seat: int, turn: int, position: int, events: list[Event]) -> int:
        """The bump rule on the square where the turn ended; return the final square."""
        rules = self._rules
        if not rules.bump or not 0 < position < self._board.size:
            return position
        if any(p == position for i, p in enumerate(self._positions) if i != seat):
            events.append(Bump(seat=seat, turn=turn, from_square=position, to_square=rules.bump_to))
            return rules.bump_to
        return position

    def _roll(self, seat: int, turn: int, law: Die, *, sixes: int) -> int:
        """One throw of ``law`` (the die, or the die without its top value for a redealt roll)."""
        if self._rng is not None:
            return draw(law, self._rng)
        if self._script is None:  # pragma: no cover - a Game has a generator or a script
            raise DiceError("this game has neither a die nor scripted dice")
        where = f"turn {turn} ({self._seats[seat].name}, seat {seat})"
        try:
            value = next(self._script)
        except StopIteration:
            raise DiceError(f"the scripted dice ran out in {where}") from None
        die = self._rules.die
        if not _is_int(value) or value not in die.values:
            raise DiceError(f"scripted roll {value!r} in {where} is not a face {describe_values(die)} of the die")
        if value not in law.values:
            raise DiceError(
                f"scripted roll {value} in {where} is impossible: after {sixes} sixes the roll is "
                f"redealt from {describe_values(law)} (on_cap='redeal': the die without its top value)"
            )
        return int(value)

    def _end_turn(self, seat: int, events: list[Event]) -> None:
        """Log the turn, count it, and pass play to the next seat still racing."""
        self._log.extend(events)
        self._turns[seat] += 1
        self._total_turns += 1
        if self._over:
            return
        n = len(self._seats)
        nxt = next(j % n for j in range(seat + 1, seat + n + 1) if j % n not in self._finished)
        if nxt <= seat:
            self._round += 1
        self._current = nxt


def _roll_events(seat: int, turn: int, story: RollStory) -> list[Event]:
    """The events a roll's story logs after its :class:`~snlmarkov.game.events.Roll`
    (none for a roll of 0)."""
    where = {"seat": seat, "turn": turn}
    if story.restart:
        return [Restart(**where, from_square=story.start)]
    if story.forfeit:
        return [Forfeit(**where, back_to=story.square)]
    if story.enter:
        return [Enter(**where)]
    if story.failed_enter:
        return [FailedEnter(**where)]
    if story.overshoot:
        return [Overshoot(**where, square=story.start, value=story.value)]
    if not story.moved:
        return []
    out: list[Event] = [Bounce(**where, target=story.target)] if story.bounce else []
    out.append(Move(**where, start=story.start, end=story.target))
    for a, b in story.jumps:  # one jump, or every jump of a chain
        out.append((Ladder if b > a else Snake)(**where, start=a, end=b))
    return out

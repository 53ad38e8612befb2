"""The playable game: seats, turns and rolls, following ``docs/rules.md`` step by step.

:class:`Game` throws the rules' die (a seeded generator or a scripted list of
rolls), asks the play kernel (:mod:`snlmarkov.playkernel`, shared with the
simulator) what each roll does, and logs it as events
(:mod:`snlmarkov.game.events`); it shares no code with the transition
matrices, so it can be used to check them. :meth:`Game.record` gives a
:class:`~snlmarkov.game.record.GameRecord` that :meth:`Game.replay` plays again
exactly.

Under a rule set with a choice (``docs/rules.md``, "Choices") the mover
chooses before every roll (``choose_die``) or after every throw of the dice
(``choose_move``). A seat with a policy (:class:`~snlmarkov.game.seats.Seat`)
chooses by it at once; for a human seat the game stops and waits:
:attr:`Game.waiting` is True, :attr:`Game.decision` says what is asked, and
:meth:`Game.choose` (a die) or :meth:`Game.pick` (a value thrown) answers
and plays on to the next decision or the end of the turn. The choices are
logged as events (``choose_die``; ``rolled_dice`` then ``choose_move``) and
kept in the record, which replays and verifies with them.

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

A human against a greedy seat, choosing the die:

>>> from snlmarkov import Seat
>>> game = Game(Board(10, {5: 9}), Rules(choose_die=(4, 6)), [Seat("Ann", "red"), Seat("Bot", "blue", policy="greedy")],
...             dice=[2, 4, 3])
>>> game.take_turn(), game.waiting, game.decision.kind
([], True, 'die')
>>> [e.kind for e in game.choose(0)]                  # Ann rolls the d4: a 2
['choose_die', 'roll', 'move']
>>> [e.describe("Bot") for e in game.take_turn()][:2]  # the greedy seat picks the d6 from 0
['Bot chooses the d6', 'Bot rolls a 4']
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ..args import board_arg, mode_arg, rules_arg
from ..board import Board
from ..dice import Die
from ..errors import DiceError, GameError, LimitError, SnlError
from ..limits import MAX_RECORD_BOARD_SIZE, check_rng, show_value
from ..playkernel import PlayKernel, RollStory, describe_values, draw, is_capped, option_kernels
from ..reach import check_winnable
from ..rules import Rules
from ..state import GameState
from .choosing import Chooser, Decision, seat_choosers
from .events import (
    BonusRoll,
    Bounce,
    Bump,
    CapReached,
    ChooseDie,
    ChooseMove,
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
    RolledDice,
    Skip,
    Snake,
    _is_int,
)
from .record import GameRecord
from .seats import COLOURS, Seat, _make_seats

__all__ = ["Game", "Seat", "Decision", "COLOURS"]


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
        freely mixed. Names must be distinct. Under a rule set with a
        choice a seat with a policy (``Seat(..., policy=...)``) chooses by
        it; the others are human and chosen for through :meth:`choose` and
        :meth:`pick`.
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
        must be a value of the die without its top value. Under
        ``choose_die`` each is a throw of the die chosen; under
        ``choose_move`` every one of the ``k`` dice thrown takes one.
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
        If the rules cannot be played on the board (``rules.check_board``);
        PolicyError if a seat's policy does not fit them.
    UnwinnableBoardError
        If a token could reach a square from which the finish is
        unreachable (the game could never end). Under ``choose_die``: if no
        one die alone brings every token it can reach home.
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

    Choices (a rule set with ``choose_die`` or ``choose_move``): before
    each roll under ``choose_die`` (the first, bonus and entering rolls) the
    mover picks a die; under ``choose_move`` it throws ``k`` dice, then
    picks the value it moves by. A seat with a policy picks at once. For a
    human seat :meth:`take_turn` (and then each :meth:`choose` or
    :meth:`pick`) plays up to the next choice and returns the events so
    far; :attr:`waiting` is then True and :attr:`decision` says what is
    asked. The turn is logged (:attr:`log`, :meth:`record`) once it ends;
    :meth:`skip_turn` may skip a turn that waits (a stalled player: the
    turn's rolls so far are dropped, and the turn is logged as skipped).

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
        self._kernels: tuple[PlayKernel, ...] = option_kernels(board, rules)
        self._choosers: tuple[Chooser | None, ...] = seat_choosers(board, rules, self._seats)
        self._steps: Generator[Decision, int, int] | None = None
        self._decision: Decision | None = None
        self._turn_events: list[Event] = []
        self._shown = 0
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
        """Every event of the turns played so far, in order (a turn that waits for a choice is not in it yet)."""
        return tuple(self._log)

    @property
    def waiting(self) -> bool:
        """Whether the turn in progress waits for a human seat's choice (:attr:`decision`)."""
        return self._decision is not None

    @property
    def decision(self) -> Decision:
        """The choice the turn in progress waits for (see :class:`~snlmarkov.game.choosing.Decision`).

        Raises
        ------
        GameError
            If the game waits for no choice (:attr:`waiting` is False).

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules
        >>> game = Game(Board(10), Rules(choose_move=2), players=1, dice=[2, 5])
        >>> [e.kind for e in game.take_turn()]
        ['rolled_dice']
        >>> d = game.decision
        >>> d.kind, d.options, d.square
        ('move', (2, 5), 0)
        """
        if self._decision is None:
            raise GameError("the game waits for no choice now")
        return self._decision

    # ------------------------------------------------------------ playing
    def take_turn(self) -> list[Event]:
        """Play the current seat's turn, all its rolls, and pass play on.

        Returns
        -------
        list of Event
            The events of this turn, in order.

        Under a rule set with a choice, a human seat's turn stops at its
        first choice (:attr:`waiting`); the events returned are those so far,
        and :meth:`choose` or :meth:`pick` plays on.

        Raises
        ------
        GameError
            If the game is over, or waits for a choice.
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
        if self._decision is not None:
            raise GameError(self._waiting_message())
        self._turn_events, self._shown = [], 0
        self._steps = self._play_rolls(self._current, self._total_turns, self._turn_events)
        return self._advance(None)

    def choose(self, die: Any) -> list[Event]:
        """Answer a ``"die"`` decision: roll the die ``die`` and play on.

        Parameters
        ----------
        die : int or Die or str
            The index of the die in ``rules.choose_die`` (0-based, as in
            :attr:`Decision.options <snlmarkov.game.choosing.Decision.options>`),
            or the die itself (a :class:`~snlmarkov.dice.Die` or its text form).

        Returns
        -------
        list of Event
            The events from the choice on, to the next choice or the end of
            the turn (then play has passed on).

        Raises
        ------
        GameError
            If the game does not wait for a die, or the rules offer no such die.

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules
        >>> game = Game(Board(10), Rules(choose_die=(4, 6)), players=1, dice=[6, 2])
        >>> _ = game.take_turn()
        >>> [e.kind for e in game.choose("d6")]    # a six: a bonus roll, chosen for again
        ['choose_die', 'roll', 'move', 'bonus_roll']
        >>> [e.kind for e in game.choose(0)], game.positions, game.waiting
        (['choose_die', 'roll', 'move'], (8,), False)
        """
        decision = self._waiting_for("die")
        dice = decision.options
        if _is_int(die):
            if not 0 <= die < len(dice):
                raise GameError(f"die must be 0..{len(dice) - 1} (one of the dice offered); got {show_value(die)}")
            index = int(die)
        else:
            try:
                wanted = Die.coerce(die)
            except SnlError:
                raise GameError(f"die must be an index or one of the dice offered; got {show_value(die)}") from None
            if wanted not in dice:
                offered = ", ".join(d.spec for d in dice)
                raise GameError(f"the rules offer no die {wanted.spec}: choose one of {offered}")
            index = dice.index(wanted)
        return self._advance(index)

    def pick(self, value: Any) -> list[Event]:
        """Answer a ``"move"`` decision: move by ``value``, one of the dice just thrown, and play on.

        Returns
        -------
        list of Event
            The events from the choice on, to the next choice or the end of
            the turn.

        Raises
        ------
        GameError
            If the game does not wait for a value, or ``value`` was not thrown.

        Examples
        --------
        >>> from snlmarkov import Board, Game, Rules
        >>> game = Game(Board(10, {4: 9}), Rules(choose_move=2), players=1, dice=[4, 5])
        >>> _ = game.take_turn()
        >>> [e.describe("Ann") for e in game.pick(4)]
        ['Ann moves by the 4', 'Ann rolls a 4', 'Ann moves from 0 to 4', 'Ann climbs the ladder from 4 to 9']
        """
        decision = self._waiting_for("move")
        if not _is_int(value) or value not in decision.options:
            raise GameError(f"pick one of the values thrown {decision.options}; got {show_value(value)}")
        return self._advance(int(value))

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
        self._drop_turn()  # a turn waiting for a stalled player's choice: its rolls are dropped
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
        humans = [s.name for s, c in zip(self._seats, self._choosers) if c is None]
        if self._rules.choice and humans:
            raise GameError(
                f"play() cannot choose for the human seat {humans[0]!r}: give it a policy "
                "(Seat(..., policy=...)), or play turn by turn with take_turn, choose and pick"
            )
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
        seats = [s.without_policy() for s in record.seats]  # the record's choices are replayed
        throws = record.throws()
        game = cls(record.board, record.rules, seats, record.mode, dice=throws, state=record.start)
        choices = [e for e in record.log if isinstance(e, (ChooseDie, ChooseMove))]
        at = 0
        for summary in record.turns():
            if summary.skipped:
                game.skip_turn()
                continue
            game.take_turn()
            while game.waiting:
                nxt = choices[at] if at < len(choices) else None
                if nxt is None or nxt.turn != summary.turn:
                    raise GameError(f"the record does not replay: turn {summary.turn} lacks a choice the rules ask for")
                at += 1
                asked = game.decision.kind
                if isinstance(nxt, ChooseDie) != (asked == "die"):
                    raise GameError(
                        f"the record does not replay: turn {summary.turn} logs a {nxt.kind} where the rules ask "
                        f"to choose a {'die' if asked == 'die' else 'value'}"
                    )
                if isinstance(nxt, ChooseDie):
                    game.choose(nxt.die)
                else:
                    game.pick(nxt.value)
        if game._script is not None and next(game._script, None) is not None:
            raise GameError("the record holds more dice than its turns use")
        if game.record() != record:
            raise GameError("the record does not replay: its log differs from the game its dice give")
        return game

    @classmethod
    def resume(cls, record: GameRecord, *, rng: Any = None, seats: Sequence[Seat] | None = None) -> Game:
        """Go on with a recorded, unfinished game: replayed, then played with a random die.

        The record is replayed as :meth:`replay` does (and checked the same
        way); the turns after it roll the die ``rng`` (a seed or generator,
        as for :class:`Game`). ``seats`` (the record's seats, in order, with
        the same names and colours) give the seats their policies again
        (a record keeps no policy: by default every seat is human).

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
        if seats is not None:
            given = _make_seats(seats)
            if [(s.name, s.colour) for s in given] != [(s.name, s.colour) for s in record.seats]:
                raise GameError("resume: seats must be the record's seats (names and colours, in order)")
            game._seats = given
            game._choosers = seat_choosers(game._board, game._rules, given)
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

    def _advance(self, answer: int | None) -> list[Event]:
        """Run the turn in progress on from ``answer`` (None: its start) to the next human choice or its end.

        A seat with a policy answers its decisions here; the events not yet
        returned are returned. Any error drops the turn (the game is as before it).
        """
        steps = self._steps
        assert steps is not None  # a turn is in progress
        self._decision = None
        try:
            decision = next(steps) if answer is None else steps.send(answer)
            while (chooser := self._choosers[decision.seat]) is not None:
                decision = steps.send(chooser(decision))
        except StopIteration as stop:
            self._steps = None
            return self._finish_turn(stop.value)
        except BaseException:
            self._drop_turn()
            raise
        self._decision = decision
        new = self._turn_events[self._shown :]
        self._shown = len(self._turn_events)
        return new

    def _finish_turn(self, position: int) -> list[Event]:
        """The end of the turn in progress: bump, finish, game over; log it and pass play on."""
        seat, turn, events = self._current, self._total_turns, self._turn_events
        position = self._apply_bump(seat, turn, position, events)
        # commit: nothing before changed the game's state
        self._positions[seat] = position
        self._rolls[seat] += sum(isinstance(e, Roll) for e in events)
        if position == self._board.size:
            self._finished.append(seat)
            events.append(Finish(seat=seat, turn=turn, place=len(self._finished)))
            if self._mode == "classic" or len(self._finished) == len(self._seats):
                self._over = True
                events.append(GameOver(seat=seat, turn=turn, finishing_order=tuple(self._finished)))
        self._end_turn(seat, events)
        new, self._turn_events, self._shown = events[self._shown :], [], 0
        return new

    def _drop_turn(self) -> None:
        """Forget the turn in progress (nothing of it was committed)."""
        if self._steps is not None:
            self._steps.close()
        self._steps, self._decision, self._turn_events, self._shown = None, None, [], 0

    def _waiting_message(self) -> str:
        d = self.decision
        how = "game.choose(die)" if d.kind == "die" else "game.pick(value)"
        return (
            f"the game waits for {self._seats[d.seat].name} to choose: {d.describe(self._seats[d.seat].name)} ({how})"
        )

    def _waiting_for(self, kind: str) -> Decision:
        self._check_playable()
        if self._decision is None:
            raise GameError("the game waits for no choice now: take_turn() plays the next turn")
        if self._decision.kind != kind:
            raise GameError(self._waiting_message())
        return self._decision

    def _play_rolls(self, seat: int, turn: int, events: list[Event]) -> Generator[Decision, int, int]:
        """Make every roll of one turn; return the square where it ends (before any bump).

        What each roll does comes from the play kernel (:mod:`snlmarkov.playkernel`);
        this method only draws the rolls, yields the mover's decisions (and
        is sent their answers, checked by the caller) under a choice rule,
        and logs the events the kernel's story holds.
        """
        rules = self._rules
        start = position = self._positions[seat]
        others = tuple(p for i, p in enumerate(self._positions) if i != seat)
        sixes = 0
        while True:
            capped = is_capped(rules, sixes)
            if capped:
                events.append(CapReached(seat=seat, turn=turn, sixes=sixes))
            if rules.choice == "die":
                index = yield Decision(seat, turn, "die", position, sixes, start, capped, rules.choose_die, others)
                kern = self._kernels[index]
                events.append(ChooseDie(seat=seat, turn=turn, die=index, spec=kern.die.spec))
                value = self._roll(seat, turn, kern.law(capped), kern.die, sixes=sixes)
            elif rules.choice == "move":
                kern = self._kernels[0]
                law = kern.law(capped)
                thrown = tuple(
                    self._roll(seat, turn, law, kern.die, sixes=sixes) for _ in range(rules.choose_move or 1)
                )
                events.append(RolledDice(seat=seat, turn=turn, values=thrown, capped=capped))
                value = yield Decision(seat, turn, "move", position, sixes, start, capped, thrown, others)
                events.append(ChooseMove(seat=seat, turn=turn, value=value))
            else:
                kern = self._kernels[0]
                value = self._roll(seat, turn, kern.law(capped), kern.die, sixes=sixes)
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

    def _roll(self, seat: int, turn: int, law: Die, die: Die, *, sixes: int) -> int:
        """One throw of ``law`` (``die``, or ``die`` without its top value for a redealt roll)."""
        if self._rng is not None:
            return draw(law, self._rng)
        if self._script is None:  # pragma: no cover - a Game has a generator or a script
            raise DiceError("this game has neither a die nor scripted dice")
        where = f"turn {turn} ({self._seats[seat].name}, seat {seat})"
        try:
            value = next(self._script)
        except StopIteration:
            raise DiceError(f"the scripted dice ran out in {where}") from None
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

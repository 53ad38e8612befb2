"""Exact odds from any moment of a game, built once and answered at once.

:class:`Odds` answers from any state as :func:`~snlmarkov.races.core.race`
with ``state=`` does, by the same code
(:class:`~snlmarkov.races.fromstate.StateRace`), with the work done once up
front, so that ``odds(state)`` is a look-up and a few vector operations:

- without ``bump``, the turns-to-finish distribution of a token from every
  square (:func:`~snlmarkov.races.passage.first_passage`, one backward
  sweep, kept by square with its survival); a state's figures combine the
  distributions of its racing seats: the chances of winning and of every
  place at once, the finishing orders and the length distributions when
  first read (the expected rounds and turns from closed forms without them);
- with ``bump`` and 2 or 3 players, the value equations of the joint chain
  solved once for every joint state
  (:func:`~snlmarkov.races.valuetable.build_value_table`); a state's
  chances and expected rounds and turns left are read off, and its length
  distributions are computed from the state only if asked for.

``odds.timeline(record)`` gives the chances after every turn of a recorded
game and ``odds.swings(record)`` the turns that changed them most, with the
ladder or snake behind each.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis.distribution import DEFAULT_TAIL
from ..args import board_arg, mode_arg, players_arg, rules_arg
from ..board import Board
from ..errors import GameError, LimitError
from ..rules import Rules
from ..state import GameState
from .core import EXACT_JOINT_PLAYERS, check_tail
from .fromstate import StateRace
from .joint import JointMover
from .passage import check_table_size
from .result import _METHOD_INDEPENDENT, _METHOD_JOINT, _METHOD_POLICIES, LazyLength
from .seatchains import SeatChains, refuse_choice, two_seat_wins
from .valuetable import build_value_table, rounds_from_turns

__all__ = ["Odds", "OddsTimeline", "Swing"]


@dataclass(frozen=True, eq=False)
class OddsTimeline:
    """The chances after every turn of a recorded game.

    Attributes
    ----------
    seats : tuple of str
        The players' names, in seat order.
    colours : tuple of str
        Their token colours.
    mode : str
    states : tuple of GameState
        The record's states (:meth:`GameRecord.states`): before every turn and after the last.
    win : numpy.ndarray
        ``(len(states), players)``: each seat's chance of finishing first.
    places : numpy.ndarray
        ``(len(states), players, places)``: each seat's place probabilities
        (one place, the win, in classic).
    expected_place : numpy.ndarray
        ``(len(states), players)``: under last one standing, each seat's
        expected place; ``nan`` in classic (only the winner is placed).
    """

    seats: tuple[str, ...]
    colours: tuple[str, ...]
    mode: str
    states: tuple[GameState, ...] = field(repr=False)
    win: np.ndarray = field(repr=False)
    places: np.ndarray = field(repr=False)
    expected_place: np.ndarray = field(repr=False)

    @property
    def values(self) -> np.ndarray:
        """The mode's odds per state: ``win`` in classic, ``places`` under last one standing."""
        return self.win if self.mode == "classic" else self.places


@dataclass(frozen=True)
class Swing:
    """One turn that moved the odds, and what happened in it.

    Attributes
    ----------
    turn : int
        Global index of the turn (0-based; the ``turn`` of its events).
    seat : int
        The seat that played it.
    name : str
        Its player's name.
    before, after : float
        The figure the swing is measured in, for the player who moved:
        their chance of winning (classic) or their expected place (last one
        standing), before and after the turn.
    change : float
        ``after - before``.
    what : str
        What happened: the ladders and snakes taken, a bump, the finish, or
        the squares moved.
    cause : tuple of (str, int, int)
        The ladders and snakes of the turn as ``(kind, start, end)``.
    """

    turn: int
    seat: int
    name: str
    before: float
    after: float
    change: float
    what: str
    cause: tuple[tuple[str, int, int], ...] = ()

    def story(self, mode: str = "classic") -> str:
        """One line telling the swing.

        Examples
        --------
        >>> Swing(30, 0, "Ann", 0.61, 0.33, -0.28, "the 87 snake", (("snake", 87, 24),)).story()
        'the 87 snake on turn 31 cost Ann 28 points (61% -> 33%)'
        """
        if mode == "classic":
            pts = round(abs(self.change) * 100)
            verb = "cost" if self.change < 0 else "gave"
            return (
                f"{self.what} on turn {self.turn + 1} {verb} {self.name} {pts} point{'s' if pts != 1 else ''} "
                f"({self.before:.0%} -> {self.after:.0%})"
            )
        worse = self.change > 0
        return (
            f"{self.what} on turn {self.turn + 1} {'cost' if worse else 'gave'} {self.name} "
            f"{abs(self.change):.1f} place{'s' if abs(self.change) >= 1.05 else ''} "
            f"(expected place {self.before:.1f} -> {self.after:.1f})"
        )


class Odds(StateRace):
    """Exact race figures from any state of a game, solved once.

    Parameters
    ----------
    board : Board, optional
        Defaults to the jungle board.
    rules : Rules, optional
        Defaults to ``Rules()``.
    players : int, default 2
        Seats, 1 to 6 (2 or 3 with ``bump``).
    mode : {"classic", "last_one_standing"}, default "classic"
    tail : float, default 1e-13
        Length distributions stop once less than this is left.
    policies : tuple of Policy, optional
        Under a rule set with a choice (refused without them): the policy
        each seat plays, as :func:`~snlmarkov.races.core.race` takes them.
        The odds assume every seat plays its policy. Where the tokens
        interact (``bump``, or race policies) the chances of a race of two
        are solved for every state at once (``win_probability``,
        ``place_probability`` and timelines read them); a full query
        ``odds(state)`` runs the joint chain forwards from its state.

    Raises
    ------
    LimitError
        With ``bump`` and more than 3 players (the joint chain is too large
        to solve for every state; :func:`race` with ``state=`` estimates
        single states by simulation), or when the turns-to-finish table
        would pass :data:`~snlmarkov.races.passage.MAX_TABLE_ENTRIES`
        (estimated from the board before any model is built:
        :func:`~snlmarkov.races.passage.check_table_size`).

    Notes
    -----
    Building costs one backward sweep of the single-token chain (no
    ``bump``) or one solve of the joint chain's value equations (``bump``).
    A query
    ``odds(state)`` solves nothing: without ``bump`` it combines the racing
    seats' turns-to-finish distributions (a few vector operations over
    their horizon per seat; the ``players!`` finishing orders and the
    length distributions are computed when first read); with ``bump`` it
    reads the chances and expectations of the state, and its length
    distributions are run forwards from the state only when they are first
    used. States with one token left (``bump`` or not) read the single
    token's table, built with the odds.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> odds = snl.Odds(snl.Board.builtin(), snl.Rules(), players=2)
    >>> r = odds(snl.GameState((90, 30), to_move=1))
    >>> r.win_probability.round(4).tolist(), round(r.expected_rounds, 2)
    ([0.6764, 0.3236], 22.18)
    >>> fam = snl.Odds(snl.Board.builtin(), snl.Rules.preset("family"), players=2)
    >>> fam(snl.GameState((0, 0))).win_probability.round(4).tolist()
    [0.5031, 0.4969]
    """

    def __init__(
        self,
        board: Board | None = None,
        rules: Rules | None = None,
        players: int = 2,
        mode: str = "classic",
        *,
        tail: float = DEFAULT_TAIL,
        policies: Any = None,
    ) -> None:
        board, rules = board_arg(board), rules_arg(rules)
        k = players_arg(players)
        mode = mode_arg(mode)
        tail = check_tail(tail)
        rules.check_board(board)
        if policies is None:
            refuse_choice(rules, "Odds()")
        if rules.bump and k > EXACT_JOINT_PLAYERS:
            raise LimitError(
                f"exact odds with the bump rule are solved for up to {EXACT_JOINT_PLAYERS} players, not {k}; "
                "race(..., state=...) estimates one state by simulation"
            )
        check_table_size(board, rules, tail)  # every branch below builds a turns-to-finish table
        chains = None if policies is None else SeatChains.of(board, rules, policies, k)
        super().__init__(board, rules, k, mode, tail=tail, chains=chains)
        self._table = None
        self._wins: tuple[np.ndarray, ...] = ()
        if chains is not None:
            for seat in range(k):  # built now: every query reads them (a joint chain runs per query)
                self._passage_of(seat)
            if chains.joint and k == 2:  # the chances of a race of two, for every state at once
                self._wins = two_seat_wins(self._movers())
                self._index = {int(s): i for i, s in enumerate(self._movers()[0].squares)}
        elif rules.bump and k > 1:
            self._mover = JointMover.of(self._models[0], rules)
            self._table = build_value_table(self._mover, k, self.mode)
            self._index = {int(s): i for i, s in enumerate(self._mover.squares)}
            self._passage_of(0)  # states with one token left race alone: built now, not in a query
        else:
            self._passage_of(0)  # built now: every query reads it
        self.method = _METHOD_JOINT if self._table is not None else _METHOD_INDEPENDENT
        if chains is not None and chains.joint:
            self.method = _METHOD_POLICIES

    def __repr__(self) -> str:
        return (
            f"Odds(board={self.board.name or 'custom'!r}, rules={self.rules.preset_name!r}, players={self.players}, "
            f"mode={self.mode!r}, method={self.method!r})"
        )

    # ------------------------------------------------------------ queries
    def win_probability(self, state: GameState) -> np.ndarray:
        """Each seat's chance of finishing first from ``state`` (the quickest query).

        Examples
        --------
        >>> import snlmarkov as snl
        >>> snl.Odds(players=3).win_probability(snl.GameState((50, 60, 70), to_move=2)).round(3).tolist()
        [0.264, 0.306, 0.43]
        """
        return self._places(self.check(state))[0]

    def _places(self, state: GameState) -> tuple[np.ndarray, np.ndarray]:
        """Win and place probabilities; a race of two under policies reads its table of chances."""
        if not self._wins or len(state.racing) != 2 or state.is_over(self.board, self.mode):
            return super()._places(state)
        m = state.to_move
        at = self._index[state.positions[m]], self._index[state.positions[1 - m]]
        w0 = float(np.clip(self._wins[m][at], 0.0, 1.0))
        win = np.array([w0, 1.0 - w0])
        if self.mode == "classic":
            return win, win[:, None].copy()
        return win, np.array([[w0, 1.0 - w0], [1.0 - w0, w0]])

    def place_probability(self, state: GameState) -> np.ndarray:
        """``[seat, place - 1]`` from ``state``: one column (the win) in classic, all places under last one standing."""
        return self._places(self.check(state))[1]

    def _joint(self, state: GameState) -> dict[str, Any]:
        """The figures of a state with ``bump`` and several seats racing, read from the value table.

        The chances and expectations are the table's; the length
        distributions are run forwards from the state when first used.
        """
        if self._table is None:  # pragma: no cover - the table is built whenever bump races have several seats
            return super()._joint(state)
        k = self.players
        racing = state.racing
        m = len(racing)
        j = racing.index(state.to_move)
        n = self._mover.n
        flat = 0
        for step in range(m):
            flat = flat * n + self._index[state.positions[racing[(j + step) % m]]]
        chain = self._table.chains[m]
        vals = dict(zip(chain.names, chain.values[j][:, flat]))
        expected_turns = float(vals["turns"])
        if self.mode == "classic":
            win = np.zeros(k)
            for i in range(k - 1):
                win[i] = vals[("win", i)]
            win[k - 1] = 1.0 - win[: k - 1].sum()
            win = np.clip(win, 0.0, 1.0)
            expected_rounds = rounds_from_turns(expected_turns, win, state.to_move)
            place = win[:, None].copy()
            orders_out: dict[tuple[int, ...], float] = {(i,): float(win[i]) for i in range(k)}
        else:
            perms = list(itertools.permutations(range(m)))
            p = np.array([vals[o] for o in perms[:-1]] + [0.0])
            p[-1] = 1.0 - p[:-1].sum()
            p = np.clip(p, 0.0, 1.0)
            orders_out = {o: 0.0 for o in itertools.permutations(range(k))}
            prefix = tuple(state.places)
            place = np.zeros((k, k))
            for i, seat in enumerate(prefix):
                place[seat, i] = 1.0
            for perm, prob in zip(perms, p):
                full = prefix + tuple(racing[x] for x in perm)
                orders_out[full] = float(prob)
                for pos in range(len(prefix), k):
                    place[full[pos], pos] += prob
            win = place[:, 0].copy()
            expected_rounds = 1.0 + float(vals["wraps"])
        cache: dict[str, Any] = {}

        def compute() -> dict[str, Any]:
            if not cache:
                cache.update(StateRace._joint(self, state))
            return cache

        return {
            "win_probability": win,
            "place_probability": place,
            "order_probability": orders_out,
            "rounds_distribution": LazyLength(lambda: compute()["rounds_distribution"], "rounds", expected_rounds),
            "turns_distribution": LazyLength(lambda: compute()["turns_distribution"], "turns", expected_turns),
        }

    # ------------------------------------------------------------ games
    def _check_record(self, record: Any) -> Any:
        from ..game.record import GameRecord

        if not isinstance(record, GameRecord):
            raise GameError(f"a timeline needs a GameRecord; got {type(record).__name__}")
        if (record.board, record.rules, record.mode, len(record.seats)) != (
            self.board,
            self.rules,
            self.mode,
            self.players,
        ):
            raise GameError("the record was played on another board, rules, mode or number of seats than these odds")
        return record

    def timeline(self, record: Any) -> OddsTimeline:
        """Each seat's chances in every state of a recorded game (before every turn and after the last).

        Examples
        --------
        >>> import snlmarkov as snl
        >>> record = snl.Game(players=["Ann", "Bob"], rng=7).play()
        >>> t = snl.Odds(players=2).timeline(record)
        >>> t.win.shape == (len(record.turns()) + 1, 2), t.win[0].round(4).tolist(), t.win[-1].tolist()
        (True, [0.5051, 0.4949], [0.0, 1.0])
        """
        record = self._check_record(record)
        states = record.states()
        places = self.players if self.mode == "last_one_standing" else 1
        win = np.zeros((len(states), self.players))
        place = np.zeros((len(states), self.players, places))
        for i, state in enumerate(states):
            win[i], place[i] = self._places(state)
        expected = place @ np.arange(1, places + 1) if self.mode == "last_one_standing" else np.full(win.shape, np.nan)
        for a in (win, place, expected):
            a.setflags(write=False)
        return OddsTimeline(
            seats=tuple(s.name for s in record.seats),
            colours=tuple(s.colour for s in record.seats),
            mode=self.mode,
            states=states,
            win=win,
            places=place,
            expected_place=expected,
        )

    def swings(
        self, record: Any, top: int = 3, *, timeline: OddsTimeline | None = None, include_end: bool = False
    ) -> tuple[Swing, ...]:
        """The ``top`` turns of a recorded game that moved the mover's odds most, largest first.

        Measured in the mover's chance of winning (classic) or expected place
        (last one standing). The turn that ends the game (its chance jumps
        to certainty however likely it was) is left out unless
        ``include_end``. Pass ``timeline`` to reuse one already computed.

        Examples
        --------
        >>> import snlmarkov as snl
        >>> record = snl.Game(players=["Ann", "Bob"], rng=29).play()
        >>> big = snl.Odds(players=2).swings(record, top=1)[0]
        >>> big.story()
        'the 99 snake on turn 27 cost Ann 29 points (63% -> 34%)'
        """
        from ..game.events import Bump, Finish, Ladder, Snake

        record = self._check_record(record)
        if isinstance(top, bool) or not isinstance(top, int) or top < 1:
            raise GameError(f"top must be a positive integer, got {top!r}")
        t = self.timeline(record) if timeline is None else timeline
        figure = t.win if self.mode == "classic" else t.expected_place
        events: dict[int, list] = {}
        for e in record.log:
            events.setdefault(e.turn, []).append(e)
        out = []
        ending = len(record.turns()) - 1 if record.is_over and not include_end else -1
        for summary in record.turns():
            i, seat = summary.turn, summary.seat
            if i == ending:
                continue
            before, after = float(figure[i, seat]), float(figure[i + 1, seat])
            cause = tuple(
                (type(e).__name__.lower(), e.start, e.end) for e in events.get(i, []) if isinstance(e, (Ladder, Snake))
            )
            parts = [f"the {a} {kind}" for kind, a, b in cause]
            if any(isinstance(e, Bump) for e in events.get(i, [])):
                parts.append("a bump")
            if any(isinstance(e, Finish) for e in events.get(i, [])):
                parts.append("the finish")
            if summary.skipped:
                what = "a skipped turn"
            elif parts:
                what = " and ".join(parts)
            else:
                what = f"a move from {summary.start} to {summary.end}"
            out.append(Swing(i, seat, record.seats[seat].name, before, after, after - before, what, cause))
        out.sort(key=lambda s: (-abs(s.change), s.turn))
        return tuple(out[:top])

"""The optimal play of a room's rule set with a choice, solved once, and the coach that reads it.

Under a choice rule (``docs/rules.md``, "Choices") a room needs the optimal
policy of its table: the AI seats of strength ``"optimal"`` play it, and the
coach marks every choice against it. :class:`PolicySolver` solves it once
per table (board, rules, seats) in its own worker thread, never on the event
loop, keeps the solved tables (least recently used go first) and refuses a
table whose decision states are over :data:`MAX_COACH_STATES` before any
work, naming the limit. A solved table is a :class:`Solved`: the policy, and
every option's value from every decision state (the exact
:class:`~snlmarkov.chain.choice.DecisionProcess` solved for the policy's
values), so that an AI's choice and the coach's verdict are table lookups.

In a race of two the table is the race solved as a game (the mover's
chance of winning from both tokens' squares, ``unit == "win"``); otherwise
one token's policy of fewest expected turns (``unit == "turns"``), and
:attr:`Solved.note` says which.

Examples
--------
>>> from snlmarkov import Board, Rules
>>> solo = solve_table(Board(10), Rules(choose_die=(2, 6)), 1)
>>> solo.unit, solo.options
('turns', ('d2', 'd6'))
>>> v = solo.judge(square=0, sixes=0, origin=0, chosen=0)
>>> v.best, v.chosen, v.cost > 0
(1, 0, True)
>>> v.text("Ann")
'Picking the d2 on 0 cost Ann 0.12 expected turns (best: the d6)'
>>> race = solve_table(Board(10), Rules(choose_die=(2, 6)), 2)
>>> race.unit, race.judge(0, 0, 0, 0, others=(5,)).text("Ann")
('win', 'Picking the d2 on 0 cost Ann 1.7 points of win chance (best: the d6)')
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..board import Board
from ..chain.choice import DecisionProcess
from ..errors import GameError, LimitError, PolicyError, SnlError
from ..game.choosing import Decision
from ..game.engine import Game
from ..game.events import ChooseDie, ChooseMove
from ..game.record import GameRecord
from ..game.seats import Seat
from ..limits import check_memory
from ..policy import Policy, PolicyTable, decision_shape
from ..races.policy import optimal_policy
from ..races.policygame import game_policies, solve_race_game
from ..rules import Rules

__all__ = []

log = logging.getLogger("snlmarkov.web")

#: most decision states (sixes levels x squares x origins) a room's policy is solved for
MAX_COACH_STATES = 200_000
#: a choice that costs less than this (in its unit) is "the best choice"
NEGLIGIBLE = 1e-9
#: solved tables kept at once
KEPT = 16
#: the memory the solved tables kept may hold in all (policy tables and option values)
CACHE_BYTES = 256 * 2**20
#: seconds a starting game waits for its table's optimal policy (past them it plays without)
SOLVE_WAIT = 30.0


def option_name(rules: Rules, option: Any) -> str:
    """An option in words: a die's text form (``"d4"``) under ``choose_die``, the value under ``choose_move``.

    Examples
    --------
    >>> option_name(Rules(choose_die=(4, 6)), 1), option_name(Rules(choose_move=2), 5)
    ('d6', '5')
    """
    if rules.choice == "die":
        return rules.choose_die[int(option)].spec
    return str(int(option))


def check_solvable(board: Board, rules: Rules) -> None:
    """Refuse a table whose optimal policy a room will not solve (no choice, or too many decision states).

    Raises
    ------
    PolicyError
        For rules without a choice.
    LimitError
        Past :data:`MAX_COACH_STATES` decision states.

    Examples
    --------
    >>> check_solvable(Board(100_000), Rules(choose_die=(4, 6)))
    Traceback (most recent call last):
    ...
    snlmarkov.errors.LimitError: the optimal policy of this table has 300,000 decision states; a room solves at most 200,000 (snlmarkov.web.coach.MAX_COACH_STATES): the AI seats play greedy and there is no coach
    """
    shape = decision_shape(board, rules)
    states = int(np.prod(shape[:-1]))
    if states > MAX_COACH_STATES:
        raise LimitError(
            f"the optimal policy of this table has {states:,} decision states; a room solves at most "
            f"{MAX_COACH_STATES:,} (snlmarkov.web.coach.MAX_COACH_STATES): the AI seats play greedy and there is no coach"
        )
    check_memory(8.0 * states * shape[-1] * 6, "a room's optimal policy and its values")


def _amount(x: float, digits: int) -> str:
    """A cost in words: ``digits`` decimals, or two significant figures when smaller."""
    return f"{x:.{digits}f}" if x >= 10.0**-digits else f"{x:.2g}"


@dataclass(frozen=True)
class Verdict:
    """The coach's word on one choice.

    Attributes
    ----------
    square : int
        Where the mover stood.
    chosen, best : int
        The option taken and the best one: a die's index under ``choose_die``,
        a value of the die under ``choose_move``.
    cost : float
        What the choice cost, in ``unit`` (0 for the best choice; ``inf`` for
        a die that risks a square the finish cannot be reached from).
    unit : str
        ``"turns"`` (expected turns to the finish, one token's figure) or
        ``"win"`` (the mover's chance of winning the race, 0..1).
    names : tuple of str
        ``(chosen, best)`` in words (:func:`option_name`).
    values : tuple of float
        The figure of every option on offer (the dice, or the values rolled).
    kind : str
        ``"die"`` or ``"move"``.
    """

    square: int
    chosen: int
    best: int
    cost: float
    unit: str
    names: tuple[str, str]
    values: tuple[float, ...] = ()
    kind: str = "die"

    @property
    def is_best(self) -> bool:
        """Whether the choice was (as good as) the best."""
        return self.cost <= NEGLIGIBLE

    def cost_text(self) -> str:
        """The cost in words: ``"3.1 points of win chance"`` or ``"0.67 expected turns"``."""
        if self.unit == "win":
            return f"{_amount(100.0 * self.cost, 1)} points of win chance"
        return f"{_amount(self.cost, 2)} expected turns"

    def text(self, name: str) -> str:
        """The coach's line, e.g. ``"Picking the d4 on 94 cost Ann 3.1 points of win chance (best: the d6)"``."""
        chosen, best = self.names
        doing = f"picking the {chosen}" if self.kind == "die" else f"moving {chosen}"
        better = f"the {best}" if self.kind == "die" else f"moving {best}"
        where = f"on {self.square}"
        if self.is_best:
            return f"{name}: {doing} {where} was the best choice"
        if not math.isfinite(self.cost):
            return f"{doing.capitalize()} {where} risks {name} never finishing (best: {better})"
        return f"{doing.capitalize()} {where} cost {name} {self.cost_text()} (best: {better})"

    def to_dict(self, name: str) -> dict[str, Any]:
        """The verdict as plain data for the pages (``cost`` None when infinite)."""
        return {
            "kind": self.kind,
            "square": self.square,
            "chosen": self.chosen,
            "best": self.best,
            "names": list(self.names),
            "cost": float(self.cost) if math.isfinite(self.cost) else None,
            "unit": self.unit,
            "is_best": self.is_best,
            "text": self.text(name),
        }


@dataclass(frozen=True, eq=False)
class Solved:
    """A table's optimal policy and every option's value from every decision state.

    Attributes
    ----------
    board, rules : Board, Rules
    players : int
        The seats it was solved for.
    policy : Policy
        The optimal policy (what an ``"optimal"`` AI seat plays; in a race of
        two, the same table serves both seats).
    table : PolicyTable
        ``policy`` resolved (an AI's choice is a lookup in it).
    q : numpy.ndarray
        Each option's figure if taken now and the policy followed after:
        ``(decision states, options)`` expected turns to the finish (``inf``:
        the option risks a square the finish cannot be reached from), or in
        a race of two (``unit == "win"``) ``(decision states, other token's
        square, options)`` the mover's chance of winning.
    unit : str
        ``"turns"`` or ``"win"``.
    note : str
        What was solved, for the pages.
    """

    board: Board
    rules: Rules
    players: int
    policy: Policy
    table: PolicyTable = field(repr=False)
    q: np.ndarray = field(repr=False)
    unit: str = "turns"
    note: str = ""

    @property
    def options(self) -> tuple[str, ...]:
        """The options in words: the dice, or the values of the die."""
        if self.rules.choice == "die":
            return tuple(d.spec for d in self.rules.choose_die)
        return tuple(str(v) for v in self.rules.die.values)

    def index(self, square: int, sixes: int, origin: int) -> int:
        """The flat index of a decision state (the order of :class:`DecisionProcess`)."""
        levels, n, n_o = self.table.shape[:3]
        if not 0 <= square < n:
            raise PolicyError(f"square must be 0..{n - 1} for a decision; got {square}")
        level = min(max(int(sixes), 0), levels - 1)
        org = int(origin) if n_o > 1 else 0
        return (level * n + int(square)) * n_o + org

    def _others(self, others: Sequence[int]) -> tuple[int, ...]:
        return tuple(int(o) for o in others)[: self.table.others]

    def choose(
        self, square: int, sixes: int, origin: int, rolled: Sequence[int] = (), others: Sequence[int] = ()
    ) -> int:
        """The optimal choice: a die's index (``choose_die``) or the value moved of those ``rolled``."""
        oth = self._others(others)
        if self.rules.choice == "die":
            return int(self.table.die_index(int(square), int(sixes), int(origin), oth))
        return int(self.table.pick(int(square), int(sixes), int(origin), tuple(rolled), oth))

    def judge(
        self,
        square: int,
        sixes: int,
        origin: int,
        chosen: int,
        rolled: Sequence[int] = (),
        others: Sequence[int] = (),
    ) -> Verdict | None:
        """The coach's verdict on choosing ``chosen`` (a die's index, or a value of those ``rolled``).

        ``others`` are the other tokens' squares (a race of two reads the
        other's); None when nothing is at stake (the other token has
        finished: the race is decided).
        """
        row = self.q[self.index(square, sixes, origin)]
        if self.unit == "win":
            other = int(others[0])
            if other >= self.board.size:
                return None
            row = row[other]
        if self.rules.choice == "die":
            offered = list(range(len(self.rules.choose_die)))
            values = [float(row[i]) for i in offered]
        else:
            die = self.rules.die.values
            offered = sorted({int(v) for v in rolled})
            if chosen not in offered:
                raise PolicyError(f"the value moved, {chosen}, is not one of those rolled {tuple(rolled)}")
            values = [float(row[die.index(v)]) for v in offered]
        sign = -1.0 if self.unit == "win" else 1.0  # the best is the fewest turns, or the largest chance
        pos = offered.index(int(chosen))
        best_pos = min(range(len(offered)), key=lambda k: (sign * values[k], k))
        best_v, mine = sign * values[best_pos], sign * values[pos]
        cost = 0.0 if mine <= best_v else (math.inf if not math.isfinite(mine) else mine - best_v)
        best = offered[best_pos]
        if cost <= NEGLIGIBLE:  # as good as the best: the chosen one is a best choice
            best, cost = int(chosen), 0.0
        names = (option_name(self.rules, chosen), option_name(self.rules, best))
        return Verdict(
            int(square), int(chosen), int(best), float(cost), self.unit, names, tuple(values), self.rules.choice
        )


#: most game states (decision states x the other token's squares) of a race of two a room solves as a game
MAX_RACE_STATES = 400_000


def solve_table(board: Board, rules: Rules, players: int, mode: str = "classic") -> Solved:
    """Solve the optimal policy of a table and every option's value (the work :class:`PolicySolver` runs).

    A race of two is solved as the zero-sum game it is (the chance of
    winning; :func:`snlmarkov.races.policygame.solve_race_game`) when the
    game has at most :data:`MAX_RACE_STATES` states; otherwise, and for one
    or more than two seats, the policy of fewest expected turns of one token.

    Raises
    ------
    LimitError
        From :func:`check_solvable`.
    SnlError
        If the policy cannot be solved (a board the token cannot surely finish).
    """
    check_solvable(board, rules)
    note = "the optimal policy of one token (fewest expected turns)"
    if players == 2:
        race = _race_game(board, rules, mode)
        if isinstance(race, Solved):
            return race
        note += f"; {race}"
    elif players > 2:
        note += "; a race of more than two is not solved as a game"
    policy = optimal_policy(board, rules)
    dp = DecisionProcess.build(board, rules)
    table = policy.resolve(board, rules)
    good, _ = dp.good_states()
    v = dp.evaluate(table.ranks.reshape(dp.n_states, -1), good)
    q = np.array(dp.q_values(v), dtype=float)
    q.setflags(write=False)
    return Solved(board, rules, int(players), policy, table, q, "turns", note)


def _race_game(board: Board, rules: Rules, mode: str) -> Solved | str:
    """The race of two solved as a game, or why not (too many states, no solution)."""
    shape = decision_shape(board, rules)
    states = int(np.prod(shape[:-1])) * board.size
    if states > MAX_RACE_STATES:
        return (
            f"the race of two has {states:,} states, over the {MAX_RACE_STATES:,} a room solves as a game "
            "(snlmarkov.web.coach.MAX_RACE_STATES)"
        )
    try:
        game = solve_race_game(board, rules, mode)
    except SnlError as exc:
        return f"the race of two has no solution as a game ({exc})"
    policy = game_policies(game)[0]
    q = np.array(game.option_table, dtype=float)
    q.setflags(write=False)
    note = "the optimal policy of the race of two (the largest chance of winning; both seats play it)"
    return Solved(board, rules, 2, policy, policy.table, q, "win", note)


@dataclass(frozen=True, eq=False)
class TablePlay:
    """How the server chooses at one room's table: the AI seats' tables, the idle player's greedy one, the coach.

    Attributes
    ----------
    solved : Solved or None
        The optimal policy and its values (None when it could not be solved: ``reason`` says why).
    reason : str
        Why there is no optimal policy ("" when there is).
    greedy : PolicyTable
        The greedy choice (what the server chooses for an idle player, and a
        ``"greedy"`` seat plays; the optimal seats too when ``solved`` is None).
    seats : tuple of PolicyTable or None
        Per seat: the table an AI seat chooses by (None for a human seat).
    """

    solved: Solved | None
    reason: str
    greedy: PolicyTable
    seats: tuple[PolicyTable | None, ...]

    def choice(self, table: PolicyTable, decision: Decision) -> int:
        """``table``'s choice at a decision: a die's index, or the value moved of those thrown."""
        d = decision
        others = tuple(int(o) for o in d.others)[: table.others]
        if table.rules.choice == "die":
            return int(table.die_index(int(d.square), int(d.sixes), int(d.origin), others))
        return int(table.pick(int(d.square), int(d.sixes), int(d.origin), tuple(int(v) for v in d.options), others))

    def judge(self, decision: Decision, chosen: int) -> Verdict | None:
        """The coach's verdict on a choice (None without a solved policy, or with nothing at stake)."""
        return judge(self.solved, decision, chosen) if self.solved is not None else None


def judge(solved: Solved, decision: Decision, chosen: int) -> Verdict | None:
    """The coach's verdict on answering ``decision`` (the engine's :class:`~snlmarkov.game.choosing.Decision`) with ``chosen``."""
    d = decision
    rolled = () if d.kind == "die" else tuple(int(v) for v in d.options)
    return solved.judge(d.square, d.sixes, d.origin, chosen, rolled, d.others)


def prepare_table(
    board: Board,
    rules: Rules,
    strengths: Sequence[str],
    seeds: Sequence[Any] = (),
    solved: Solved | str | None = None,
    mode: str = "classic",
) -> TablePlay:
    """Everything a room's server-side choices need: the optimal policy (solved, or why not) and each seat's table.

    ``strengths`` holds one entry per seat: ``""`` for a human seat, else
    ``"random"``, ``"greedy"`` or ``"optimal"``; ``seeds`` a seed (or
    generator) for each random seat's policy, in seat order. ``solved`` is
    the table's :class:`Solved` (or why it could not be): solved here when not given.
    """
    from ..chain.choice import resolve

    if solved is None:
        try:
            solved = solve_table(board, rules, len(strengths), mode)
        except SnlError as exc:
            solved = str(exc)
    reason = solved if isinstance(solved, str) else ""
    best = solved if isinstance(solved, Solved) else None
    greedy = resolve(Policy.greedy(), board, rules)
    seed_iter = iter(seeds)
    seats: list[PolicyTable | None] = []
    for strength in strengths:
        if not strength:
            seats.append(None)
        elif strength == "optimal" and best is not None:
            seats.append(best.table)
        elif strength == "random":
            seats.append(Policy.random(next(seed_iter, None)).resolve(board, rules))
        else:  # greedy, or an optimal seat whose policy could not be solved
            seats.append(greedy)
    return TablePlay(best, reason, greedy, tuple(seats))


class PolicySolver:
    """Solves and keeps the optimal policies of the rooms' tables, off the event loop.

    Parameters
    ----------
    queue : int, default 4
        Different tables waiting to be solved at once; past it :meth:`submit`
        refuses (None) rather than let work pile up.
    kept : int, default :data:`KEPT`
        Solved tables kept (least recently used go first).
    cache_bytes : float, default :data:`CACHE_BYTES`
        The memory the kept tables may hold in all (their arrays); the least
        recently used go first.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> solver = PolicySolver()
    >>> solver.submit(Board(10), Rules(choose_move=2), 3).result().unit
    'turns'
    >>> solver.shutdown()
    """

    def __init__(self, *, queue: int = 4, kept: int = KEPT, cache_bytes: float = CACHE_BYTES) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="snl-policy")
        self._lock = threading.Lock()
        self._futures: OrderedDict[tuple, Future] = OrderedDict()
        self._queue, self._kept, self._bytes = int(queue), int(kept), float(cache_bytes)

    def submit(self, board: Board, rules: Rules, players: int, mode: str = "classic") -> Future | None:
        """The future of a table's :class:`Solved` (done at once when kept); None when too many wait."""
        key = (board, rules, int(players), mode if players == 2 else "")
        with self._lock:
            found = self._futures.get(key)
            if found is not None:
                self._futures.move_to_end(key)
                self._evict()  # tables solved since the last ask count now
                return found
            if sum(not f.done() for f in self._futures.values()) >= self._queue:
                return None
            fut = self._pool.submit(solve_table, board, rules, int(players), mode)
            self._futures[key] = fut
            self._evict()
            return fut

    def _evict(self) -> None:
        """Drop the least recently used solved tables past ``kept`` of them or ``cache_bytes`` in all."""
        while len(self._futures) > 1:
            sizes = [_size(f) for f in self._futures.values()]
            if len(self._futures) <= self._kept and sum(sizes) <= self._bytes:
                return
            old_key = next((k for k, f in self._futures.items() if f.done()), None)
            if old_key is None:
                return
            self._futures.pop(old_key)

    async def table_play(
        self,
        board: Board,
        rules: Rules,
        mode: str,
        strengths: Sequence[str],
        seeds: Sequence[Any] = (),
        *,
        wait: float = SOLVE_WAIT,
    ) -> TablePlay:
        """:func:`prepare_table` for a room, the solve in this solver's worker thread (never on the event loop).

        A solve that takes more than ``wait`` seconds goes on (its table is
        kept for the next game), but this game plays without it.
        """
        fut = self.submit(board, rules, len(strengths), mode)
        if fut is None:
            solved: Solved | str = "the server is busy solving other tables' policies"
        else:
            try:
                solved = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(fut)), wait)
            except asyncio.TimeoutError:
                solved = f"the optimal policy took more than {wait:g} s to solve"
            except SnlError as exc:
                solved = str(exc)
        return await asyncio.to_thread(prepare_table, board, rules, tuple(strengths), tuple(seeds), solved, mode)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _size(fut: Future) -> int:
    """The bytes a solved table holds (0 while it is solved, or when it failed)."""
    if not fut.done() or fut.cancelled() or fut.exception() is not None:
        return 0
    solved = fut.result()
    return int(solved.q.nbytes + solved.table.ranks.nbytes)


@functools.lru_cache(maxsize=4)
def _solved_for(board: Board, rules: Rules, players: int, mode: str) -> Solved:
    return solve_table(board, rules, players, mode)


def record_choices(record: GameRecord) -> Iterator[tuple[Decision, int]]:
    """Every decision of a record under a choice rule, with the answer logged: ``(decision, chosen)``.

    The record is played again by the engine with its own dice (every seat a
    human, answered with the logged choices), so each decision comes with
    what the mover knew: its square, the sixes of the turn, the others' squares.

    Raises
    ------
    GameError
        If the record's choices do not replay (an edited record).
    """
    seats = [Seat(s.name, s.colour) for s in record.seats]
    game = Game(record.board, record.rules, seats, record.mode, dice=record.throws(), state=record.start)
    logged: dict[int, list[int]] = {}
    for e in record.log:
        if isinstance(e, ChooseDie):
            logged.setdefault(e.turn, []).append(e.die)
        elif isinstance(e, ChooseMove):
            logged.setdefault(e.turn, []).append(e.value)
    for summary in record.turns():
        if summary.skipped:
            game.skip_turn()
            continue
        answers = iter(logged.get(summary.turn, ()))
        game.take_turn()
        while game.waiting:
            decision = game.decision
            chosen = next(answers, None)
            if chosen is None:
                raise GameError(f"turn {summary.turn}: the record logs fewer choices than the turn asks")
            yield decision, chosen
            if decision.kind == "die":
                game.choose(chosen)
            else:
                game.pick(chosen)


def accuracy(record: GameRecord) -> dict[str, Any]:
    """Each player's accuracy in a game under a choice rule: what their choices cost against the optimal policy.

    Returns
    -------
    dict
        ``{}`` for a game without a choice rule. Else ``unit`` (``"turns"``:
        expected turns to the finish), ``note`` (what the choices are
        measured against) and ``seats``: per seat ``choices`` (decisions
        made), ``best`` (of them, as good as the optimal choice), ``lost``
        (the cost of all of them summed; None if a choice risked never
        finishing) and ``per_choice`` (``lost`` / ``choices``); or
        ``reason`` when no figure can be given (a board too big, a record
        that does not replay).

    Examples
    --------
    >>> from snlmarkov import Board, Game, Rules, Seat
    >>> game = Game(Board(3), Rules(choose_die=(2, 3), bonus_on_six=False), [Seat("Ann", "red")], dice=[1, 1, 1])
    >>> _ = game.take_turn(); _ = game.choose(0)          # the d2 on 0 (the d3 is best by 2/3 turn)
    >>> _ = game.take_turn(); _ = game.choose(0)          # the d2 on 1 (best)
    >>> seat = accuracy(game.record())["seats"][0]
    >>> seat["choices"], seat["best"], round(seat["lost"], 6)
    (2, 1, 0.666667)
    """
    if not record.rules.choice:
        return {}
    try:
        solved = _solved_for(record.board, record.rules, len(record.seats), record.mode)
    except SnlError as exc:
        return {"reason": str(exc)}
    seats: list[dict[str, Any]] = [
        {"seat": i, "name": s.name, "choices": 0, "best": 0, "lost": 0.0} for i, s in enumerate(record.seats)
    ]
    try:
        for d, chosen in record_choices(record):
            verdict = judge(solved, d, chosen)
            if verdict is None:  # nothing at stake (the race is decided)
                continue
            row = seats[d.seat]
            row["choices"] += 1
            row["best"] += verdict.is_best
            row["lost"] += verdict.cost  # inf for a die that risks never finishing
    except SnlError as exc:
        return {"reason": f"the record's choices do not replay: {exc}"}
    for row in seats:
        lost = row["lost"]
        if lost is not None and not math.isfinite(lost):
            row["lost"] = lost = None
        row["per_choice"] = None if lost is None or not row["choices"] else lost / row["choices"]
    return {"unit": solved.unit, "note": solved.note, "seats": seats}

"""Live odds for the web game: each seat's chance of winning from the state of a game.

The rooms ask an :class:`OddsSolver`, which solves what a table needs
(board, rules, seats, mode) once with the project's :class:`snlmarkov.Odds`
(exact, the bump rule included for up to 3 players). A solve can take seconds
(the bump rule's joint chain), so it runs in the solver's own small thread
pool, apart from the threads that write games to the database; the same
table asked for twice while it is being solved is solved once (both askers
get the same future); at most ``queue`` different tables wait, past which
:meth:`OddsSolver.submit` refuses at once rather than letting the work pile
up; and the solved tables kept are bounded in bytes (the least recently used
go first). :meth:`OddsSolver.win_odds` then answers from any state between
two turns, and says how it got its numbers:
``"exact"``, ``"pending"`` (being solved) or ``"none"`` (no figure for
these rules, or the table is no longer kept; the page hides the bars).
A query between two turns only reads the kept table (it solves nothing)
and runs on the event loop, in the room's turn.

The module's own :func:`prepare`, :func:`win_odds` and :func:`is_prepared`
use one shared solver (for scripts and tests).

Examples
--------
>>> from snlmarkov import Board, Rules
>>> prepare(Board(4), Rules.preset("plain"), 2, "classic")
>>> o = win_odds(Board(4), Rules.preset("plain"), "classic", positions=(0, 0), finished=(), current=0)
>>> o.method, [round(p, 6) for p in o.win_probability]
('exact', [0.6, 0.4])
"""

from __future__ import annotations

import logging
import sys
import threading
import types
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..board import Board
from ..errors import LimitError, SnlError
from ..races.odds import Odds
from ..rules import Rules
from ..state import GameState

__all__ = []

log = logging.getLogger("snlmarkov.web")

_NONE = "none"  # marks a table with no figure
#: what :func:`nbytes` counts without looking inside
_ATOMS = (
    str,
    bytes,
    int,
    float,
    complex,
    bool,
    type(None),
    type,
    types.ModuleType,
    types.FunctionType,
    types.MethodType,
)


@dataclass(frozen=True)
class LiveOdds:
    """Each seat's chance of winning, and how it was computed.

    Attributes
    ----------
    win_probability : tuple of float
        One per seat (0 for a seat that cannot win any more); empty unless
        ``method == "exact"``.
    method : {"exact", "pending", "none", "busy"}
        ``"pending"`` while the table is being solved, ``"none"`` when no
        figure is available for these rules (or the table is no longer
        kept), ``"busy"`` when the server had too many tables to solve when
        the game started (the game plays without odds).
    """

    win_probability: tuple[float, ...]
    method: str

    def to_dict(self) -> dict:
        """The odds as plain JSON-ready data."""
        return {"win": list(self.win_probability), "method": self.method}


class _Key:
    """A table's key (board, rules, seats, mode) that hashes its parts once.

    Hashing a board and its rules (their fractions) is not cheap, and a
    turn's query looks its table up more than once.
    """

    __slots__ = ("parts", "_hash")

    def __init__(self, board: Board, rules: Rules, players: int, mode: str) -> None:
        self.parts = (board, rules, int(players), mode)
        self._hash = hash(self.parts)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and (other is self or (other._hash == self._hash and other.parts == self.parts))


#: Most keys :func:`_key` remembers by the identity of their board and rules (then it starts again).
_KEYS_KEPT = 1024
_KEYS: dict[tuple[int, int, int, str], tuple[Board, Rules, _Key]] = {}
#: the first key made of each table: equal keys made later are this one (a lookup finds it by identity)
_EQUAL: dict[_Key, _Key] = {}


def _key(board: Board, rules: Rules, players: int, mode: str) -> _Key:
    """The key of a table: one :class:`_Key` object for every equal board, rules, players and mode, found by
    the identity of the board and rules objects (a room's) after the first time."""
    ident = (id(board), id(rules), int(players), mode)
    entry = _KEYS.get(ident)
    if entry is None or entry[0] is not board or entry[1] is not rules:  # an id reused by another object
        if len(_KEYS) >= _KEYS_KEPT:
            _KEYS.clear()
            _EQUAL.clear()
        fresh = _Key(board, rules, players, mode)
        entry = _KEYS[ident] = (board, rules, _EQUAL.setdefault(fresh, fresh))
    return entry[2]


def nbytes(obj: Any, *, _seen: set[int] | None = None, _depth: int = 0) -> int:
    """An estimate of the memory ``obj`` holds: its arrays (numpy, scipy.sparse) and containers, walked.

    Examples
    --------
    >>> nbytes({"a": np.zeros(1000), "b": [np.zeros(10)] * 3}) >= 8080
    True
    """
    seen = set() if _seen is None else _seen
    if id(obj) in seen or _depth > 12:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        base = obj.base
        if isinstance(base, np.ndarray):  # a view: its memory is its base's, counted once
            return nbytes(base, _seen=seen, _depth=_depth + 1)
        return int(obj.nbytes)
    size = sys.getsizeof(obj, 64)
    if isinstance(obj, _ATOMS):
        return size
    if isinstance(obj, dict):
        items: list[Any] = [*obj.keys(), *obj.values()]
    elif isinstance(obj, (list, tuple, set, frozenset)):
        items = list(obj)
    else:
        items = list(getattr(obj, "__dict__", {}).values())
        items += [getattr(obj, s) for s in getattr(type(obj), "__slots__", ()) if hasattr(obj, s)]
    return size + sum(nbytes(i, _seen=seen, _depth=_depth + 1) for i in items)


class OddsSolver:
    """Solves the live odds of tables in its own bounded pool, and keeps them within a memory budget.

    Parameters
    ----------
    workers : int, default 1
        Threads solving at once.
    queue : int, default 4
        Different tables that may wait for a thread; past that
        :meth:`submit` refuses (returns None).
    cache_bytes : int, default 256 MiB
        Memory the solved tables may hold together (estimated by
        :func:`nbytes`); the least recently used are dropped first, and a
        table larger than the whole budget is not kept.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> solver = OddsSolver(queue=1)
    >>> a = solver.submit(Board(6), Rules(), 2, "classic")
    >>> a is solver.submit(Board(6), Rules(), 2, "classic") or a.done()  # the same solve, once
    True
    >>> a.result(); solver.win_odds(Board(6), Rules(), "classic", positions=(0, 0), finished=(), current=0).method
    'exact'
    >>> solver.shutdown()
    """

    def __init__(self, *, workers: int = 1, queue: int = 4, cache_bytes: int = 256 * 2**20) -> None:
        if not (type(workers) is int and type(queue) is int and workers >= 1 and queue >= 0 and cache_bytes > 0):
            raise LimitError(
                f"OddsSolver needs workers >= 1, queue >= 0 and cache_bytes > 0; got {workers, queue, cache_bytes}"
            )
        self.workers, self.queue, self.cache_bytes = workers, queue, int(cache_bytes)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="snl-odds")
        self._lock = threading.Lock()
        self._solved: OrderedDict[_Key, tuple[Any, int]] = OrderedDict()  # key -> (table, bytes)
        self._inflight: dict[_Key, Future] = {}
        self.held_bytes = 0

    def is_prepared(self, board: Board, rules: Rules, players: int, mode: str) -> bool:
        """Whether this table is solved and kept."""
        with self._lock:
            return _key(board, rules, players, mode) in self._solved

    def submit(self, board: Board, rules: Rules, players: int, mode: str) -> Future | None:
        """Have this table solved: a future done when it is (at once if kept), or None if the pool is full.

        The same table asked for while it is being solved gets the same future.
        """
        key = _key(board, rules, players, mode)
        with self._lock:
            if key in self._solved:
                self._solved.move_to_end(key)
                done: Future = Future()
                done.set_result(None)
                return done
            if key in self._inflight:
                return self._inflight[key]
            if len(self._inflight) >= self.workers + self.queue:
                return None
            future = self._pool.submit(self._solve, key)
            self._inflight[key] = future
            return future

    def prepare(self, board: Board, rules: Rules, players: int, mode: str) -> None:
        """Solve this table and wait for it (blocking).

        Raises
        ------
        LimitError
            If ``queue`` tables are already waiting.
        """
        future = self.submit(board, rules, players, mode)
        if future is None:
            raise LimitError(f"{self.workers + self.queue} odds tables are being solved already; try later")
        future.result()

    def _solve(self, key: _Key) -> None:
        board, rules, players, mode = key.parts
        table: Any = _NONE
        try:
            table = Odds(board, rules, players=players, mode=mode)
        except SnlError:  # e.g. bump with more than 3 players: no exact figure
            pass
        except BaseException:
            with self._lock:
                self._inflight.pop(key, None)
            raise
        size = nbytes(table)
        with self._lock:
            self._inflight.pop(key, None)
            if size > self.cache_bytes:
                log.warning("odds table of %d bytes is over the budget of %d bytes: not kept", size, self.cache_bytes)
                return
            self._solved[key] = (table, size)
            self.held_bytes += size
            while self.held_bytes > self.cache_bytes:
                _, (_, dropped) = self._solved.popitem(last=False)
                self.held_bytes -= dropped

    def win_odds(
        self,
        board: Board,
        rules: Rules,
        mode: str,
        *,
        positions: tuple[int, ...],
        finished: tuple[int, ...],
        current: int,
    ) -> LiveOdds:
        """Each seat's chance of winning from a state between turns (see the module's :func:`win_odds`)."""
        key = _key(board, rules, len(positions), mode)
        with self._lock:
            entry = self._solved.get(key)
            if entry is not None:
                self._solved.move_to_end(key)
            pending = key in self._inflight
        if entry is None:
            return LiveOdds((), "pending" if pending else "none")
        solved = entry[0]
        if isinstance(solved, str):
            return LiveOdds((), "none")
        state = GameState(tuple(positions), to_move=current, places=tuple(finished))
        return LiveOdds(tuple(float(p) for p in solved.win_probability(state)), "exact")

    def shutdown(self) -> None:
        """Stop the threads (solves already running finish; waiting ones are dropped)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            self._inflight.clear()


_SHARED = OddsSolver()


def is_prepared(board: Board, rules: Rules, players: int, mode: str) -> bool:
    """Whether :func:`prepare` has solved this table (the shared solver)."""
    return _SHARED.is_prepared(board, rules, players, mode)


def prepare(board: Board, rules: Rules, players: int, mode: str) -> None:
    """Solve what the odds of this table need (blocking; seconds for the bump rule's joint chain)."""
    _SHARED.prepare(board, rules, players, mode)


def win_odds(
    board: Board,
    rules: Rules,
    mode: str,
    *,
    positions: tuple[int, ...],
    finished: tuple[int, ...],
    current: int,
) -> LiveOdds:
    """Each seat's chance of winning (finishing first) from a state between turns.

    Parameters
    ----------
    board, rules : Board, Rules
    mode : {"classic", "last_one_standing"}
        Either way the winner is the first seat to finish.
    positions : tuple of int
        Every seat's square.
    finished : tuple of int
        Seats already on the finish, in order.
    current : int
        The seat to move next.

    Returns
    -------
    LiveOdds
        ``method="none"`` if the table was not prepared (this function
        never solves anything itself).

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> prepare(Board(4), Rules.preset("plain"), 2, "classic")
    >>> win_odds(Board(4), Rules.preset("plain"), "classic", positions=(4, 2), finished=(0,), current=1).win_probability
    (1.0, 0.0)
    >>> win_odds(Board(9), Rules(), "classic", positions=(0, 0), finished=(), current=0).method
    'none'
    """
    return _SHARED.win_odds(board, rules, mode, positions=positions, finished=finished, current=current)

"""The multi-seat engine of the simulator: races of several tokens in lock-step.

Games are played in chunks of :data:`CHUNK`. Within a chunk all games play
round by round and, within a round, seat by seat (seats 0, 1, 2, ...); a seat
that has finished (last_one_standing) is skipped. One turn of a seat is one or
more look-ups in the one-step table (more when a turn may hold more rolls
than one step), then the bump rule against the other seats' squares.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..rules import Rules
from ..state import GameState
from .hist import EntryCounter
from .tables import StepTable

__all__ = []

#: games played together
CHUNK = 1 << 15


@dataclass(frozen=True)
class MultiOutcome:
    """Per-game and per-seat figures of multi-seat games, and the landing counts."""

    turns: np.ndarray
    rolls: np.ndarray
    rounds: np.ndarray
    finish_turn: np.ndarray
    place: np.ndarray
    winner: np.ndarray
    truncated: np.ndarray
    landings: np.ndarray


def play_turns(
    table: StepTable, squares: np.ndarray, rng: np.random.Generator, counter: EntryCounter
) -> tuple[np.ndarray, np.ndarray]:
    """One turn for each token on ``squares`` (turn starts): end squares and rolls.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> from snlmarkov.sim.tables import turn_table
    >>> t = turn_table(Board(3), Rules.preset("plain"))
    >>> c = EntryCounter(t.entries)
    >>> end, rolls = play_turns(t, np.array([2, 2, 0]), np.random.default_rng(0), c)
    >>> set(end.tolist()) <= {0, 1, 2, 3}, rolls.tolist(), int(c.counts().sum())
    (True, [1, 1, 1], 3)
    """
    codes = table.codes
    void = table.void if table.void.size else None
    end = np.empty(squares.size, dtype=np.int64)
    rolls = np.zeros(squares.size, dtype=np.int64)
    rows = np.arange(squares.size)
    state = squares.astype(np.int64)
    while rows.size:
        index = state * codes + rng.integers(0, codes, size=rows.size)
        counter.add(index)
        new = table.next.take(index).astype(np.int64)
        if void is not None:
            new = np.where(void.take(index), squares[rows], new)
        rolls[rows] += table.rolls.take(index)
        over = (table.turns.take(index) > 0) | (new == table.finished)
        end[rows[over]] = new[over]
        rows, state = rows[~over], new[~over]
    return end, rolls


def play_multi(
    table: StepTable,
    rules: Rules,
    games: int,
    players: int,
    mode: str,
    max_turns: int,
    rng: np.random.Generator,
    *,
    progress: Any = None,
    start: GameState | None = None,
) -> MultiOutcome:
    """Play ``games`` races of ``players`` seats under ``mode``.

    Parameters
    ----------
    table : StepTable
        A :func:`~snlmarkov.sim.tables.turn_table` of ``rules``.
    rules : Rules
        For the bump rule.
    games, players : int
    mode : {"classic", "last_one_standing"}
    max_turns : int
        Turns of all seats together after which a game is stopped.
    rng : numpy.random.Generator
    progress : tqdm bar or None
    start : GameState, optional
        Where every game begins (checked by the caller; not over); by
        default the beginning. Rounds, turns and places are counted from
        there: the round in progress is round 1, and seats already finished
        keep their places.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> from snlmarkov.sim.tables import turn_table
    >>> rules = Rules.preset("plain")
    >>> out = play_multi(turn_table(Board(4), rules), rules, 500, 3, "last_one_standing", 10_000,
    ...                  np.random.default_rng(0))
    >>> sorted(out.place[0].tolist()), bool((out.turns == out.finish_turn.sum(axis=1)).all())
    ([1, 2, 3], True)
    """
    counter = EntryCounter(table.entries)

    def turn(seat: int, pos: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return play_turns(table, pos[rows, seat], rng, counter)

    out = play_rounds(turn, rules, table.size, games, players, mode, max_turns, progress=progress, start=start)
    return dataclasses.replace(out, landings=table.landings(counter.counts()))


#: A seat's turn in :func:`play_rounds`: ``turn(seat, positions, rows)`` -> the squares where the
#: turns of the games ``rows`` end (before any bump) and the rolls they took.
TurnPlayer = Callable[[int, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def play_rounds(  # noqa: C901, PLR0915
    turn: TurnPlayer,
    rules: Rules,
    size: int,
    games: int,
    players: int,
    mode: str,
    max_turns: int,
    *,
    progress: Any = None,
    start: GameState | None = None,
    chunk: int = CHUNK,
) -> MultiOutcome:
    """The rounds of :func:`play_multi`, each seat's turn played by ``turn`` (no landings counted: an empty array).

    ``turn`` is called seat by seat, round by round, with the chunk's
    positions (one row per game, one column per seat) and the rows of the
    games where the seat is still racing; the bump rule, places, the end of
    the game and ``max_turns`` are applied here.
    """
    classic = mode == "classic"
    bump = rules.bump and players > 1
    turns = np.zeros(games, dtype=np.int32)
    rolls = np.zeros(games, dtype=np.int32)
    rounds = np.zeros(games, dtype=np.int32)
    finish_turn = np.zeros((games, players), dtype=np.int32)
    place = np.zeros((games, players), dtype=np.int32)
    winner = np.full(games, -1, dtype=np.int32)
    truncated = np.zeros(games, dtype=bool)
    start = GameState.initial(players) if start is None else start
    start_pos = np.array(start.positions, dtype=np.int64)
    start_racing = np.ones(players, dtype=bool)
    for i, seat in enumerate(start.places):
        start_racing[seat] = False
        place[:, seat] = i + 1
    if start.places:
        winner[:] = start.places[0]

    for first in range(0, games, chunk):
        n = min(chunk, games - first)
        gid = np.arange(first, first + n)
        pos = np.broadcast_to(start_pos, (n, players)).copy()
        racing = np.broadcast_to(start_racing, (n, players)).copy()
        live = np.ones(n, dtype=bool)
        n_turns = np.zeros(n, dtype=np.int64)
        n_rolls = np.zeros(n, dtype=np.int64)
        n_done = np.full(n, len(start.places), dtype=np.int64)
        rnd = 0
        while gid.size:
            rnd += 1
            for seat in range(players):
                if rnd == 1 and seat < start.to_move:  # the round in progress began before the state
                    continue
                rows = np.flatnonzero(live & racing[:, seat])
                if not rows.size:
                    continue
                end, thrown = turn(seat, pos, rows)
                if bump:
                    others = pos[rows] == end[:, None]
                    others[:, seat] = False
                    hit = others.any(axis=1) & (end >= 1) & (end <= size - 1)
                    end = np.where(hit, rules.bump_to, end)
                pos[rows, seat] = end
                n_turns[rows] += 1
                n_rolls[rows] += thrown
                won = rows[end == size]
                if won.size:
                    racing[won, seat] = False
                    n_done[won] += 1
                    finish_turn[gid[won], seat] = rnd
                    place[gid[won], seat] = n_done[won]
                    first_home = won[n_done[won] == 1]
                    winner[gid[first_home]] = seat
                    ended = won if classic else won[n_done[won] == players]
                    live[ended] = False
                stop = rows[live[rows] & (n_turns[rows] >= max_turns)]
                if stop.size:
                    truncated[gid[stop]] = True
                    live[stop] = False
            gone = np.flatnonzero(~live)
            if gone.size:
                g = gid[gone]
                turns[g] = n_turns[gone]
                rolls[g] = n_rolls[gone]
                rounds[g] = rnd
                keep = np.flatnonzero(live)
                gid, pos, racing, live = gid[keep], pos[keep], racing[keep], live[keep]
                n_turns, n_rolls, n_done = n_turns[keep], n_rolls[keep], n_done[keep]
                if progress is not None:
                    progress.update(gone.size)
    return MultiOutcome(
        turns=turns,
        rolls=rolls,
        rounds=rounds,
        finish_turn=finish_turn,
        place=place,
        winner=winner,
        truncated=truncated,
        landings=np.zeros(0, dtype=np.int64),
    )

"""The single-token engine of the simulator: many solo games in lock-step.

A pool of about :data:`WIDTH` games is advanced together, one step at a
time: each game draws one uniform code and one look-up in a
:func:`~snlmarkov.sim.tables.roll_table` applies the rolls it stands for
(several rolls, running on from turn to turn). Finished games leave the pool
every :data:`BLOCK` steps and new games join it, so the pool stays full and
the working memory bounded however many games are played.

Each game keeps one *tally*: its rolls when every turn is one roll (turns
are then the same), else its turns plus its rolls times 2**32. Within a
block, steps add into small 16-bit sums that are folded into the tallies at
the end. The finished state adds nothing, so finished games can wait there
for the next compaction to be read.

Games that could reach ``max_turns`` within the next block leave the pool
for a *slow lane* that plays one roll per step and stops each game exactly
after its ``max_turns``-th turn.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .hist import EntryCounter
from .tables import StepTable

__all__ = []

#: games advanced together
WIDTH = 1 << 17
#: steps between two compactions of the pool
BLOCK = 8


@dataclass(frozen=True)
class SoloOutcome:
    """Per-game figures of solo games, and the landing counts."""

    turns: np.ndarray
    rolls: np.ndarray
    truncated: np.ndarray
    landings: np.ndarray


@dataclass
class _Pool:
    """Games in play. ``st`` and ``start`` hold states (offsets ``state * codes`` inside a run)."""

    st: np.ndarray
    gid: np.ndarray
    tally: np.ndarray
    start: np.ndarray

    def take(self, rows: np.ndarray) -> _Pool:
        return _Pool(*(getattr(self, f.name)[rows] for f in fields(self)))

    def extend(self, other: _Pool) -> None:
        for f in fields(self):
            setattr(self, f.name, np.concatenate([getattr(self, f.name), getattr(other, f.name)]))


@dataclass(frozen=True)
class _Sink:
    """Where the figures of games that are done are written."""

    turns: np.ndarray
    rolls: np.ndarray
    truncated: np.ndarray
    one_roll_turns: bool
    bar: Any

    def fold(self, tally: np.ndarray, block: np.ndarray) -> None:
        """Add a block's 16-bit sums (turns + 256 * rolls, or rolls) into the tallies; clear them."""
        if self.one_roll_turns:
            tally += block
        else:
            tally += (block & 0xFF) + ((block >> 8).astype(np.int64) << 32)
        block[:] = 0

    def counts(self, tally: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Turns and rolls from tallies."""
        if self.one_roll_turns:
            return tally, tally
        return tally & 0xFFFFFFFF, tally >> 32

    def write(self, gid: np.ndarray, tally: np.ndarray) -> None:
        turns, rolls = self.counts(tally)
        self.turns[gid] = turns
        self.rolls[gid] = rolls
        if self.bar is not None:
            self.bar.update(gid.size)


def play_solo(
    fast: StepTable,
    slow: StepTable,
    games: int,
    max_turns: int,
    rng: np.random.Generator,
    *,
    one_roll_turns: bool,
    progress: Any = None,
) -> SoloOutcome:
    """Play ``games`` solo games.

    Parameters
    ----------
    fast : StepTable
        The roll table games step with.
    slow : StepTable
        The one-roll table of the slow lane.
    games, max_turns : int
    rng : numpy.random.Generator
    one_roll_turns : bool
        Every turn is exactly one roll (turns then equal rolls).
    progress : tqdm bar or None
        Updated with the number of games done.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> from snlmarkov.sim.tables import roll_table
    >>> board, rules = Board(2, {1: 2}), Rules.preset("plain")   # a 1 or a 2 finishes
    >>> out = play_solo(roll_table(board, rules, 4), roll_table(board, rules, 1), 1000, 100,
    ...                 np.random.default_rng(0), one_roll_turns=True)
    >>> int(out.turns.min()), bool((out.rolls == out.turns).all()), int(out.landings.sum()) == 1000
    (1, True, True)
    """
    turns = np.zeros(games, dtype=np.int32)
    rolls = turns if one_roll_turns else np.zeros(games, dtype=np.int32)
    sink = _Sink(turns, rolls, np.zeros(games, dtype=bool), one_roll_turns, progress)
    lane, counts = _run(fast, rng, sink, max_turns, games=games)
    landings = fast.landings(counts)
    if lane is not None:
        _, counts = _run(slow, rng, sink, max_turns, pool=lane)
        landings = landings + slow.landings(counts)
    return SoloOutcome(turns=turns, rolls=rolls, truncated=sink.truncated, landings=landings)


def _run(  # noqa: C901, PLR0915
    table: StepTable,
    rng: np.random.Generator,
    sink: _Sink,
    max_turns: int,
    *,
    games: int = 0,
    pool: _Pool | None = None,
) -> tuple[_Pool | None, np.ndarray]:
    """Advance a pool until all its games are done, while games ``0..games-1`` join it.

    Without ``pool`` (the main lane) games that near ``max_turns`` are
    returned as the slow-lane pool; with it (the slow lane, one roll per
    step) they are stopped at ``max_turns``. Also returns how often each
    table entry was used.
    """
    codes, per_step, entries = table.codes, table.rolls_per_step, table.entries
    slow_lane = pool is not None
    void = table.void.size > 0
    # states as offsets (state * codes); the finished state adds nothing to
    # the tally, so finished games wait there for the next compaction
    fin = table.finished * codes
    itype = np.int32 if entries < 2**31 else np.int64
    offsets = table.next.astype(itype) * codes
    # what a step adds, as turns + 256 * rolls (rolls alone when turns are
    # rolls); summed over a block in 16 bits, then into the tally
    if per_step * BLOCK > 255:
        raise ValueError("too many rolls per block for 8-bit counts")
    adds = table.rolls.astype(np.uint16)
    if not sink.one_roll_turns:
        adds = table.turns + (adds << 8)
    ttype = np.int32 if sink.one_roll_turns else np.int64
    if void:
        carry = np.where(table.carry >= 0, table.carry.astype(itype) * codes, -1).astype(itype)
    code_dtype = np.uint16 if codes <= 1 << 16 else np.uint32 if codes <= 1 << 32 else np.uint64
    counter = EntryCounter(entries)

    def fresh(first: int, n: int) -> _Pool:
        gid = np.arange(first, first + n, dtype=np.int64)
        zeros = np.zeros(n, dtype=itype)
        return _Pool(st=zeros, gid=gid, tally=np.zeros(n, dtype=ttype), start=zeros.copy())

    if pool is None:
        pool = fresh(0, 0)
    else:
        pool.st = pool.st.astype(itype) * codes
        pool.start = pool.start.astype(itype) * codes
    lane: _Pool | None = None
    # no game in the pool has more than head + step * per_step turns
    head = int(sink.counts(pool.tally)[0].max()) if pool.st.size else 0
    joined = step = 0
    while True:
        # ---- refill the pool with new games
        room = WIDTH - pool.st.size
        if room > 0 and joined < games:
            n = min(room, games - joined)
            pool.extend(fresh(joined, n))
            joined += n
        if pool.st.size == 0:
            break
        # ---- games that might reach max_turns in this block go to the slow lane
        if not slow_lane and (step + BLOCK) * per_step >= max_turns:
            late = sink.counts(pool.tally)[0] + BLOCK * per_step >= max_turns
            if late.any():
                moved = pool.take(np.flatnonzero(late))
                moved.st //= codes
                moved.start //= codes
                if lane is None:
                    lane = moved
                else:
                    lane.extend(moved)
                pool = pool.take(np.flatnonzero(~late))
                continue
        # ---- BLOCK steps on the whole pool, in place
        st, tally, m = pool.st, pool.tally, pool.st.size
        block = np.zeros(m, dtype=np.uint16)
        for _ in range(BLOCK):
            code = rng.integers(0, codes, size=m, dtype=code_dtype)
            index = counter.reserve(m)
            np.add(st, code, out=index)
            counter.commit(m)
            offsets.take(index, out=st)
            np.add(block, adds.take(index), out=block)
            if void:
                hit = table.void.take(index)
                if hit.any():
                    np.copyto(st, pool.start, where=hit)
                back = carry.take(index)
                np.copyto(pool.start, back, where=back >= 0)
            step += 1
            if slow_lane and head + step >= max_turns:
                sink.fold(tally, block)
                stop = (sink.counts(tally)[0] >= max_turns) & (st != fin)
                if stop.any():  # stopped there: they wait on the finish, marked truncated
                    sink.truncated[pool.gid[stop]] = True
                    st[stop] = fin
        sink.fold(tally, block)
        # ---- games that are done leave the pool
        over = st == fin
        if over.any():
            rows = np.flatnonzero(over)
            sink.write(pool.gid[rows], tally[rows])
            pool = pool.take(np.flatnonzero(~over))
    return lane, counter.counts()

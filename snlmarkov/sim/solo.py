"""The single-token engine of the simulator: many solo games in lock-step.

A pool of about :data:`WIDTH` games is advanced together, one step at a
time: each game draws one uniform code (:class:`CodeDraw`) and one look-up
in a :func:`~snlmarkov.sim.tables.roll_table` applies the rolls it stands
for (several rolls, running on from turn to turn). Every :data:`BLOCK`
steps the games that are done leave the pool and new games take their
places, so the pool stays full and the working memory bounded however many
games are played.

Each game keeps one *tally*: its rolls when every turn is one roll (turns
are then the same), else its turns plus its rolls times 2**32. The table is
looked up packed (:class:`_Packed`): one integer per entry holds the next
state and what the step adds to the tally, and the entries a game takes
within a block are summed, then folded into the tallies at the end. The
finished state adds nothing, so finished games can wait there for the end
of the block.

Games that could reach ``max_turns`` within the next block leave the pool
for a *slow lane* that plays one roll per step and stops each game exactly
after its ``max_turns``-th turn.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .hist import EntryCounter
from .tables import StepTable

__all__ = []

#: games advanced together
WIDTH = 1 << 16
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

    @property
    def ttype(self) -> type:
        """The dtype of a tally."""
        return np.int32 if self.one_roll_turns else np.int64

    def counts(self, tally: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Turns and rolls from tallies."""
        if self.one_roll_turns:
            return tally, tally
        return tally & 0xFFFFFFFF, tally >> 32

    def write(self, gid: np.ndarray, tally: np.ndarray) -> None:
        turns, rolls = self.counts(tally)
        self.turns[gid] = turns
        if self.rolls is not self.turns:
            self.rolls[gid] = rolls
        if self.bar is not None:
            self.bar.update(gid.size)


class _Packed:
    """A step table packed for :func:`_run`: one unsigned integer per entry,
    the next state's offset (``state * codes``) shifted left by :attr:`shift`
    above what the step adds to the tally (its rolls, plus its turns in a
    field of their own unless turns are rolls).

    The entries a game takes over a block are summed as they are (modulo
    2**32 or 2**64): the fields of what steps add never carry into each
    other or into the offsets within :data:`BLOCK` steps, so the low
    :attr:`shift` bits of the sum are what the block added.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> from snlmarkov.sim.tables import roll_table
    >>> t = roll_table(Board(3), Rules(), 2)
    >>> p = _Packed(t, one_roll_turns=False)
    >>> e = 0 * t.codes + 1   # from square 0: a 2 then a 1, home in two turns
    >>> int(p.packed[e]) >> p.shift == t.finished * t.codes, int(t.turns[e]), int(t.rolls[e])
    (True, 2, 2)
    >>> tally = np.zeros(1, dtype=np.int64)
    >>> p.fold(tally, p.packed[[e]] + p.packed[[0]])   # and a 1, 1 (two turns): two steps in a block
    >>> int(tally[0] & 0xFFFFFFFF), int(tally[0] >> 32)   # turns, rolls
    (4, 4)
    """

    def __init__(self, table: StepTable, one_roll_turns: bool) -> None:
        self.one_roll_turns = one_roll_turns
        self.field = (BLOCK * table.rolls_per_step).bit_length()  # holds a block's sum of rolls (or turns)
        self.shift = self.field if one_roll_turns else 2 * self.field
        adds = table.rolls.astype(np.uint64)
        if not one_roll_turns:
            adds = table.turns.astype(np.uint64) | (adds << np.uint64(self.field))
        top = (table.states - 1) * table.codes
        if top >= 2**62 >> self.shift:
            raise ValueError("step table too large to pack")
        self.itype = np.int32 if top < 2**31 else np.int64
        self.dtype = np.dtype(np.uint32 if top < 2**32 >> self.shift else np.uint64)
        offsets = table.next.astype(np.uint64) * np.uint64(table.codes)
        self.packed = ((offsets << np.uint64(self.shift)) | adds).astype(self.dtype)

    def fold(self, tally: np.ndarray, block: np.ndarray) -> None:
        """Add a block's sums into the tallies (turns + 2**32 * rolls, or rolls); clear the sums."""
        added = np.bitwise_and(block, self.dtype.type((1 << self.shift) - 1), out=block)
        if self.one_roll_turns:
            np.add(tally, added, out=tally, casting="unsafe")
        else:
            turns = added & self.dtype.type((1 << self.field) - 1)
            tally += turns.astype(np.int64) + ((added >> self.dtype.type(self.field)).astype(np.int64) << 32)
        block[:] = 0


@functools.lru_cache(maxsize=16)
def _packed(table: StepTable, one_roll_turns: bool) -> _Packed:
    return _Packed(table, one_roll_turns)


class CodeDraw:
    """Uniform codes ``0..codes-1`` for :func:`_run`, drawn a block of steps at a time.

    Codes up to 2**16 are dealt from random words of 8 bits (when at most
    one byte in 16 is rejected) or 16: a word ``v`` below ``k * codes`` (``k = 2**bits //
    codes``) gives the code ``v // k`` (each code has ``k`` such words), and
    a word at or above is drawn again, so every code is exactly equally
    likely (a power of two of codes rejects nothing). The words come from
    the raw output of a 64-bit bit generator, else from ``rng.integers``.
    Larger codes are drawn by ``rng.integers``.

    Examples
    --------
    >>> draw = CodeDraw(np.random.default_rng(0), 6)
    >>> rows = draw.block(3, 100_000)
    >>> len(rows), rows[0].shape, sorted(set(np.concatenate(rows).tolist()))
    (3, (100000,), [0, 1, 2, 3, 4, 5])
    """

    #: bit generators whose raw output is 64 random bits
    RAW64 = (np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64)

    def __init__(self, rng: np.random.Generator, codes: int) -> None:
        self.rng, self.codes = rng, int(codes)
        self.raw = type(rng.bit_generator) in self.RAW64
        self.bits = 8 if (256 % self.codes) * 16 <= 256 else 16  # bytes if they reject at most 1 in 16
        self.dtype = np.uint8 if self.bits == 8 else np.uint16
        self.per = (1 << self.bits) // self.codes if self.codes <= 1 << 16 else 0
        self.limit = self.per * self.codes

    def words(self, n: int) -> np.ndarray:
        """``n`` uniform words of :attr:`bits` bits."""
        if self.raw:
            return self.rng.bit_generator.random_raw(-(-n * self.bits // 64)).view(self.dtype)[:n]
        return self.rng.integers(0, 1 << self.bits, size=n, dtype=self.dtype)

    def block(self, steps: int, m: int) -> Any:
        """``steps`` arrays of ``m`` codes each, one per step."""
        if not self.per:
            dtype = np.uint32 if self.codes <= 1 << 32 else np.uint64
            return [self.rng.integers(0, self.codes, size=m, dtype=dtype) for _ in range(steps)]
        v = self.words(steps * m)
        if self.limit < 1 << self.bits:
            bad = np.flatnonzero(v >= self.limit)
            while bad.size:
                v[bad] = self.words(bad.size)
                bad = bad[v[bad] >= self.limit]
        if self.per > 1:
            v //= self.dtype(self.per)
        return v.reshape(steps, m)


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


def _run(  # noqa: C901, PLR0912, PLR0915
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
    step_table = _packed(table, sink.one_roll_turns)
    itype = step_table.itype
    if void:
        carry = np.where(table.carry >= 0, table.carry.astype(itype) * codes, -1).astype(itype)
    draw = CodeDraw(rng, codes)
    counter = EntryCounter(entries)

    def fresh(first: int, n: int) -> _Pool:
        gid = np.arange(first, first + n, dtype=np.int64)
        zeros = np.zeros(n, dtype=itype)
        return _Pool(st=zeros, gid=gid, tally=np.zeros(n, dtype=sink.ttype), start=zeros.copy())

    if pool is None:
        joined = min(games, WIDTH)
        pool = fresh(0, joined)
    else:
        joined = 0
        pool.st = pool.st.astype(itype) * codes
        pool.start = pool.start.astype(itype) * codes
    lane: _Pool | None = None
    # no game in the pool has more than head + step * per_step turns
    head = int(sink.counts(pool.tally)[0].max()) if pool.st.size else 0
    step = 0
    while pool.st.size:
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
                room = WIDTH - pool.st.size
                if room > 0 and joined < games:  # refill the pool with new games
                    n = min(room, games - joined)
                    pool.extend(fresh(joined, n))
                    joined += n
                continue
        # ---- BLOCK steps on the whole pool, in place
        st, tally, m = pool.st, pool.tally, pool.st.size
        block = np.zeros(m, dtype=step_table.dtype)
        got = np.empty(m, dtype=step_table.dtype)  # the packed entries just taken
        for code in draw.block(BLOCK, m):
            index = counter.reserve(m)
            np.add(st, code, out=index)
            counter.commit(m)
            step_table.packed.take(index, out=got, mode="clip")
            np.add(block, got, out=block)
            np.right_shift(got, step_table.shift, out=st, casting="unsafe")
            if void:
                hit = table.void.take(index)
                if hit.any():
                    np.copyto(st, pool.start, where=hit)
                back = carry.take(index)
                np.copyto(pool.start, back, where=back >= 0)
            step += 1
            if slow_lane and head + step >= max_turns:
                step_table.fold(tally, block)
                stop = (sink.counts(tally)[0] >= max_turns) & (st != fin)
                if stop.any():  # stopped there: they wait on the finish, marked truncated
                    sink.truncated[pool.gid[stop]] = True
                    st[stop] = fin
        step_table.fold(tally, block)
        # ---- games that are done leave the pool; new games take their places
        rows = np.flatnonzero(st == fin)
        if rows.size:
            sink.write(pool.gid[rows], tally[rows])
            n = min(rows.size, games - joined)
            if n:
                into = rows[:n]
                pool.gid[into] = np.arange(joined, joined + n)
                st[into] = 0
                tally[into] = 0
                if void:
                    pool.start[into] = 0
                joined += n
            if n < rows.size:
                keep = np.ones(m, dtype=bool)
                keep[rows[n:]] = False
                pool = pool.take(np.flatnonzero(keep))
    return lane, counter.counts()

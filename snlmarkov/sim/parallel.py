"""Simulation split into independent streams, run on any executor, merged exactly.

:func:`simulate_streams` splits ``games`` into a fixed number of streams
(:data:`STREAMS` by default, whatever the number of workers). Stream ``i``
plays its share of the games with its own generator, seeded by child ``i``
of ``numpy.random.SeedSequence(rng).spawn(streams)``; the streams' results
are joined in stream order (per-game arrays laid end to end, landing counts
added). The same seed therefore gives the same result run serially, on a
process pool or on a Dask cluster, with any number of workers.

What travels: a task carries the board as plain data, the rules, its seed
and its share of the games (a few hundred bytes); the simulator's tables
are built on each worker once per board and rules (and kept there). A
summary (``keep="summary"``) comes back as its histograms. Kept games
(``keep="games"``, about 26 bytes a game for one player) do not come back
through the executor where it can be helped: the parent makes one file of
the merged arrays' size on the machine's RAM-backed file system
(:data:`SHARED_DIR`, Linux), and each worker that can open it writes its
stream's rows at their place with ``os.pwrite``; the parent then maps the
file and the result's arrays are views of it (no copy, no merge, no
pickling). A worker that cannot reach the file (a Dask worker on another
machine, a file system that is full, a platform without ``/dev/shm`` such
as Windows or macOS) sends its arrays back by pickle, and the parent writes
them in; the result is the same either way. The file is removed as soon as
the streams are in (the mapping lives as long as the arrays).

Like the rest of :mod:`snlmarkov.sim` it imports configuration only.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import itertools
import mmap
import os
import secrets
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..board import Board
from ..errors import GameError
from ..limits import MAX_STREAMS, check_count, check_rng
from ..rules import Rules

__all__ = []

#: Streams a simulation is split into by default (independent of the workers).
STREAMS = 16

#: Fewer games x players than this are played here even when an executor is given: starting the
#: workers' tables and sending the per-game arrays back costs more than the games (10^6 kept games
#: of one player ran at 0.6x serial on a pool of two). The streams and so the result are the same.
POOL_MIN_WORK = 2_000_000

_PER_GAME = ("turns", "rolls", "rounds", "finish_turn", "finished", "place", "winner", "truncated")
#: The kept games' arrays: name, dtype, one column per seat (else one value per game).
_ARRAYS = (
    ("turns", np.int32, False),
    ("rolls", np.int32, False),
    ("rounds", np.int32, False),
    ("finish_turn", np.int32, True),
    ("finished", np.bool_, True),
    ("place", np.int32, True),
    ("winner", np.int32, False),
    ("truncated", np.bool_, False),
)

#: Where the parent puts the file that a pool's workers write kept games into (a RAM-backed file
#: system); without it (or without room there) the games travel back by pickle.
SHARED_DIR = "/dev/shm"
_PAGE = 4096


def seed_root(rng: Any) -> np.random.SeedSequence:
    """The :class:`numpy.random.SeedSequence` that streams are spawned from.

    A SeedSequence is used as is; an integer (or sequence of them) seeds a
    new one; ``None`` draws fresh entropy; a Generator or BitGenerator gives
    one seed drawn from it (so its own stream moves on). Anything else is a
    :class:`~snlmarkov.errors.SeedError`.

    Examples
    --------
    >>> seed_root(5).entropy, seed_root(np.random.SeedSequence(9)).entropy
    (5, 9)
    """
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, (np.random.Generator, np.random.BitGenerator)):
        return np.random.SeedSequence(int(check_rng(rng).integers(2**63)))
    check_rng(rng)  # refuses what numpy cannot use, naming it
    if isinstance(rng, (int, np.integer)):
        return np.random.SeedSequence(int(rng))
    return np.random.SeedSequence([int(v) for v in rng])


def split_games(games: int, streams: int) -> list[int]:
    """Games per stream: as equal as can be, the first streams one more (none empty).

    Examples
    --------
    >>> split_games(10, 4), split_games(3, 16)
    ([3, 3, 2, 2], [1, 1, 1])
    """
    streams = max(1, min(int(streams), int(games)))
    base, extra = divmod(int(games), streams)
    return [base + (i < extra) for i in range(streams)]


def _pack(board: Board) -> dict[str, Any]:
    """The board as picklable data (its jumps are a read-only mapping)."""
    out = {}
    for f in dataclasses.fields(board):
        value = getattr(board, f.name)
        out[f.name] = dict(value) if isinstance(value, Mapping) else value
    return out


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Where each per-game array of ``games`` games of ``players`` seats lies in one buffer.

    A header of one page (the file's token), then each array on a page of its own, rows in game order.
    """

    games: int
    players: int

    def width(self, per_seat: bool) -> int:
        return self.players if per_seat else 1

    @property
    def offsets(self) -> tuple[int, ...]:
        out, at = [], _PAGE
        for _, dtype, per_seat in _ARRAYS:
            out.append(at)
            at += -(-self.games * self.width(per_seat) * np.dtype(dtype).itemsize // _PAGE) * _PAGE
        return (*out, at)

    @property
    def size(self) -> int:
        return self.offsets[-1]

    def views(self, buffer: Any) -> dict[str, np.ndarray]:
        """Every array as a view of ``buffer`` (anything with the buffer protocol, :attr:`size` bytes)."""
        out: dict[str, np.ndarray] = {}
        for (name, dtype, per_seat), at in zip(_ARRAYS, self.offsets):
            shape = (self.games, self.players) if per_seat else (self.games,)
            out[name] = np.frombuffer(buffer, dtype=dtype, count=int(np.prod(shape)), offset=at).reshape(shape)
        return out

    def spans(self, first: int, arrays: Mapping[str, np.ndarray]) -> list[tuple[int, memoryview]]:
        """``(byte offset, bytes)`` of each array of the games from ``first`` on, in the layout's dtypes."""
        out = []
        for (name, dtype, per_seat), at in zip(_ARRAYS, self.offsets):
            rows = np.ascontiguousarray(arrays[name])
            if rows.dtype != dtype:  # the simulator's contract (SimulationResult): say so, never cast
                raise GameError(f"{name} came back as {rows.dtype}, expected {np.dtype(dtype)}")
            row_bytes = self.width(per_seat) * rows.itemsize
            out.append((at + first * row_bytes, rows.reshape(-1).view(np.uint8).data))
        return out


def _pwrite_all(fd: int, data: memoryview, offset: int) -> None:
    while data.nbytes:
        done = os.pwrite(fd, data, offset)
        data, offset = data[done:], offset + done


def _write_shared(ticket: tuple[str, bytes, _Layout], first: int, arrays: Mapping[str, np.ndarray]) -> bool:
    """Write a stream's games into the parent's file; False when this process cannot reach it."""
    path, token, layout = ticket
    spans = layout.spans(first, arrays)  # a wrong dtype is an error, not a reason to fall back
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:  # another machine's file, or not ours to open: the arrays travel back
        return False
    try:
        if os.pread(fd, len(token), 0) != token:
            return False
        for offset, data in spans:
            _pwrite_all(fd, data, offset)
        return True
    except OSError:  # no room left on the file system: the arrays travel back, the parent writes them
        return False
    finally:
        os.close(fd)


class _Games:
    """The merged per-game arrays of a split run, filled stream by stream.

    ``shared``: back them by a file in :data:`SHARED_DIR` that workers on
    this machine write into (:attr:`ticket`); otherwise (or when the file
    cannot be made) by private memory, written here by :meth:`put`. The
    file is held open only while it is written or mapped here: a worker
    forked in between (a pool starts its processes at its first task)
    inherits no descriptor that would keep it alive.
    """

    def __init__(self, layout: _Layout, shared: bool) -> None:
        self.layout = layout
        self.token = secrets.token_bytes(16)
        self.path = ""
        self.buffer: np.ndarray | None = None
        self.late: list[tuple[int, Mapping[str, np.ndarray]]] = []  # streams the file had no room for
        if shared:
            self._create()
        if not self.path:
            self.buffer = np.empty(layout.size, dtype=np.uint8)

    def _create(self) -> None:
        if not (hasattr(os, "pwrite") and os.path.isdir(SHARED_DIR)):
            return
        try:
            room = os.statvfs(SHARED_DIR)
            if room.f_bavail * room.f_frsize < self.layout.size + (64 << 20):
                return
            path = os.path.join(SHARED_DIR, f"snlmarkov-sim-{os.getpid()}-{secrets.token_hex(8)}")
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError:
            return
        try:
            os.ftruncate(fd, self.layout.size)
            _pwrite_all(fd, memoryview(self.token), 0)
            self.path = path
        except OSError:
            os.unlink(path)
        finally:
            os.close(fd)

    @property
    def ticket(self) -> tuple[str, bytes, _Layout] | None:
        """What a worker needs to write its rows (None: it sends them back)."""
        return (self.path, self.token, self.layout) if self.path else None

    def put(self, first: int, arrays: Mapping[str, np.ndarray]) -> None:
        """Write the rows of the games from ``first`` on (a stream whose worker did not)."""
        if self.buffer is not None:
            self.layout.spans(first, arrays)  # checks the dtypes
            for name, view in self.layout.views(self.buffer).items():
                view[first : first + len(arrays[name])] = arrays[name]
        elif not _write_shared((self.path, self.token, self.layout), first, arrays):
            # the file system filled up: these rows go into private memory at the end
            self.late.append((first, {name: arrays[name] for name in _PER_GAME}))

    def arrays(self) -> dict[str, np.ndarray]:
        """The merged arrays (call once, when every stream is in); the file, if any, is removed."""
        if self.path:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                if not self.late:  # the result's arrays are views of the file's pages
                    return self.layout.views(mmap.mmap(fd, self.layout.size, access=mmap.ACCESS_READ))
                # no room for some streams: the file into private memory, then those streams
                self.buffer = np.empty(self.layout.size, dtype=np.uint8)
                view, at = self.buffer.data, 0
                while at < view.nbytes:
                    at += os.preadv(fd, [view[at:]], at) or view.nbytes  # (holes read as zeros)
            finally:
                os.close(fd)
                self.close()
        for first, rows in self.late:
            self.put(first, rows)
        return self.layout.views(self.buffer)

    def close(self) -> None:
        """Remove the file (a mapping of it stays valid)."""
        if self.path:
            os.unlink(self.path)
            self.path = ""


def _stream(
    play: Any,
    packed: dict[str, Any],
    rules: Rules,
    games: int,
    players: int,
    mode: str,
    seed: np.random.SeedSequence,
    max_turns: int,
    start: Any,
    ticket: tuple[str, bytes, _Layout] | None = None,
    first: int = 0,
) -> dict[str, Any]:
    """Play one stream with ``play`` (:func:`snlmarkov.sim.core.play`; runs on a worker), as plain data.

    With a ``ticket`` the per-game arrays are written into the parent's file
    at game ``first`` (:func:`_write_shared`) and left out of the answer
    when that worked.
    """
    board = Board(**packed)
    res = play(board, rules, games, players, mode, np.random.default_rng(seed), max_turns, None, start=start)
    # every field but the board and rules (rebuilt by the caller: a board's jumps do not pickle)
    out = {f.name: getattr(res, f.name) for f in dataclasses.fields(res) if f.name not in ("board", "rules")}
    if ticket is not None and _write_shared(ticket, first, out):
        for name in _PER_GAME:
            del out[name]
    return out


def merge_results(parts: Sequence[Any]) -> Any:
    """Join the results of independent streams into one :class:`~snlmarkov.sim.core.SimulationResult`.

    ``parts`` are SimulationResults of the same board, rules, players, mode and ``max_turns``, in stream
    order: per-game arrays are concatenated in that order and landing counts
    added, so the merge is exact and the same whatever ran the streams.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> from snlmarkov.sim.core import simulate
    >>> a = simulate(Board(10), Rules(), 30, rng=1)
    >>> b = simulate(Board(10), Rules(), 20, rng=2)
    >>> m = merge_results([a, b])
    >>> m.games, int(m.landings.sum()) == int(a.landings.sum() + b.landings.sum())
    (50, True)
    """
    if not parts:
        raise GameError("nothing to merge: no simulation results")
    first = parts[0]
    kind = type(first)  # SimulationResult (not imported: core imports this module)
    for p in parts:
        if type(p) is not kind or not hasattr(p, "landings"):
            raise GameError(f"merge_results takes SimulationResults; got {type(p).__name__}")
        if (p.board, p.rules, p.players, p.mode, p.max_turns) != (
            first.board,
            first.rules,
            first.players,
            first.mode,
            first.max_turns,
        ):
            raise GameError("merge_results joins runs of one board, rules, players, mode and max_turns")
    arrays = [{name: getattr(p, name) for name in (*_PER_GAME, "landings")} for p in parts]
    meta: dict[str, Any] = dict(
        board=first.board, rules=first.rules, players=first.players, mode=first.mode, max_turns=first.max_turns
    )
    merged: dict[str, Any] = {name: np.concatenate([a[name] for a in arrays]) for name in _PER_GAME}
    landings = np.sum([np.asarray(a["landings"], dtype=np.int64) for a in arrays], axis=0)
    return kind(games=int(merged["turns"].shape[0]), landings=landings, **merged, **meta)


def simulate_streams(
    board: Board,
    rules: Rules,
    games: int,
    players: int,
    mode: str,
    *,
    rng: Any,
    max_turns: int,
    start: Any = None,
    executor: cf.Executor | None = None,
    streams: int = STREAMS,
    bar: Any = None,
    play: Any,
    result_type: Any,
) -> Any:
    """Checked inputs in, one merged SimulationResult out: the streams run on ``executor`` (or here).

    ``board``, ``rules``, ``games``, ``players``, ``mode`` and ``max_turns``
    must already be checked (as :func:`snlmarkov.sim.core.simulate` does);
    ``play`` and ``result_type`` are :func:`snlmarkov.sim.core.play` and
    :class:`~snlmarkov.sim.core.SimulationResult`, or for ``keep="summary"``
    :func:`~snlmarkov.sim.core.play_summary` and
    :class:`~snlmarkov.sim.summary.SimulationSummary` (passed in, so that
    this module does not import the one that calls it). Summaries of the
    streams are merged in stream order with their own ``merge``.
    """
    streams = check_count(streams, "streams", MAX_STREAMS, error=GameError)
    if executor is not None and not isinstance(executor, cf.Executor):
        raise GameError(f"executor must be a concurrent.futures.Executor; got {type(executor).__name__}")
    sizes = split_games(games, int(streams))
    seeds = seed_root(rng).spawn(len(sizes))  # the first of spawn(streams): only the streams that get games
    firsts = [0, *itertools.accumulate(sizes)][:-1]  # each stream's first game in the merged arrays
    if executor is not None and games * players < POOL_MIN_WORK:
        warnings.warn(
            f"{games:,} games of {players} player(s) are too little work for a pool "
            f"(under snlmarkov.sim.parallel.POOL_MIN_WORK = {POOL_MIN_WORK:,} games x players): "
            "played here, in the same streams (the same result)",
            RuntimeWarning,
            stacklevel=3,
        )
        executor = None
    summary = hasattr(result_type, "merge")  # summaries: histograms add
    kept = None if summary or len(sizes) == 1 else _Games(_Layout(games, players), shared=executor is not None)
    try:
        ticket = None if kept is None else kept.ticket
        packed = _pack(board)
        args = [
            (play, packed, rules, n, players, mode, seed, max_turns, start, ticket, first)
            for n, seed, first in zip(sizes, seeds, firsts)
        ]
        outs: list[dict[str, Any]] = [{} for _ in sizes]
        if executor is None:
            for i, a in enumerate(args):
                outs[i] = _stream(*a)
                _arrived(outs[i], kept, firsts[i], bar, sizes[i])
        else:
            futures = {executor.submit(_stream, *a): i for i, a in enumerate(args)}
            for fut in cf.as_completed(futures):
                i = futures[fut]
                outs[i] = fut.result()
                _arrived(outs[i], kept, firsts[i], bar, sizes[i])
        if kept is None:
            parts = [result_type(board=board, rules=rules, **o) for o in outs]
            merged = parts[0]
            for p in parts[1:]:
                merged = merged.merge(p)
            return merged
        landings = np.sum([np.asarray(o["landings"], dtype=np.int64) for o in outs], axis=0)
        return result_type(
            games=games,
            players=players,
            mode=mode,
            board=board,
            rules=rules,
            max_turns=max_turns,
            landings=landings,
            **kept.arrays(),
        )
    finally:
        if kept is not None:
            kept.close()


def _arrived(out: dict[str, Any], kept: _Games | None, first: int, bar: Any, n: int) -> None:
    """A stream is in: its rows into the merged arrays (unless its worker wrote them), the bar moved."""
    if kept is not None and "turns" in out:
        kept.put(first, out)
        for name in _PER_GAME:
            del out[name]
    if bar is not None:
        bar.update(n)

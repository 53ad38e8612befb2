"""Simulation split into independent streams, run on any executor, merged exactly.

:func:`simulate_streams` splits ``games`` into a fixed number of streams
(:data:`STREAMS` by default, whatever the number of workers). Stream ``i``
plays its share of the games with its own generator, seeded by child ``i``
of ``numpy.random.SeedSequence(rng).spawn(streams)``; :func:`merge_results`
joins the streams' results in stream order (per-game arrays concatenated,
landing counts added). The same seed therefore gives the same result run
serially, on a process pool or on a Dask cluster, with any number of workers.

Like the rest of :mod:`snlmarkov.sim` it imports configuration only.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..board import Board
from ..errors import GameError
from ..limits import MAX_STREAMS, check_count, check_rng
from ..rules import Rules

__all__ = ["STREAMS", "POOL_MIN_WORK", "seed_root", "split_games", "merge_results", "simulate_streams"]

#: Streams a simulation is split into by default (independent of the workers).
STREAMS = 16

#: Fewer games x players than this are played here even when an executor is given: starting the
#: workers' tables and sending the per-game arrays back costs more than the games (10^6 kept games
#: of one player ran at 0.6x serial on a pool of two). The streams and so the result are the same.
POOL_MIN_WORK = 2_000_000

_PER_GAME = ("turns", "rolls", "rounds", "finish_turn", "finished", "place", "winner", "truncated")


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
) -> dict[str, Any]:
    """Play one stream with ``play`` (:func:`snlmarkov.sim.core.play`; runs on a worker), as plain data."""
    board = Board(**packed)
    res = play(board, rules, games, players, mode, np.random.default_rng(seed), max_turns, None, start=start)
    # every field but the board and rules (rebuilt by the caller: a board's jumps do not pickle)
    return {f.name: getattr(res, f.name) for f in dataclasses.fields(res) if f.name not in ("board", "rules")}


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
    packed = _pack(board)
    args = [(play, packed, rules, n, players, mode, seed, max_turns, start) for n, seed in zip(sizes, seeds)]
    outs: list[dict[str, Any]] = [{} for _ in sizes]
    if executor is not None and games * players < POOL_MIN_WORK:
        warnings.warn(
            f"{games:,} games of {players} player(s) are too little work for a pool "
            f"(under snlmarkov.sim.parallel.POOL_MIN_WORK = {POOL_MIN_WORK:,} games x players): "
            "played here, in the same streams (the same result)",
            RuntimeWarning,
            stacklevel=3,
        )
        executor = None
    if executor is None:
        for i, a in enumerate(args):
            outs[i] = _stream(*a)
            if bar is not None:
                bar.update(sizes[i])
    else:
        futures = {executor.submit(_stream, *a): i for i, a in enumerate(args)}
        for fut in cf.as_completed(futures):
            outs[futures[fut]] = fut.result()
            if bar is not None:
                bar.update(sizes[futures[fut]])
    parts = [result_type(board=board, rules=rules, **o) for o in outs]
    if len(parts) == 1:
        return parts[0]
    if hasattr(parts[0], "merge"):  # summaries: histograms add
        merged = parts[0]
        for p in parts[1:]:
            merged = merged.merge(p)
        return merged
    return merge_results(parts)

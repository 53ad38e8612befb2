"""Sweeps: exact figures for every (board, rules) pair, on one core or any executor.

:func:`sweep` evaluates the grid ``boards x rules`` and returns one row per
pair (board-major order). Rows of one token on boards of up to
:data:`BATCH_MAX_SQUARES` squares come from the batched dense evaluator that
``design`` uses (:func:`~snlmarkov.search.batch.evaluate`, every board on a
shape of its own, so a row does not depend on its neighbours); races and
larger boards take one :func:`~snlmarkov.analyze` (and :func:`~snlmarkov.race`)
per pair. Chunks of pairs are computed by a
:class:`concurrent.futures.Executor` when one is given (a
``ProcessPoolExecutor`` for the cores of one machine, or a Dask
``distributed.Client(...).get_executor()`` for a cluster); the table is the
same whatever runs it. Dask is never imported here: it is used only through
the executor the caller passes in.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import itertools
import math
import types
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.single import Analysis, analyze
from ..args import mode_arg, players_arg
from ..board import Board
from ..chain.mechanics import batchable
from ..errors import BoardError, LimitError, MetricError, RuleError, SnlError, SweepError
from ..limits import limit, show_value
from ..races.core import race
from ..rules import Rules
from ..sim.parallel import seed_root
from .batch import BatchFigures, destinations, evaluate

__all__ = ["sweep", "rules_grid"]

#: Quantiles of the game length reported by default (besides the median).
DEFAULT_QUANTILES = (0.1, 0.9)
#: ``t`` for the default ``P(length > t)`` columns.
DEFAULT_LONGER_THAN = (50, 100)


def _longest(jumps: Mapping[int, int]) -> int:
    return max((abs(e - s) for s, e in jumps.items()), default=0)


def _ladder_share_min(a: Analysis, board: Board) -> float:
    feet = list(board.ladders)
    return float(np.min(a.hit_probability[feet])) if feet else math.nan


def _snake_share_max(a: Analysis, board: Board) -> float:
    heads = list(board.snakes)
    return float(np.max(a.hit_probability[heads])) if heads else math.nan


#: The extra figures ``metrics=`` may name, and what each adds to a row.
METRICS: Mapping[str, str] = {
    "expected_rolls": "expected die throws per game (one player)",
    "mode_turns": "the most likely game length, in turns",
    "min_turns": "the shortest possible game, in turns",
    "jump_uses": "expected ladder and snake uses per game (one player)",
    "ladder_share_min": "the smallest share of games that use a ladder, over the board's ladders (NaN without ladders)",
    "snake_share_max": "the largest share of games that meet a snake, over the board's snakes (NaN without snakes)",
    "longest_ladder": "the longest ladder's climb, in squares (0 without ladders)",
    "longest_snake": "the longest snake's drop, in squares (0 without snakes)",
    "win_probability": "one column win_seat{i} per seat: the chance that seat wins (needs players >= 2)",
    "expected_rounds": "expected rounds until the game ends for `players` seats",
    "race_method": "how the race figures were obtained (exact or Monte Carlo)",
}

_SINGLE: dict[str, Callable[[Analysis, Board], Any]] = {
    "expected_rolls": lambda a, b: a.expected_rolls,
    "mode_turns": lambda a, b: a.length.mode,
    "min_turns": lambda a, b: a.length.minimum,
    "jump_uses": lambda a, b: float(sum(a.jump_uses.values())),
    "ladder_share_min": _ladder_share_min,
    "snake_share_max": _snake_share_max,
    "longest_ladder": lambda a, b: _longest(b.ladders),
    "longest_snake": lambda a, b: _longest(b.snakes),
}


def rules_grid(base: Rules | str | None = None, **axes: Iterable[Any]) -> list[Rules]:
    """Every combination of the given rule fields, on top of ``base``.

    Examples
    --------
    >>> from snlmarkov.search.sweep import rules_grid
    >>> grid = rules_grid("app", finish=["stay", "bounce"], max_sixes=[None, 2])
    >>> [(r.finish, r.max_sixes) for r in grid]
    [('stay', None), ('stay', 2), ('bounce', None), ('bounce', 2)]
    """
    start = base if isinstance(base, Rules) else Rules.preset(base)
    names = list(axes)
    values = [list(v) for v in axes.values()]
    return [start.replace(**dict(zip(names, combo))) for combo in itertools.product(*values)]


def _as_boards(boards: Any, cap: int) -> list[Board]:
    if isinstance(boards, (Board, str, Path)):
        boards = [boards]
    if not isinstance(boards, Iterable):
        raise BoardError(f"boards must be Boards, built-in board names or board files; got {type(boards).__name__}")
    out = []
    for b in itertools.islice(boards, cap + 1):  # a longer list is refused by the pair limit
        if isinstance(b, Board):
            out.append(b)
        elif isinstance(b, Path) or (isinstance(b, str) and Path(b).suffix.lower() in (".toml", ".json")):
            out.append(Board.from_file(b))
        elif isinstance(b, str):
            out.append(Board.builtin(b))
        else:
            raise BoardError(f"boards must be Boards, built-in board names or board files; got {type(b).__name__}")
    if not out:
        raise BoardError("a sweep needs at least one board")
    return out


def _as_rules(rules: Any, cap: int) -> list[Rules]:
    if rules is None or isinstance(rules, (Rules, str)):
        rules = [rules]
    if not isinstance(rules, Iterable):
        raise RuleError(f"rules must be Rules or preset names; got {type(rules).__name__}")
    out = []
    for r in itertools.islice(rules, cap + 1):
        if r is None or isinstance(r, str):
            out.append(Rules.preset(r))
        elif isinstance(r, Rules):
            out.append(r)
        else:
            raise RuleError(f"rules must be Rules or preset names; got {type(r).__name__}")
    if not out:
        raise RuleError("a sweep needs at least one rule set")
    return out


def _fields(rules: Rules) -> dict[str, Any]:
    """The rule fields as plain data, the die always as ``die`` (its text form, ``d6`` for the fair die)."""
    out = rules.to_dict()
    out.pop("faces", None)
    out["die"] = rules.die.spec
    return out


def _rules_label(r: Rules) -> str:
    name = r.preset_name
    if name != "custom":
        return name
    app = _fields(Rules())
    diff = ", ".join(f"{k}={v}" for k, v in _fields(r).items() if app.get(k) != v)
    return f"app({diff})"


def _quantile_name(q: float) -> str:
    text = f"{100 * q:.6g}".replace(".", "_")
    return f"q{text}_turns"


def _check_options(players: Any, mode: Any, quantiles: Any, longer_than: Any, metrics: Any) -> dict[str, Any]:
    players, mode = players_arg(players), mode_arg(mode)
    qs = []
    for raw in _several(quantiles, "quantiles"):
        if isinstance(raw, (bool, np.bool_)) or not isinstance(raw, (int, float, np.integer, np.floating)):
            raise MetricError(f"quantiles must be numbers strictly between 0 and 1; got {show_value(raw)}")
        if not 0 < raw < 1:
            raise MetricError(f"quantiles must lie strictly between 0 and 1; got {show_value(raw)}")
        qs.append(float(raw))
    ts = []
    for raw in _several(longer_than, "longer_than"):
        if isinstance(raw, (bool, np.bool_)) or not isinstance(raw, (int, np.integer)) or not 0 <= raw <= 10**9:
            raise MetricError(f"longer_than takes whole numbers of turns 0..10^9; got {show_value(raw)}")
        ts.append(int(raw))
    if isinstance(metrics, str):
        metrics = (metrics,)
    names = tuple(metrics)
    unknown = [m for m in names if m not in METRICS]
    if unknown:
        raise MetricError(f"unknown metric {unknown[0]!r}; metrics: {', '.join(METRICS)}")
    if "win_probability" in names and int(players) < 2:
        raise MetricError("metric 'win_probability' needs players >= 2")
    return {"players": int(players), "mode": mode, "quantiles": tuple(qs), "longer_than": tuple(ts), "metrics": names}


def _several(values: Any, what: str) -> list[Any]:
    """One value or an iterable of them, as a list (at most 1000: each is a column)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        values = [values]
    out = list(itertools.islice(values, 1001))
    if len(out) > 1000:
        raise LimitError(f"{what} takes at most 1000 values (each is a column)")
    return out


def _needs_race(options: Mapping[str, Any]) -> bool:
    """Whether a row solves a race (and so may draw from its pair's seed)."""
    return options["players"] > 1 or bool({"expected_rounds", "race_method"} & set(options["metrics"]))


def _row(board: Board, rules: Rules, options: Mapping[str, Any], seed: np.random.SeedSequence | None) -> dict[str, Any]:
    """Every figure of one (board, rules) pair (runs on the workers)."""
    a = analyze(board, rules)
    d = a.length
    row: dict[str, Any] = {
        "expected_turns": a.expected_turns,
        "sd_turns": a.std_turns,
        "median_turns": d.median(),
    }
    for q in options["quantiles"]:
        row[_quantile_name(q)] = d.ppf(q)
    for t in options["longer_than"]:
        row[f"p_longer_{t}"] = float(d.sf(t))
    players = options["players"]
    metrics = options["metrics"]
    res = (
        race(board, rules, players=players, mode=options["mode"], rng=np.random.default_rng(seed))
        if _needs_race(options)
        else None
    )
    if players > 1 and res is not None:
        row["first_seat_win"] = float(res.win_probability[0])
        row["first_seat_advantage"] = float(res.win_probability[0]) - 1.0 / players
    for name in metrics:
        if name in _SINGLE:
            row[name] = _SINGLE[name](a, board)
        elif name == "win_probability" and res is not None:
            for i, p in enumerate(res.win_probability):
                row[f"win_seat{i}"] = float(p)
        elif name == "expected_rounds" and res is not None:
            row[name] = res.expected_rounds
        elif name == "race_method" and res is not None:
            row[name] = res.method
    return row


def pack_board(board: Board) -> dict[str, Any]:
    """A board as plain picklable data (its jumps are a read-only mapping, which pickle refuses).

    Examples
    --------
    >>> from snlmarkov import Board
    >>> from snlmarkov.search.sweep import pack_board, unpack_board
    >>> b = Board(10, {2: 7}, name="tiny")
    >>> unpack_board(pack_board(b)) == b, unpack_board(pack_board(b)).name
    (True, 'tiny')
    """
    return {name: dict(v) if isinstance(v, _MAPPINGS) else v for name in _BOARD_FIELDS for v in [getattr(board, name)]}


_BOARD_FIELDS = tuple(f.name for f in dataclasses.fields(Board))
_MAPPINGS = (dict, types.MappingProxyType)  # a board's jumps (an abstract Mapping check costs more than the copy)


def unpack_board(data: Mapping[str, Any]) -> Board:
    """The board :func:`pack_board` packed."""
    return Board(**data)


def _evaluate_chunk(
    tasks: Sequence[tuple[int, dict[str, Any], Rules, np.random.SeedSequence | None]], options: Mapping[str, Any]
) -> list[tuple[int, bool, Any]]:
    """Rows of one chunk: ``(index, True, row)``, or ``(index, False, "Type: message")`` for the pair that failed.

    The pairs the batched evaluator can answer (:func:`_batch_rows`) are
    solved together; the others, and any it leaves, one by one.
    """
    try:
        batched = _batch_rows(tasks, options)
    except SnlError:  # a limit of the batch (memory): the one-by-one path below reports the pair that fails
        batched = {}
    out: list[tuple[int, bool, Any]] = []
    for index, packed, rules, seed in tasks:
        if index in batched:
            out.append((index, True, batched[index]))
            continue
        try:
            out.append((index, True, _row(unpack_board(packed), rules, options, seed)))
        except Exception as exc:  # reported in the caller with the board that failed
            out.append((index, False, f"{type(exc).__name__}: {exc}"))
            break
    return out


#: Boards of at most this many squares are swept by the batched dense evaluator of
#: :mod:`snlmarkov.search.batch` (the one ``design`` uses) when a row needs only its figures.
BATCH_MAX_SQUARES = 200
#: Boards per call of the batched evaluator. It steps the length distribution until the slowest board
#: of the call is done, so a large batch steps its quick boards far past their need; each board's
#: figures are the same whatever the batch (benchmarks/README.md has the measured cost).
BATCH_BOARDS = 16
#: The metrics the batched evaluator answers too (jump shares are its hit probabilities).
_BATCH_METRICS = frozenset({"ladder_share_min", "snake_share_max", "longest_ladder", "longest_snake"})


def _batchable_pair(board: Board, rules: Rules, options: Mapping[str, Any]) -> bool:
    """Whether the batched evaluator gives this pair's whole row."""
    if options["players"] != 1 or not set(options["metrics"]) <= _BATCH_METRICS:
        return False
    if not batchable(rules) or board.size > BATCH_MAX_SQUARES:
        return False
    shares = {"ladder_share_min", "snake_share_max"} & set(options["metrics"])
    return not shares or bool(board.ladders and board.snakes)


def _batch_rows(
    tasks: Sequence[tuple[int, dict[str, Any], Rules, np.random.SeedSequence | None]], options: Mapping[str, Any]
) -> dict[int, dict[str, Any]]:
    """The rows of the pairs that :func:`_batchable_pair` admits, solved board batch by board batch.

    Each (rules, size) group is solved in batches of :data:`BATCH_BOARDS` boards,
    one call of :func:`~snlmarkov.search.batch.evaluate` each (mean, variance, the length distribution as far as the row reads it, jump
    shares): the same figures as :func:`_row`'s ``analyze``,
    from dense stacked solves. A pair it cannot finish (a board that cannot
    be won, a quantile beyond its horizon) is left to :func:`_row`.
    """
    groups: dict[tuple[Rules, int], list[tuple[int, Board]]] = {}
    for index, packed, rules, _ in tasks:
        board = unpack_board(packed)
        if _batchable_pair(board, rules, options):
            groups.setdefault((rules, board.size), []).append((index, board))
    horizon = max([int(t) for t in options["longer_than"]] + [1])
    # the row reads the distribution up to its largest quantile and its p_longer_t: step until every
    # board's mass left is below 1 - that quantile (then each quantile is found), not to the far tail
    reach = 1.0 - max([float(q) for q in options["quantiles"]] + [0.5])
    out: dict[int, dict[str, Any]] = {}
    for (rules, _), group in groups.items():
        for first in range(0, len(group), BATCH_BOARDS):
            out.update(_batch_group(group[first : first + BATCH_BOARDS], rules, options, horizon, reach))
    return out


def _batch_group(
    members: Sequence[tuple[int, Board]], rules: Rules, options: Mapping[str, Any], horizon: int, reach: float
) -> dict[int, dict[str, Any]]:
    """The rows of one batch of boards of one size under ``rules``: one call of the batched evaluator.

    The evaluator steps the length distribution until the slowest board of
    the batch is done, so a batch holds at most :data:`BATCH_BOARDS` boards.
    """
    boards = [b for _, b in members]
    shares = np.zeros((len(boards), 0), dtype=np.int64)
    if {"ladder_share_min", "snake_share_max"} & set(options["metrics"]):
        cols = [(list(b.ladders), list(b.snakes)) for b in boards]
        width = max(len(f) + len(h) for f, h in cols)
        shares = np.array([(f + h + [f[0]] * width)[:width] for f, h in cols], dtype=np.int64)
    fig = evaluate(
        destinations(boards), rules, horizon=horizon, tail=reach, shares=shares, boards=boards, compact=False
    )
    quants: dict[Any, np.ndarray] = {q: fig.quantile(q) for q in (0.5, *options["quantiles"])}  # every board at once
    quants["sd"] = fig.sd
    out: dict[int, dict[str, Any]] = {}
    for k, (index, board) in enumerate(members):
        row = _batch_row(fig, k, board, options, quants)
        if row:
            out[index] = row
    return out


def _batch_row(
    fig: BatchFigures, k: int, board: Board, options: Mapping[str, Any], quants: Mapping[Any, np.ndarray]
) -> dict[str, Any]:
    """Board ``k``'s row from the batch's figures, with its quantiles and ``"sd"`` computed for every board at once.

    ``{}`` when the batch cannot give all of it (a board that cannot be won, a quantile beyond the horizon).
    """
    if not fig.winnable[k] or not all(np.isfinite(quants[q][k]) for q in (0.5, *options["quantiles"])):
        return {}
    row: dict[str, Any] = {
        "expected_turns": float(fig.mean[k]),
        "sd_turns": float(quants["sd"][k]),
        "median_turns": int(quants[0.5][k]),
    }
    row.update({_quantile_name(q): int(quants[q][k]) for q in options["quantiles"]})
    for t in options["longer_than"]:
        row[f"p_longer_{t}"] = float(max(fig.survival[k, int(t)], 0.0))
    n_feet = len(board.ladders)
    for name in options["metrics"]:
        if name == "ladder_share_min":
            row[name] = float(np.min(fig.jump_share[k, :n_feet]))
        elif name == "snake_share_max":
            row[name] = float(np.max(fig.jump_share[k, n_feet : n_feet + len(board.snakes)]))
        else:
            row[name] = _SINGLE[name](None, board)  # type: ignore[arg-type]  # the longest jumps read the board only
    return row


def sweep(
    boards: Any,
    rules: Any = None,
    *,
    players: int = 1,
    mode: str = "classic",
    quantiles: Sequence[float] = DEFAULT_QUANTILES,
    longer_than: Sequence[int] = DEFAULT_LONGER_THAN,
    metrics: Sequence[str] = (),
    executor: cf.Executor | None = None,
    chunksize: int = 0,
    rng: Any = None,
    progress: bool = False,
    as_frame: bool = True,
) -> Any:
    """A table of exact figures, one row per (board, rules) pair of ``boards x rules``.

    Parameters
    ----------
    boards : Board, str or iterable of them
        Boards, built-in board names or ``.toml``/``.json`` board files.
    rules : Rules, str, iterable of them, or None
        Rule sets or preset names (``None``: the app rules). Every board is
        evaluated under every rule set (see :func:`rules_grid` for a grid of
        rule toggles).
    players : int, default 1
        With 2 to 6, the race of that many seats is solved too (via
        :func:`snlmarkov.race`) and the row holds the first seat's win chance
        and advantage.
    mode : {"classic", "last_one_standing"}, default "classic"
        How the race ends.
    quantiles : sequence of float, default (0.1, 0.9)
        Quantiles of the game length (columns ``q10_turns``, ``q90_turns``).
    longer_than : sequence of int, default (50, 100)
        ``t`` for the columns ``p_longer_{t}`` = ``P(length > t)``.
    metrics : sequence of str
        Extra figures by name; the names and what they mean are in
        :data:`METRICS`. An unknown name raises :class:`MetricError`.
    executor : concurrent.futures.Executor, optional
        Where the rows are computed: a ``ProcessPoolExecutor``, a Dask
        ``Client.get_executor()``, ... The table is the same as without one.
    chunksize : int, default 0
        Pairs per task sent to the executor; 0 picks about :data:`TASKS_PER_WORKER` tasks
        per worker (at most 256 pairs each; serially, chunks of 256).
    rng : None, int, numpy.random.SeedSequence or Generator
        Seeds Monte Carlo races (``bump`` with 4 or more players): each pair
        gets its own stream from ``SeedSequence.spawn``, so the table does not
        depend on the executor. Exact figures do not use it.
    progress : bool, default False
        Show a progress bar (tqdm) as chunks finish.
    as_frame : bool, default True
        Return a :class:`pandas.DataFrame` (``pip install snlmarkov[sweep]``).
        Without pandas installed a warning says so and the rows come back as
        a list of dicts, as they always do with ``as_frame=False``.

    Returns
    -------
    pandas.DataFrame or list of dict
        Columns ``board, size, ladders, snakes, rules`` (plus every rule field
        that differs between the rule sets), ``expected_turns, sd_turns,
        median_turns``, the quantiles, ``p_longer_{t}``, with ``players >= 2``
        ``first_seat_win`` and ``first_seat_advantage`` (seat 0's win chance
        minus ``1 / players``), then the metrics.

    Raises
    ------
    SweepError
        When a pair fails (on a worker or here), carrying its ``board``,
        ``rules`` and ``index``, with the original error in ``cause``.
    MetricError
        For an unknown metric name.
    LimitError
        When ``boards x rules`` holds more than
        :data:`snlmarkov.limits.MAX_SWEEP_PAIRS` pairs (100,000;
        ``SNLMARKOV_MAX_SWEEP_PAIRS`` raises it), refused before any is
        evaluated.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> rows = snl.sweep(["jungle", "milton_bradley"], ["app", "plain"], as_frame=False)
    >>> [(r["board"], r["rules"], round(r["expected_turns"], 2)) for r in rows]
    [('jungle', 'app', 55.61), ('jungle', 'plain', 65.11), ('milton_bradley', 'app', 33.43), ('milton_bradley', 'plain', 39.23)]
    >>> rows[0]["median_turns"], rows[0]["q90_turns"]
    (42, 114)
    """
    options = _check_options(players, mode, quantiles, longer_than, metrics)
    cap = limit("sweep_pairs")
    board_list, rules_list = _as_boards(boards, cap), _as_rules(rules, cap)
    n_pairs = len(board_list) * len(rules_list)
    if n_pairs > cap:  # refused before a pair, a seed or a task is made
        counts = [f"over {cap:,}" if len(x) > cap else f"{len(x):,}" for x in (board_list, rules_list)]
        raise LimitError(
            f"a sweep of {counts[0]} boards x {counts[1]} rule sets is over the limit of {cap:,} pairs "
            "(each is a full analysis); set SNLMARKOV_MAX_SWEEP_PAIRS to raise it"
        )
    pairs = [(b, r) for b in board_list for r in rules_list]
    seeds = seed_root(rng).spawn(len(pairs))
    if not _needs_race(options):  # exact rows draw nothing: the seeds are not shipped
        seeds = [None] * len(pairs)
    packed: dict[int, dict[str, Any]] = {}  # one packed copy per board object, shared by its pairs
    tasks = []
    for i, (b, r) in enumerate(pairs):
        if id(b) not in packed:
            packed[id(b)] = pack_board(b)
        tasks.append((i, packed[id(b)], r, seeds[i]))
    results = _run(tasks, options, executor, chunksize, progress)
    dicts = [_fields(r) for r in rules_list]
    varying = [k for k in dicts[0] if len({repr(d[k]) for d in dicts}) > 1]
    # each rule set's columns once (not per pair: naming a preset compares it with every preset)
    rule_columns = {id(r): {"rules": _rules_label(r), **{k: d[k] for k in varying}} for r, d in zip(rules_list, dicts)}
    first_index: dict[Board, int] = {}  # a board's label counts from its first place in the list
    for k, b in enumerate(board_list):
        first_index.setdefault(b, k)
    board_columns = []  # each board's columns once (pairs are board-major)
    for b in board_list:
        up = sum(e > s for s, e in b.jumps.items())
        label = b.name or f"board{first_index[b]}"
        board_columns.append({"board": label, "size": b.size, "ladders": up, "snakes": len(b.jumps) - up})
    records = [
        {**board_columns[i // len(rules_list)], **rule_columns[id(r)], **results[i]} for i, (_, r) in enumerate(pairs)
    ]
    if not as_frame:
        return records
    try:
        import pandas as pd
    except ImportError:
        warnings.warn(
            "pandas is not installed (pip install 'snlmarkov[sweep]'); sweep returns a list of records",
            stacklevel=2,
        )
        return records
    return pd.DataFrame.from_records(records)


def _run(
    tasks: list[tuple[int, dict[str, Any], Rules, np.random.SeedSequence | None]],
    options: Mapping[str, Any],
    executor: cf.Executor | None,
    chunksize: int,
    progress: bool,
) -> list[dict[str, Any]]:
    """Evaluate every task, in chunks on ``executor`` (or here), and return the rows in task order."""
    if isinstance(chunksize, bool) or not isinstance(chunksize, (int, np.integer)) or chunksize < 0:
        raise SnlError(f"chunksize must be a whole number >= 0; got {chunksize!r}")
    if executor is not None and not isinstance(executor, cf.Executor):
        raise SnlError(f"executor must be a concurrent.futures.Executor; got {type(executor).__name__}")
    size = int(chunksize) or _auto_chunk(len(tasks), executor)
    chunks = [tasks[i : i + size] for i in range(0, len(tasks), size)]
    bar = _bar(len(tasks), progress)
    done: dict[int, list[tuple[int, bool, Any]]] = {}
    try:
        if executor is None:
            for k, chunk in enumerate(chunks):
                done[k] = _evaluate_chunk(chunk, options)
                bar.update(len(chunk))
                if not all(ok for _, ok, _ in done[k]):
                    break
        else:
            futures = {executor.submit(_evaluate_chunk, chunk, options): k for k, chunk in enumerate(chunks)}
            for fut in cf.as_completed(futures):
                k = futures[fut]
                try:
                    done[k] = fut.result()
                except Exception as exc:  # the worker itself died, or could not run the chunk
                    first = chunks[k][0]
                    done[k] = [(first[0], False, f"{type(exc).__name__}: {exc}")]
                bar.update(len(chunks[k]))
    finally:
        bar.close()
    rows: list[dict[str, Any]] = [{} for _ in tasks]
    for k in sorted(done):
        for index, ok, value in done[k]:
            if not ok:
                _, packed, rules, _ = tasks[index]
                board = unpack_board(packed)
                raise SweepError(
                    f"sweep row {index} ({board.name or 'board'} of size {board.size}, rules {_rules_label(rules)}) "
                    f"failed: {value}",
                    board=board,
                    rules=rules,
                    index=index,
                    cause=value,
                )
            rows[index] = value
    return rows


#: Pairs per chunk when a sweep runs here (one batched solve per chunk; the progress bar moves per chunk).
SERIAL_CHUNK = 256


#: Tasks per worker an executor gets by default: enough that the last ones to finish leave the
#: other workers idle for a small share of the run, few enough that each holds several batches.
TASKS_PER_WORKER = 8


def _auto_chunk(n_tasks: int, executor: cf.Executor | None) -> int:
    if executor is None:
        return SERIAL_CHUNK
    workers = getattr(executor, "_max_workers", 0) or 4
    return max(1, min(SERIAL_CHUNK, math.ceil(n_tasks / (TASKS_PER_WORKER * workers))))


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int, progress: bool, *, unit: str = "pair", desc: str = "sweep") -> Any:
    if not progress:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, unit=unit, desc=desc)

"""Search for boards that meet a target: :func:`design`.

The search is parallel tempering (replica-exchange simulated annealing) over
jump placements, run on a fixed number of independent *islands*. Each island
keeps a population of chains at temperatures from cold to hot; every step
each chain proposes one small change to its board (move a jump's start or
end a few squares, or redraw one jump), all proposals of the island are
evaluated exactly in one batch (:mod:`snlmarkov.search.batch`), each chain
accepts or refuses its proposal by the Metropolis rule, and neighbouring
temperatures swap boards. See ``docs/design.md`` for why.

Islands are independent, each seeded by its own child of
``numpy.random.SeedSequence(rng).spawn(islands)``: with ``executor=`` they run
on the workers, and the boards found are the same for any number of workers.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from ..board import Board
from ..errors import RuleError, TargetError
from ..limits import check_count, limit, show_value
from ..rules import Rules
from ..sim.parallel import seed_root
from .batch import check_batch_memory, evaluate, single_threaded
from .target import Constraints, Target

__all__ = ["design", "DesignResult", "DesignedBoard"]

#: Candidate boards evaluated by default.
DEFAULT_BUDGET = 20_000
#: Independent searches the budget is split into (fixed, so results do not depend on the workers).
ISLANDS = 4
#: Chains (temperatures) per island; their proposals are evaluated as one batch.
CHAINS = 32
#: Temperatures of the chains, in units of the target distance (geometric from cold to hot).
T_COLD, T_HOT = 1e-3, 0.3
#: Weight of the tie-breaker (distance from the centre of "==" goals) in the energy.
OFFSET_WEIGHT = 0.05
#: Largest horizon (turns) of the length distribution computed for quantile and advantage goals.
MAX_HORIZON = 5_000


@dataclass(frozen=True, eq=False)
class DesignedBoard:
    """One board a search found.

    Attributes
    ----------
    board : Board
    figures : Mapping[str, float]
        Its exact figures, keyed as the goals read them (``mean``, ``sd``,
        ``q90``, ``P(>60)``, ``advantage(2)``, ``ladder_share``, ...).
    distance : float
        How far it is from the target (0 when met; see :meth:`Target.distance`).
    met : bool
        ``distance == 0``.
    """

    board: Board
    figures: Mapping[str, float]
    distance: float
    met: bool

    def __str__(self) -> str:
        figs = ", ".join(f"{k} {v:.4g}" for k, v in self.figures.items())
        return f"{'met' if self.met else f'distance {self.distance:.4g}'}: {figs}"


@dataclass(frozen=True, eq=False)
class DesignResult:
    """What :func:`design` found.

    Attributes
    ----------
    target : Target
    constraints : Constraints
    rules : Rules
    boards : tuple of DesignedBoard
        The best distinct boards found, best first.
    evaluated : int
        Candidate boards evaluated.
    budget : int
        Candidate boards the search was allowed.
    """

    target: Target
    constraints: Constraints
    rules: Rules
    boards: tuple[DesignedBoard, ...]
    evaluated: int
    budget: int
    _offsets: tuple[float, ...] = field(default=(), repr=False)

    @property
    def best(self) -> DesignedBoard:
        """The best board found."""
        return self.boards[0]

    @property
    def met(self) -> bool:
        """True when the best board meets every goal of the target."""
        return self.best.met

    @property
    def message(self) -> str:
        """One line: met, or not met with the goals the best board misses."""
        if self.met:
            return f"target met after {self.evaluated} candidate boards"
        missed = []
        for g in self.target.goals:
            x = self.best.figures[g.key]
            if float(g.miss(np.array(x))) > 0:
                missed.append(f"{g.label} (got {x:.4g})")
        return (
            f"target NOT met after {self.evaluated} candidate boards; the best board found is at distance "
            f"{self.best.distance:.4g}: misses {'; '.join(missed)}"
        )

    def __str__(self) -> str:
        b = self.best.board
        lines = [self.message, f"target: {self.target!r}", f"best board: {self.best}"]
        lines.append("  ladders: " + ", ".join(f"{s}->{e}" for s, e in b.ladders.items()))
        lines.append("  snakes:  " + ", ".join(f"{s}->{e}" for s, e in b.snakes.items()))
        return "\n".join(lines)


@dataclass(frozen=True)
class _Problem:
    """Everything an island needs (plain, picklable data)."""

    target: Target
    constraints: Constraints
    rules: Rules
    size: int
    ladders: int
    snakes: int
    keep: int
    horizon: int
    tail: float
    shares: bool

    @property
    def jumps(self) -> int:
        return self.ladders + self.snakes


def _horizon(target: Target) -> tuple[int, float]:
    """Horizon and tail mass of the length distribution the goals need."""
    horizon, tail = -1, 0.0
    for g in target.goals:
        if g.figure == "longer_than":
            horizon = max(horizon, int(g.at))
        elif g.figure == "quantile":
            horizon = max(horizon, 0)
            need = (1.0 - g.at) * 0.5  # run on until less than this is left for every board
            tail = need if tail == 0 else min(tail, need)
        elif g.figure == "first_seat_advantage":
            horizon = max(horizon, 0)
            tail = 1e-10 if tail == 0 else min(tail, 1e-10)
    return horizon, tail


def _figures(problem: _Problem, starts: np.ndarray, ends: np.ndarray) -> dict[str, np.ndarray]:
    """The figures every goal reads, for a batch of candidate boards (rows of ``starts``/``ends``)."""
    b_count = starts.shape[0]
    n = problem.size
    dest = np.broadcast_to(np.arange(n + 1), (b_count, n + 1)).copy()
    rows = np.arange(b_count)[:, None]
    dest[rows, starts] = ends
    shares = starts[:, : problem.ladders] if problem.shares else ()
    fig = evaluate(
        dest, problem.rules, horizon=problem.horizon, tail=problem.tail, max_horizon=MAX_HORIZON, shares=shares
    )
    out: dict[str, np.ndarray] = {"mean": fig.mean, "sd": np.where(fig.winnable, fig.sd, np.nan)}
    for g in problem.target.goals:
        if g.figure == "quantile":
            out[g.key] = np.where(fig.winnable, fig.quantile(g.at), np.nan)
        elif g.figure == "longer_than":
            out[g.key] = np.where(fig.winnable, fig.longer_than(int(g.at)), np.nan)
        elif g.figure == "first_seat_advantage":
            k = int(g.at)
            out[g.key] = np.where(fig.winnable, fig.first_seat_win(k) - 1.0 / k, np.nan)
        elif g.figure == "ladder_share":
            share = fig.jump_share
            out[g.key] = share.min(axis=1) if share.shape[1] else np.full(b_count, np.nan)
    out["mean"] = np.where(fig.winnable, fig.mean, np.nan)
    return out


def _valid(problem: _Problem, starts: np.ndarray, ends: np.ndarray) -> bool:
    """Whether one candidate (a row of starts and ends) is a board the constraints allow."""
    n, lad = problem.size, problem.ladders
    c = problem.constraints
    s, e = starts.tolist(), ends.tolist()
    if len(set(s)) != len(s):
        return False
    start_set = set(s)
    for i, (a, b) in enumerate(zip(s, e)):
        if not (1 <= a <= n - 1 and 1 <= b <= n) or b in start_set:
            return False
        length = b - a if i < lad else a - b
        lo, hi = (c.min_ladder_length, c.max_ladder_length) if i < lad else (c.min_snake_length, c.max_snake_length)
        if not lo <= length <= hi:
            return False
        if a in c.no_jump or b in c.no_jump:
            return False
    return c.must_jump <= start_set


def _draw_jump(problem: _Problem, i: int, gen: np.random.Generator, start: int = -1) -> tuple[int, int]:
    """A random jump of kind ``i`` (ladder for ``i < ladders``) within the length limits, from ``start`` if given."""
    n, c = problem.size, problem.constraints
    ladder = i < problem.ladders
    a = int(gen.integers(1, n)) if start < 0 else start
    if ladder:
        lo, hi = int(c.min_ladder_length), int(min(c.max_ladder_length, n - a))
    else:
        lo, hi = int(c.min_snake_length), int(min(c.max_snake_length, a - 1))
    if hi < lo:
        return a, a  # invalid: refused by _valid
    length = int(gen.integers(lo, hi + 1))
    return a, (a + length if ladder else a - length)


def _initial(problem: _Problem, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A random board the constraints allow, jump by jump (the squares that must hold a jump get one first)."""
    j = problem.jumps
    must = sorted(problem.constraints.must_jump)
    never = problem.constraints.no_jump
    for _ in range(200):
        starts, ends = np.zeros(j, dtype=np.int64), np.zeros(j, dtype=np.int64)
        used_s: set[int] = set()
        used_e: set[int] = set()
        order = gen.permutation(j)
        for k in range(j):
            i = int(order[k])
            for _ in range(200):
                a, b = _draw_jump(problem, i, gen, must[k] if k < len(must) else -1)
                if a != b and a not in used_s and a not in used_e and b not in used_s and not {a, b} & never:
                    break
            starts[i], ends[i] = a, b
            used_s.add(a)
            used_e.add(b)
        if _valid(problem, starts, ends):
            return starts, ends
    raise TargetError(
        "could not place the jumps within the constraints after 200 tries; loosen the length limits or the "
        "squares that must or must not hold a jump"
    )


def _propose(problem: _Problem, starts: np.ndarray, ends: np.ndarray, gen: np.random.Generator):
    """One small random change of a board: move a start, move an end, or redraw one jump."""
    n = problem.size
    for _ in range(20):
        s, e = starts.copy(), ends.copy()
        i = int(gen.integers(problem.jumps))
        move = gen.random()
        if move < 0.35:  # slide the whole jump
            d = int(gen.integers(1, 4)) * (1 if gen.random() < 0.5 else -1)
            s[i], e[i] = s[i] + d, e[i] + d
        elif move < 0.7:  # stretch or shrink it
            d = int(gen.integers(1, 7)) * (1 if gen.random() < 0.5 else -1)
            e[i] = e[i] + d
        else:  # redraw it anywhere
            s[i], e[i] = _draw_jump(problem, i, gen)
        if 1 <= s[i] <= n - 1 and 1 <= e[i] <= n and _valid(problem, s, e):
            return s, e
    return starts, ends


def _energy(problem: _Problem, figs: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    dist = problem.target.distance(figs)
    off = problem.target.offset(figs)
    return dist, dist + OFFSET_WEIGHT * off


def _island(problem: _Problem, seed: np.random.SeedSequence, budget: int, tick: Any = None) -> tuple[list[tuple], int]:
    """One independent parallel-tempering search; returns its best boards and the candidates it evaluated."""
    with single_threaded():
        return _anneal(problem, seed, budget, tick)


def _anneal(problem: _Problem, seed: np.random.SeedSequence, budget: int, tick: Any) -> tuple[list[tuple], int]:  # noqa: C901
    gen = np.random.default_rng(seed)
    chains = CHAINS
    temps = np.geomspace(T_COLD, T_HOT, chains)
    cur = [_initial(problem, gen) for _ in range(chains)]
    s_arr = np.stack([c[0] for c in cur])
    e_arr = np.stack([c[1] for c in cur])
    figs = _figures(problem, s_arr, e_arr)
    dist, energy = _energy(problem, figs)
    evaluated = chains
    if tick is not None:
        tick(chains)
    best: dict[tuple, tuple] = {}

    def remember(s_arr, e_arr, figs, dist, energy):
        for k in range(s_arr.shape[0]):
            if not np.isfinite(energy[k]):
                continue
            key = tuple(sorted(zip(s_arr[k].tolist(), e_arr[k].tolist())))
            if key in best:
                continue
            best[key] = (float(dist[k]), float(energy[k]), key, {g: float(v[k]) for g, v in figs.items()})
        if len(best) > 4 * problem.keep:  # keep the dictionary small
            for key in sorted(best, key=lambda q: best[q][:2])[2 * problem.keep :]:
                del best[key]

    remember(s_arr, e_arr, figs, dist, energy)
    while evaluated + chains <= budget:
        met = sum(1 for v in best.values() if v[0] == 0.0)
        if met >= problem.keep:
            break
        props = [_propose(problem, s_arr[k], e_arr[k], gen) for k in range(chains)]
        ps = np.stack([p[0] for p in props])
        pe = np.stack([p[1] for p in props])
        pfigs = _figures(problem, ps, pe)
        pdist, pen = _energy(problem, pfigs)
        evaluated += chains
        if tick is not None:
            tick(chains)
        remember(ps, pe, pfigs, pdist, pen)
        u = gen.random(chains)
        with np.errstate(invalid="ignore", over="ignore"):
            delta = pen - energy
            accept = np.isfinite(pen) & (~np.isfinite(energy) | (delta <= 0) | (u < np.exp(-delta / temps)))
        s_arr[accept], e_arr[accept] = ps[accept], pe[accept]
        energy = np.where(accept, pen, energy)
        # replica exchange between neighbouring temperatures
        for k in range(int(gen.integers(2)), chains - 1, 2):
            a, b = energy[k], energy[k + 1]
            if not (np.isfinite(a) and np.isfinite(b)):
                continue
            arg = (a - b) * (1.0 / temps[k] - 1.0 / temps[k + 1])
            if arg >= 0 or gen.random() < math.exp(arg):
                for arr in (s_arr, e_arr):
                    arr[[k, k + 1]] = arr[[k + 1, k]]
                energy[[k, k + 1]] = energy[[k + 1, k]]
    ranked = sorted(best.values(), key=lambda v: (v[0], v[1], v[2]))[: problem.keep]
    return ranked, evaluated


def _count(value: Any, what: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise TargetError(f"{what} must be a whole number >= {low}; got {show_value(value)}")
    return int(value)


def design(  # noqa: C901
    target: Target,
    *,
    size: int = 100,
    ladders: int = 8,
    snakes: int = 8,
    rules: Rules | None = None,
    constraints: Constraints | None = None,
    rng: Any = None,
    executor: cf.Executor | None = None,
    budget: int = DEFAULT_BUDGET,
    keep: int = 5,
    progress: bool = False,
) -> DesignResult:
    """Search for boards of ``size`` squares with ``ladders`` ladders and ``snakes`` snakes that meet ``target``.

    Parameters
    ----------
    target : Target
        What the board should achieve (see :class:`Target`).
    size : int, default 100
        The finishing square.
    ladders, snakes : int, default 8
        How many of each the board holds.
    rules : Rules, optional
        The rules the board is played under (default: the app rules).
    constraints : Constraints, optional
        Limits on jump lengths, squares that must or must not hold a jump.
    rng : None, int, numpy.random.SeedSequence or Generator
        Seeds the search: the same seed gives the same boards, with or
        without an executor and whatever its number of workers.
    executor : concurrent.futures.Executor, optional
        Runs the independent islands of the search on its workers.
    budget : int, default 20000
        Candidate boards to evaluate at most (split over :data:`ISLANDS`
        islands); the search stops sooner once ``keep`` distinct boards meet
        the target on an island.
    keep : int, default 5
        How many of the best distinct boards to return.
    progress : bool, default False
        Show a progress bar (tqdm), one step per island.

    Returns
    -------
    DesignResult
        The best boards found, with their exact figures and distance to the
        target; ``result.met`` says whether the best one meets it, and
        ``result.message`` which goals it misses when it does not.

    Raises
    ------
    TargetError
        For a target or constraints that are invalid, or that no board of
        this shape can meet (e.g. more required squares than jumps), and for a
        first-seat advantage goal under the ``bump`` rule (the tokens are not
        independent; use :func:`snlmarkov.race` on the boards found instead).

    Examples
    --------
    >>> import snlmarkov as snl
    >>> res = snl.design(snl.Target(mean=30, max_sd=20), ladders=6, snakes=6, rng=1, budget=3000)
    >>> res.met, round(res.best.figures["mean"]) in range(29, 32)
    (True, True)
    """
    if not isinstance(target, Target):
        raise TargetError(f"target must be a Target; got {type(target).__name__}")
    constraints = Constraints() if constraints is None else constraints
    if not isinstance(constraints, Constraints):
        raise TargetError(f"constraints must be Constraints; got {type(constraints).__name__}")
    rules = Rules() if rules is None else rules
    if not isinstance(rules, Rules):
        raise RuleError(f"rules must be Rules; got {type(rules).__name__}")
    size = check_count(size, "size", limit("board_size"), low=2, env="SNLMARKOV_MAX_BOARD_SIZE", error=TargetError)
    check_batch_memory(CHAINS, size, rules, "design()")
    lad, sna = _count(ladders, "ladders", 0), _count(snakes, "snakes", 0)
    if lad + sna > size - 1:
        raise TargetError(f"{lad + sna} jumps do not fit on a board of {size} squares")
    budget = _count(budget, "budget", CHAINS * ISLANDS)
    keep = _count(keep, "keep", 1)
    constraints.check(size, lad, sna)
    if rules.bump and target.needs("first_seat_advantage"):
        raise TargetError("a first-seat advantage goal needs independent tokens; the bump rule couples them")
    if target.needs("ladder_share") and lad == 0:
        raise TargetError("a ladder_share goal needs at least one ladder")
    rules.check_board(Board(size))
    horizon, tail = _horizon(target)
    problem = _Problem(
        target, constraints, rules, size, lad, sna, keep, horizon, tail, shares=target.needs("ladder_share")
    )
    seeds = seed_root(rng).spawn(ISLANDS)
    per_island = budget // ISLANDS
    results: list[tuple[list[tuple], int]] = [([], 0)] * ISLANDS
    bar = _bar(per_island * ISLANDS, progress)
    try:
        if executor is None:
            for i, seed in enumerate(seeds):
                results[i] = _island(problem, seed, per_island, bar.update if progress else None)
                bar.update(per_island - results[i][1])  # an island that met the target early
        else:
            futures = {executor.submit(_island, problem, seed, per_island): i for i, seed in enumerate(seeds)}
            for fut in cf.as_completed(futures):
                results[futures[fut]] = fut.result()
                bar.update(per_island)
    finally:
        bar.close()
    pooled: dict[tuple, tuple] = {}
    for ranked, _ in results:
        for item in ranked:
            pooled.setdefault(item[2], item)
    top = sorted(pooled.values(), key=lambda v: (v[0], v[1], v[2]))[:keep]
    if not top:
        raise TargetError("every candidate board was unwinnable; loosen the constraints")
    boards = tuple(
        DesignedBoard(
            board=Board(size, dict(key), name="designed"),
            figures=MappingProxyType(figs),
            distance=dist,
            met=dist == 0.0,
        )
        for dist, _, key, figs in top
    )
    return DesignResult(
        target=target,
        constraints=constraints,
        rules=rules,
        boards=boards,
        evaluated=sum(r[1] for r in results),
        budget=budget,
        _offsets=tuple(v[1] for v in top),
    )


def _bar(total: int, progress: bool) -> Any:
    from .sweep import _bar as bar

    return bar(total, progress, unit="board", desc="design")

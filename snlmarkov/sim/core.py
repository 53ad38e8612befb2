"""Fast Monte Carlo simulation of Snakes & Ladders games.

:func:`simulate` plays many games at once with numpy, rolling the rules' die
(any :class:`~snlmarkov.dice.Die`) and applying the rules of ``docs/rules.md``
step by step through the play kernel (:mod:`snlmarkov.playkernel`); it
shares no code with the transition matrices, so comparing the two
(:mod:`snlmarkov.checks.crosschecking`) tests both.

How it is fast: the play kernel is first asked once about every (square,
dice) combination a step can meet (:mod:`snlmarkov.sim.tables`); a step of
a game is then one uniform random integer, standing for up to several independent
die rolls (each dealt from the die's slots, its whole weights laid out as
equally likely values), and one table look-up. Solo games run in a pool kept full as games
finish (:mod:`snlmarkov.sim.solo`); races of several seats run round by
round (:mod:`snlmarkov.sim.multi`). Under a rule set with a choice the
seats choose by their policies (``policy=``), roll by roll
(:mod:`snlmarkov.sim.choosing`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, overload

import numpy as np

from ..args import board_arg, mode_arg, rules_arg
from ..board import Board
from ..errors import BoardError, GameError, PolicyError, RuleError
from ..limits import check_memory, check_rng, clean_text, show_value
from ..playkernel import kernel, resolve_policy
from ..policy import Policy
from ..reach import check_winnable
from ..rules import MODES, Rules
from ..state import GameState
from .choosing import check_policy_finishes, play_choosing
from .multi import play_multi
from .solo import play_solo
from .summary import KEEP, SimulationSummary
from .tables import (
    StepTable,
    check_table_memory,
    max_rolls_per_turn,
    mixed_parts,
    mixed_roll_table,
    roll_table,
    roll_table_codes,
    turn_table,
)

__all__ = ["simulate", "SimulationResult", "SimulationSummary"]


#: most entries of the mixed roll table solo games step with
FAST_ENTRIES = 1 << 17
#: most entries of the roll table solo games step with when a mixed one would idle too often
ROLL_ENTRIES = 1 << 19
#: the least share of its most rolls a step of a mixed table must throw on average
MIXED_SHARE = 0.9


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """The outcome of :func:`simulate`: per-game figures and landing counts.

    Arrays are read-only. Counts are int32 (turns, rolls, rounds, places).

    Attributes
    ----------
    games : int
        Games played.
    players : int
        Seats per game.
    mode : str
        ``"classic"`` or ``"last_one_standing"``.
    board : Board
    rules : Rules
    turns : numpy.ndarray
        Per game. With one player, the turns the token took to reach the
        finish; with more, the turns of all seats together until the game
        ended. For a truncated game, ``max_turns``.
    rolls : numpy.ndarray
        Per game: die throws in those turns (entering sixes, failed entries
        and forfeited sixes included).
    rounds : numpy.ndarray
        Per game: rounds played (a round is one turn of every seat still
        racing; the last may be partial). Equals ``turns`` for one player.
    finish_turn : numpy.ndarray
        Shape ``(games, players)``: the seat's own turn count when it reached
        the finish; 0 where it never did.
    finished : numpy.ndarray
        Shape ``(games, players)``, bool: the seat reached the finish.
    place : numpy.ndarray
        Shape ``(games, players)``: 1-based finishing place; 0 where not
        placed (in classic mode only the winner is placed).
    winner : numpy.ndarray
        Per game: the seat that finished first; -1 if the game was truncated
        before anyone finished.
    landings : numpy.ndarray
        Length ``size + 1``, int64: over all games and seats, how many rolls
        landed on each square (the square reached before a jump acts; bounce
        targets and mid-turn landings between bonus rolls included, and on a
        chained board every later square of the chain where a jump acts; an
        overshoot under ``stay``, a six voided by ``forfeit`` or ``restart``
        and an entering six land nowhere; under ``finish="none"`` an
        overshoot lands on the finish).
    truncated : numpy.ndarray
        Per game, bool: the game reached ``max_turns`` turns (counted as in
        ``turns``) without ending and was stopped there.
    max_turns : int
        The turn limit used.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> from snlmarkov.sim.core import simulate
    >>> r = simulate(Board(3), Rules.preset("plain"), 1000, rng=1)
    >>> r.games, r.turns.shape, r.n_truncated
    (1000, (1000,), 0)
    >>> int(r.landings[3]) == r.games   # every game lands on 3 once, at the end
    True
    """

    games: int
    players: int
    mode: str
    board: Board
    rules: Rules
    turns: np.ndarray
    rolls: np.ndarray
    rounds: np.ndarray
    finish_turn: np.ndarray
    finished: np.ndarray
    place: np.ndarray
    winner: np.ndarray
    landings: np.ndarray
    truncated: np.ndarray
    max_turns: int = 100_000

    def __post_init__(self) -> None:
        games, players = _count(self.games, "games"), _count(self.players, "players")
        if self.mode not in MODES:
            raise GameError(f"mode must be one of {', '.join(map(repr, MODES))}; got {self.mode!r}")
        if not isinstance(self.board, Board):
            raise BoardError(f"board must be a Board, got {type(self.board).__name__}")
        if not isinstance(self.rules, Rules):
            raise RuleError(f"rules must be a Rules, got {type(self.rules).__name__}")
        shapes = {
            "turns": (games,),
            "rolls": (games,),
            "rounds": (games,),
            "winner": (games,),
            "truncated": (games,),
            "finish_turn": (games, players),
            "finished": (games, players),
            "place": (games, players),
            "landings": (self.board.size + 1,),
        }
        for name, shape in shapes.items():
            value = np.asarray(getattr(self, name))
            if value.shape != shape:
                raise GameError(f"{name} has shape {value.shape}, expected {shape}")
            want_bool = name in ("finished", "truncated")
            if want_bool != (value.dtype == np.bool_) or not (want_bool or np.issubdtype(value.dtype, np.integer)):
                raise GameError(f"{name} has dtype {value.dtype}")
            if value.flags.writeable:
                value = value.view()
                value.flags.writeable = False
            object.__setattr__(self, name, value)
        object.__setattr__(self, "games", games)
        object.__setattr__(self, "players", players)
        object.__setattr__(self, "max_turns", _count(self.max_turns, "max_turns"))

    # ------------------------------------------------------------ figures
    @property
    def n_truncated(self) -> int:
        """Number of games stopped at ``max_turns``."""
        return int(np.count_nonzero(self.truncated))

    def mean_turns(self) -> float:
        """Mean of :attr:`turns` (a lower bound when games were truncated)."""
        return float(np.mean(self.turns, dtype=np.float64))

    def std_turns(self) -> float:
        """Sample standard deviation (``ddof=1``) of :attr:`turns`; 0 for one game."""
        return _std(self.turns)

    def mean_rolls(self) -> float:
        """Mean of :attr:`rolls`."""
        return float(np.mean(self.rolls, dtype=np.float64))

    def std_rolls(self) -> float:
        """Sample standard deviation (``ddof=1``) of :attr:`rolls`; 0 for one game."""
        return _std(self.rolls)

    def mean_rounds(self) -> float:
        """Mean of :attr:`rounds`."""
        return float(np.mean(self.rounds, dtype=np.float64))

    def win_frequencies(self) -> np.ndarray:
        """Fraction of all games won by each seat (sums to 1 minus the truncated
        games without a winner).

        Examples
        --------
        >>> from snlmarkov import Board, Rules
        >>> from snlmarkov.sim.core import simulate
        >>> r = simulate(Board(2), Rules.preset("plain"), 10, players=3, rng=0)
        >>> float(r.win_frequencies().sum())
        1.0
        """
        won = np.bincount(self.winner[self.winner >= 0], minlength=self.players)
        return won / self.games

    def place_frequencies(self) -> np.ndarray:
        """Matrix ``[seat, place - 1]``: fraction of games in which the seat took that place.

        Examples
        --------
        >>> from snlmarkov import Board, Rules
        >>> from snlmarkov.sim.core import simulate
        >>> r = simulate(Board(2), Rules.preset("plain"), 100, players=2,
        ...              mode="last_one_standing", rng=0)
        >>> r.place_frequencies().sum(axis=1).tolist()   # every seat is placed in every game
        [1.0, 1.0]
        """
        out = np.zeros((self.players, self.players), dtype=np.float64)
        for seat in range(self.players):
            placed = self.place[:, seat]
            out[seat] = np.bincount(placed[placed > 0] - 1, minlength=self.players)[: self.players]
        return out / self.games

    def summary(self) -> str:
        """A few lines describing the run."""
        lines = [
            f"{self.games} games, {self.players} player{'s' if self.players > 1 else ''}, {self.mode}, "
            f"board {clean_text(self.board.name) or 'custom'} ({self.board.size}), rules {self.rules.preset_name}",
            f"turns: mean {self.mean_turns():.4f}, std {self.std_turns():.4f}; "
            f"rolls: mean {self.mean_rolls():.4f}; rounds: mean {self.mean_rounds():.4f}",
        ]
        if self.players > 1:
            wins = ", ".join(f"{f:.4f}" for f in self.win_frequencies())
            lines.append(f"win frequency per seat: {wins}")
        lines.append(f"truncated at {self.max_turns} turns: {self.n_truncated}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _std(values: np.ndarray) -> float:
    if values.size < 2:
        return 0.0
    return float(np.std(values, dtype=np.float64, ddof=1))


def _count(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise GameError(f"{what} must be a positive integer, got {show_value(value)}")
    if value < 1:
        raise GameError(f"{what} must be at least 1, got {show_value(value)}")
    return int(value)


@functools.lru_cache(maxsize=8)
def _turn_table(board: Board, rules: Rules) -> StepTable:
    """The table races step with: one turn (or part of a long one) per step."""
    return turn_table(board, rules)


@functools.lru_cache(maxsize=8)
def _roll_tables(board: Board, rules: Rules) -> tuple[StepTable, StepTable]:
    """The tables solo games step with, and the one-roll table (the slow lane).

    Games step with a :func:`~snlmarkov.sim.tables.mixed_roll_table` of as
    many rolls as fit ``FAST_ENTRIES`` (and 2**16 codes) when its steps
    throw on average at least ``MIXED_SHARE`` of those rolls, else with a
    :func:`~snlmarkov.sim.tables.roll_table` of as many rolls as fit
    ``ROLL_ENTRIES`` (and 2**16 codes).
    """
    phases = roll_table_codes(rules, 1)[0]
    states = phases * (board.size + 1)
    slow = roll_table(board, rules, 1)
    mixed = _most(lambda r: _fits(mixed_parts(rules, r)[0], states, FAST_ENTRIES))
    if mixed:
        codes, parts = mixed_parts(rules, mixed)
        thrown = sum(r * copies * roll_table_codes(rules, r)[1] for r, copies in parts) / codes
        if thrown >= MIXED_SHARE * mixed:
            return mixed_roll_table(board, rules, mixed), slow
    rolls = max(1, _most(lambda r: _fits(roll_table_codes(rules, r)[1], states, ROLL_ENTRIES)))
    return (roll_table(board, rules, rolls) if rolls > 1 else slow), slow


def _fits(codes: int, states: int, entries: int) -> bool:
    """Whether a table of ``codes`` codes (at most 2**16) on ``states`` states has at most ``entries`` entries."""
    return codes <= 1 << 16 and states * codes <= entries


def _most(fits: Callable[[int], bool]) -> int:
    """The largest ``r >= 0`` such that ``fits(r)`` holds for ``1..r`` (``fits`` turns false once and stays false).

    Examples
    --------
    >>> _most(lambda r: r * r <= 10), _most(lambda r: False)
    (3, 0)
    """
    r = 0
    while fits(r + 1):
        r += 1
    return r


def _checked_start(start: Any, board: Board, rules: Rules, players: int, mode: str) -> GameState | None:
    """A validated start state of :func:`simulate`; None for the beginning."""
    if start is None:
        return None
    if not isinstance(start, GameState):
        raise GameError(f"state must be a GameState; got {type(start).__name__}")
    if start.players != players:
        raise GameError(f"players={players}, but the state has {start.players} tokens")
    start.validate(board, rules, mode)
    if start.is_over(board, mode):
        raise GameError("the start state is over: there is nothing to simulate")
    return None if start == GameState.initial(players) else start


def _summary_chunk() -> int:
    from . import summary

    return int(summary.SUMMARY_CHUNK)


def _checked(
    board: Any, rules: Any, games: Any, players: Any, mode: Any, max_turns: Any, keep: str = "games", policy: Any = None
) -> tuple:
    """Validated arguments of :func:`simulate` (``None`` board and rules replaced by the defaults).

    Under ``keep="summary"`` only one chunk of games is held at a time, and
    the memory check counts one chunk. A choice rule without a policy is
    refused by the play kernel (its ``RuleError``).
    """
    board, rules, mode = board_arg(board), rules_arg(rules), mode_arg(mode)
    games, players, max_turns = _count(games, "games"), _count(players, "players"), _count(max_turns, "max_turns")
    rules.check_board(board)
    if policy is None and rules.choice:
        kernel(board, rules)  # raises the kernel's RuleError: a choice rule needs a policy
    if keep not in KEEP:
        raise GameError(f"keep must be one of {', '.join(map(repr, KEEP))}; got {keep!r}")
    held = games if keep == "games" else min(games, _summary_chunk())
    check_memory(
        held * bytes_per_game(players) + 64 * (board.size + 1),
        f"simulating {show_value(games, commas=True)} games of {players} player{'s' if players > 1 else ''}",
        hint='simulate(..., keep="summary") keeps only histograms, in constant memory',
    )
    if not rules.choice:  # the simulator's smallest table, before the reach check's graph
        check_table_memory(board, rules)
    check_winnable(board, rules, players > 1)
    return board, rules, games, players, max_turns


def policy_ranks(board: Board, rules: Rules, policy: Any, players: int) -> tuple[np.ndarray, ...]:
    """The policy table of each seat (``policy``: one :class:`~snlmarkov.policy.Policy` for all, or one per seat).

    Each policy is resolved on the play side (a greedy one from the play
    kernel); a race policy must read the other ``players - 1`` seats.

    Examples
    --------
    >>> from snlmarkov import Board, Policy, Rules
    >>> [r.shape for r in policy_ranks(Board(10), Rules(choose_die=(4, 6)), Policy.greedy(), 2)]
    [(3, 10, 1, 2), (3, 10, 1, 2)]
    """
    if isinstance(policy, Policy):
        policy = (policy,) * players
    if isinstance(policy, (str, bytes)) or not hasattr(policy, "__len__") or len(policy) != players:
        raise PolicyError(
            f"policy must be a Policy, or a sequence of one Policy per seat ({players}); got {show_value(policy)}"
        )
    out, done = [], {}
    for seat, p in enumerate(policy):
        if not isinstance(p, Policy):
            raise PolicyError(f"policy[{seat}] must be a Policy; got {show_value(p)}")
        if id(p) not in done:
            done[id(p)] = resolve_policy(p, board, rules)
        table = done[id(p)]
        if table.others not in (0, players - 1):
            raise PolicyError(
                f"policy[{seat}] is a policy for a race of {table.others + 1} tokens; the games have {players} seats"
            )
        check_policy_finishes(board, rules, table.ranks)
        out.append(np.asarray(table.ranks))
    return tuple(out)


def bytes_per_game(players: int) -> int:
    """Memory a :class:`SimulationResult` keeps per game (with room for the work arrays).

    Examples
    --------
    >>> bytes_per_game(1), bytes_per_game(4)
    (40, 88)
    """
    return 24 + 16 * players


def progress_bar(total: int, **options: Any) -> Any:
    """A tqdm progress bar counting games (on standard error).

    Examples
    --------
    >>> import io
    >>> bar = progress_bar(10, file=io.StringIO())
    >>> _ = bar.update(10)
    >>> bar.n
    10
    >>> bar.close()
    """
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="game", desc="simulate", dynamic_ncols=True, **options)


def play(
    board: Board,
    rules: Rules,
    games: int,
    players: int,
    mode: str,
    rng: np.random.Generator,
    max_turns: int,
    bar: Any = None,
    start: GameState | None = None,
    ranks: tuple[np.ndarray, ...] = (),
) -> SimulationResult:
    """:func:`simulate` without checks or warnings; ``bar`` is updated as games end.

    ``ranks`` (:func:`policy_ranks`) plays a rule set with a choice, each
    seat by its policy table (:func:`~snlmarkov.sim.choosing.play_choosing`).

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> r = play(Board(2), Rules.preset("plain"), 100, 2, "classic", np.random.default_rng(0), 1)
    >>> r.n_truncated + int((r.winner == 0).sum()) == 100   # seat 0 wins at once or the game stops
    True
    """
    if ranks:
        multi = play_choosing(board, rules, games, players, mode, max_turns, rng, ranks, progress=bar, start=start)
    elif players == 1 and start is None:
        fast, slow = _roll_tables(board, rules)
        solo = play_solo(fast, slow, games, max_turns, rng, one_roll_turns=max_rolls_per_turn(rules) == 1, progress=bar)
        done = ~solo.truncated
        return SimulationResult(
            games=games,
            players=1,
            mode=mode,
            board=board,
            rules=rules,
            turns=solo.turns,
            rolls=solo.rolls,
            rounds=solo.turns,
            finish_turn=np.where(done, solo.turns, 0)[:, None],
            finished=done[:, None],
            place=done.astype(np.int32)[:, None],
            winner=np.where(done, 0, -1).astype(np.int32),
            landings=solo.landings,
            truncated=solo.truncated,
            max_turns=max_turns,
        )
    else:
        multi = play_multi(
            _turn_table(board, rules), rules, games, players, mode, max_turns, rng, progress=bar, start=start
        )
    finished = multi.finish_turn > 0
    if start is not None:
        finished[:, list(start.places)] = True
    return SimulationResult(
        games=games,
        players=players,
        mode=mode,
        board=board,
        rules=rules,
        turns=multi.turns,
        rolls=multi.rolls,
        rounds=multi.rounds,
        finish_turn=multi.finish_turn,
        finished=finished,
        place=multi.place,
        winner=multi.winner,
        landings=multi.landings,
        truncated=multi.truncated,
        max_turns=max_turns,
    )


def play_summary(
    board: Board,
    rules: Rules,
    games: int,
    players: int,
    mode: str,
    rng: np.random.Generator,
    max_turns: int,
    bar: Any = None,
    start: GameState | None = None,
    chunk: int | None = None,
    ranks: tuple[np.ndarray, ...] = (),
) -> SimulationSummary:
    """:func:`play` in chunks of ``chunk`` games (default :data:`~snlmarkov.sim.summary.SUMMARY_CHUNK`),
    each reduced to histograms before the next.

    Cost: the time of :func:`play`; memory that of one chunk plus the
    histograms, independent of ``games``.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> s = play_summary(Board(5), Rules(), 1000, 1, "classic", np.random.default_rng(0), 1000, chunk=300)
    >>> s.games, int(s.turns_hist.sum())
    (1000, 1000)
    """
    chunk = max(1, int(_summary_chunk() if chunk is None else chunk))
    out: SimulationSummary | None = None
    done = 0
    while done < games:
        n = min(chunk, games - done)
        part = SimulationSummary.of(play(board, rules, n, players, mode, rng, max_turns, bar, start=start, ranks=ranks))
        out = part if out is None else out.merge(part)
        done += n
    assert out is not None  # games >= 1 was checked
    return out


@overload
def simulate(
    board: Board | None,
    rules: Rules | None,
    games: int,
    players: int | None = None,
    mode: str = "classic",
    *,
    rng: Any = None,
    progress: bool = False,
    max_turns: int = 100_000,
    state: GameState | None = None,
    start: GameState | None = None,
    keep: Literal["games"] = "games",
    executor: Any = None,
    streams: int = 0,
    policy: Any = None,
) -> SimulationResult: ...


@overload
def simulate(
    board: Board | None,
    rules: Rules | None,
    games: int,
    players: int | None = None,
    mode: str = "classic",
    *,
    rng: Any = None,
    progress: bool = False,
    max_turns: int = 100_000,
    state: GameState | None = None,
    start: GameState | None = None,
    keep: Literal["summary"],
    executor: Any = None,
    streams: int = 0,
    policy: Any = None,
) -> SimulationSummary: ...


def simulate(
    board: Board | None,
    rules: Rules | None,
    games: int,
    players: int | None = None,
    mode: str = "classic",
    *,
    rng: Any = None,
    progress: bool = False,
    max_turns: int = 100_000,
    state: GameState | None = None,
    start: GameState | None = None,
    keep: str = "games",
    executor: Any = None,
    streams: int = 0,
    policy: Any = None,
) -> SimulationResult | SimulationSummary:
    """Play ``games`` games by rolling dice, all at once with numpy.

    Parameters
    ----------
    board : Board or None
        The board (None: the default built-in board).
    rules : Rules or None
        The rules (None: the default ``app`` rules).
    games : int
        Number of games, at least 1.
    players : int, default 1
        Seats per game, at least 1.
    mode : {"classic", "last_one_standing"}
        ``classic``: the first token home wins and the game ends;
        ``last_one_standing``: play on until every token is home.
    rng : None, int >= 0, SeedSequence or numpy.random.Generator
        Seed or generator, checked by :func:`snlmarkov.limits.check_rng`.
    progress : bool, default False
        Show a tqdm progress bar.
    max_turns : int, default 100000
        Stop a game once it has lasted this many turns (counted as in
        :attr:`SimulationResult.turns`); such games are marked ``truncated``
        and a :class:`RuntimeWarning` says how many there were.
    state : GameState, optional
        Start every game from this state (one square per seat, valid for
        the board, rules and mode, not over) instead of the beginning; it
        also gives ``players`` when that is not given. The
        figures then count from there: ``turns`` and ``rolls`` are those
        still played, ``rounds`` counts the round in progress as round 1,
        seats already finished keep their places (and ``finish_turn`` 0),
        and ``turns`` of one player counts its turns from the state.
    start : GameState, optional
        The former name of ``state`` (kept so older code runs; give one).
    keep : {"games", "summary"}, default "games"
        ``"games"``: a :class:`SimulationResult` with every game's figures
        (about 24 bytes a game and seat). ``"summary"``: a
        :class:`~snlmarkov.sim.summary.SimulationSummary` of histograms
        (turns, rolls, rounds, places, wins, landings), the games played in
        chunks of :data:`~snlmarkov.sim.summary.SUMMARY_CHUNK` and each
        chunk reduced before the next: constant memory in ``games``, so
        10^9 games run in the memory of one chunk. With the same ``rng`` a
        summary run of at most one chunk counts exactly the games of the
        ``"games"`` run; longer runs draw the same dice chunk by chunk.
        With ``executor`` or ``streams`` each stream is summarised on its
        worker and the summaries merged (:meth:`SimulationSummary.merge`).
    executor : concurrent.futures.Executor, optional
        Play the games on its workers (a ``ProcessPoolExecutor``, a Dask
        ``Client.get_executor()``, ...), split into ``streams`` independent
        streams (:mod:`snlmarkov.sim.parallel`) and merged exactly. Fewer
        than :data:`~snlmarkov.sim.parallel.POOL_MIN_WORK` games x players
        are played here instead (a ``RuntimeWarning`` says so; the streams,
        and so the result, are the same): a pool would be slower. Kept
        games come back through a file on ``/dev/shm`` that workers on
        this machine write into; a worker that cannot reach it (another
        machine, no ``/dev/shm``) sends its games back by pickle (the
        result is the same; ``docs/scale.md``).
    streams : int, default 0
        Split the games into this many streams, each seeded by its own child
        of ``SeedSequence(rng).spawn(streams)``; with an executor, 0 means
        :data:`~snlmarkov.sim.parallel.STREAMS` (16). The result depends on
        the seed and the number of streams only, not on the executor or its
        workers (a split run differs from the unsplit one, ``streams=0``
        without an executor, which draws from one generator).
    policy : Policy or sequence of Policy, optional
        Under a rule set with a choice (``docs/rules.md``, "Choices"), what
        the seats choose: one :class:`~snlmarkov.policy.Policy` for every
        seat, or one per seat, in seat order. A race policy (solved for
        ``players`` tokens, ``PolicyTable.others == players - 1``) reads the
        other seats' squares in seat order. Required under a choice rule
        (else the play kernel's ``RuleError``); refused without one
        (``PolicyError``: nothing to choose).

    Returns
    -------
    SimulationResult or SimulationSummary

    Raises
    ------
    GameError
        If ``games``, ``players`` or ``max_turns`` is not a positive integer,
        or ``mode`` or ``keep`` is unknown.
    RuleError
        If the rules cannot be played on the board, or hold a choice and no
        ``policy`` is given; PolicyError if a policy does not fit.
    UnwinnableBoardError
        If some square a token can reach cannot reach the finish (games
        would only end at ``max_turns``).
    SeedError
        For a seed numpy cannot use (negative, a float, text...).
    LimitError
        If the per-game arrays would need more memory than
        :func:`snlmarkov.limits.memory_limit` (8 GiB by default: about
        2 x 10^8 games of one player).

    Notes
    -----
    Cost: linear in the turns played (about 10^7 turns a second on one
    core); memory about ``24 + 16 * players`` bytes per game, refused up
    front beyond the memory limit.

    Examples
    --------
    On a board of two squares a roll of 2 finishes at once, so some games
    last one turn; four players racing to the end are all placed:

    >>> from snlmarkov import Board, Rules
    >>> from snlmarkov.sim.core import simulate
    >>> r = simulate(Board(2), Rules.preset("plain"), 100_000, rng=7)
    >>> int(r.turns.min()), r.n_truncated
    (1, 0)
    >>> r = simulate(Board.builtin(), Rules(), 1000, players=4, mode="last_one_standing", rng=1)
    >>> sorted(set(r.place[0].tolist()))
    [1, 2, 3, 4]

    Choosing the die, greedy against always the d4:

    >>> from snlmarkov import Policy
    >>> rules = Rules(choose_die=(4, 6))
    >>> r = simulate(Board.builtin(), rules, 2000, players=2, policy=(Policy.greedy(), Policy.fixed(4)), rng=1)
    >>> bool(r.win_frequencies()[0] > 0.6)
    True
    """
    if start is not None and state is not None:
        raise GameError("give the starting state once: state= (start= is its former name)")
    state = start if state is None else state
    if players is None:
        players = state.players if isinstance(state, GameState) else 1
    board, rules, games, players, max_turns = _checked(board, rules, games, players, mode, max_turns, keep, policy)
    begin = _checked_start(state, board, rules, players, mode)
    ranks = () if policy is None else policy_ranks(board, rules, policy, players)
    bar = progress_bar(games) if progress else None
    gen = check_rng(rng)
    result: SimulationResult | SimulationSummary
    try:
        if executor is not None or streams:
            from .parallel import STREAMS, simulate_streams

            result = simulate_streams(
                board,
                rules,
                games,
                players,
                mode,
                rng=rng,
                max_turns=max_turns,
                start=begin,
                executor=executor,
                streams=streams or STREAMS,
                bar=bar,
                play=functools.partial(play_summary if keep == "summary" else play, ranks=ranks),
                result_type=SimulationSummary if keep == "summary" else SimulationResult,
            )
        elif keep == "summary":
            result = play_summary(board, rules, games, players, mode, gen, max_turns, bar, start=begin, ranks=ranks)
        else:
            result = play(board, rules, games, players, mode, gen, max_turns, bar, start=begin, ranks=ranks)
    finally:
        if bar is not None:
            bar.close()
    if result.n_truncated:
        warnings.warn(
            f"{result.n_truncated} of {games} games reached max_turns={max_turns} without ending; "
            + ("they are marked in SimulationResult.truncated" if keep == "games" else "counted in truncated"),
            RuntimeWarning,
            stacklevel=2,
        )
    return result

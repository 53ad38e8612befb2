"""Histograms of simulated games in constant memory: :class:`SimulationSummary`.

``simulate(..., keep="summary")`` plays its games in chunks of
:data:`SUMMARY_CHUNK` games and keeps, of each chunk, only histograms:
games by turns, rolls and rounds, seats by finishing place, wins by seat,
rolls by square landed on. Memory is then that of one chunk plus the
histograms (whose length is bounded by ``max_turns``), whatever the number
of games: 10^9 games are runnable. Every mean, standard deviation and
frequency of :class:`~snlmarkov.sim.core.SimulationResult` follows exactly
from the histograms, and two summaries of the same set-up merge exactly
(:meth:`SimulationSummary.merge`: the histograms add).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..board import Board
from ..errors import GameError
from ..rules import MODES, Rules

__all__ = ["SimulationSummary"]

#: Games played per chunk under ``keep="summary"`` (about 30 MB of per-game arrays for one player).
SUMMARY_CHUNK = 1 << 20

#: What :func:`~snlmarkov.sim.core.simulate` can keep.
KEEP = ("games", "summary")


def _hist(values: np.ndarray) -> np.ndarray:
    return np.bincount(np.asarray(values, dtype=np.int64).ravel()).astype(np.int64)


def _add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sum of two histograms of possibly different lengths."""
    out = np.zeros(max(a.size, b.size), dtype=np.int64)
    out[: a.size] += a
    out[: b.size] += b
    return out


def _mean(hist: np.ndarray) -> float:
    n = int(hist.sum())
    return float(np.dot(np.arange(hist.size, dtype=np.float64), hist) / n) if n else 0.0


def _std(hist: np.ndarray) -> float:
    """Sample standard deviation (``ddof=1``) from a histogram, by the two-pass formula."""
    n = int(hist.sum())
    if n < 2:
        return 0.0
    k = np.arange(hist.size, dtype=np.float64)
    mean = float(np.dot(k, hist) / n)
    return float(np.sqrt(np.dot((k - mean) ** 2, hist) / (n - 1)))


@dataclass(frozen=True, eq=False)
class SimulationSummary:
    """Histograms of :func:`~snlmarkov.sim.core.simulate`'s games (``keep="summary"``).

    All counts are int64 and read-only. ``turns``, ``rolls``, ``rounds``
    and ``winner`` are counted as in
    :class:`~snlmarkov.sim.core.SimulationResult`.

    Attributes
    ----------
    games, players : int
    mode : str
    board : Board
    rules : Rules
    max_turns : int
    turns_hist, rolls_hist, rounds_hist : numpy.ndarray
        ``turns_hist[k]``: games that took ``k`` turns (and so on).
    place_counts : numpy.ndarray
        Shape ``(players, players + 1)``: ``place_counts[seat, p]`` games in
        which the seat took place ``p`` (1-based; column 0: not placed).
    wins : numpy.ndarray
        Per seat: games won.
    landings : numpy.ndarray
        Length ``size + 1``: rolls landing on each square, over all games
        and seats.
    truncated : int
        Games stopped at ``max_turns``.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> from snlmarkov.sim.core import simulate
    >>> s = simulate(Board(3), Rules.preset("plain"), 1000, rng=1, keep="summary")
    >>> s.games, int(s.turns_hist.sum()), s.truncated
    (1000, 1000, 0)
    >>> t = s.merge(simulate(Board(3), Rules.preset("plain"), 500, rng=2, keep="summary"))
    >>> t.games, int(t.landings[3])  # every game lands on 3 once, at the end
    (1500, 1500)
    """

    games: int
    players: int
    mode: str
    board: Board
    rules: Rules
    max_turns: int
    turns_hist: np.ndarray = field(repr=False)
    rolls_hist: np.ndarray = field(repr=False)
    rounds_hist: np.ndarray = field(repr=False)
    place_counts: np.ndarray = field(repr=False)
    wins: np.ndarray = field(repr=False)
    landings: np.ndarray = field(repr=False)
    truncated: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.board, Board) or not isinstance(self.rules, Rules):
            raise GameError("a summary needs a Board and a Rules")
        if self.mode not in MODES:
            raise GameError(f"mode must be one of {', '.join(map(repr, MODES))}; got {self.mode!r}")
        games, players = int(self.games), int(self.players)
        if games < 1 or players < 1:
            raise GameError(f"a summary counts at least one game and one seat, got {games} and {players}")
        for name in ("turns_hist", "rolls_hist", "rounds_hist", "place_counts", "wins", "landings"):
            value = np.array(getattr(self, name), dtype=np.int64)
            if np.any(value < 0):
                raise GameError(f"{name} has a negative count")
            value.flags.writeable = False
            object.__setattr__(self, name, value)
        for name in ("turns_hist", "rolls_hist", "rounds_hist"):
            if int(getattr(self, name).sum()) != games:
                raise GameError(f"{name} counts {int(getattr(self, name).sum())} games, expected {games}")
        if self.place_counts.shape != (players, players + 1) or self.wins.shape != (players,):
            raise GameError(f"place_counts or wins has the wrong shape for {players} seats")
        if np.any(self.place_counts.sum(axis=1) != games):
            raise GameError("place_counts must count every game once per seat")
        if self.landings.shape != (self.board.size + 1,):
            raise GameError(f"landings has shape {self.landings.shape}, expected ({self.board.size + 1},)")
        object.__setattr__(self, "games", games)
        object.__setattr__(self, "players", players)
        object.__setattr__(self, "max_turns", int(self.max_turns))
        object.__setattr__(self, "truncated", int(self.truncated))

    @classmethod
    def of(cls, result: Any) -> SimulationSummary:
        """The histograms of a :class:`~snlmarkov.sim.core.SimulationResult`.

        Cost: O(games x players) time, no copy of the per-game arrays.
        """
        players = result.players
        place_counts = np.zeros((players, players + 1), dtype=np.int64)
        for seat in range(players):
            place_counts[seat] = np.bincount(result.place[:, seat], minlength=players + 1)[: players + 1]
        won = result.winner[result.winner >= 0]
        return cls(
            games=result.games,
            players=players,
            mode=result.mode,
            board=result.board,
            rules=result.rules,
            max_turns=result.max_turns,
            turns_hist=_hist(result.turns),
            rolls_hist=_hist(result.rolls),
            rounds_hist=_hist(result.rounds),
            place_counts=place_counts,
            wins=np.bincount(won, minlength=players).astype(np.int64),
            landings=np.asarray(result.landings, dtype=np.int64),
            truncated=result.n_truncated,
        )

    def merge(self, other: SimulationSummary) -> SimulationSummary:
        """The summary of both runs' games together: every histogram and count added (exact).

        Merging is associative and commutative, so summaries of chunks run
        anywhere (processes, machines) combine in any order into the same
        result.

        Raises
        ------
        GameError
            If ``other`` is not a summary of the same board, rules, seats,
            mode and ``max_turns``.
        """
        if not isinstance(other, SimulationSummary):
            raise GameError(f"can only merge a SimulationSummary, got {type(other).__name__}")
        mine = (self.board, self.rules, self.players, self.mode, self.max_turns)
        theirs = (other.board, other.rules, other.players, other.mode, other.max_turns)
        if mine != theirs:
            raise GameError("summaries of different boards, rules, seats, modes or max_turns do not merge")
        return SimulationSummary(
            games=self.games + other.games,
            players=self.players,
            mode=self.mode,
            board=self.board,
            rules=self.rules,
            max_turns=self.max_turns,
            turns_hist=_add(self.turns_hist, other.turns_hist),
            rolls_hist=_add(self.rolls_hist, other.rolls_hist),
            rounds_hist=_add(self.rounds_hist, other.rounds_hist),
            place_counts=self.place_counts + other.place_counts,
            wins=self.wins + other.wins,
            landings=self.landings + other.landings,
            truncated=self.truncated + other.truncated,
        )

    # ------------------------------------------------------------ figures, as on SimulationResult
    @property
    def n_truncated(self) -> int:
        """Number of games stopped at ``max_turns``."""
        return self.truncated

    def mean_turns(self) -> float:
        """Mean turns per game."""
        return _mean(self.turns_hist)

    def std_turns(self) -> float:
        """Sample standard deviation (``ddof=1``) of the turns; 0 for one game."""
        return _std(self.turns_hist)

    def mean_rolls(self) -> float:
        """Mean rolls per game."""
        return _mean(self.rolls_hist)

    def std_rolls(self) -> float:
        """Sample standard deviation (``ddof=1``) of the rolls."""
        return _std(self.rolls_hist)

    def mean_rounds(self) -> float:
        """Mean rounds per game."""
        return _mean(self.rounds_hist)

    def win_frequencies(self) -> np.ndarray:
        """Fraction of all games won by each seat."""
        return self.wins / self.games

    def place_frequencies(self) -> np.ndarray:
        """Matrix ``[seat, place - 1]``: fraction of games in which the seat took that place."""
        return self.place_counts[:, 1:] / self.games

    def summary(self) -> str:
        """A few lines describing the run."""
        lines = [
            f"{self.games} games, {self.players} player{'s' if self.players > 1 else ''}, {self.mode}, "
            f"board {self.board.name or 'custom'} ({self.board.size}), rules {self.rules.preset_name}",
            f"turns: mean {self.mean_turns():.4f}, std {self.std_turns():.4f}; "
            f"rolls: mean {self.mean_rolls():.4f}; rounds: mean {self.mean_rounds():.4f}",
        ]
        if self.players > 1:
            lines.append("win frequency per seat: " + ", ".join(f"{f:.4f}" for f in self.win_frequencies()))
        lines.append(f"truncated at {self.max_turns} turns: {self.n_truncated}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

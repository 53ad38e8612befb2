"""Race figures estimated by simulation, for races too large to solve exactly.

Used by :func:`snlmarkov.races.core.race` when the joint chain of a race with
``bump`` is too large (four or more players on the standard boards). Every
figure comes with its standard error; :class:`snlmarkov.races.core.RaceResult`
turns those into confidence intervals.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..analysis.distribution import LengthDistribution
from ..board import Board
from ..errors import GameError
from ..rules import Rules

__all__ = []


def _mean_se(values: np.ndarray) -> float:
    """Standard error of the mean of ``values``."""
    if values.size < 2:
        return 0.0
    return float(np.std(values, dtype=np.float64, ddof=1) / np.sqrt(values.size))


def monte_carlo_race(
    board: Board,
    rules: Rules,
    players: int,
    mode: str,
    games: int,
    *,
    rng: Any = None,
    progress: bool = False,
    start: Any = None,
) -> dict[str, Any]:
    """Estimate the race figures from ``games`` simulated games.

    ``start`` (a :class:`~snlmarkov.state.GameState`, not over) starts every
    game there instead of the beginning; rounds and turns are then those left.

    Returns
    -------
    dict
        Keyword arguments for :class:`snlmarkov.races.core.RaceResult`, with
        ``standard_error``: a mapping from figure name to the standard error
        of its estimate (same shape as the figure).

    Raises
    ------
    SnlError
        If some simulated game hit the simulator's turn limit (the estimate
        would be biased).

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> out = monte_carlo_race(Board(2), Rules.preset("plain"), 2, "classic", 1000, rng=1)
    >>> float(out["win_probability"].sum())
    1.0
    """
    from ..sim.core import simulate

    sim = simulate(board, rules, games, players=players, mode=mode, rng=rng, progress=progress, start=start)
    if sim.n_truncated:
        raise GameError(f"{sim.n_truncated} of {games} simulated games did not end within {sim.max_turns} turns")
    n = sim.games
    win = sim.win_frequencies()
    se_win = np.sqrt(win * (1.0 - win) / n)
    rounds = np.asarray(sim.rounds, dtype=np.int64)
    turns = np.asarray(sim.turns, dtype=np.int64)
    se: dict[str, Any] = {
        "win_probability": se_win,
        "expected_rounds": _mean_se(rounds),
        "expected_total_turns": _mean_se(turns),
    }
    if mode == "classic":
        place = win[:, None].copy()
        se["place_probability"] = se_win[:, None].copy()
        orders: dict[tuple[int, ...], float] = {(i,): float(win[i]) for i in range(players)}
    else:
        place = sim.place_frequencies()
        se["place_probability"] = np.sqrt(place * (1.0 - place) / n)
        se["expected_place"] = np.array([_mean_se(np.asarray(sim.place[:, i], dtype=np.int64)) for i in range(players)])
        by_place = np.argsort(sim.place, axis=1, kind="stable")  # seat in each place, per game
        code = by_place @ (players ** np.arange(players - 1, -1, -1))
        counts = np.bincount(code, minlength=players**players)
        orders = {}
        for order in itertools.permutations(range(players)):
            c = int(np.dot(order, players ** np.arange(players - 1, -1, -1)))
            orders[order] = float(counts[c] / n)
    return {
        "win_probability": win,
        "place_probability": place,
        "order_probability": orders,
        "rounds_distribution": LengthDistribution(np.bincount(rounds) / n, tail_mass=0.0, unit="rounds"),
        "turns_distribution": LengthDistribution(np.bincount(turns) / n, tail_mass=0.0, unit="turns"),
        "standard_error": se,
    }

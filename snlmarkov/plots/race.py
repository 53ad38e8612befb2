"""Races of several players: who wins, who finishes where."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import SnlError
from ._common import SERIES_COLOURS, SERIES_MARKERS, SERIES_STYLES, new_axes

__all__ = ["plot_win_chances", "plot_places"]


def plot_win_chances(results: Mapping[int, Any] | Any, ax: Any = None, *, title: str | None = None) -> Any:
    """Each seat's chance of winning, relative to a fair share, for several numbers of players.

    The y axis is ``players x P(seat wins)``: 1 is a fair share, 1.05 means
    the seat wins 5% more often than a fair share. One line per number of
    players; seat 1 moves first in every round.

    Parameters
    ----------
    results : mapping of int to RaceResult, or sequence of RaceResult
        Results of :func:`snlmarkov.race` (any mode); each needs
        ``win_probability``.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from snlmarkov import Board, Rules
    >>> from snlmarkov.races.core import race
    >>> runs = {k: race(Board.builtin(), Rules(), players=k) for k in (2, 3)}
    >>> ax = plot_win_chances(runs, Figure().subplots())
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['2 players', '3 players', 'fair share']
    """
    items = list(results.values()) if isinstance(results, Mapping) else list(results)
    if not items:
        raise SnlError("give at least one race result to plot")
    ax = new_axes(ax, (7.0, 4.4))
    for i, r in enumerate(items):
        p = np.asarray(r.win_probability, dtype=float)
        k = p.size
        seats = np.arange(1, k + 1)
        ax.plot(
            seats,
            k * p,
            color=SERIES_COLOURS[i % len(SERIES_COLOURS)],
            linestyle=SERIES_STYLES[i % len(SERIES_STYLES)],
            marker=SERIES_MARKERS[i % len(SERIES_MARKERS)],
            markersize=7,
            linewidth=1.8,
            label=f"{k} players",
        )
    ax.axhline(1.0, color="black", linewidth=1.0, linestyle=":", label="fair share")
    top = max(np.asarray(r.win_probability).size for r in items)
    ax.set_xticks(range(1, top + 1), [f"seat {s}" for s in range(1, top + 1)])
    ax.set_xlabel("seat (seat 1 moves first)")
    ax.set_ylabel("win chance / fair share (1 = fair)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    ax.set_title(title if title is not None else "How much the first seat gains")
    return ax


def plot_places(
    result: Any,
    ax: Any = None,
    *,
    title: str | None = None,
    colorbar: bool = True,
    fontsize: Any = "small",
    limit: float | None = None,
    short_labels: bool = False,
) -> Any:
    """Heat map of the finishing places: row = seat, column = place.

    Each cell shows the probability that the seat finishes in that place;
    its colour shows how far that is from a fair share ``1/players``, as a
    relative difference (orange: more likely than a fair share, purple:
    less), so panels for different numbers of players share one scale.

    Parameters
    ----------
    result : RaceResult
        A last-one-standing result of :func:`snlmarkov.race`, with a square
        ``place_probability`` (seat x place).
    ax : matplotlib Axes, optional
    title : str, optional
    colorbar : bool, default True
    fontsize : float or str, default "small"
        Size of the percentages written in the cells.
    limit : float, optional
        The relative difference at the ends of the colour scale (0.05 is
        +/-5%); by default the largest in this result.
    short_labels : bool, default False
        Label the axes tersely ("seat", "place", places as numbers) for
        small panels.

    Returns
    -------
    matplotlib.axes.Axes
        Its ``images[0]`` is the heat map (for a shared colour bar).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from snlmarkov import Board, Rules
    >>> from snlmarkov.races.core import race
    >>> r = race(Board.builtin(), Rules(), players=3, mode="last_one_standing")
    >>> ax = plot_places(r, Figure().subplots())
    >>> ax.get_xlabel(), ax.get_ylabel(), ax.texts[0].get_text()
    ('finishing place', 'seat (seat 1 moves first)', '34.0%')
    """
    places = np.asarray(result.place_probability, dtype=float)
    if places.ndim != 2 or places.shape[0] != places.shape[1]:
        raise SnlError(f"place_probability must be square (seat x place), got shape {places.shape}")
    k = places.shape[0]
    ax = new_axes(ax, (5.6, 4.6))
    relative = k * places - 1.0
    if limit is None:
        limit = float(np.abs(relative).max())
    limit = max(float(limit), 1e-9)
    image = ax.imshow(relative, cmap="PuOr_r", vmin=-limit, vmax=limit, origin="upper", aspect="equal")
    for seat in range(k):
        for place in range(k):
            shade = abs(relative[seat, place]) / limit
            ax.text(
                place,
                seat,
                f"{100 * places[seat, place]:.1f}%",
                ha="center",
                va="center",
                fontsize=fontsize,
                color="white" if shade > 0.65 else "black",
            )
    if short_labels:
        ax.set_xticks(range(k), [str(j + 1) for j in range(k)])
        ax.set_yticks(range(k), [str(s + 1) for s in range(k)])
        ax.set_xlabel("place")
        ax.set_ylabel("seat")
    else:
        ax.set_xticks(range(k), [_ordinal(j + 1) for j in range(k)])
        ax.set_yticks(range(k), [f"seat {s + 1}" for s in range(k)])
        ax.set_xlabel("finishing place")
        ax.set_ylabel("seat (seat 1 moves first)")
    if colorbar:
        add_place_colorbar(image, ax)
    ax.set_title(title if title is not None else f"Finishing places, {k} players, last one standing")
    return ax


def add_place_colorbar(image: Any, ax: Any, **kwargs: Any) -> Any:
    """The colour bar of :func:`plot_places` (the difference from a fair share, in percent).

    ``image`` is the heat map (``ax.images[0]`` of a panel), ``ax`` the axes
    (or list of axes) the bar takes its room from.
    """
    from matplotlib.ticker import PercentFormatter

    options = {"fraction": 0.046, "pad": 0.04}
    options.update(kwargs)
    bar = image.axes.figure.colorbar(image, ax=ax, **options)
    bar.set_label("chance relative to a fair share")
    bar.ax.yaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))
    labels = bar.ax.yaxis.get_major_formatter()
    bar.ax.yaxis.set_major_formatter(lambda x, pos: ("+" if x > 0 else "") + labels(x, pos))
    return bar


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"

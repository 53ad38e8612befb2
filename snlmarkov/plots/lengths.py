"""How long a game takes: the distribution of the number of turns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import SnlError
from ._common import SERIES_COLOURS, SERIES_STYLES, new_axes

__all__ = ["plot_length_pmf", "plot_length_cdf"]


def _series(analyses: Any) -> list[tuple[str, Any, float]]:
    """``(label, LengthDistribution, mean)`` for each analysis given."""
    if isinstance(analyses, Mapping):
        items = list(analyses.items())
    else:
        items = [(getattr(a.rules, "preset_name", f"case {i}"), a) for i, a in enumerate(analyses)]
    if not items:
        raise SnlError("give at least one analysis to plot")
    out = []
    for label, item in items:
        dist: Any = getattr(item, "length", item)
        mean = float(getattr(item, "expected_turns", dist.mean()))
        out.append((str(label), dist, mean))
    return out


def length_cutoff(analyses: Any, quantile: float = 0.99) -> int:
    """The largest ``quantile`` point among the distributions (where the plots stop).

    Examples
    --------
    >>> import snlmarkov as snl
    >>> length_cutoff({"plain": snl.analyze(snl.Board.builtin(), snl.Rules.preset("plain"))})
    252
    """
    return int(max(dist.ppf(quantile) for _, dist, _ in _series(analyses)))


def _plot(analyses: Any, ax: Any, which: str, max_turns: int | None, title: str | None) -> Any:
    series = _series(analyses)
    ax = new_axes(ax, (7.0, 4.2))
    top = length_cutoff(analyses) if max_turns is None else int(max_turns)
    k = np.arange(0, top + 1)
    for i, (label, dist, mean) in enumerate(series):
        colour, style = SERIES_COLOURS[i % len(SERIES_COLOURS)], SERIES_STYLES[i % len(SERIES_STYLES)]
        y = dist.pmf(k) if which == "pmf" else dist.cdf(k)
        median = dist.median()
        ax.plot(k, y, color=colour, linestyle=style, linewidth=1.8, label=f"{label}: mean {mean:.1f}, median {median}")
        # mark the mean (diamond) and the median (circle) on the curve
        y_mean = float(np.interp(mean, k, y))
        y_median = float(dist.pmf(median) if which == "pmf" else dist.cdf(median))
        ax.plot([mean], [y_mean], marker="D", markersize=7, color=colour, markeredgecolor="black", linestyle="none")
        ax.plot(
            [median],
            [y_median],
            marker="o",
            markersize=7,
            markerfacecolor="white",
            markeredgecolor=colour,
            markeredgewidth=2,
            linestyle="none",
        )
        ax.axvline(mean, color=colour, linestyle=style, linewidth=0.8, alpha=0.6)
    # legend keys for the two marks
    ax.plot([], [], marker="D", color="grey", markeredgecolor="black", linestyle="none", label="mean")
    ax.plot(
        [],
        [],
        marker="o",
        markerfacecolor="white",
        markeredgecolor="grey",
        markeredgewidth=2,
        linestyle="none",
        label="median",
    )
    ax.set_xlim(0, top)
    ax.set_ylim(bottom=0)
    units = {getattr(dist, "unit", "turns") for _, dist, _ in series}
    ax.set_xlabel(f"game length ({units.pop() if len(units) == 1 else 'steps'})")
    if which == "pmf":
        ax.set_ylabel("probability")
        ax.set_title(title if title is not None else "Game length: probability of each number of turns")
    else:
        ax.set_ylim(0, 1.0)
        ax.set_ylabel("probability of finishing by then")
        ax.set_title(title if title is not None else "Game length: probability the game is over")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right" if which == "pmf" else "lower right", fontsize="small")
    return ax


def plot_length_pmf(analyses: Any, ax: Any = None, *, max_turns: int | None = None, title: str | None = None) -> Any:
    """The probability of each game length, one curve per analysis, mean and median marked.

    Parameters
    ----------
    analyses : mapping of label to Analysis, or sequence of Analysis
        Each analysis (or a :class:`~snlmarkov.LengthDistribution`) gives one
        curve; a sequence is labelled by the rule presets' names. The x axis
        is labelled with the distributions' unit (turns, rounds).
    ax : matplotlib Axes, optional
    max_turns : int, optional
        The right end of the axis; by default the largest 99th percentile.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> import snlmarkov as snl
    >>> b = snl.Board.builtin()
    >>> runs = {p: snl.analyze(b, snl.Rules.preset(p)) for p in snl.Rules.presets()}
    >>> ax = plot_length_pmf(runs, Figure().subplots())
    >>> ax.get_xlabel(), ax.get_legend().get_texts()[0].get_text()
    ('game length (turns)', 'app: mean 55.6, median 42')
    """
    return _plot(analyses, ax, "pmf", max_turns, title)


def plot_length_cdf(analyses: Any, ax: Any = None, *, max_turns: int | None = None, title: str | None = None) -> Any:
    """The probability that the game is over after each number of turns.

    Parameters are those of :func:`plot_length_pmf`.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> import snlmarkov as snl
    >>> ax = plot_length_cdf([snl.analyze()], Figure().subplots())
    >>> ax.get_ylabel()
    'probability of finishing by then'
    """
    return _plot(analyses, ax, "cdf", max_turns, title)

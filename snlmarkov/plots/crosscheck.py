"""Simulated games against the exact distribution of their length."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import SnlError
from ._common import SERIES_COLOURS, new_axes

__all__ = ["plot_crosscheck"]


def length_bins(cutoff: int, count: int = 40) -> np.ndarray:
    """Bin edges ``0, w, 2w, ...`` of equal width covering ``0..cutoff`` in about ``count`` bins.

    Examples
    --------
    >>> length_bins(100, 40).tolist()[:4], int(length_bins(100, 40)[-1])
    ([0, 3, 6, 9], 102)
    """
    width = max(1, math.ceil((cutoff + 1) / count))
    return np.arange(0, cutoff + width + 1, width)


def plot_crosscheck(
    exact: Any,
    simulated: Any,
    ax: Any = None,
    *,
    caption: str = "",
    title: str | None = None,
    quantile: float = 0.995,
) -> Any:
    """Histogram of simulated game lengths over the exact distribution.

    Both are shown as probability per turn in bins of equal width; the
    simulated bars carry 95% binomial error bars. Games longer than the
    ``quantile`` point of the exact distribution are left off the axis (the
    caption says how many).

    Parameters
    ----------
    exact : Analysis or LengthDistribution
        The exact single-player length (its ``length`` is used for an
        analysis).
    simulated : array of int, or SimulationResult
        Turns of each simulated game (``.turns`` of a simulation result).
    ax : matplotlib Axes, optional
    caption : str, optional
        A line under the axis, e.g. the cross-check's verdict.
    title : str, optional
    quantile : float, default 0.995
        Where the axis ends.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> import snlmarkov as snl
    >>> a = snl.analyze(snl.Board.builtin(), snl.Rules.preset("plain"))
    >>> sims = a.length.rvs(2000, rng=1)
    >>> ax = plot_crosscheck(a, sims, Figure().subplots(), caption="verdict")
    >>> ax.get_ylabel(), ax.texts[-1].get_text()
    ('probability per turn', 'verdict')
    """
    dist = getattr(exact, "length", exact)
    turns = np.asarray(getattr(simulated, "turns", simulated))
    if turns.ndim != 1 or turns.size == 0:
        raise SnlError("simulated must hold the turns of at least one game")
    games = turns.size
    cutoff = int(dist.ppf(quantile))
    edges = length_bins(cutoff)
    width = edges[1] - edges[0]
    counts, _ = np.histogram(turns, bins=edges)
    cdf_at = np.asarray(dist.cdf(edges - 1), dtype=float)  # P(K < edge)
    expected = np.diff(cdf_at)
    centres = edges[:-1] + width / 2
    observed = counts / games
    err = 1.96 * np.sqrt(observed * (1 - observed) / games)
    ax = new_axes(ax, (7.0, 4.4))
    ax.bar(
        centres,
        observed / width,
        width=width * 0.92,
        color="#bbbbbb",
        edgecolor="#555555",
        hatch="..",
        linewidth=0.5,
        yerr=err / width,
        error_kw={"elinewidth": 0.8, "capsize": 0, "ecolor": "#333333"},
        label=f"simulated ({games:,} games, 95% error bars)",
    )
    ax.plot(
        centres,
        expected / width,
        color=SERIES_COLOURS[0],
        marker="o",
        markersize=4,
        linewidth=1.8,
        label="exact (Markov chain)",
    )
    beyond = int(np.count_nonzero(turns >= edges[-1]))
    ax.set_xlim(0, edges[-1])
    ax.set_ylim(bottom=0)
    ax.set_xlabel(f"game length (turns; bins of {width}; {beyond:,} longer game{'' if beyond == 1 else 's'} not shown)")
    ax.set_ylabel("probability per turn")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="upper right")
    ax.set_title(title if title is not None else "Cross-check: simulated versus exact game length")
    if caption:
        ax.annotate(
            caption,
            xy=(0.5, 0.0),
            xycoords="axes fraction",
            xytext=(0, -40),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize="small",
        )
    return ax

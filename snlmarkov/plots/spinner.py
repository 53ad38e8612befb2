"""Game length against the range of a spinner."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import SnlError
from ._common import SERIES_COLOURS, board_label, describe_rules, new_axes

__all__ = ["plot_spinner_ranges"]


def plot_spinner_ranges(sweep: Any, ax: Any = None, *, reference: int = 6, title: str | None = None) -> Any:
    """Expected turns +/- one standard deviation for each spinner range ``1..n``, the shortest marked.

    Parameters
    ----------
    sweep : SpinnerSweep
        From :func:`snlmarkov.report.spinner.compare_spinners` (any object
        with ``ranges``, ``expected_turns``, ``std_turns``, ``best_range``,
        ``board`` and ``rules``).
    ax : matplotlib Axes, optional
    reference : int, default 6
        A range marked for comparison (the six-faced die), when in the sweep.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> import snlmarkov as snl
    >>> from snlmarkov.report.spinner import compare_spinners
    >>> ax = plot_spinner_ranges(compare_spinners(snl.Board.builtin(), ranges=range(4, 9)), Figure().subplots())
    >>> ax.get_xlabel()
    'spinner range 1..n'
    """
    n = np.asarray(sweep.ranges, dtype=float)
    if n.size == 0:
        raise SnlError("give at least one spinner range to plot")
    mean = np.asarray(sweep.expected_turns, dtype=float)
    std = np.asarray(sweep.std_turns, dtype=float)
    ax = new_axes(ax, (7.0, 4.4))
    colour = SERIES_COLOURS[0]
    ax.fill_between(n, np.maximum(mean - std, 0.0), mean + std, color=colour, alpha=0.15, linewidth=0)
    ax.plot(n, mean, color=colour, marker="o", markersize=4, linewidth=1.8, label="expected turns")
    ax.plot([], [], color=colour, alpha=0.3, linewidth=8, label="\u00b1 one standard deviation")
    best = int(sweep.best_range)
    y = float(mean[list(sweep.ranges).index(best)])
    ax.plot([best], [y], marker="D", markersize=9, color=SERIES_COLOURS[1], markeredgecolor="black", linestyle="none")
    ax.annotate(
        f"shortest: 1..{best}, {y:.2f} turns",
        (best, y),
        xytext=(0, -28),
        textcoords="offset points",
        ha="center",
        fontsize="small",
        arrowprops={"arrowstyle": "-", "color": "black", "linewidth": 0.8},
    )
    if reference in sweep.ranges:
        yr = float(mean[list(sweep.ranges).index(reference)])
        ax.plot([reference], [yr], marker="s", markersize=7, color="white", markeredgecolor="black", linestyle="none")
        ax.annotate(
            f"a six-faced die: {yr:.2f}", (reference, yr), xytext=(8, 6), textcoords="offset points", fontsize="small"
        )
    ax.set_xlabel("spinner range 1..n")
    ax.set_ylabel("game length (turns)")
    ax.set_xlim(n.min() - 0.5, n.max() + 0.5)
    ax.set_ylim(0, float((mean + std).max()) * 1.05)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", fontsize="small", framealpha=1.0)
    if title is None:
        title = (
            f"Which spinner makes the shortest game?\n({board_label(sweep.board)} board, "
            f"{describe_rules(sweep.rules)}; every rule's six is the spinner's top value)"
        )
    ax.set_title(title)
    return ax

"""The house rules compared: expected game length under each combination of toggles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import SnlError
from ._common import SERIES_COLOURS, new_axes

__all__ = ["plot_toggles"]

_FINISH_WORDS = {"stay": "exact finish, stay", "bounce": "exact finish, bounce", "none": "no exact finish"}
_HOUSE = "\0house"  # the group of the house-rule variants (no finish rule is called that)


def _group(case: Any) -> str:
    return _HOUSE if getattr(case, "variant", "") else str(case.finish)


def plot_toggles(cases: Sequence[Any], ax: Any = None, *, title: str | None = None) -> Any:
    """Dot-and-whisker chart: expected turns +/- one standard deviation, and the median.

    Parameters
    ----------
    cases : sequence
        Objects with ``finish``, ``bonus_on_six``, ``start_on_six``,
        ``expected_turns``, ``std_turns`` and ``median_turns``, such as the
        :class:`~snlmarkov.report.core.ToggleCase` items of
        :func:`snlmarkov.report.core.compare_toggles`. They are drawn top to
        bottom in the order given, grouped by finish rule. Cases with a
        non-empty ``variant`` (from
        :func:`snlmarkov.report.core.compare_house_rules`) form one more
        group, "house rules", labelled by their variant.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> import snlmarkov as snl
    >>> from snlmarkov.report.core import compare_toggles
    >>> ax = plot_toggles(compare_toggles(snl.Board.builtin()), Figure().subplots())
    >>> len(ax.get_yticklabels()), ax.get_xlabel()
    (12, 'game length (turns)')
    """
    cases = list(cases)
    if not cases:
        raise SnlError("give at least one rule combination to plot")
    ax = new_axes(ax, (7.0, 5.6))
    groups = [_group(c) for c in cases]
    finishes = list(dict.fromkeys(groups))
    labels = []
    for i, case in enumerate(cases):
        y = len(cases) - 1 - i
        g = finishes.index(groups[i])
        colour = SERIES_COLOURS[g % len(SERIES_COLOURS)]
        mean, std = case.expected_turns, case.std_turns
        ax.plot([max(mean - std, 0.0), mean + std], [y, y], color=colour, linewidth=2.2, solid_capstyle="butt")
        ax.plot([mean], [y], marker="o", markersize=8, color=colour, markeredgecolor="black", linestyle="none")
        ax.plot(
            [case.median_turns], [y], marker="|", markersize=14, markeredgewidth=2.5, color="black", linestyle="none"
        )
        ax.annotate(
            f"{mean:.1f}", (mean + std, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize="small"
        )
        labels.append(
            getattr(case, "variant", "")
            or f"bonus {'on' if case.bonus_on_six else 'off'}, six to start {'on' if case.start_on_six else 'off'}"
        )
    ax.set_yticks(range(len(cases)), labels[::-1], fontsize="small")
    right = max(c.expected_turns + c.std_turns for c in cases) * 1.55
    for i, case in enumerate(cases):
        if i and groups[i] != groups[i - 1]:
            ax.axhline(len(cases) - i - 0.5, color="grey", linewidth=0.8)
        if i == 0 or groups[i] != groups[i - 1]:
            colour = SERIES_COLOURS[finishes.index(groups[i]) % len(SERIES_COLOURS)]
            ax.text(
                right * 0.985,
                len(cases) - 1 - i,
                "house rules" if groups[i] == _HOUSE else f"finish: {_FINISH_WORDS.get(case.finish, case.finish)}",
                ha="right",
                va="center",
                fontsize="small",
                fontweight="bold",
                color=colour,
            )
    ax.set_ylim(-0.6, len(cases) - 0.4)
    ax.set_xlim(0, right)
    ax.set_xlabel("game length (turns)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.plot([], [], marker="o", color="grey", markeredgecolor="black", label="expected turns (value shown)")
    ax.plot([], [], color="grey", linewidth=2.2, label="\u00b1 one standard deviation")
    ax.plot([], [], marker="|", markersize=12, markeredgewidth=2.5, color="black", linestyle="none", label="median")
    ax.legend(loc="lower right", fontsize="small", framealpha=1.0)
    ax.set_title(title if title is not None else "Game length under each combination of house rules")
    return ax

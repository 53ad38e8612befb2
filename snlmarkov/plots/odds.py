"""The odds over one game: each seat's exact chance after every turn, with the big swings marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import SnlError
from ._common import SERIES_COLOURS, SERIES_STYLES, new_axes

__all__ = ["plot_odds"]

# seat colours drawn as themselves, in a shade that reads on white
_SEAT_COLOURS = {
    "red": "#D62728",
    "blue": "#1F4FB4",
    "green": "#2CA02C",
    "yellow": "#C9A400",
    "purple": "#7B3FA0",
    "orange": "#FF7F0E",
}


def plot_odds(timeline: Any, ax: Any = None, *, swings: Sequence[Any] = (), title: str | None = None) -> Any:
    """Each seat's chance of winning after every turn of a game, with the big swings marked.

    Under ``last_one_standing`` the curves are each seat's expected place
    (1 = first, the axis upside down, so up is better throughout).

    Parameters
    ----------
    timeline : OddsTimeline
        From :meth:`snlmarkov.Odds.timeline`.
    ax : matplotlib Axes, optional
    swings : sequence of Swing, optional
        From :meth:`snlmarkov.Odds.swings` on the same record: each is
        marked on its seat's curve and labelled with what happened.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> import snlmarkov as snl
    >>> record = snl.Game(players=["Ann", "Bob"], rng=29).play()
    >>> odds = snl.Odds(players=2)
    >>> ax = plot_odds(odds.timeline(record), Figure().subplots(), swings=odds.swings(record, top=2))
    >>> [t.get_text() for t in ax.get_legend().get_texts()], len(ax.texts)
    (['Ann', 'Bob'], 2)
    """
    win = getattr(timeline, "win", None)
    if win is None or np.ndim(win) != 2:
        raise SnlError("plot_odds takes the OddsTimeline of Odds.timeline(record)")
    classic = timeline.mode == "classic"
    values = np.asarray(win if classic else timeline.expected_place, dtype=float)
    turns = np.arange(values.shape[0])
    ax = new_axes(ax, (8.0, 4.2))
    colours = []
    for i, name in enumerate(timeline.seats):
        colour = _SEAT_COLOURS.get(str(timeline.colours[i]).lower(), SERIES_COLOURS[i % len(SERIES_COLOURS)])
        colours.append(colour)
        y = 100 * values[:, i] if classic else values[:, i]
        ax.step(turns, y, where="post", color=colour, linestyle=SERIES_STYLES[i % len(SERIES_STYLES)], label=name)
    for s in swings:
        after = values[s.turn + 1, s.seat]
        y = 100 * after if classic else after
        ax.plot([s.turn + 1], [y], marker="o", markersize=7, color=colours[s.seat], markeredgecolor="black")
        change = f"{100 * s.change:+.0f} pts" if classic else f"{s.change:+.1f} places"
        ax.annotate(
            f"{s.what}\n{s.name} {change}",
            xy=(s.turn + 1, y),
            xytext=(8, 14 if s.change >= 0 else -26),
            textcoords="offset points",
            fontsize="small",
            arrowprops={"arrowstyle": "-", "color": "0.4", "linewidth": 0.8},
        )
    ax.set_xlabel("turns played (all seats)")
    if classic:
        ax.set_ylabel("chance of winning (%)")
        ax.set_ylim(-3, 103)
    else:
        ax.set_ylabel("expected place (1 = first)")
        ax.set_ylim(len(timeline.seats) + 0.1, 0.9)
    ax.set_xlim(0, max(turns[-1], 1))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="upper left")
    ax.set_title(title if title is not None else "The odds after every turn (exact)")
    return ax

"""What each ladder and snake is worth, as a sorted bar chart."""

from __future__ import annotations

from typing import Any

from ..errors import BoardError
from ._common import LADDER_COLOUR, SNAKE_COLOUR, board_label, describe_rules, new_axes

__all__ = ["plot_jump_effects"]


def plot_jump_effects(effects: Any, ax: Any = None, *, title: str | None = None) -> Any:
    """Horizontal bars: how many turns each jump adds to (or saves from) a game.

    Each bar is ``expected turns with the jump - expected turns without it``;
    bars are sorted from the jump that saves most (top) to the one that costs
    most (bottom). Ladders are plain bars, snakes hatched, so colour is not
    needed to tell them apart.

    Parameters
    ----------
    effects : Analysis or sequence of JumpEffect
        An analysis (its :meth:`~snlmarkov.Analysis.jump_effects` are used)
        or the effects themselves.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> import snlmarkov as snl
    >>> ax = plot_jump_effects(snl.analyze(), Figure().subplots())
    >>> ax.get_yticklabels()[-1].get_text()  # the top bar: the best ladder
    'ladder 28\u219284'
    """
    from matplotlib.patches import Patch

    default_title = "What each ladder and snake is worth"
    if hasattr(effects, "jump_effects"):
        default_title += f" ({board_label(effects.board)} board, {describe_rules(effects.rules)})"
        effects = effects.jump_effects()
    effects = sorted(effects, key=lambda e: (-e.difference, e.start))
    if not effects:
        raise BoardError("the board has no ladders or snakes to plot")
    ax = new_axes(ax, (7.0, 0.3 * len(effects) + 1.6))
    ys = range(len(effects))
    for y, e in zip(ys, effects):
        ladder = e.kind == "ladder"
        ax.barh(
            y,
            e.difference,
            color=LADDER_COLOUR if ladder else SNAKE_COLOUR,
            hatch="" if ladder else "///",
            edgecolor="black",
            linewidth=0.6,
            height=0.7,
        )
        ax.annotate(
            f"{e.difference:+.1f}",
            (e.difference, y),
            xytext=(4 if e.difference >= 0 else -4, 0),
            textcoords="offset points",
            ha="left" if e.difference >= 0 else "right",
            va="center",
            fontsize="small",
        )
    ax.set_yticks(list(ys), [f"{e.kind} {e.start}\u2192{e.end}" for e in effects], fontsize="small")
    ax.axvline(0, color="black", linewidth=0.8)
    lo = min(0.0, min(e.difference for e in effects))
    hi = max(0.0, max(e.difference for e in effects))
    pad = 0.16 * (hi - lo or 1.0)
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(-0.6, len(effects) - 0.4)
    ax.set_xlabel("expected turns with the jump minus without it (turns)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(
        handles=[
            Patch(facecolor=LADDER_COLOUR, edgecolor="black", label="ladder"),
            Patch(facecolor=SNAKE_COLOUR, edgecolor="black", hatch="///", label="snake"),
        ],
        loc="upper right",
        fontsize="small",
    )
    ax.set_title(title if title is not None else default_title)
    return ax

"""Drawing the board as the real game looks.

Squares are laid out by :meth:`Board.cell <snlmarkov.board.Board.cell>`
(square 1 bottom-left, rows alternating direction), each numbered. Ladders are
drawn as two rails with rungs, snakes as a wavy body narrowing from a round
head (the square that sends you down) to the tail, so the two stay apart
without colour too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..board import Board
from ._common import LADDER_COLOUR, SNAKE_COLOUR, board_label, new_axes

__all__ = ["draw_board", "add_jump_legend"]

_LIGHT = ("#fbf3e4", "#efe0c4")  # the two tones of the chequered board
_FINISH = "#f6d55c"


def square_centre(board: Board, square: int) -> tuple[float, float]:
    """The ``(x, y)`` centre of a square in board units (one square = 1).

    Examples
    --------
    >>> b = Board.builtin()
    >>> square_centre(b, 1), square_centre(b, 100)
    ((0.5, 0.5), (0.5, 9.5))
    """
    row, col = board.cell(square)
    return (col + 0.5, row + 0.5)


def ladder_lines(p0: ArrayLike, p1: ArrayLike, *, half_width: float = 0.13, rung_gap: float = 0.32) -> list[np.ndarray]:
    """The segments of a ladder from ``p0`` to ``p1``: two rails then the rungs.

    Returns
    -------
    list of numpy.ndarray
        Each a ``(2, 2)`` array of end points; the first two are the rails.

    Examples
    --------
    >>> segs = ladder_lines((0.5, 0.5), (0.5, 3.5))
    >>> len(segs), segs[0].tolist()
    (11, [[0.37, 0.5], [0.37, 3.5]])
    """
    p0, p1 = np.asarray(p0, dtype=float), np.asarray(p1, dtype=float)
    d = p1 - p0
    length = float(np.hypot(*d))
    normal = np.array([-d[1], d[0]]) / length * half_width
    rails = [np.array([p0 + normal, p1 + normal]), np.array([p0 - normal, p1 - normal])]
    count = max(int(length / rung_gap), 1)
    rungs = [np.array([p0 + t * d + normal, p0 + t * d - normal]) for t in (np.arange(count) + 0.5) / count]
    return [np.round(s, 12) for s in rails + rungs]


def snake_curve(head: ArrayLike, tail: ArrayLike, *, amplitude: float = 0.2, points: int = 72) -> np.ndarray:
    """Points along a wavy snake body from ``head`` to ``tail``.

    The body swings about the straight line with about one wave per 1.3
    squares; the swing fades towards the tail.

    Returns
    -------
    numpy.ndarray
        Shape ``(points, 2)``; the first point is ``head``, the last ``tail``.

    Examples
    --------
    >>> c = snake_curve((0.5, 5.5), (0.5, 0.5))
    >>> c.shape, c[0].tolist(), c[-1].tolist()
    ((72, 2), [0.5, 5.5], [0.5, 0.5])
    """
    head, tail = np.asarray(head, dtype=float), np.asarray(tail, dtype=float)
    d = tail - head
    length = float(np.hypot(*d))
    normal = np.array([-d[1], d[0]]) / length
    waves = max(round(length / 1.3), 1)
    t = np.linspace(0.0, 1.0, points)
    swing = amplitude * np.sin(2 * math.pi * waves * t) * (1.0 - 0.55 * t)
    out = head + t[:, None] * d + swing[:, None] * normal
    return np.round(out, 12)


def _rows(board: Board) -> int:
    return math.ceil(board.size / board.width)


def _luminance(rgba: Any) -> float:
    r, g, b = rgba[:3]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def draw_board(  # noqa: C901
    board: Board,
    ax: Any = None,
    *,
    title: str | None = None,
    facecolors: Sequence[Any] | None = None,
    jump_alpha: float = 1.0,
    outline_jumps: bool = False,
    legend: bool = True,
    numbers: bool = True,
) -> Any:
    """Draw ``board``: numbered squares, ladders and snakes.

    Parameters
    ----------
    board : Board
        Any size; rows are ``board.width`` squares wide.
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when omitted.
    title : str, optional
        Defaults to the board's name with its counts of ladders and snakes
        (and "jumps chain" on a chained board, whose jumps are each drawn as
        they are: ``83 -> 84 -> 97`` shows both ladders).
    facecolors : sequence of colours, optional
        One colour per square ``0..N`` (entry 0 is unused); by default a
        chequered board with the finish in gold. :func:`plot_board_heatmap`
        passes the heat-map colours here.
    jump_alpha : float, default 1.0
        Opacity of the ladders and snakes.
    outline_jumps : bool, default False
        Draw the ladders and snakes thinner, in white edged with black, so
        they show on any colour (used by the heat maps).
    legend : bool, default True
        Add a legend telling ladders from snakes.
    numbers : bool, default True
        Number every square.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from snlmarkov import Board
    >>> ax = draw_board(Board.builtin(), Figure().subplots())
    >>> ax.get_title()
    'jungle board: 9 ladders, 10 snakes'
    >>> sum(t.get_text().isdigit() for t in ax.texts)  # one number per square
    100
    """
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Circle, Rectangle

    ax = new_axes(ax, (7.0, 7.6))
    width, rows = board.width, _rows(board)
    fontsize = max(4.0, min(9.0, 90.0 / max(width, rows)))
    for square in range(1, board.size + 1):
        row, col = board.cell(square)
        if facecolors is not None:
            colour = facecolors[square]
        elif square == board.size:
            colour = _FINISH
        else:
            colour = _LIGHT[(row + col) % 2]
        ax.add_patch(Rectangle((col, row), 1, 1, facecolor=colour, edgecolor="#7a6a55", linewidth=0.6, zorder=1))
        if numbers:
            dark = facecolors is not None and _luminance(_rgba(colour)) < 0.45
            ax.text(
                col + 0.06,
                row + 0.94,
                str(square),
                ha="left",
                va="top",
                fontsize=fontsize,
                color="white" if dark else "#3b3024",
                fontweight="bold" if square in (1, board.size) else "normal",
                zorder=5,
            )
    scale = min(1.5, 10.0 / max(width, rows))  # line widths (points) follow the squares on a ~7 inch board
    ladder_colour, snake_colour, effects = LADDER_COLOUR, SNAKE_COLOUR, None
    if outline_jumps:
        from matplotlib import patheffects

        ladder_colour = snake_colour = "white"
        scale *= 0.6
        effects = [patheffects.Stroke(linewidth=1.6 * scale + 2.0, foreground="black"), patheffects.Normal()]
    for start, end in board.ladders.items():
        segs = ladder_lines(square_centre(board, start), square_centre(board, end))
        for part, lw in ((segs[:2], 2.4), (segs[2:], 1.6)):
            lines = LineCollection(
                part, colors=ladder_colour, linewidths=lw * scale, alpha=jump_alpha, zorder=3, capstyle="round"
            )
            if effects:
                lines.set_path_effects(effects)
            ax.add_collection(lines)
    for head, tail in board.snakes.items():
        body = snake_curve(square_centre(board, head), square_centre(board, tail))
        if effects:
            (line,) = ax.plot(
                body[:, 0],
                body[:, 1],
                color=snake_colour,
                linewidth=3.0 * scale,
                alpha=jump_alpha,
                zorder=4,
                solid_capstyle="round",
                path_effects=[
                    patheffects.Stroke(linewidth=3.0 * scale + 2.0, foreground="black"),
                    patheffects.Normal(),
                ],
            )
        else:
            pieces = np.stack([body[:-1], body[1:]], axis=1)
            widths = np.linspace(6.0, 2.0, len(pieces)) * scale
            ax.add_collection(
                LineCollection(
                    pieces,  # type: ignore[arg-type]
                    colors=snake_colour,
                    linewidths=widths,
                    alpha=jump_alpha,
                    zorder=4,
                    capstyle="round",
                )
            )
        hx, hy = body[0]
        ax.add_patch(
            Circle(
                (hx, hy),
                0.17 * (0.75 if effects else 1),
                facecolor=snake_colour,
                edgecolor="black",
                linewidth=0.8,
                alpha=jump_alpha,
                zorder=4.5,
            )
        )
        if not effects:
            ax.add_patch(Circle((hx - 0.06, hy + 0.05), 0.035, facecolor="white", edgecolor="none", zorder=4.6))
            ax.add_patch(Circle((hx + 0.06, hy + 0.05), 0.035, facecolor="white", edgecolor="none", zorder=4.6))
    ax.set_xlim(-0.05, width + 0.05)
    ax.set_ylim(-0.05, rows + 0.05)
    ax.set_aspect("equal")
    ax.set_axis_off()
    if title is None:
        name = board_label(board)
        title = f"{name} board: {_count(len(board.ladders), 'ladder')}, {_count(len(board.snakes), 'snake')}"
        if board.chain:
            title += " (jumps chain)"
    ax.set_title(title)
    if legend and board.jumps:
        add_jump_legend(ax)
    return ax


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _rgba(colour: Any) -> tuple[float, ...]:
    from matplotlib.colors import to_rgba

    return to_rgba(colour)


class _LadderHandler:
    """Legend key drawing a small ladder."""

    def legend_artist(self, legend: Any, orig_handle: Any, fontsize: float, handlebox: Any) -> Any:
        from matplotlib.collections import LineCollection

        x0, y0 = handlebox.xdescent, handlebox.ydescent
        w, h = handlebox.width, handlebox.height
        segs = [
            [(x0, y0 + 0.15 * h), (x0 + w, y0 + 0.15 * h)],
            [(x0, y0 + 0.85 * h), (x0 + w, y0 + 0.85 * h)],
        ] + [[(x0 + f * w, y0 + 0.15 * h), (x0 + f * w, y0 + 0.85 * h)] for f in (0.2, 0.5, 0.8)]
        art = LineCollection(segs, colors=LADDER_COLOUR, linewidths=2.0, transform=handlebox.get_transform())
        handlebox.add_artist(art)
        return art


class _SnakeHandler:
    """Legend key drawing a small snake with its head."""

    def legend_artist(self, legend: Any, orig_handle: Any, fontsize: float, handlebox: Any) -> Any:
        from matplotlib.lines import Line2D

        x0, y0 = handlebox.xdescent, handlebox.ydescent
        w, h = handlebox.width, handlebox.height
        t = np.linspace(0, 1, 40)
        xs = x0 + t * w
        ys = y0 + h / 2 + 0.35 * h * np.sin(2 * math.pi * 1.5 * t) * (1 - 0.5 * t)
        body = Line2D(xs, ys, color=SNAKE_COLOUR, linewidth=2.5, transform=handlebox.get_transform())
        head = Line2D(
            [xs[0]],
            [ys[0]],
            marker="o",
            markersize=7,
            color=SNAKE_COLOUR,
            markeredgecolor="black",
            transform=handlebox.get_transform(),
        )
        handlebox.add_artist(body)
        handlebox.add_artist(head)
        return body


class _LadderKey:
    pass


class _SnakeKey:
    pass


def add_jump_legend(ax: Any, **kwargs: Any) -> Any:
    """Add the ladder/snake legend below a drawn board; returns the Legend."""
    options = dict(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, frameon=False, handlelength=3.0)
    options.update(kwargs)
    return ax.legend(
        [_LadderKey(), _SnakeKey()],
        ["ladder: foot \u2192 top (up)", "snake: head \u2192 tail (down)"],
        handler_map={_LadderKey: _LadderHandler(), _SnakeKey: _SnakeHandler()},
        **options,
    )

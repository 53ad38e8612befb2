"""Heat maps on the drawn board: where turns begin, where rolls land."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..board import Board
from ..errors import SnlError
from ._common import board_label, describe_rules, new_axes
from .board import draw_board

__all__ = ["plot_board_heatmap", "plot_occupancy", "plot_landings"]


def plot_board_heatmap(
    board: Board,
    values: ArrayLike,
    ax: Any = None,
    *,
    label: str = "",
    title: str | None = None,
    cmap: str = "viridis",
    note: str = "",
) -> Any:
    """Colour each square ``1..N`` of the drawn board by ``values[square]``.

    Ladders and snakes are drawn lightly on top so the colours stay readable.

    Parameters
    ----------
    board : Board
    values : sequence of float
        One value per square ``0..N``; ``values[0]`` (off the board) is not
        drawn: mention it in ``note`` if it matters.
    ax : matplotlib Axes, optional
    label : str
        The colour bar's label, with its unit.
    title : str, optional
    cmap : str, default "viridis"
        A perceptually uniform colour map reads well in grey too.
    note : str, optional
        A line of text under the board.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from snlmarkov import Board
    >>> b = Board(9, {2: 7, 8: 4})
    >>> ax = plot_board_heatmap(b, range(10), Figure().subplots(), label="square number")
    >>> ax.figure.axes[-1].get_ylabel()
    'square number'
    """
    import matplotlib
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    values = np.asarray(values, dtype=float)
    if values.shape != (board.size + 1,):
        raise SnlError(f"values must hold one number per square 0..{board.size}, got shape {values.shape}")
    ax = new_axes(ax, (7.0, 7.0))
    shown = values[1:]
    norm = Normalize(vmin=min(0.0, float(shown.min())), vmax=float(shown.max()) if shown.max() > 0 else 1.0)
    colormap = matplotlib.colormaps[cmap]
    colours = [None] + [colormap(norm(v)) for v in shown]
    draw_board(board, ax, title=title, facecolors=colours, jump_alpha=0.85, outline_jumps=True, legend=False)
    bar = ax.figure.colorbar(ScalarMappable(norm=norm, cmap=colormap), ax=ax, fraction=0.046, pad=0.03)
    bar.set_label(label)
    if note:
        ax.text(0.5, -0.015, note, transform=ax.transAxes, ha="center", va="top", fontsize="small")
    return ax


def plot_occupancy(analysis: Any, ax: Any = None, *, title: str | None = None) -> Any:
    """Heat map of the expected number of turns begun on each square.

    Parameters
    ----------
    analysis : Analysis
        From :func:`snlmarkov.analyze`; ``analysis.occupancy`` is drawn.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> import snlmarkov as snl
    >>> ax = plot_occupancy(snl.analyze(snl.Board.builtin("milton_bradley")), Figure().subplots())
    >>> ax.get_title()
    'Where turns begin (milton_bradley board, app rules)'
    """
    board = analysis.board
    if title is None:
        title = f"Where turns begin ({board_label(board)} board, {describe_rules(analysis.rules)})"
    note = (
        f"Every game begins {analysis.occupancy[0]:.2f} turns on square 0 (off the board); "
        f"{analysis.expected_turns:.2f} turns in all"
    )
    return plot_board_heatmap(
        board,
        analysis.occupancy,
        ax,
        label="expected turns begun on the square (turns per game)",
        title=title,
        note=note,
    )


def plot_landings(analysis: Any, ax: Any = None, *, title: str | None = None) -> Any:
    """Heat map of the expected number of rolls landing on each square.

    A landing is counted before a jump acts, so ladder feet and snake heads
    light up; landings between bonus rolls count too.

    Parameters
    ----------
    analysis : Analysis
        From :func:`snlmarkov.analyze`; ``analysis.landings`` is drawn.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> import snlmarkov as snl
    >>> ax = plot_landings(snl.analyze(), Figure().subplots())
    >>> ax.get_title()
    'Where rolls land (jungle board, app rules)'
    """
    board = analysis.board
    if title is None:
        title = f"Where rolls land ({board_label(board)} board, {describe_rules(analysis.rules)})"
    busiest = int(np.argmax(analysis.landings[1 : board.size])) + 1
    note = f"Busiest square: {busiest}, landed on {analysis.landings[busiest]:.2f} times per game"
    return plot_board_heatmap(
        board, analysis.landings, ax, label="expected landings on the square (rolls per game)", title=title, note=note
    )

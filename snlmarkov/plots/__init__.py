"""Figures: the board, heat maps, game lengths, rule toggles, jumps, races, cross-checks, policies.

Every plotting function takes ``ax=None`` (a new figure is made when it is
omitted), draws on that axes and returns it; none calls ``show()``. The
functions take results of the analysis (:func:`snlmarkov.analyze`,
:func:`snlmarkov.race`, :func:`snlmarkov.crosscheck`) and never compute more
than they draw.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> from matplotlib.figure import Figure
>>> import snlmarkov as snl
>>> from snlmarkov import plots
>>> ax = plots.plot_occupancy(snl.analyze(), Figure().subplots())
>>> ax.get_title()
'Where turns begin (jungle board, app rules)'
"""

from __future__ import annotations

from .board import add_jump_legend, draw_board
from .crosscheck import plot_crosscheck
from .heatmap import plot_board_heatmap, plot_landings, plot_occupancy
from .jumps import plot_jump_effects
from .lengths import plot_length_cdf, plot_length_pmf
from .odds import plot_odds
from .policy import plot_policy
from .race import plot_places, plot_win_chances
from .spinner import plot_spinner_ranges
from .toggles import plot_toggles

__all__ = [
    "add_jump_legend",
    "draw_board",
    "plot_crosscheck",
    "plot_board_heatmap",
    "plot_jump_effects",
    "plot_landings",
    "plot_length_cdf",
    "plot_length_pmf",
    "plot_occupancy",
    "plot_odds",
    "plot_places",
    "plot_policy",
    "plot_spinner_ranges",
    "plot_toggles",
    "plot_win_chances",
]

"""Board design and sweeps: many boards evaluated exactly, in batches, on one core or many.

- :mod:`~snlmarkov.search.batch`: exact mean, spread, length distribution and
  jump shares of a whole batch of boards at once (stacked dense solves).
- :mod:`~snlmarkov.search.sweep`: :func:`sweep`, a table of figures for every
  (board, rules) pair, serially or on any :class:`concurrent.futures.Executor`.
- :mod:`~snlmarkov.search.target`: :class:`Target` and :class:`Constraints`.
- :mod:`~snlmarkov.search.anneal`: :func:`design`, a search for boards that
  meet a target.
"""

from __future__ import annotations

from .anneal import DesignedBoard, DesignResult, design
from .files import read_rules, write_board, write_rules
from .sweep import rules_grid  # snl.sweep is the function; snlmarkov.search.sweep stays the module
from .target import Constraints, Goal, Target

__all__ = [
    "Constraints",
    "DesignResult",
    "DesignedBoard",
    "Goal",
    "Target",
    "design",
    "read_rules",
    "rules_grid",
    "write_board",
    "write_rules",
]

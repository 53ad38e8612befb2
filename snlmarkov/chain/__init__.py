"""The exact models: turn- and roll-level transition matrices, the rule
mechanics of one roll, the sparse solvers, and the exact ``Fraction`` path.

Depends on the configuration only (:mod:`snlmarkov.board`, :mod:`snlmarkov.rules`,
:mod:`snlmarkov.errors`).
"""

from __future__ import annotations

from .exact import exact_expected_turns, exact_turn_row
from .model import RollState, TransitionModel, roll_model, turn_model
from .solve import AbsorbingSystem

__all__ = [
    "AbsorbingSystem",
    "RollState",
    "TransitionModel",
    "exact_expected_turns",
    "exact_turn_row",
    "roll_model",
    "turn_model",
]

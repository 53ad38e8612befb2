"""The exact models: turn- and roll-level transition matrices, the rule
mechanics of one roll, the sparse solvers, and the exact ``Fraction`` path.

Depends on the configuration only (:mod:`snlmarkov.board`, :mod:`snlmarkov.rules`,
:mod:`snlmarkov.errors`).
"""

from __future__ import annotations

from .choice import policy_model
from .exact import exact_expected_turns, exact_turn_row
from .model import RollState, TransitionModel, roll_model, turn_model
from .solve import AbsorbingSystem
from .threads import one_blas_thread

__all__ = [
    "AbsorbingSystem",
    "one_blas_thread",
    "policy_model",
    "RollState",
    "TransitionModel",
    "exact_expected_turns",
    "exact_turn_row",
    "roll_model",
    "turn_model",
]

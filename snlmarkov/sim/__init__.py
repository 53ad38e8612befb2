"""The vectorised Monte Carlo simulator: :func:`simulate` and its step tables.
The tables come from the play kernel (:mod:`snlmarkov.playkernel`, shared
with the game engine); it depends on the configuration only and shares no
code with the matrices.
"""

from __future__ import annotations

from .core import SimulationResult, simulate
from .summary import SimulationSummary

__all__ = ["SimulationResult", "SimulationSummary", "simulate"]

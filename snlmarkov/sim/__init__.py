"""The vectorised Monte Carlo simulator: :func:`simulate` and its step tables.
Depends on the configuration only; it shares no code with the matrices.
"""

from __future__ import annotations

from .core import SimulationResult, simulate
from .summary import SimulationSummary

__all__ = ["SimulationResult", "SimulationSummary", "simulate"]

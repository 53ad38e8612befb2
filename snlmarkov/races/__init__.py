"""Multi-player races: :func:`race` with independent tokens, the exact joint
chain of the bump rule, and the Monte Carlo fallback (through :mod:`snlmarkov.sim`).
"""

from __future__ import annotations

from .core import RaceResult, race

__all__ = ["RaceResult", "race"]

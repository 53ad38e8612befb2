"""Single-token analysis built on :mod:`snlmarkov.chain`: :func:`analyze`, the
exact length distribution (:class:`LengthDistribution`) and hitting
probabilities.

``DEFAULT_TAIL`` (a float, ``1e-13``) is the default ``tail`` of :func:`analyze`,
:func:`snlmarkov.race` and :class:`snlmarkov.Odds`: a length distribution is run
until less than this probability is left beyond its horizon.
"""

from __future__ import annotations

from .distribution import DEFAULT_TAIL, LengthDistribution
from .hitting import hit_probabilities
from .single import Analysis, JumpEffect, analyze, expected_turns

__all__ = [
    "Analysis",
    "DEFAULT_TAIL",
    "JumpEffect",
    "LengthDistribution",
    "analyze",
    "expected_turns",
    "hit_probabilities",
]

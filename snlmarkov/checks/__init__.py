"""Where the two paths meet: :func:`verify_game` replays a played game through
the matrix code's roll mechanics, and :func:`crosscheck` tests the simulator
against the exact chain.
"""

from __future__ import annotations

from .crosschecking import Check, CrosscheckReport, crosscheck
from .verify import TurnCheck, VerificationReport, verify_game

__all__ = ["Check", "CrosscheckReport", "TurnCheck", "VerificationReport", "crosscheck", "verify_game"]

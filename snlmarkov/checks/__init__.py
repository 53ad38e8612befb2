"""Where the two paths meet: :func:`verify_game` replays a played game through
the matrix code's roll mechanics, and :func:`crosscheck` tests the simulator
against the exact chain.
"""

from __future__ import annotations

from .crosschecking import Check, CrosscheckReport, crosscheck
from .stored import StoredCheckReport, check_stored
from .verify import TurnCheck, VerificationReport, verify_game

__all__ = [
    "Check",
    "CrosscheckReport",
    "StoredCheckReport",
    "TurnCheck",
    "VerificationReport",
    "check_stored",
    "crosscheck",
    "verify_game",
]

"""The playable engine: :class:`Game`, seats, the event log, records and the
text board. Depends on the configuration only; it shares no code with the
matrices (:mod:`snlmarkov.chain`), so it can check them.
"""

from __future__ import annotations

from ..state import GameState
from .engine import Game
from .record import GameRecord, TurnSummary
from .seats import COLOURS, Seat
from .textboard import render

__all__ = ["COLOURS", "Game", "GameRecord", "GameState", "Seat", "TurnSummary", "render"]

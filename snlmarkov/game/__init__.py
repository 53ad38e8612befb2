"""The playable engine: :class:`Game`, seats, the event log, records and the
text board. What each roll does comes from the play kernel
(:mod:`snlmarkov.playkernel`, shared with the simulator); it depends on the
configuration only and shares no code with the matrices
(:mod:`snlmarkov.chain`), so it can check them.

Public names are imported lazily, so the command line can build its parser
without numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..state import GameState
    from .choosing import Decision
    from .engine import Game
    from .record import GameRecord, TurnSummary
    from .seats import COLOURS, Seat
    from .textboard import render

# public name -> module that defines it (relative to this package)
_EXPORTS = {
    "COLOURS": ".seats",
    "Decision": ".choosing",
    "Game": ".engine",
    "GameRecord": ".record",
    "GameState": "..state",
    "Seat": ".seats",
    "TurnSummary": ".record",
    "render": ".textboard",
}

__all__ = ["COLOURS", "Decision", "Game", "GameRecord", "GameState", "Seat", "TurnSummary", "render"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

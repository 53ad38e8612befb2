"""Checks of the arguments the race entry points share (:func:`~snlmarkov.races.core.race`, ``Odds``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..board import Board
from ..errors import GameError, RuleError, SnlError
from ..limits import MAX_PLAYERS
from ..rules import MODES, Rules

__all__ = ["board_and_rules", "check_mode", "check_players", "check_tail"]


def check_players(value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise GameError(f"players must be an integer 1..{MAX_PLAYERS}, got {value!r}")
    if not 1 <= value <= MAX_PLAYERS:
        raise GameError(f"players must be 1..{MAX_PLAYERS}, got {value}")
    return int(value)


def board_and_rules(board: Board | None, rules: Rules | None) -> tuple[Board, Rules]:
    """The board and rules of a race (the jungle board and ``Rules()`` by default), checked."""
    board = Board.builtin() if board is None else board
    rules = Rules() if rules is None else rules
    if not isinstance(board, Board):
        raise SnlError(f"board must be a Board, got {type(board).__name__}")
    if not isinstance(rules, Rules):
        raise RuleError(f"rules must be a Rules, got {type(rules).__name__}")
    return board, rules


def check_tail(value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float)) or not 0.0 < value < 1e-3:
        raise SnlError(f"tail must be in (0, 1e-3), got {value!r}")
    return float(value)


def check_mode(value: Any) -> str:
    if value not in MODES:
        raise GameError(f"mode must be one of {', '.join(map(repr, MODES))}; got {value!r}")
    return str(value)

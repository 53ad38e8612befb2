"""The exception family of snlmarkov.

Every error the package raises on purpose is an :class:`SnlError`, itself a
:class:`ValueError`, so ``except ValueError`` keeps working for callers that
do not know this package.
"""

from __future__ import annotations

__all__ = [
    "SnlError",
    "BoardError",
    "RuleError",
    "UnwinnableBoardError",
    "GameError",
    "DiceError",
]


class SnlError(ValueError):
    """Base class of every error raised by snlmarkov."""


class BoardError(SnlError):
    """A board, or a board file, is not valid (the message names the squares)."""


class RuleError(SnlError):
    """A rule set has an invalid value, or does not fit the board it is used on."""


class UnwinnableBoardError(BoardError):
    """Finishing is impossible from some square the token can reach.

    Attributes
    ----------
    square : int
        A square reachable from 0 from which the finish cannot be reached.
    """

    def __init__(self, message: str, square: int):
        super().__init__(message)
        self.square = int(square)


class GameError(SnlError):
    """A game was used wrongly (a move after the end, a guard hit, a bad seat)."""


class DiceError(GameError):
    """A scripted die offered a roll the rules cannot produce, or ran out."""

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
    """Base class of every error raised by snlmarkov.

    Examples
    --------
    >>> from snlmarkov import Board, SnlError
    >>> try:
    ...     Board(10, {4: 4})
    ... except SnlError as exc:
    ...     print(type(exc).__name__, exc)
    BoardError jump 4->4 leads to itself
    """


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

    Examples
    --------
    >>> from snlmarkov import Board, Rules, UnwinnableBoardError, analyze
    >>> try:
    ...     analyze(Board(9, {2: 9, 7: 5, 8: 6}), Rules.preset("plain").replace(faces=2))
    ... except UnwinnableBoardError as exc:
    ...     print(exc.square)
    3
    """

    def __init__(self, message: str, square: int):
        super().__init__(message)
        self.square = int(square)


class GameError(SnlError):
    """A game was used wrongly (a move after the end, a guard hit, a bad seat)."""


class DiceError(GameError):
    """A scripted die offered a roll the rules cannot produce, or ran out."""

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
    "SweepError",
    "TargetError",
    "MetricError",
    "LimitError",
    "SeedError",
    "InputFileError",
    "ModelError",
    "AddressError",
    "PolicyError",
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


class SweepError(SnlError):
    """Evaluating one (board, rules) pair of a sweep failed (in this process or on a worker).

    Attributes
    ----------
    board : Board
        The board whose evaluation failed.
    rules : Rules
        The rules it was evaluated under.
    index : int
        Its row in the sweep (board-major order).
    cause : str
        The original error, as ``"TypeName: message"``.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> stuck = snl.Board(9, {2: 9, 7: 5, 8: 6})
    >>> try:
    ...     snl.sweep([stuck], snl.Rules.preset("plain").replace(faces=2), as_frame=False)
    ... except snl.SweepError as exc:
    ...     print(exc.index, exc.board.size, exc.cause.split(":")[0])
    0 9 UnwinnableBoardError
    """

    def __init__(self, message: str, board: object, rules: object, index: int, cause: str):
        super().__init__(message)
        self.board = board
        self.rules = rules
        self.index = int(index)
        self.cause = str(cause)

    def __reduce__(self):  # picklable across processes
        return (type(self), (str(self), self.board, self.rules, self.index, self.cause))


class TargetError(SnlError):
    """A design target or constraint is invalid, or cannot be met by any board of the requested shape."""


class MetricError(SnlError):
    """A sweep was asked for a metric it does not know (the message lists the known names)."""


class LimitError(SnlError):
    """A size or budget limit was hit (the message names it and says how to raise it).

    See :mod:`snlmarkov.limits` for every limit.

    Examples
    --------
    >>> from snlmarkov import Board, LimitError
    >>> try:
    ...     Board(10**12)
    ... except LimitError as exc:
    ...     print(exc)  # doctest: +ELLIPSIS
    board size 1000000000000 is over the limit of 100000000 squares; ...
    """


class SeedError(SnlError):
    """A seed or random generator (``rng``, ``--seed``) is not one numpy can use.

    Examples
    --------
    >>> from snlmarkov import SeedError, simulate
    >>> try:
    ...     simulate(None, None, 10, rng=-1)
    ... except SeedError as exc:
    ...     print(exc)
    rng must be None, an integer >= 0, a SeedSequence or a Generator; got -1
    """


class InputFileError(SnlError):
    """An input file cannot be used: missing, not a regular file, or of the wrong kind."""


class ModelError(SnlError):
    """An exact model failed one of its own consistency checks (a row that does
    not sum to 1, a state that was not enumerated). It means a bug or a
    numerically hopeless input, never a silent wrong answer."""


class AddressError(SnlError):
    """A network address to serve on (``snlmarkov serve --host``) is not one this machine can bind.

    Examples
    --------
    >>> from snlmarkov.cli.common import check_host
    >>> check_host("999.999.999.999")
    Traceback (most recent call last):
    ...
    snlmarkov.errors.AddressError: --host '999.999.999.999' is not an address of this machine: not an IPv4 or IPv6 address, nor a name that resolves to one
    """


class PolicyError(RuleError):
    """A policy (the choices of a rule set with a choice) that does not fit the board, the rules or the game.

    A :class:`RuleError`: a choice rule without a policy is refused with one.
    """

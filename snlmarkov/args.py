"""The arguments every entry point shares, checked in one place.

``analyze``, ``race``, ``Odds``, ``simulate``, ``Game``, ``verify_game``,
``sweep`` and the report all take some of a board, rules, a number of
players, a mode, a game state and a random generator. Each is resolved here,
with its default and one error class per kind of mistake:

=============  ==================================  =================================
argument       default                             a wrong value raises
=============  ==================================  =================================
``board``      the jungle board                    :class:`~snlmarkov.BoardError`
``rules``      ``Rules()`` (the ``app`` preset)    :class:`~snlmarkov.RuleError`
``mode``       ``"classic"``                       :class:`~snlmarkov.GameError`
``players``    the state's players, else 2         :class:`~snlmarkov.GameError`
``state``      the start of the game               :class:`~snlmarkov.GameError`
``rng``        fresh entropy                       :class:`~snlmarkov.SeedError`
=============  ==================================  =================================
"""

from __future__ import annotations

import numbers
from typing import Any

from .board import Board
from .errors import BoardError, GameError, RuleError
from .limits import MAX_PLAYERS, check_rng, show_value
from .rules import MODES, Rules
from .state import GameState

__all__ = ["board_arg", "rules_arg", "mode_arg", "players_arg", "state_arg", "rng_arg"]

#: Players of a race or a simulation when neither ``players`` nor a state says.
DEFAULT_PLAYERS = 2


def board_arg(board: Any, what: str = "board") -> Board:
    """``board``, or the jungle board for None.

    Examples
    --------
    >>> board_arg(None).size
    100
    >>> board_arg("jungle")
    Traceback (most recent call last):
    ...
    snlmarkov.errors.BoardError: board must be a Board; got str (Board.builtin('jungle') reads a built-in board)
    """
    if board is None:
        return Board.builtin()
    if not isinstance(board, Board):
        hint = (
            f" (Board.builtin({board!r}) reads a built-in board)" if isinstance(board, str) and len(board) < 40 else ""
        )
        raise BoardError(f"{what} must be a Board; got {type(board).__name__}{hint}")
    return board


def rules_arg(rules: Any, what: str = "rules") -> Rules:
    """``rules``, or ``Rules()`` for None.

    Examples
    --------
    >>> rules_arg(None) == Rules()
    True
    >>> rules_arg("family")
    Traceback (most recent call last):
    ...
    snlmarkov.errors.RuleError: rules must be a Rules; got str (Rules.preset('family') reads a preset)
    """
    if rules is None:
        return Rules()
    if not isinstance(rules, Rules):
        hint = f" (Rules.preset({rules!r}) reads a preset)" if isinstance(rules, str) and len(rules) < 40 else ""
        raise RuleError(f"{what} must be a Rules; got {type(rules).__name__}{hint}")
    return rules


def mode_arg(mode: Any) -> str:
    """``mode``: ``"classic"`` or ``"last_one_standing"``.

    Examples
    --------
    >>> mode_arg("classic")
    'classic'
    """
    if not isinstance(mode, str) or mode not in MODES:
        shown = repr(mode) if isinstance(mode, str) and len(mode) < 40 else type(mode).__name__
        raise GameError(f"mode must be one of {', '.join(map(repr, MODES))}; got {shown}")
    return mode


def players_arg(players: Any, state: GameState | None = None, *, low: int = 1, high: int = MAX_PLAYERS) -> int:
    """The number of players: ``players``, else the state's, else :data:`DEFAULT_PLAYERS`.

    A state and an explicit ``players`` that disagree are refused.

    Examples
    --------
    >>> players_arg(None, GameState((81, 30, 5))), players_arg(None), players_arg(4)
    (3, 2, 4)
    >>> players_arg(2, GameState((81, 30, 5)))
    Traceback (most recent call last):
    ...
    snlmarkov.errors.GameError: players=2, but the state has 3 tokens
    """
    if players is None:
        players = DEFAULT_PLAYERS if state is None else state.players
    elif state is not None and _is_int(players) and players != state.players:
        raise GameError(f"players={show_value(players)}, but the state has {state.players} tokens")
    if not _is_int(players) or not low <= players <= high:
        raise GameError(f"players must be an integer {low}..{high} (docs/rules.md); got {show_value(players)}")
    return int(players)


def state_arg(state: Any, board: Board, rules: Rules, mode: str) -> GameState | None:
    """``state`` checked against the board, rules and mode (``GameState.validate``); None stays None.

    Examples
    --------
    >>> state_arg((1, 2), Board.builtin(), Rules(), "classic")
    Traceback (most recent call last):
    ...
    snlmarkov.errors.GameError: state must be a GameState; got tuple (GameState(positions=(1, 2)) makes one)
    """
    if state is None:
        return None
    if not isinstance(state, GameState):
        hint = " (GameState(positions=(1, 2)) makes one)" if isinstance(state, (tuple, list)) else ""
        raise GameError(f"state must be a GameState; got {type(state).__name__}{hint}")
    return state.validate(board, rules, mode)


def rng_arg(rng: Any) -> Any:
    """``rng`` as a :class:`numpy.random.Generator` (:func:`snlmarkov.limits.check_rng`)."""
    return check_rng(rng)


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)

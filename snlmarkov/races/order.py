"""The order of play from a state of a game: the seats still racing, round by round.

Seats play in increasing order in every round and finished seats are
skipped; a state whose seat to move is not the first racing seat is in the
middle of a round, which counts as the first (as
:attr:`Game.round <snlmarkov.game.engine.Game.round>` counts them).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..state import GameState

__all__ = []


def play_order(state: GameState) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The racing seats in the order they play from ``state``, and which of them wait a round.

    Returns
    -------
    (tuple of int, tuple of int)
        The seats still racing, the seat to move first and then cyclically;
        and for each, 1 if its next turn falls in the next round (its index
        is below the seat to move), else 0.

    Examples
    --------
    >>> play_order(GameState((5, 7, 9), to_move=1))
    ((1, 2, 0), (0, 0, 1))
    """
    order = tuple(sorted(state.racing, key=lambda s: (s < state.to_move, s)))
    return order, tuple(int(s < state.to_move) for s in order)


def rounds_of(state: GameState) -> Iterator[tuple[int, ...]]:
    """The seats that play in each round from ``state``, without end (the first round may be partial).

    Examples
    --------
    >>> import itertools
    >>> list(itertools.islice(rounds_of(GameState((5, 7, 9), to_move=1)), 3))
    [(1, 2), (0, 1, 2), (0, 1, 2)]
    """
    order, wraps = play_order(state)
    yield tuple(s for s, wrap in zip(order, wraps) if not wrap)
    full = tuple(sorted(order))
    while True:
        yield full

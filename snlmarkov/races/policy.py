"""Optimal policies: one token's (fewest turns, finishing in time) and a race's (the chance of winning).

:func:`optimal_policy` is the one entry point: one token goes to
:func:`~snlmarkov.analysis.policy.solo_policy`; ``objective="win"`` with two
seats solves the race as a zero-sum game
(:func:`~snlmarkov.races.policygame.solve_race_game`), and with the other
seats' ``policies`` given it is the best response of ``seat``
(:func:`~snlmarkov.races.response.best_response`).

Examples
--------
>>> import snlmarkov as snl
>>> p = snl.optimal_policy(snl.Board.builtin(), snl.Rules(choose_move=2))
>>> round(p.value, 4)
13.4458
"""

from __future__ import annotations

from typing import Any

from ..analysis.policy import OBJECTIVES, solo_policy
from ..args import board_arg, rules_arg
from ..board import Board
from ..errors import PolicyError
from ..limits import MAX_PLAYERS, show_value
from ..rules import Rules

__all__ = ["optimal_policy"]


def optimal_policy(
    board: Board | None = None,
    rules: Rules | None = None,
    *,
    objective: str = "turns",
    turns: int | None = None,
    players: int = 1,
    policies: Any = None,
    seat: int = 0,
    mode: str = "classic",
) -> Any:
    """The exact best policy under a rule set with a choice.

    Parameters
    ----------
    board : Board, optional
        Defaults to the jungle board.
    rules : Rules
        A rule set with a choice (``choose_die`` or ``choose_move``).
    objective : {"turns", "within", "win"}, default "turns"
        ``"turns"``: the fewest expected turns for one token. ``"within"``:
        the largest chance of finishing within ``turns`` turns. ``"win"``:
        the largest chance of winning a race of ``players``.
    turns : int
        The horizon of ``objective="within"``.
    players : int, default 1
        Seats in the race (``objective="win"``).
    policies : tuple of Policy, optional
        ``objective="win"``: one policy per seat (``seat``'s own entry is
        ignored, ``None`` will do); the result is then ``seat``'s best
        response to the others. Needed for more than two seats.
    seat : int, default 0
        The seat whose best response is asked for.
    mode : {"classic", "last_one_standing"}, default "classic"
        The race's mode. "Win" is finishing first in both (under last one
        standing, the first place), so with two seats the game is the same.

    Returns
    -------
    Policy or tuple of Policy
        One token: a solved :class:`~snlmarkov.Policy` (see
        :func:`~snlmarkov.analysis.policy.solo_policy`). ``objective="win"``:
        one policy per seat, as :func:`~snlmarkov.race` and
        :class:`~snlmarkov.Odds` take them. Two seats, no ``policies``: the
        solution of the game, the same race policy (``others=1``) for both
        seats, each with its :attr:`~snlmarkov.Policy.values` (that seat's
        chance of winning from the start, seat 0 to move, its token on each
        square) and :attr:`~snlmarkov.Policy.value` (the game's value for
        that seat). With ``policies``: those, ``seat``'s replaced by its best
        response (``others = players - 1``, values as above).

    Raises
    ------
    PolicyError
        For rules without a choice, an unknown objective, or arguments that do not fit it.
    LimitError
        If the race's decision process would pass the memory limit.
    ModelError
        If the race's solve does not settle (see :mod:`snlmarkov.races.policygame`).

    Examples
    --------
    >>> import snlmarkov as snl
    >>> board, rules = snl.Board(20, {3: 11, 17: 4}), snl.Rules(choose_die=(4, 6))
    >>> first, second = snl.optimal_policy(board, rules, players=2, objective="win")
    >>> round(first.value, 6), round(first.value + second.value, 12)
    (0.537154, 1.0)
    >>> snl.race(board, rules, 2, policies=(first, second)).win_probability.round(6).tolist()
    [0.537154, 0.462846]
    """
    board, rules = board_arg(board), rules_arg(rules)
    if not isinstance(objective, str) or objective not in OBJECTIVES:
        raise PolicyError(f"objective must be one of {', '.join(map(repr, OBJECTIVES))}; got {show_value(objective)}")
    if objective != "win":
        if players != 1:
            raise PolicyError(
                f"objective={objective!r} is one token's; a race of players={show_value(players)} needs objective='win'"
            )
        return solo_policy(board, rules, objective=objective, turns=turns)
    from ..args import mode_arg
    from .policygame import game_policies, solve_race_game

    mode = mode_arg(mode)
    if turns is not None:
        raise PolicyError("turns= is the horizon of objective='within'; objective='win' takes none")
    if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= MAX_PLAYERS:
        raise PolicyError(f"objective='win' is a race: players must be 2..{MAX_PLAYERS}; got {show_value(players)}")
    if policies is None:
        if players != 2:
            raise PolicyError(
                f"a race of {players} is not solved as a game: give the other seats' policies= (one per seat) "
                "and seat=, for the best response of that seat"
            )
        return game_policies(solve_race_game(board, rules, mode))
    if not isinstance(policies, (tuple, list)) or len(policies) != players:
        raise PolicyError(f"policies= takes one Policy per seat ({players}; seat {show_value(seat)}'s own is ignored)")
    from .response import best_response

    return best_response(board, rules, policies, seat=seat, mode=mode)

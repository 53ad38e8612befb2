"""Optimal policies: one token's (fewest turns, finishing in time) and a race's (the chance of winning).

:func:`optimal_policy` is the one entry point: one token goes to
:func:`~snlmarkov.analysis.policy.solo_policy`; ``objective="win"`` solves the
race of ``players`` seats.

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
        With more than two seats: the other seats' policies, to which the
        result is ``seat``'s best response.
    seat : int, default 0
        The seat whose best response is asked for (more than two seats).
    mode : {"classic", "last_one_standing"}, default "classic"

    Returns
    -------
    Policy or tuple of Policy
        One token: a solved :class:`~snlmarkov.Policy` (see
        :func:`~snlmarkov.analysis.policy.solo_policy`). A race: one policy per seat.

    Raises
    ------
    PolicyError
        For rules without a choice, an unknown objective, or arguments that do not fit it.
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
    raise PolicyError("the best response to given policies is not available yet")

"""Races of several players: who wins, in which order, and how long it takes.

:func:`race` answers, for ``k`` seats on one board under one rule set, how
likely each seat is to finish first (and, under last one standing, in each
place and every finishing order) and how many rounds and turns the game
lasts, from the start or from any state of a game, as a frozen
:class:`RaceResult`. Seat 0 moves first in every round.

How the figures are obtained (``RaceResult.method``):

``"exact: independent players"``
    Without ``bump`` (or with one player) the tokens do not interact: the
    race follows exactly from the single-player turn-count distribution
    and the seat order (:mod:`snlmarkov.races.independent`).
``"exact: joint chain (bump)"``
    With ``bump``, 2 or 3 players (and on request, ``method="exact"``, 4 or
    more: see below): the joint chain of every token's square and the seat
    to move, run forwards to a tail below ``tail``
    (:mod:`snlmarkov.races.bump`).
``"Monte Carlo: N games, 95% CI"``
    With ``bump`` and 4 or more players (the joint chain has ``n**k`` states
    per seat to move): estimates from :func:`snlmarkov.sim.core.simulate`,
    with standard errors and confidence intervals
    (:meth:`RaceResult.confidence_interval`). Such a result says
    ``exact=False``; it never claims to be exact.

From a state (``state=``) the figures are those left from there, by the
same code as :class:`~snlmarkov.races.odds.Odds`
(:mod:`snlmarkov.races.fromstate`).

Large exact joint chains: ``method="auto"`` builds joint chains of up to
:data:`MAX_EXACT_STATES` states. ``method="exact"`` goes further, up to
:data:`MAX_EXACT_JOINT_STATES` states and the memory limit of
:func:`snlmarkov.limits.check_memory` (about :data:`JOINT_BYTES_PER_STATE`
bytes per square combination, checked before anything is allocated);
``progress=True`` shows the rounds as they are run.

In ``classic`` mode only the winner is placed, so ``place_probability`` has
a single column (place 1, equal to ``win_probability``) and the finishing
"orders" are the one-seat tuples ``(winner,)``; ``expected_place`` is only
defined under ``last_one_standing`` and raises :class:`SnlError` otherwise.
"""

from __future__ import annotations

import itertools
import numbers
from typing import Any

import numpy as np

from ..analysis.distribution import DEFAULT_TAIL
from ..analysis.single import analyze
from ..args import board_arg, mode_arg, players_arg, rng_arg, rules_arg, state_arg
from ..board import Board
from ..chain.model import turn_model
from ..errors import GameError, LimitError, PolicyError, SnlError
from ..limits import check_memory, show_value
from ..rules import Rules
from ..state import GameState
from .bump import joint_race
from .defaults import DEFAULT_GAMES, METHODS
from .independent import independent_race
from .joint import resting_squares
from .result import _METHOD_INDEPENDENT, _METHOD_JOINT, RaceResult
from .seatchains import refuse_choice

__all__ = ["RaceResult", "race"]

#: With ``bump``, ``method="auto"`` solves the joint chain for up to this many players.
EXACT_JOINT_PLAYERS = 3
#: The largest joint chain (states) ``method="auto"`` builds.
MAX_EXACT_STATES = 20_000_000
#: The largest joint chain (states) ``method="exact"`` builds (4 players on a
#: board of up to about 100 resting squares).
MAX_EXACT_JOINT_STATES = 400_000_000
#: Memory estimate of a large classic joint chain, in bytes per square
#: combination (``n**k``): the tensor, the turn's product and its rotated
#: copy (measured figures: benchmarks/README.md).
JOINT_BYTES_PER_STATE = 32


def check_tail(value: Any) -> float:
    """``tail``: a probability in ``(0, 1e-3)``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float)) or not 0.0 < value < 1e-3:
        raise SnlError(f"tail must be in (0, 1e-3), got {value!r}")
    return float(value)


def joint_chain_states(board: Board, rules: Rules, players: int) -> int:
    """Number of states of the joint chain of a race with ``bump``.

    ``players * n**players``: the resting square of every token (``n``
    squares where a token can end a turn: 0, ``bump_to`` and the squares
    turns reach, jump starts excluded) and the seat to move.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> joint_chain_states(snl.Board.builtin(), snl.Rules.preset("family"), 3)
    1654104
    """
    n = resting_squares(turn_model(board, rules), rules.bump_to).size
    return int(players) * n ** int(players)


def race(
    board: Board | None = None,
    rules: Rules | None = None,
    players: int | None = None,
    mode: str = "classic",
    *,
    method: str = "auto",
    games: int = DEFAULT_GAMES,
    rng: Any = None,
    tail: float = DEFAULT_TAIL,
    progress: bool = False,
    state: GameState | None = None,
    policies: Any = None,
) -> RaceResult:
    """Analyse a race of ``players`` seats on ``board`` under ``rules``.

    Parameters
    ----------
    board : Board, optional
        Defaults to the jungle board.
    rules : Rules, optional
        Defaults to ``Rules()`` (the ``app`` preset).
    players : int, optional
        Seats, 1 to 6; seat 0 moves first in every round. Defaults to the
        seats of ``state`` when one is given, else 2.
    mode : {"classic", "last_one_standing"}, default "classic"
        ``classic``: the first token home wins and the game ends;
        ``last_one_standing``: finished tokens are skipped and the game goes
        on until every token is home.
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        ``auto``: exact whenever it is affordable (always without ``bump``;
        with ``bump`` for up to 3 players), else Monte Carlo. ``exact``:
        exact or an error: with ``bump`` the joint chain may have at most
        :data:`MAX_EXACT_JOINT_STATES` states within the memory limit (4
        players on the jungle board fit; 5 there are refused).
        ``monte_carlo``: always simulate.
    games : int, default 100000
        Games to simulate when the figures are estimated.
    rng : None, int >= 0, SeedSequence or numpy.random.Generator
        Seed or generator for the simulation, checked by
        :func:`snlmarkov.limits.check_rng` whatever the method (a bad seed is
        refused even when the figures are exact and do not use it).
    tail : float, default 1e-13
        Exact length distributions are computed until less than this much
        probability is left beyond their horizon.
    progress : bool, default False
        Show a progress bar (on standard error) while simulating, or the
        rounds of an exact joint chain as they are run.
    state : GameState, optional
        Answer from this state of a game (every token's square, the seats
        finished, the seat to move; one square per seat) instead of the
        start: the figures are then the chances from there and the rounds
        and turns *left* (the round in progress counts as the first; see
        :mod:`snlmarkov.races.fromstate`). Exact without ``bump``, and with
        ``bump`` while at most 3 seats are still racing; else estimated by
        simulating from the state. A state that is over gives its outcome
        with certainty. From the start state the figures are those of the
        race itself.
    policies : tuple of Policy, optional
        Under a rule set with a choice (which is refused without them), the
        policy each seat plays, one per seat: one-token policies
        (:func:`~snlmarkov.optimal_policy` with ``objective="turns"``,
        ``Policy.fixed``, ...) or, in a race of two, race policies
        (``optimal_policy(..., players=2, objective="win")`` returns such a
        pair, to pass as it is). The figures are exact: each seat's token
        moves by its policy's chain; without ``bump`` one-token policies
        keep the tokens independent, and with ``bump`` or a race policy the
        joint chain is run (``method="exact"`` limits; ``"monte_carlo"`` is
        refused).

    Returns
    -------
    RaceResult

    Raises
    ------
    GameError
        For ``players`` outside 1..6, ``players`` other than the seats of
        ``state``, or an unknown ``mode``.
    SnlError
        For an unknown ``method``, bad ``games`` or ``tail``.
    LimitError
        For an exact joint chain over its limits (states or memory).
    RuleError
        If the rules cannot be played on the board, or give a choice and no
        ``policies`` are given.
    PolicyError
        For ``policies`` that do not fit (see
        :func:`~snlmarkov.races.seatchains.check_policies`).

    Examples
    --------
    >>> import snlmarkov as snl
    >>> r = snl.race(snl.Board.builtin(), snl.Rules.preset("family"), players=2, mode="last_one_standing")
    >>> r.method, r.exact
    ('exact: joint chain (bump)', True)
    >>> r.win_probability.round(4).tolist(), round(r.expected_rounds, 3)
    ([0.5031, 0.4969], 137.989)
    >>> sorted(r.order_probability) == [(0, 1), (1, 0)]
    True

    From a moment of a game: Ann on 90, Bob on 30, Bob to move.

    >>> later = snl.race(snl.Board.builtin(), snl.Rules(), players=2, state=snl.GameState((90, 30), to_move=1))
    >>> later.win_probability.round(4).tolist(), round(later.expected_rounds, 2)
    ([0.6764, 0.3236], 22.18)
    """
    board, rules, mode = board_arg(board), rules_arg(rules), mode_arg(mode)
    if isinstance(state, GameState) and isinstance(players, numbers.Integral) and players != state.players:
        raise GameError(
            f"the state has {state.players} seats' squares for players={players!r}; give players={state.players} "
            "or leave players out"
        )
    state = state_arg(state, board, rules, mode)
    k = players_arg(players, state)
    rng = rng_arg(rng)
    if method not in METHODS:
        raise SnlError(f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}")
    if isinstance(games, (bool, np.bool_)) or not isinstance(games, (int, np.integer)) or games < 1:
        raise GameError(f"games must be a positive integer, got {show_value(games)}")
    tail = check_tail(tail)
    rules.check_board(board)
    common: dict[str, Any] = {"board": board, "rules": rules, "players": k, "mode": mode}
    if policies is not None:
        return _race_policies(common, state, method, tail, progress, policies)
    refuse_choice(rules, "race()")
    if state is not None and state != GameState.initial(k):
        return _race_from(common, state, method, games, rng, tail, progress)

    if method == "monte_carlo":
        return _monte_carlo(common, games, rng, progress)
    if not rules.bump or k == 1:  # the tokens do not interact
        length = analyze(board, rules, tail=tail).length
        figures = independent_race(length, k, mode)
        return RaceResult(**common, method=_METHOD_INDEPENDENT, exact=True, games=0, **figures)
    model = turn_model(board, rules)
    squares = resting_squares(model, rules.bump_to).size
    states = k * squares**k
    if method == "auto" and (k > EXACT_JOINT_PLAYERS or states > MAX_EXACT_STATES):
        return _monte_carlo(common, games, rng, progress)
    _check_joint_size(states, squares**k, k)
    figures = joint_race(model, rules, k, mode, tail=tail, progress=progress)
    orders = figures["order_probability"]
    places = k if mode == "last_one_standing" else 1
    for order in itertools.permutations(range(k), places):  # orders no game can produce have probability 0
        orders.setdefault(order, 0.0)
    return RaceResult(**common, method=_METHOD_JOINT, exact=True, games=0, **figures)


def _race_policies(
    common: dict[str, Any], state: GameState | None, method: str, tail: float, progress: bool, policies: Any
) -> RaceResult:
    """:func:`race` with a policy per seat, from the start or ``state``: exact, by :class:`StateRace`."""
    from .fromstate import StateRace
    from .seatchains import SeatChains

    board, rules, k, mode = common["board"], common["rules"], common["players"], common["mode"]
    chains = SeatChains.of(board, rules, policies, k)
    if method == "monte_carlo":
        raise PolicyError("race(policies=) is exact: method='monte_carlo' does not play policies")
    exact = StateRace(board, rules, k, mode, tail=tail, progress=progress, chains=chains)
    state = exact.check(GameState.initial(k) if state is None else state)
    m = len(state.racing)
    if (not chains.joint or m == 1) and not state.is_over(board, mode):
        from .passage import check_table_size

        check_table_size(board, rules, tail)  # its turns-to-finish table, before the sweep
    if chains.joint and m > 1 and not state.is_over(board, mode):
        states = exact.joint_states(m)
        _check_joint_size(states, states // m, m)
    return exact._result(state)


def _check_joint_size(states: int, combinations: int, k: int) -> None:
    """Refuse an exact joint chain over its limits, before anything is allocated."""
    if states > MAX_EXACT_JOINT_STATES:
        raise LimitError(
            f"the joint chain of {k} players on this board has {states} states, more than "
            f"{MAX_EXACT_JOINT_STATES}; use method='monte_carlo'"
        )
    if states > MAX_EXACT_STATES:
        check_memory(
            JOINT_BYTES_PER_STATE * float(combinations),
            f"the exact joint chain of {k} players ({states} states)",
            hint="use method='monte_carlo' instead",
        )


def _race_from(
    common: dict[str, Any], state: GameState, method: str, games: int, rng: Any, tail: float, progress: bool
) -> RaceResult:
    """:func:`race` from a state other than the start (the arguments checked by the caller)."""
    from .fromstate import StateRace
    from .passage import check_table_size

    board, rules, k, mode = common["board"], common["rules"], common["players"], common["mode"]
    independent = not rules.bump or len(state.racing) == 1
    if method != "monte_carlo" and independent and not state.is_over(board, mode):
        check_table_size(board, rules, tail)  # its turns-to-finish table, before any model is built
    exact = StateRace(board, rules, k, mode, tail=tail, progress=progress)
    exact.check(state)
    m = len(state.racing)
    if not state.is_over(board, mode) and rules.bump and m > 1:  # the joint chain of the seats still racing
        states = exact.joint_states(m)
        if method == "monte_carlo" or (method == "auto" and (m > EXACT_JOINT_PLAYERS or states > MAX_EXACT_STATES)):
            return _monte_carlo(common, games, rng, progress, start=state)
        if states > MAX_EXACT_STATES:
            raise LimitError(
                f"the joint chain of the {m} seats still racing has {states} states, more than "
                f"{MAX_EXACT_STATES}; use method='monte_carlo'"
            )
    elif method == "monte_carlo" and not state.is_over(board, mode):
        return _monte_carlo(common, games, rng, progress, start=state)
    return exact._result(state)


def _monte_carlo(common: dict[str, Any], games: int, rng: Any, progress: bool, start: Any = None) -> RaceResult:
    from .montecarlo import monte_carlo_race

    figures = monte_carlo_race(
        common["board"],
        common["rules"],
        common["players"],
        common["mode"],
        int(games),
        rng=rng,
        progress=progress,
        start=start,
    )
    return RaceResult(
        **common, method=f"Monte Carlo: {int(games)} games, 95% CI", exact=False, games=int(games), **figures
    )

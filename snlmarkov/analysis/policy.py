"""Optimal play under a rule set with a choice, and what choosing well is worth.

:func:`solo_policy` (what :func:`snlmarkov.optimal_policy` runs for one token) solves the decision process of
:mod:`snlmarkov.chain.choice` exactly: the fewest expected turns (policy
iteration ending in an exact sparse solve of the chain the policy induces),
or the largest chance of finishing within ``n`` turns (dynamic programming
over the turns left). :func:`policy_gain` compares the solved policy with
every fixed die (or, under ``choose_move``, with moving the first die rolled).

Examples
--------
>>> import snlmarkov as snl
>>> rules = snl.Rules(choose_die=(4, 6))
>>> p = snl.optimal_policy(snl.Board.builtin(), rules)
>>> round(p.value, 4), round(snl.analyze(snl.Board.builtin(), rules, policy=p).expected_turns, 4)
(40.6713, 40.6713)
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from ..args import board_arg, rules_arg
from ..board import Board
from ..chain.choice import DecisionProcess, _process, resolve
from ..chain.threads import single_blas_thread
from ..errors import PolicyError, UnwinnableBoardError
from ..limits import show_value
from ..policy import Policy, decision_shape
from ..rules import Rules

__all__ = ["policy_gain", "PolicyGain"]

#: What :func:`optimal_policy` can optimise.
OBJECTIVES = ("turns", "within", "win")
#: Most turns ``objective="within"`` looks ahead (one table of choices per turn left is kept).
MAX_WITHIN_TURNS = 10_000


@single_blas_thread
def solo_policy(
    board: Board | None = None, rules: Rules | None = None, *, objective: str = "turns", turns: int | None = None
) -> Policy:
    """The exact best policy of one token under a rule set with a choice.

    What :func:`snlmarkov.optimal_policy` runs for ``objective="turns"`` and
    ``"within"`` (see it for the parameters); a race (``"win"``) is solved there.

    Returns
    -------
    Policy
        A solved :class:`~snlmarkov.Policy` with its
        :attr:`~snlmarkov.Policy.values` from every square (expected turns,
        or the chance of finishing in time) and :attr:`~snlmarkov.Policy.value`
        from square 0. Under ``"within"`` the best choice changes with the
        turns left: :attr:`~snlmarkov.Policy.stages` holds one policy per
        turns left (``stages[t - 1]``: ``t`` turns left), and the policy
        itself is the first turn's (``turns`` left).

    Raises
    ------
    PolicyError
        For rules without a choice, an objective that is not one token's, or a horizon out of range.
    UnwinnableBoardError
        If from square 0 no choice brings the token home surely.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> p = solo_policy(snl.Board(10), snl.Rules(choose_die=(2, 6)), objective="within", turns=2)
    >>> len(p.stages), round(p.value, 6)
    (2, 0.1875)
    """
    board, rules = board_arg(board), rules_arg(rules)
    if not rules.choice:
        raise PolicyError(
            'optimal_policy needs a rule set with a choice: choose_die or choose_move (docs/rules.md, "Choices")'
        )
    if objective not in ("turns", "within"):
        raise PolicyError(
            f"one token's objective is 'turns' or 'within'; got {show_value(objective)} (a race: optimal_policy)"
        )
    dp = _process(board, rules)
    if objective == "turns":
        if turns is not None:
            raise PolicyError("turns= is the horizon of objective='within'; objective='turns' takes none")
        ranks, v, _ = dp.solve_turns()
        values = _per_square(dp, v, finish=0.0)
        return _table_policy(board, rules, ranks, values, name="optimal", objective="turns")
    if isinstance(turns, bool) or not isinstance(turns, numbers.Integral) or not 1 <= turns <= MAX_WITHIN_TURNS:
        raise PolicyError(
            f"objective='within' needs turns=, a whole number 1..{MAX_WITHIN_TURNS:,} (the horizon); got {show_value(turns)}"
        )
    stages, w = dp.solve_within(int(turns))
    values = _per_square(dp, w, finish=1.0)
    shape = decision_shape(board, rules)
    stage_policies = tuple(
        _table_policy(board, rules, r, np.zeros(0), name=f"optimal within {t + 1}", objective=f"within {t + 1}")
        for t, r in enumerate(stages)
    )
    top = stages[-1].reshape(shape)
    return Policy.from_table(
        board, rules, top, name="optimal", objective=f"within {int(turns)}", values=values, stages=stage_policies
    )


def _per_square(dp: DecisionProcess, v: np.ndarray, *, finish: float) -> np.ndarray:
    """The values at the turn-start state of every square ``0..N`` (the finish last)."""
    out = np.append(v[dp.starts], finish)
    out.setflags(write=False)
    return out


def _table_policy(
    board: Board, rules: Rules, ranks: np.ndarray, values: np.ndarray, *, name: str, objective: str
) -> Policy:
    shape = decision_shape(board, rules)
    return Policy.from_table(board, rules, ranks.reshape(shape), name=name, objective=objective, values=values)


@dataclass(frozen=True, eq=False)
class PolicyGain:
    """What choosing well is worth, square by square (see :func:`policy_gain`).

    Attributes
    ----------
    board, rules : Board, Rules
    policy : Policy
        The optimal policy (fewest expected turns).
    optimal : numpy.ndarray
        Expected turns from every square ``0..N`` playing it.
    against : Mapping[str, numpy.ndarray]
        Expected turns from every square under each simpler way of playing:
        ``"always d4"`` for each die of ``choose_die`` (``inf`` where that
        die alone cannot finish surely), or ``"first die"`` (no choice) and
        ``"greedy"`` under ``choose_move``.
    gain : Mapping[str, numpy.ndarray]
        ``against[k] - optimal``: the turns the optimal policy saves
        (``inf`` where only it finishes surely, NaN where neither does).
    spread : numpy.ndarray
        At the start of a turn on each square, the expected turns of the
        worst choice minus the best's (0 where the choice does not matter;
        under ``choose_move``, the gap between the best and worst value of
        the die): how much the choice matters there.
    """

    board: Board
    rules: Rules
    policy: Policy
    optimal: np.ndarray = field(repr=False)
    against: Mapping[str, np.ndarray] = field(repr=False)
    gain: Mapping[str, np.ndarray] = field(repr=False)
    spread: np.ndarray = field(repr=False)

    def summary(self) -> dict[str, Any]:
        """Headline figures as plain data: expected turns from 0 each way, and the gain."""
        return {
            "optimal": float(self.optimal[0]),
            "against": {k: float(v[0]) for k, v in self.against.items()},
            "gain": {k: float(v[0]) for k, v in self.gain.items()},
        }


@single_blas_thread
def policy_gain(board: Board | None = None, rules: Rules | None = None, *, policy: Policy | None = None) -> PolicyGain:
    """The value of choosing well: expected turns under the optimal policy against simpler play, per square.

    Parameters
    ----------
    board : Board, optional
    rules : Rules
        A rule set with a choice.
    policy : Policy, optional
        The policy to rate (default: :func:`optimal_policy`).

    Examples
    --------
    >>> import snlmarkov as snl
    >>> g = snl.policy_gain(snl.Board.builtin(), snl.Rules(choose_die=(4, 6)))
    >>> {k: round(v, 3) for k, v in g.summary()["gain"].items()}
    {'always d4': 32.543, 'always d6': 14.944}
    """
    from .single import analyze

    board, rules = board_arg(board), rules_arg(rules)
    policy = solo_policy(board, rules) if policy is None else policy
    best = analyze(board, rules, policy=policy).expected_turns_from
    others: dict[str, Policy | None] = {}
    if rules.choice == "die":
        for d in rules.choose_die:
            others[f"always {d.spec}"] = Policy.fixed(d)
    else:
        others["first die"] = None  # no choice: the plain rules, moving the first die rolled
        others["greedy"] = Policy.greedy()
    against: dict[str, np.ndarray] = {}
    for key, p in others.items():
        try:
            if p is None:
                v = analyze(board, rules.option_rules()).expected_turns_from
            else:
                v = analyze(board, rules, policy=p).expected_turns_from
        except UnwinnableBoardError:
            v = np.full(board.size + 1, np.inf)
        against[key] = v
    with np.errstate(invalid="ignore"):  # NaN where neither way of playing finishes surely
        gain = {k: v - best for k, v in against.items()}
    dp = _process(board, rules)
    flat = resolve(policy, board, rules).ranks.reshape(dp.n_states, -1)
    q = dp.q_values(dp.evaluate(flat))[dp.starts]  # inf where the policy does not finish surely
    fin = np.isfinite(q)
    high, low = np.where(fin, q, -np.inf).max(axis=1), np.where(fin, q, np.inf).min(axis=1)
    spread = np.where(fin.any(axis=1), high - low, 0.0)
    spread = np.append(spread, 0.0)
    for arr in (*against.values(), *gain.values(), spread):
        arr.setflags(write=False)
    return PolicyGain(board, rules, policy, best, MappingProxyType(against), MappingProxyType(gain), spread)


def turn_start_orders(policy: Policy, board: Board, rules: Rules, others: Any = ()) -> np.ndarray:
    """The order of the options at the start of a turn on every square ``0..N-1`` (rank 0 first).

    The decision state of a turn's start on square ``s``: no six yet, the
    turn begun on ``s``; for a race policy, the other tokens on the squares
    ``others`` (default: all at 0). A greedy policy is resolved by the exact
    kernel (:func:`snlmarkov.chain.choice.resolve`).

    Returns
    -------
    numpy.ndarray
        Shape ``(N, options)``: ``out[s, k]`` is the place of option ``k``
        (a die of ``choose_die``, a value of the die under ``choose_move``)
        in the order on square ``s``; ``out.argmin(axis=1)`` is the choice.

    Examples
    --------
    >>> import snlmarkov as snl
    >>> rules = snl.Rules(choose_die=(4, 6))
    >>> turn_start_orders(snl.Policy.fixed(6), snl.Board(10), rules).argmin(axis=1).tolist()
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    """
    from ..chain.choice import resolve

    board, rules = board_arg(board), rules_arg(rules)
    table = resolve(policy, board, rules)
    others = tuple(others) if others else (0,) * table.others
    n = board.size
    if len(others) != table.others or not all(
        isinstance(o, numbers.Integral) and not isinstance(o, bool) and 0 <= int(o) <= n for o in others
    ):
        raise PolicyError(
            f"others must be {table.others} square(s) 0..{n}, one per other token of the race; got {show_value(others)}"
        )
    squares = np.arange(n)
    return np.asarray(table.order(squares, 0, squares, tuple(np.full(n, o) for o in others)))

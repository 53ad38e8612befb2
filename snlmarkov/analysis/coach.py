"""The coach: after a choice, the best choice under the optimal policy and what the choice cost.

For one token under a rule set with a choice (``docs/rules.md``, "Choices"),
:class:`Coach` holds every option's exact expected turns from every
decision state when the optimal policy (fewest expected turns) is followed
afterwards (:meth:`DecisionProcess.q_values
<snlmarkov.chain.choice.DecisionProcess.q_values>`, one exact solve). A
choice's cost is its expected turns minus the best option's: 0 for a best
choice, and for a die that may trap the token, infinite. The terminal game
(``snlmarkov play``) prints it as the coach's line; a race's win chance is
not what it measures (the turns of one token are).

Examples
--------
>>> from snlmarkov import Board, Rules
>>> coach = Coach(Board(10, {5: 9}), Rules(choose_die=(4, 6)))
>>> a = coach.advise(square=0, sixes=0, origin=0, chosen=0)
>>> a.best, round(a.cost, 4), a.line(coach.rules)
(1, 0.1995, 'Coach: the d6 was best here (5.40 turns to go); the d4 cost 0.20 turns')
>>> round(float(coach.turns(0, 0, 0).min()), 6) == round(coach.policy.value, 6)   # the best: the policy's value
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..board import Board
from ..chain.choice import DecisionProcess
from ..errors import PolicyError
from ..policy import Policy
from ..rules import Rules
from .policy import solo_policy

__all__ = ["Coach", "Advice"]


@dataclass(frozen=True)
class Advice:
    """What the coach says of one choice.

    Attributes
    ----------
    kind : {"die", "move"}
        A die chosen (``best`` and ``chosen`` are indices into
        ``rules.choose_die``), or a value moved (they are values).
    chosen, best : int
        The choice made, and the best one (ties: the first die, the smaller value).
    chosen_turns, best_turns : float
        Expected turns to the finish from here with each, the optimal policy
        followed afterwards (``inf``: the token may never finish).
    cost : float
        ``chosen_turns - best_turns`` (0 for a best choice).
    """

    kind: str
    chosen: int
    best: int
    chosen_turns: float
    best_turns: float

    @property
    def cost(self) -> float:
        """Expected turns the choice cost (0 for a best choice, ``inf`` for one that may never finish)."""
        if math.isinf(self.chosen_turns) and not math.isinf(self.best_turns):
            return math.inf
        return max(0.0, self.chosen_turns - self.best_turns)

    @property
    def is_best(self) -> bool:
        """Whether the choice was as good as the best (to 1e-9 turns)."""
        return self.cost <= 1e-9

    def line(self, rules: Rules) -> str:
        """The coach's line (``Coach: ...``): the best choice and the cost of this one.

        Examples
        --------
        >>> Advice("move", chosen=5, best=5, chosen_turns=3.5, best_turns=3.5).line(Rules(choose_move=2))
        'Coach: the 5, the best choice here (3.50 turns to go)'
        """
        name = self._name(rules, self.best)
        if self.is_best:
            return f"Coach: {name}, the best choice here ({self.best_turns:.2f} turns to go)"
        what = self._name(rules, self.chosen)
        cost = "may never finish" if math.isinf(self.cost) else f"cost {self.cost:.2f} turns"
        return f"Coach: {name} was best here ({self.best_turns:.2f} turns to go); {what} {cost}"

    def _name(self, rules: Rules, option: int) -> str:
        return f"the {rules.choose_die[option].spec}" if self.kind == "die" else f"the {option}"


class Coach:
    """The exact value of every choice of one token, under a policy followed afterwards.

    Parameters
    ----------
    board : Board
    rules : Rules
        A rule set with a choice.
    policy : Policy, optional
        The policy followed after the choice (its table is evaluated
        exactly); the optimal one of fewest expected turns by default.

    Raises
    ------
    PolicyError
        For rules without a choice, or a policy for other rules.
    """

    def __init__(self, board: Board, rules: Rules, policy: Policy | None = None) -> None:
        if not rules.choice:
            raise PolicyError(
                'these rules give the mover no choice: there is nothing to coach (docs/rules.md, "Choices")'
            )
        self.board, self.rules = board, rules
        self.policy = solo_policy(board, rules) if policy is None else policy
        dp = DecisionProcess.build(board, rules)
        good, _ = dp.good_states()
        table = self.policy.table if self.policy.kind == "table" else None
        if table is None or table.others:
            raise PolicyError("the coach follows a solved policy of one token (snlmarkov.optimal_policy)")
        ranks = table.ranks.reshape(dp.n_states, -1)
        values = dp.evaluate(ranks, good)
        self._q = dp.q_values(values)
        self._shape = dp.shape
        self._values = tuple(rules.die.values)

    def turns(self, square: int, sixes: int, origin: int) -> np.ndarray:
        """Each option's expected turns from the decision state (the die's values, under ``choose_move``)."""
        levels, n, n_o = self._shape
        state = (min(int(sixes), levels - 1) * n + int(square)) * n_o + (int(origin) if n_o > 1 else 0)
        return self._q[state]

    def advise(self, *, square: int, sixes: int, origin: int, chosen: int, rolled: Any = ()) -> Advice:
        """What the coach says of ``chosen`` (a die's index; or, under ``choose_move``, the value moved of ``rolled``).

        A :class:`~snlmarkov.game.choosing.Decision` gives every argument but
        ``chosen``: ``coach.advise(square=d.square, sixes=d.sixes, origin=d.origin,
        chosen=..., rolled=d.options)``.
        """
        q = self.turns(square, sixes, origin)
        if self.rules.choice == "die":
            best = int(np.argmin(q))
            return Advice("die", int(chosen), best, float(q[int(chosen)]), float(q[best]))
        thrown = sorted(set(int(v) for v in rolled))
        if int(chosen) not in thrown:
            raise PolicyError(f"the value moved ({chosen}) must be one of the values rolled {tuple(rolled)}")
        value = {v: float(q[self._values.index(v)]) for v in thrown}
        best = min(thrown, key=lambda v: (value[v], v))
        return Advice("move", int(chosen), best, value[int(chosen)], value[best])

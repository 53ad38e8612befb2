"""The seats' turn chains in a race where each seat plays a policy (a rule set with a choice).

Under a choice rule every seat's token moves by the choices of its policy
(``docs/rules.md``, "Choices"), so the seats' tokens need not move alike:

- a **one-token policy** (``others=0``) makes the seat's token the chain of
  :func:`~snlmarkov.chain.choice.policy_model`, whatever the other tokens do;
- a **race policy** (``others=1``, a race of two) reads the other token's
  square: the seat's turn from each square is that chain with the choices
  of the other token's square (one turn matrix per square of it, ``N``
  being "finished", under ``last_one_standing``).

Without ``bump`` and race policies the tokens do not interact and the race
follows from each seat's turns-to-finish; otherwise the joint chain of
:mod:`snlmarkov.races.bump` runs with one mover per seat
(:meth:`SeatChains.movers`), the bump applied as there.

Examples
--------
>>> from snlmarkov import Board, Policy, Rules
>>> chains = SeatChains.of(Board(10), Rules(choose_die=(4, 6)), (Policy.fixed(4), Policy.fixed(6)), 2)
>>> chains.joint, [round(float(m.matrix[0, 2]), 3) for m in chains.alone]
(False, [0.25, 0.167])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..board import Board
from ..chain.choice import policy_model, resolve
from ..chain.model import TransitionModel
from ..errors import ModelError, PolicyError, RuleError
from ..policy import Policy, PolicyTable
from ..rules import Rules
from .joint import JointMover, _step, reachable_in

__all__ = []

#: The chances of winning of a race of two (:func:`two_seat_wins`) are iterated until no entry changes by more than this.
WIN_TOL = 1e-15
#: Most rounds of that iteration.
MAX_WIN_ROUNDS = 1_000_000

#: Race policies (choices that read the other tokens' squares) are played in races of this many seats.
RACE_POLICY_PLAYERS = 2


def refuse_choice(rules: Rules, what: str) -> None:
    """Refuse a rule set with a choice for ``what`` (a race) given no policies: a :class:`RuleError` naming the way out.

    Examples
    --------
    >>> refuse_choice(Rules(choose_move=2), "race()")
    Traceback (most recent call last):
    ...
    snlmarkov.errors.RuleError: race(): the rules let the mover choose the move, so a choice rule needs a policy per seat: pass policies= (one Policy per seat), or solve them with snlmarkov.optimal_policy(..., objective='win') (docs/rules.md, "Choices")
    """
    if rules.choice:
        raise RuleError(
            f"{what}: the rules let the mover choose the {rules.choice}, so a choice rule needs a policy per seat: "
            "pass policies= (one Policy per seat), or solve them with snlmarkov.optimal_policy(..., objective='win') "
            '(docs/rules.md, "Choices")'
        )


def check_policies(board: Board, rules: Rules, players: int, policies: Any) -> tuple[PolicyTable, ...]:
    """``policies`` (one :class:`~snlmarkov.Policy` per seat) resolved for the board and rules.

    Raises
    ------
    PolicyError
        If the rules give no choice, the count is not one per seat, an entry
        is not a policy or does not fit, or a race policy is given for a race
        of other than two seats.
    """
    if not rules.choice:
        raise PolicyError(
            'these rules give the mover no choice: policies= has nothing to decide (docs/rules.md, "Choices")'
        )
    if isinstance(policies, Policy) or not isinstance(policies, (tuple, list)):
        raise PolicyError(f"policies= takes one Policy per seat (a tuple of {players}); got {type(policies).__name__}")
    if len(policies) != players:
        raise PolicyError(f"policies= needs one Policy per seat: {players}, got {len(policies)}")
    tables = tuple(resolve(p, board, rules) for p in policies)
    for seat, t in enumerate(tables):
        if t.others and (t.others != players - 1 or players != RACE_POLICY_PLAYERS):
            raise PolicyError(
                f"seat {seat}'s policy reads {t.others} other token(s)' squares: a race policy is played in a race "
                f"of {RACE_POLICY_PLAYERS} seats (its own and one other), not of {players}"
            )
    return tables


def _alone(board: Board, rules: Rules, ranks: np.ndarray, name: str) -> TransitionModel:
    """The turn model of one token choosing by ``ranks`` (a table of ``others=0``)."""
    return policy_model(board, rules, Policy.from_table(board, rules, ranks, name=name), check=False)


@dataclass(frozen=True, eq=False)
class SeatChains:
    """Every seat's turn chain under its policy.

    Attributes
    ----------
    board, rules : Board, Rules
    tables : tuple of PolicyTable
        The seats' policies, resolved.
    alone : tuple of TransitionModel
        Per seat, its token's turn model when no other token's square
        matters: its one-token policy, or its race policy with the other
        token finished.
    reading : tuple
        Per seat, ``()`` for a one-token policy, else the turn matrix for
        every square ``0..N-1`` of the other token.
    """

    board: Board
    rules: Rules
    tables: tuple[PolicyTable, ...]
    alone: tuple[TransitionModel, ...] = field(repr=False)
    reading: tuple[tuple[Any, ...], ...] = field(repr=False)

    @classmethod
    def of(cls, board: Board, rules: Rules, policies: Any, players: int) -> SeatChains:
        """The chains of ``policies`` (checked by :func:`check_policies`)."""
        tables = check_policies(board, rules, players, policies)
        n = board.size
        alone, reading = [], []
        for t in tables:
            name = t.policy.name
            if not t.others:
                alone.append(_alone(board, rules, np.asarray(t.ranks), name))
                reading.append(())
                continue
            alone.append(_alone(board, rules, np.asarray(t.ranks[:, :, :, n, :]), name))
            reading.append(
                tuple(_alone(board, rules, np.asarray(t.ranks[:, :, :, y, :]), name).matrix for y in range(n))
            )
        return cls(board, rules, tables, tuple(alone), tuple(reading))

    @property
    def joint(self) -> bool:
        """Whether the tokens interact (``bump``, or a race policy): the race needs the joint chain."""
        return bool(self.rules.bump) or any(self.reading)

    @property
    def origins(self) -> tuple[int, ...]:
        """Where a token can be put between turns: 0, and ``bump_to`` under ``bump``."""
        return (0, self.rules.bump_to) if self.rules.bump else (0,)

    def reachable(self) -> np.ndarray:
        """Bool per square ``0..N``: some seat's token can end a turn there, from :attr:`origins`."""
        graph = sum((abs(sp.csr_matrix(m.matrix)) for m in self.alone), sp.csr_matrix(self.alone[0].matrix.shape))
        for mats in self.reading:
            for m in mats:
                graph = graph + abs(sp.csr_matrix(m))
        return reachable_in(graph, self.origins)

    def movers(self) -> tuple[JointMover, ...]:
        """One mover per seat for the joint chain, on the squares where any token can rest."""
        seen = self.reachable()
        seen[self.board.size] = False
        squares = np.flatnonzero(seen)
        out: list[JointMover] = []
        for model, mats in zip(self.alone, self.reading):
            if not mats:
                out.append(JointMover.on(model.matrix, squares, self.rules))
                continue
            blocks = sp.block_diag([_step(mats[int(y)], squares) for y in squares], format="csr")
            out.append(ReadingMover.on(model.matrix, squares, self.rules, by_other=blocks))
        return tuple(out)


@dataclass(frozen=True, eq=False)
class ReadingMover(JointMover):
    """A seat's turn in a race of two when its choices read the other token's square.

    :attr:`step` is its turn with the other token finished (a tensor of one
    token); :attr:`by_other` holds, block by block, its turn with the other
    token on each resting square (a tensor of two: the mover's axis first).
    """

    by_other: Any = field(default=None, repr=False)

    def _turn(self, x: np.ndarray, m: int) -> np.ndarray:
        n = self.n
        if m == 1:
            return super()._turn(x, m)
        if m != RACE_POLICY_PLAYERS:
            raise ModelError(f"a race policy moves in a race of {RACE_POLICY_PLAYERS}, not of {m} tokens")
        per_other = x.reshape(n, n).T.reshape(-1)  # the mover's squares, for each square of the other
        return np.ascontiguousarray((self.by_other @ per_other).reshape(n, n + 1).T)

    def _turn_many(self, xs: list[np.ndarray], m: int) -> np.ndarray:
        return np.stack([self._turn(x, m) for x in xs], axis=1)


def _back(mover: JointMover, after: np.ndarray) -> np.ndarray:
    """Values before the mover's turn from ``after`` (``(n + 1, n)``: the mover's end square, the finish last; the other's square).

    The adjoint of :meth:`JointMover.move` for two tokens: the bump first (a
    bumped end takes the value of ``bump_to``), then the turn's transpose.
    """
    n = mover.n
    after = after.copy()
    if mover.bump:
        _, row, col = mover._bump_table(2)
        after[row, col] = after[mover.bump_index, col]
    if isinstance(mover, ReadingMover):
        return np.ascontiguousarray((mover.by_other.T @ after.T.reshape(-1)).reshape(n, n).T)
    return np.asarray(mover.step.T @ after)


def two_seat_wins(movers: tuple[JointMover, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Seat 0's chance of winning from every state of a race of two: ``(seat 0 to move, seat 1 to move)``.

    Each ``(n, n)`` over the resting squares, the seat to move's square
    first. The value equations of the joint chain (one backward turn per
    seat, :func:`_back`) are iterated to :data:`WIN_TOL`; seat 1's chance is
    one minus it when every game ends (the seats' policies finish surely).

    Raises
    ------
    ModelError
        If the iteration does not settle (a game that can go on for ever).
    """
    n = movers[0].n
    v0, v1 = np.zeros((n, n)), np.zeros((n, n))
    for _ in range(MAX_WIN_ROUNDS):
        # seat 1 moves from [x1, x0]: after its turn seat 0 moves from [x0, e']; its finish pays 0
        new1 = _back(movers[1], np.vstack([v0.T, np.zeros((1, n))]))
        new0 = _back(movers[0], np.vstack([new1.T, np.ones((1, n))]))
        change = max(float(np.abs(new0 - v0).max()), float(np.abs(new1 - v1).max()))
        v0, v1 = new0, new1
        if change <= WIN_TOL:
            return v0, v1
    raise ModelError("the chances of a race of two under these policies did not settle (can a game go on for ever?)")

"""The best response of one seat to the other seats' policies, in a race of any size under a choice rule.

The other seats' policies are given, so their turns are chance: seat
``seat`` faces a Markov decision process whose value is **its chance of
finishing first** (the winner under ``classic``; under
``last_one_standing`` the first place, which the objective ``"win"`` is
about: what follows the first finish does not count). Its decision states
are its own (square, sixes, origin) and the other tokens' squares, in
playing order after it; a turn of another seat is that seat's turn matrix
(:func:`~snlmarkov.chain.choice.policy_model`, or in a race of two, the
race policy's matrix for the best-responding token's square) followed by
the bump (:func:`~snlmarkov.races.joint.bumps`) against every other token.
It is solved like the two-player game (:mod:`snlmarkov.races.policygame`):
value iteration from 0 (the values rise to the optimum), then rounds of
policy improvement, each policy's values iterated to rounding, until no
choice improves on its own values by more than ``IMPROVE_TOL``.

What is and is not an equilibrium: the result is the best seat ``seat``
can do *against these policies*. If the others change theirs (to answer
it), it need not be best any more; only for two seats does
:func:`~snlmarkov.optimal_policy` solve the game itself (each seat's policy
a best response to the other's, the value of the zero-sum game). With more
seats the race is not zero-sum between two sides (one seat's choice can
shift the chances between the others), and no equilibrium is computed.

Examples
--------
>>> from snlmarkov import Board, Policy, Rules
>>> rules = Rules(choose_die=(4, 6))
>>> out = best_response(Board(12, {3: 10, 11: 2}), rules, (None, Policy.fixed(6), Policy.fixed(6)), seat=0)
>>> out[0].objective, out[0].table.others, round(out[0].value, 6)
('win', 2, 0.45007)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..board import Board
from ..chain.choice import _process, resolve
from ..chain.threads import single_blas_thread
from ..errors import ModelError, PolicyError
from ..limits import MAX_PLAYERS, check_memory, show_value
from ..policy import Policy, decision_shape
from ..rules import Rules
from .joint import bumps
from .policygame import BYTES_PER_STATE, MAX_VI_ROUNDS, SOLVE_RESIDUAL, _Game, _solve
from .seatchains import RACE_POLICY_PLAYERS, _alone

__all__ = []


class _Response(_Game):
    """The best response's arrays: ``_Game`` with the other tokens' turns as chance (see the module)."""

    def __init__(self, board: Board, rules: Rules, turns: list[Any], k: int) -> None:
        super().__init__(_process(board, rules))
        n = self.n
        self.seats = k
        self.width = n ** (k - 1)
        self.turns = turns  # per other seat in playing order: (N, N) among the squares, or (N, N, N) by my square
        self.bump = bool(rules.bump)
        self.bump_to = int(rules.bump_to)
        grids = np.meshgrid(*[np.arange(n)] * k, indexing="ij")
        self.bumped = []  # per axis: where a token ending its turn on that axis's square is bumped
        for a in range(k):
            hit = np.zeros((n,) * k, dtype=bool)
            if self.bump:
                for b in range(k):
                    if b != a:
                        hit |= bumps(grids[a], grids[b], self.bump_to, n)
            self.bumped.append(hit)

    def in_game(self) -> np.ndarray:
        return np.ones((self.n_s, self.width), dtype=bool)

    def _bump(self, v: np.ndarray, axis: int) -> np.ndarray:
        """``v`` read after the turn of the token on ``axis``: its bumped squares take the value of ``bump_to``."""
        if not self.bump:
            return v
        at = np.take(v, [self.bump_to], axis=axis)
        return np.where(self.bumped[axis], at, v)

    def back(self, v: np.ndarray, j: int) -> np.ndarray:
        """The values before the turn of the other seat on axis ``j`` from those after it (its finish: 0)."""
        vb = self._bump(v, j)
        t = self.turns[j - 1]
        if isinstance(t, np.ndarray):
            return np.einsum("xye,xe->xy", t, vb)  # a race policy of two: by the best-responding token's square
        front = np.moveaxis(vb, j, 0)
        return np.moveaxis((t @ front.reshape(self.n, -1)).reshape(front.shape), 0, j)

    def after_mine(self, w: np.ndarray, last: int = 1) -> np.ndarray:
        """Values with the best-responding token resting, before the other seats' turns on axes ``last..k-1``."""
        v = w
        for j in range(self.seats - 1, last - 1, -1):
            v = self.back(v, j)
        return v

    def source(self, u: np.ndarray) -> np.ndarray:
        n = self.n
        w = u[self.starts].reshape((n,) * self.seats)
        after = self._bump(self.after_mine(w), 0).reshape(n, self.width)
        return np.concatenate([np.ones((1, self.width)), u, after])

    def evaluate(self, ranks: np.ndarray, guess: np.ndarray) -> np.ndarray:
        """The values of playing ``ranks`` against the others, iterated to a residual of :data:`SOLVE_RESIDUAL`."""
        u = guess
        choice = ranks if self.move else np.argmin(ranks, axis=2)
        for _ in range(MAX_VI_ROUNDS):
            new = self.step(u, choice)
            change = float(np.max(np.abs(new - u)))
            u = new
            if change <= SOLVE_RESIDUAL / 10:
                break
        if float(np.max(np.abs(self.best(self.q(u), ranks) - u))) > SOLVE_RESIDUAL:
            raise ModelError("the values of a best response did not settle")
        return u


def _turn_matrices(board: Board, rules: Rules, policy: Any, k: int) -> Any:
    """An other seat's turn among the squares ``0..N-1`` (the finish dropped: it pays 0).

    Sparse for a one-token policy; for a race policy of two a dense ``(N, N, N)``,
    the first axis the best-responding token's square.
    """
    n = board.size
    table = resolve(policy, board, rules)
    if not table.others:
        return sp.csr_matrix(_alone(board, rules, np.asarray(table.ranks), table.policy.name).matrix[:n, :n])
    if k != RACE_POLICY_PLAYERS or table.others != 1:
        raise PolicyError(
            f"another seat's race policy is answered in a race of {RACE_POLICY_PLAYERS}; with {k} seats give "
            "one-token policies (optimal_policy(objective='turns'), Policy.fixed, ...)"
        )
    mats = [_alone(board, rules, np.asarray(table.ranks[:, :, :, x, :]), table.policy.name).matrix for x in range(n)]
    return np.stack([m[:n, :n].toarray() for m in mats])


@single_blas_thread
def best_response(
    board: Board, rules: Rules, policies: Any, *, seat: int = 0, mode: str = "classic"
) -> tuple[Any, ...]:
    """Seat ``seat``'s best policy against the other seats' ``policies`` (one per seat; its own entry is ignored).

    Returns
    -------
    tuple of Policy
        ``policies`` with seat ``seat``'s entry replaced by its best response:
        a race policy (``others = players - 1``) whose
        :attr:`~snlmarkov.Policy.values` are the seat's chance of finishing
        first from the start (seat 0 to move, the others on 0), its token on
        each square.

    Raises
    ------
    PolicyError
        For a bad ``seat`` or ``policies``.
    LimitError
        If the decision process would pass the memory limit.
    """
    if not isinstance(policies, (tuple, list)) or not 2 <= len(policies) <= MAX_PLAYERS:
        raise PolicyError(f"policies= takes one Policy per seat (2..{MAX_PLAYERS} seats); got {show_value(policies)}")
    k = len(policies)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < k:
        raise PolicyError(f"seat must be a seat 0..{k - 1} of the {k} policies; got {show_value(seat)}")
    play = [(seat + j) % k for j in range(1, k)]  # the other seats, in playing order after seat
    for s in play:
        if not isinstance(policies[s], Policy):
            raise PolicyError(f"seat {s}'s policy must be a Policy; got {type(policies[s]).__name__}")
    shape = decision_shape(board, rules, others=k - 1)
    n, n_s = board.size, int(np.prod(shape[:3]))
    per = max(len(d.values) for d in (rules.choose_die or (rules.die,)))
    check_memory(
        float(n_s) * n ** (k - 1) * (BYTES_PER_STATE + 24.0 * per * shape[-1]) + 8.0 * float(n) ** k * (2 * k + 4),
        f"the best response of one seat among {k} ({n_s * n ** (k - 1):,} states)",
    )
    turns = [_turn_matrices(board, rules, policies[s], k) for s in play]
    game = _Response(board, rules, turns, k)
    u, _, ranks, _ = _solve(game, "the best response")
    table = _seat_table(board, rules, ranks, shape, play)
    w = u[game.starts].reshape((n,) * k)
    first = game.after_mine(w, last=k - seat) if seat else w  # seats 0..seat-1 move first
    values = np.append(first[(slice(None),) + (0,) * (k - 1)], 1.0)
    out = list(policies)
    out[seat] = Policy.from_table(board, rules, table, name="best response", objective="win", values=values)
    return tuple(out)


def _seat_table(board: Board, rules: Rules, ranks: np.ndarray, shape: tuple[int, ...], play: list[int]) -> np.ndarray:
    """The table of ``decision_shape(others=k-1)``, other squares in seat order; one-token choices where one has finished."""
    from ..analysis.policy import solo_policy

    n, k1 = board.size, len(play)
    by_play = ranks.reshape(*shape[:3], *([n] * k1), shape[-1])
    order = sorted(range(k1), key=lambda i: play[i])  # seat order of the others' axes
    by_seat = np.transpose(by_play, (0, 1, 2, *[3 + i for i in order], 3 + k1))
    out = np.empty(shape, dtype=np.int16)
    solo = solo_policy(board, rules, objective="turns").table.ranks
    out[...] = solo.reshape(*shape[:3], *([1] * k1), shape[-1])
    out[(slice(None),) * 3 + (slice(0, n),) * k1] = by_seat
    return out

"""The race of two players under a rule set with a choice, as a game: its exact solution.

Two seats race on one board (``docs/rules.md``, "Choices"); each, when it
chooses, sees its own decision state (square, sixes so far, origin) and the
other token's square. Both seats play under the same rules, so the game
looks the same from either seat: the value of a decision state is **the
mover's chance of winning**, ``U[d, y]`` for the mover in decision state
``d`` and the other token on ``y``, and one table of choices serves both
seats. With ``W[x, y] = U[start(x), y]`` (a turn begun on ``x``), a roll's
outcome pays

- 1 when it finishes;
- ``U[d', y]`` when the turn goes on (a six) in decision state ``d'``;
- ``1 - W[y, e']`` when the turn ends on ``e``: the other token moves next,
  and ``e'`` is ``e`` after the bump rule (:func:`~snlmarkov.races.joint.bumps`)
  against the other token on ``y``.

The mover takes the option of largest value (under ``choose_move``: the
best value rolled, the law of the pick from
:meth:`~snlmarkov.chain.choice.DecisionProcess.move_law`). The game is
zero-sum (one seat's win is the other's loss), turn-based, with perfect
information, so pure stationary policies are optimal. It is solved by value
iteration to a small change, then by rounds of policy iteration on the
exact values: the policy is evaluated by one sparse solve of the chain the
pair of policies induces, and the round ends when no choice of any state
improves on its own exact values by more than ``IMPROVE_TOL``. That is
the certificate: the values are then a fixed point of each seat's Bellman
equation against the other's policy, and for a chance of reaching a goal
the policy's own values are the least such fixed point only at the
optimum, so each seat's policy is a best response to the other's (an
equilibrium of the zero-sum game; its value is seat 0's chance from the
start).

As in the one-token solver, a die with a chance of leaving the token where
it can never be brought home surely is not offered
(:meth:`~snlmarkov.chain.choice.DecisionProcess.good_states`), so every game
ends; a pair of optimal policies under which some game could go on for ever
(two tokens both better off waiting) is refused with :class:`ModelError`.

Examples
--------
>>> from snlmarkov import Board, Rules
>>> g = solve_race_game(Board(10, {4: 8, 9: 2}), Rules(choose_die=(4, 6)))
>>> round(g.win(0, 0), 6), g.rounds[1]
(0.544234, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order
from scipy.sparse.linalg import spsolve

from ..board import Board
from ..chain.choice import DecisionProcess, _process, _ranks_of, _still_best
from ..chain.threads import single_blas_thread
from ..errors import ModelError, PolicyError, UnwinnableBoardError
from ..limits import check_memory
from ..policy import decision_shape
from ..rules import Rules
from .joint import bumps

__all__ = []

#: Value iteration stops when no value changes by more than this; policy iteration on exact values finishes.
VI_TOL = 1e-10
#: Most rounds of value iteration before policy iteration takes over anyway.
MAX_VI_ROUNDS = 20_000
#: Most rounds of policy iteration on exact values.
MAX_POLICY_ROUNDS = 60
#: The exact values of a pair of policies leave at most this residual in any equation.
SOLVE_RESIDUAL = 1e-14
#: Memory per game state (decision state x other square) of the solve, in bytes, beyond the slot tables.
BYTES_PER_STATE = 600.0


@dataclass(frozen=True, eq=False)
class _Sources:
    """Each option's slots as rows of the source table ``[finish; U; end squares]`` (see :meth:`RaceGame._source`)."""

    col: tuple[np.ndarray, ...]  # per option, (n_s, C) row of the source each slot reads
    prob: tuple[np.ndarray, ...]  # per option, (n_s, C) its probability
    cont: tuple[np.ndarray, ...]  # per option, (n_s, C) the turn goes on
    end: tuple[np.ndarray, ...]  # per option, (n_s, C) the square the turn ends on (or -1)


@dataclass(frozen=True, eq=False)
class RaceGame:
    """The solved race of two players under a rule set with a choice (see the module).

    Attributes
    ----------
    board, rules : Board, Rules
    mode : str
        ``"classic"`` or ``"last_one_standing"``: with two seats the winner
        is the first home in both, so the game is the same.
    values : numpy.ndarray
        ``(decision states, N)``: the mover's chance of winning in each
        decision state (flattened as in :func:`~snlmarkov.policy.decision_shape`),
        the other token on square ``0..N-1``.
    option_table : numpy.ndarray
        ``(decision states, N, options)``: the mover's chance of winning if it
        takes each option now and both seats play the solution after (under
        ``choose_move``: moving each value of the die).
    ranks : numpy.ndarray
        The solution as a policy table of ``decision_shape(board, rules,
        others=1)``: the same for both seats. Where the other token has
        finished (square ``N``, under ``last_one_standing``) the winner is
        decided and the table holds the one-token policy of fewest expected
        turns.
    rounds : tuple of int
        Rounds of value iteration and of policy iteration.
    """

    board: Board
    rules: Rules
    mode: str
    values: np.ndarray = field(repr=False)
    option_table: np.ndarray = field(repr=False)
    ranks: np.ndarray = field(repr=False)
    rounds: tuple[int, int]

    def win(self, mover: int, other: int) -> float:
        """The mover's chance of winning at the start of its turn, its token on ``mover``, the other's on ``other``.

        Squares ``0..N``; a token on ``N`` has won. The other seat's chance is one minus it.
        """
        n = self.board.size
        if mover >= n or other >= n:
            return 1.0 if mover >= n else 0.0
        return float(self.values[_start(self.board, self.rules, mover), other])

    def option_values(self, square: int, sixes: int, origin: int, other: int) -> np.ndarray:
        """The mover's chance of winning for each option in one decision state (the other token on ``other``).

        Under ``choose_die`` one figure per die; under ``choose_move`` one per
        value of the die (the chance if that value is moved). What a choice
        costs is the best figure minus the figure of the option taken.
        """
        shape = decision_shape(self.board, self.rules)[:3]
        level = min(int(sixes), shape[0] - 1)
        org = int(origin) if shape[2] > 1 else 0
        d = (level * shape[1] + int(square)) * shape[2] + org
        return self.option_table[d, int(other)].copy()


def _start(board: Board, rules: Rules, square: int) -> int:
    """The decision-state index of a turn begun on ``square``."""
    n_o = decision_shape(board, rules)[2]
    return square * n_o + (square if n_o > 1 else 0)


class _Game:
    """The arrays of one solve: the decision process, the sources of its slots, the bump."""

    def __init__(self, dp: DecisionProcess) -> None:
        self.dp = dp
        board, rules = dp.board, dp.rules
        self.n = n = board.size
        self.width = n  # the other token's squares: the columns of the values
        self.n_s = n_s = dp.n_states
        self.starts = dp.starts
        good, allowed = dp.good_states()
        dp.refuse_traps(good)
        if rules.bump and not good[self.starts[rules.bump_to]]:
            raise UnwinnableBoardError(
                f"the finish {n} cannot be reached surely from bump_to={rules.bump_to} with any choice",
                rules.bump_to,
            )
        self.good = good
        self.allowed = np.where(allowed.any(axis=1, keepdims=True), allowed, True)  # a lost state: any option
        cols, probs, conts, ends = [], [], [], []
        for s in dp.slots:
            finish = s.target >= n_s
            end = np.where(~s.cont & ~finish, s.square, -1)
            col = np.where(finish, 0, np.where(s.cont, 1 + s.target, 1 + n_s + np.maximum(end, 0)))
            cols.append(col.astype(np.int64))
            probs.append(s.prob)
            conts.append(s.cont & ~finish)
            ends.append(end.astype(np.int64))
        self.src = _Sources(tuple(cols), tuple(probs), tuple(conts), tuple(ends))
        rows = np.arange(n_s)[:, None]
        self.reads = tuple(  # per option: (n_s, sources) the chance of reading each source row
            sp.csr_matrix((p.ravel(), (np.broadcast_to(rows, p.shape).ravel(), c.ravel())), shape=(n_s, 1 + n_s + n))
            for c, p in zip(cols, probs)
        )
        # e'[e, y]: where a turn ending on e rests, the other token on y
        e, y = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        self.rest = np.where(bumps(e, y, rules.bump_to, n), rules.bump_to, e) if rules.bump else e
        self.move = rules.choice == "move"

    # --------------------------------------------------------------- values
    def source(self, u: np.ndarray) -> np.ndarray:
        """The table every slot reads: ``[1; U; 1 - W[y, e']]`` (rows: finish, decision states, end squares)."""
        n = self.n
        w = u[self.starts]  # W[x, y]
        yy = np.broadcast_to(np.arange(n), (n, n))
        after = 1.0 - w[yy, self.rest]  # [e, y]: the other moves next from y, the mover resting on e'
        return np.concatenate([np.ones((1, n)), u, after])

    def q(self, u: np.ndarray) -> np.ndarray:
        """``(n_s, width, options)``: each option's value for the mover (per value of the die under ``choose_move``)."""
        src = self.source(u)
        if self.move:
            return np.moveaxis(src[self.src.col[0]], 1, 2)  # (n_s, n, C)
        out = np.empty((self.n_s, self.width, len(self.reads)))
        for o, m in enumerate(self.reads):
            out[:, :, o] = m @ src
        return np.where(self.allowed[:, None, :], out, -np.inf)

    def step(self, u: np.ndarray, choice: np.ndarray | None = None) -> np.ndarray:
        """One round of value iteration: :meth:`best` of :meth:`q` without the table of every option.

        ``choice``: under ``choose_die`` the die chosen in each state
        (``argmin`` of the ranks), under ``choose_move`` the ranks; ``None``
        chooses the best.
        """
        if self.move:
            return self.best(self.q(u), choice)
        src = self.source(u)
        vals = [m @ src for m in self.reads]
        out = vals[0]
        for o, v in enumerate(vals[1:], start=1):
            if choice is not None:
                np.copyto(out, v, where=choice == o)
        if choice is None:
            for o, v in enumerate(vals):
                v[~self.allowed[:, o]] = -np.inf
            out = np.maximum.reduce(vals)
        return out

    def best(self, q: np.ndarray, ranks: np.ndarray | None = None) -> np.ndarray:
        """The value of choosing by ``ranks`` (the best, without): ``(n_s, n)``."""
        if not self.move:
            if ranks is None:
                return q.max(axis=2)
            return np.take_along_axis(q, np.argmin(ranks, axis=2)[:, :, None], axis=2)[:, :, 0]
        if ranks is None:
            ranks = _ranks_of(-q.reshape(-1, q.shape[2])).reshape(q.shape)
        law = self.law(ranks)
        return np.sum(law * np.where(law > 0, q, 0.0), axis=2)

    def law(self, ranks: np.ndarray) -> np.ndarray:
        """Under ``choose_move``: the chance of moving each value, choosing by ``ranks`` ``(n_s, n, C)``."""
        rows = np.repeat(np.arange(self.n_s), self.width)
        flat = ranks.reshape(-1, ranks.shape[2])
        return self.dp.move_law(flat, rows).reshape(ranks.shape)

    def ranks(self, q: np.ndarray, keep: np.ndarray | None) -> np.ndarray:
        """The order of the options by value (best first), keeping ``keep``'s order wherever it is still best."""
        flat = -q.reshape(-1, q.shape[2])
        new = _ranks_of(np.where(np.isfinite(flat), flat, np.inf))
        if keep is not None:
            old = keep.reshape(new.shape)
            still = _still_best(np.where(np.isfinite(flat), flat, np.inf), old, not self.move)
            new[still] = old[still]
        return new.reshape(q.shape)

    def stable(self, q: np.ndarray, ranks: np.ndarray) -> bool:
        """Whether no state of the game can improve on ``ranks`` by more than ``IMPROVE_TOL``."""
        flat = -q.reshape(-1, q.shape[2])
        ok = _still_best(np.where(np.isfinite(flat), flat, np.inf), ranks.reshape(flat.shape), not self.move)
        return bool(np.all(ok | ~self.in_game().ravel()))

    def in_game(self) -> np.ndarray:
        """``(n_s, n)``: the states of the game (both tokens where they can be brought home)."""
        return self.good[:, None] & self.good[self.starts][None, :]

    # ------------------------------------------------------------ exact solve
    def evaluate(self, ranks: np.ndarray, guess: np.ndarray) -> np.ndarray:
        """The exact values of both seats playing ``ranks``: one sparse solve (states out of the game keep ``guess``)."""
        n, n_s = self.n, self.n_s
        idx = np.arange(n_s * n).reshape(n_s, n)
        live = self.in_game()
        if self.move:
            law = self.law(ranks)
            weights = [law]
        else:
            choice = np.argmin(ranks, axis=2)
            weights = [(choice == o).astype(float) for o in range(len(self.src.col))]
        rows_l, cols_l, vals_l, b, fin_w = [], [], [], np.zeros(n_s * n), np.zeros(n_s * n)
        for o, col in enumerate(self.src.col):
            for c in range(col.shape[1]):
                p = self.src.prob[o][:, c]
                w = weights[0][:, :, c] if self.move else weights[o] * p[:, None]  # the law holds the roll's chance
                w = np.where(live, w, 0.0)
                cont = self.src.cont[o][:, c]
                end = self.src.end[o][:, c]
                fin = ~cont & (end < 0)
                b += np.where(fin[:, None] | (end >= 0)[:, None], w, 0.0).ravel()
                fin_w += np.where(fin[:, None], w, 0.0).ravel()
                go = (w > 0) & cont[:, None]
                r, y = np.nonzero(go)
                rows_l.append(idx[r, y])
                cols_l.append(idx[self.dp.slots[o].target[r, c], y])
                vals_l.append(w[r, y])
                stop = (w > 0) & (end >= 0)[:, None]
                r, y = np.nonzero(stop)
                e_rest = self.rest[end[r], y]
                rows_l.append(idx[r, y])
                cols_l.append(idx[self.starts[y], e_rest])
                vals_l.append(-w[r, y])
        rows, cols, vals = (np.concatenate(a) for a in (rows_l, cols_l, vals_l))
        self.check_ends(rows, cols, fin_w, live)
        keep = np.flatnonzero(live.ravel())
        pos = np.full(n_s * n, -1)
        pos[keep] = np.arange(keep.size)
        a = sp.csr_matrix((vals, (pos[rows], pos[cols])), shape=(keep.size, keep.size))
        out = guess.ravel().copy()
        out[keep] = _solve_linear(a, b[keep], out[keep])
        return out.reshape(n_s, n)

    def check_ends(self, rows: np.ndarray, cols: np.ndarray, finishes: np.ndarray, live: np.ndarray) -> None:
        """Refuse a pair of policies under which some game of two tokens in play could go on for ever.

        ``rows -> cols`` are the transitions of the chain, ``finishes`` each
        state's chance of finishing at once: every state must reach a finish.
        """
        size = self.n_s * self.n
        fin = np.flatnonzero(finishes > 0)
        back = sp.csr_matrix(
            (
                np.ones(rows.size + fin.size),
                (np.concatenate([cols, np.full(fin.size, size)]), np.concatenate([rows, fin])),
            ),
            shape=(size + 1, size + 1),
        )
        seen = np.zeros(size + 1, dtype=bool)
        seen[breadth_first_order(back, size, directed=True, return_predecessors=False)] = True
        if not np.all(seen[:size][live.ravel()]):
            raise ModelError(
                "under the optimal race policies some game could go on for ever (both tokens better off never "
                "moving on): this race is not solved"
            )


def _solve_linear(a: sp.csr_matrix, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``x = b + a x`` solved to rounding: iterated from ``x`` (the chain ends surely, so it converges), else a sparse LU.

    The answer is accepted when its residual ``|b + a x - x|`` is at most
    :data:`SOLVE_RESIDUAL` in every state.
    """
    change = np.inf
    for _ in range(MAX_VI_ROUNDS):
        nxt = b + a @ x
        new_change = float(np.max(np.abs(nxt - x), initial=0.0))
        x = nxt
        if new_change <= SOLVE_RESIDUAL / 10 or (new_change <= SOLVE_RESIDUAL and new_change >= change):
            break
        change = new_change
    if float(np.max(np.abs(b + a @ x - x), initial=0.0)) > SOLVE_RESIDUAL:
        x = np.atleast_1d(spsolve((sp.identity(b.size, format="csr") - a).tocsc(), b))
    if not np.all(np.isfinite(x)) or float(np.max(np.abs(b + a @ x - x), initial=0.0)) > SOLVE_RESIDUAL:
        raise ModelError("the chain of a pair of race policies could not be solved")
    return x


@single_blas_thread
def solve_race_game(board: Board, rules: Rules, mode: str = "classic") -> RaceGame:
    """Solve the race of two players under a choice rule exactly (see the module).

    Raises
    ------
    PolicyError
        For rules without a choice.
    LimitError
        If the game's states would pass the memory limit.
    UnwinnableBoardError
        If no choice brings a token home surely from square 0 (or ``bump_to``).
    ModelError
        If the solve does not settle, or optimal play could stall for ever.
    """
    if not rules.choice:
        raise PolicyError('these rules give the mover no choice (docs/rules.md, "Choices")')
    rules.check_board(board)
    shape = decision_shape(board, rules, others=1)
    n = board.size
    n_s = int(np.prod(shape[:3]))
    per = max(len(d.values) for d in (rules.choose_die or (rules.die,)))
    check_memory(
        float(n_s) * n * (BYTES_PER_STATE + 24.0 * per * shape[-1]),
        f"the race game of two players ({n_s * n:,} states: decision states x the other token's square)",
    )
    game = _Game(_process(board, rules))
    u, q, ranks, rounds = _solve(game, "the race game")
    table = _full_table(board, rules, ranks, shape)
    for a in (u, q, table):
        a.setflags(write=False)
    return RaceGame(board, rules, mode, u, q, table, rounds)


def _solve(game: _Game, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """``(values, option values, ranks, (rounds of value iteration, of policy iteration))`` of ``game``.

    Value iteration from 0 to a change of :data:`VI_TOL`, then policy
    iteration on the exact values until no choice improves (the certificate).
    """
    u = np.zeros((game.n_s, game.width))
    vi = 0
    while vi < MAX_VI_ROUNDS:
        vi += 1
        new = game.step(u)
        change = float(np.max(np.abs(new - u)))
        u = new
        if change <= VI_TOL:
            break
    q = game.q(u)
    ranks = game.ranks(q, None)
    pi = 0
    while True:
        pi += 1
        u = game.evaluate(ranks, u)
        q = game.q(u)
        if game.stable(q, ranks):
            return u, q, ranks, (vi, pi)
        if pi >= MAX_POLICY_ROUNDS:
            raise ModelError(f"{what}'s policy iteration did not settle in {MAX_POLICY_ROUNDS} rounds")
        ranks = game.ranks(q, ranks)


def _full_table(board: Board, rules: Rules, ranks: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The table of ``decision_shape(others=1)``: the game's ranks, and the one-token policy where the other has finished."""
    from ..analysis.policy import solo_policy

    solo = solo_policy(board, rules, objective="turns").table.ranks
    n = board.size
    out = np.empty(shape, dtype=np.int16)
    out[:, :, :, :n, :] = ranks.reshape(*shape[:3], n, shape[-1])
    out[:, :, :, n, :] = solo
    return out


def game_policies(game: RaceGame, *, name: str = "optimal") -> tuple[Any, ...]:
    """One :class:`~snlmarkov.Policy` per seat from a solved game (values: each seat's chance, its token on each square)."""
    from ..policy import Policy

    board, n = game.board, game.board.size
    start = [_start(board, game.rules, p) for p in range(n)]
    v0 = np.append(game.values[start, 0], 1.0)  # seat 0 on p, seat 1 on 0, seat 0 to move
    v1 = np.append(1.0 - game.values[start[0], :], 1.0)  # seat 1 on p, seat 0 on 0, seat 0 to move
    return tuple(
        Policy.from_table(board, game.rules, game.ranks, name=name, objective="win", values=v) for v in (v0, v1)
    )

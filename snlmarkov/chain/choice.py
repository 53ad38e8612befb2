"""Rules with a choice on the exact side: the decision process, its exact solution, and the chain a policy induces.

A choice is made before the roll (``choose_die``: which die) or after it
(``choose_move``: which of the values rolled); the roll itself is then a
roll of the rules without the choice (:meth:`Rules.option_rules`), read from
the one exact statement of a roll, :func:`~snlmarkov.chain.mechanics.roll_slots`.

:class:`DecisionProcess` holds every option's outcome from every decision
state (:func:`~snlmarkov.policy.decision_shape`, flattened), so that a
policy's values are one sparse solve and an improvement one vectorised
pass. Under ``choose_move`` with ``k`` dice the value chosen is the first of
the policy's order among those rolled, so a state's law of the move is
``T_r**k - T_(r+1)**k`` for the value in place ``r`` (``T_r`` the chance that
one die shows a value in place ``r`` or later): no enumeration of the rolls.

The solves number the states square by square (a nearly block triangular
system for :class:`~snlmarkov.chain.solve.BlockLU`), and run only over the
states a turn can reach (:attr:`DecisionProcess.live`: under
``on_cap="forfeit"`` a few per square of the ``N`` origins); the others are
filled level by level, a bonus roll always leading one level up.

Examples
--------
>>> from snlmarkov import Board, Rules
>>> dp = DecisionProcess.build(Board(10), Rules(choose_die=(4, 6)))
>>> dp.n_states, dp.n_options
(30, 2)
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order
from scipy.sparse.linalg import spsolve

from ..board import Board
from ..errors import LimitError, ModelError, PolicyError, UnwinnableBoardError
from ..limits import check_memory
from ..policy import Policy, PolicyTable, decision_shape
from ..rules import Rules
from .mechanics import all_landings, chain_landings, index_dtype, no_cap_depth, roll_slots
from .model import TransitionModel, _check_winnable
from .solve import BlockLU

__all__ = ["DecisionProcess", "OptionSlots", "resolve", "policy_turn_rows", "policy_model", "policy_hit_probabilities"]

#: An improvement must gain more than this (relative) to change a choice: no cycling on ties.
IMPROVE_TOL = 1e-12
#: Most (states reached) x (squares) :func:`policy_hit_probabilities` solves (one sparse solve per square).
MAX_POLICY_HIT_WORK = 50_000_000
#: Up to this many states reached, :func:`policy_hit_probabilities` inverts the chain once (dense) instead.
DENSE_HIT_STATES = 2000


@dataclass(frozen=True, eq=False)
class OptionSlots:
    """One option's roll from every decision state: ``(states, columns)`` tables (see ``roll_slots``)."""

    prob: np.ndarray
    square: np.ndarray
    cont: np.ndarray
    landing: np.ndarray
    target: np.ndarray  # the decision state (or the finish, index ``n_states``) each slot leads to
    cost: np.ndarray  # 1 where the slot ends the turn, 0 where the turn goes on


@dataclass(frozen=True, eq=False)
class DecisionProcess:
    """The decision process of one token under a rule set with a choice.

    Build it with :meth:`build` (or the cached ``_process(board, rules)``).
    Every method works on the flattened decision states (the order of the
    policy tables, :func:`~snlmarkov.policy.decision_shape` without the
    options); the finish is the extra index ``n_states``.

    Attributes
    ----------
    board, rules : Board, Rules
    shape : tuple of int
        The decision states' shape without the options (levels, squares, origins).
    square, sixes, origin : numpy.ndarray
        The decision states, flattened in the order of the policy tables
        (``sixes`` is the level, ``origin`` the square the turn began on,
        or the square itself where the origin does not matter).
    slots : tuple of OptionSlots
        Under ``choose_die`` one per die; under ``choose_move`` one, the die's roll.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> dp = DecisionProcess.build(Board(10, {3: 8}), Rules(choose_die=(2, 3)))
    >>> ranks, v, rounds = dp.solve_turns()
    >>> round(float(v[dp.starts[0]]), 6), int(dp.live.sum()), dp.n_states
    (3.458333, 30, 30)
    """

    board: Board
    rules: Rules
    shape: tuple[int, ...]
    square: np.ndarray
    sixes: np.ndarray
    origin: np.ndarray
    slots: tuple[OptionSlots, ...]

    @property
    def n_states(self) -> int:
        """Decision states (the finish, index ``n_states``, is not one)."""
        return int(self.square.size)

    @property
    def n_options(self) -> int:
        """Options per state: the dice, or the die's values."""
        return len(self.rules.options)

    @property
    def starts(self) -> np.ndarray:
        """The index of the turn-start state of each square ``0..N-1``."""
        n, n_o = self.shape[1], self.shape[2]
        sq = np.arange(n)
        return sq * n_o + (sq if n_o > 1 else 0)

    @cached_property
    def live(self) -> np.ndarray:
        """Which states a turn can reach, whatever is chosen (a read-only mask).

        Every state but, under ``on_cap="forfeit"``, the mid-turn states
        whose square no run of sixes from their origin reaches (most of the
        ``N`` origins of each square): a turn begins on a turn-start state,
        and only a bonus or entering roll leads anywhere else.
        """
        live = np.zeros(self.n_states, dtype=bool)
        if self.shape[2] == 1:
            live[:] = True
        else:
            frontier = self.starts
            live[frontier] = True
            for _ in range(self.shape[0]):  # every bonus roll goes one level up
                nxt = [s.target[frontier][(s.prob[frontier] > 0) & s.cont[frontier]] for s in self.slots]
                frontier = np.unique(np.concatenate(nxt))
                frontier = frontier[~live[frontier]]
                if not frontier.size:
                    break
                live[frontier] = True
        live.setflags(write=False)
        return live

    @cached_property
    def _major(self) -> np.ndarray:
        """The states in square-major order (square, then level, then origin): the order of the solves."""
        return np.lexsort((self.origin, self.sixes, self.square))

    @classmethod
    def build(cls, board: Board, rules: Rules) -> DecisionProcess:
        """Every option's outcome from every decision state, read from ``roll_slots``.

        Raises
        ------
        PolicyError
            For rules without a choice.
        LimitError
            When the tables would pass the memory limit (under ``forfeit``
            they hold ``levels * N * N`` states).
        """
        if not rules.choice:
            raise PolicyError('these rules give the mover no choice (docs/rules.md, "Choices")')
        rules.check_board(board)
        full = decision_shape(board, rules)
        levels, n, n_o = full[:3]
        dice = rules.choose_die or (rules.die,)
        check_memory(
            50.0 * levels * n * n_o * sum(len(d.values) for d in dice),
            "the decision process of a choice rule"
            + (" (levels x squares x origins under forfeit)" if n_o > 1 else ""),
        )
        lv, sq, org = (a.ravel() for a in np.meshgrid(np.arange(levels), np.arange(n), np.arange(n_o), indexing="ij"))
        origin = org if n_o > 1 else sq
        itype = index_dtype(n + 2 * max(d.top for d in dice) + 2)
        dest = board.destination().astype(itype)
        no_cap = rules.max_sixes is None
        nxt_level = np.minimum(lv + 1, levels - 1) if not no_cap else np.ones_like(lv)
        mid_base = nxt_level[:, None] * n * n_o + (org[:, None] if n_o > 1 else 0)
        slots = []
        for o in range(len(dice)):
            s = roll_slots(board, rules.option_rules(o), sq, lv, origin, dest=dest)
            square = s.square.astype(np.int64)
            start = square * n_o + (square if n_o > 1 else 0)
            target = np.where(s.cont, mid_base + square * n_o, start)
            target[square >= n] = lv.size  # the finish
            cost = np.where(s.cont, 0.0, 1.0)
            slots.append(OptionSlots(s.prob, square, s.cont, s.landing, target, cost))
        return cls(board, rules, full[:3], sq, lv, origin, tuple(slots))

    # ------------------------------------------------------------ the law
    def move_law(self, ranks: np.ndarray, rows: Any = slice(None)) -> np.ndarray:
        """Under ``choose_move``: each state's chance of moving each value when choosing by ``ranks``.

        ``ranks`` has one row per state of ``rows``. With ``k`` dice the value
        in place ``r`` of the order is moved when every die shows a value in
        place ``r`` or later and not every one shows a later one:
        ``T_r**k - T_(r+1)**k``.

        Examples
        --------
        >>> from snlmarkov import Board, Rules
        >>> dp = DecisionProcess.build(Board(10), Rules(choose_move=2, die=2))
        >>> dp.move_law(np.array([[1, 0]]), rows=[0]).tolist()  # the 2 first: moved unless both show 1
        [[0.25, 0.75]]
        """
        p = self.slots[0].prob[rows]
        k = int(self.rules.choose_move or 1)
        order = np.argsort(ranks, axis=1, kind="stable")  # columns, first choice first
        tail = np.cumsum(np.take_along_axis(p, order, axis=1)[:, ::-1], axis=1)[:, ::-1]  # T_r
        tail = np.minimum(tail, 1.0)
        nxt = np.concatenate([tail[:, 1:], np.zeros((tail.shape[0], 1))], axis=1)
        law = np.empty_like(tail)
        np.put_along_axis(law, order, tail**k - nxt**k, axis=1)
        return law

    def weights(
        self, ranks: np.ndarray | None, allowed: np.ndarray | None = None, rows: Any = None
    ) -> list[np.ndarray]:
        """Per slot table, the chance of each slot from each state (of ``rows``, default all) under ``ranks``.

        ``ranks`` has one row per state of ``rows``. ``None`` chooses
        uniformly among the ``allowed`` dice (every die by default), or under
        ``choose_move`` moves the first die rolled.
        """
        sel = slice(None) if rows is None else rows
        if self.rules.choice == "move":
            return [self.slots[0].prob[sel] if ranks is None else self.move_law(ranks, sel)]
        probs = [s.prob[sel] for s in self.slots]
        m = probs[0].shape[0]
        if ranks is None:
            allowed = np.ones((m, self.n_options), dtype=bool) if allowed is None else allowed
            w = allowed / np.maximum(allowed.sum(axis=1, keepdims=True), 1)
            return [w[:, o : o + 1] * p for o, p in enumerate(probs)]
        pick = np.argmin(ranks, axis=1)
        return [np.where((pick == o)[:, None], p, 0.0) for o, p in enumerate(probs)]

    def _edges(
        self, weights: list[np.ndarray] | None, rows: np.ndarray, ranks: np.ndarray | None = None
    ) -> tuple[np.ndarray, ...]:
        """``(state, target, prob, ends)`` of every slot with a chance, from the states ``rows`` (indices).

        ``weights`` as :meth:`weights` gives them for ``rows``; under
        ``choose_die`` with ``ranks`` (one row per state of ``rows``) and no
        weights, each state's chosen die is read directly.
        """
        r_l, t_l, p_l, c_l = [], [], [], []
        if weights is None:
            if ranks is None:
                raise ValueError("_edges needs weights or ranks")
            pick = np.argmin(ranks, axis=1)
            for o, s in enumerate(self.slots):
                at = rows[pick == o]
                prob = s.prob[at]
                keep = prob > 0
                r_l.append(np.broadcast_to(at[:, None], keep.shape)[keep])
                t_l.append(s.target[at][keep])
                p_l.append(prob[keep])
                c_l.append(s.cost[at][keep])
        else:
            for s, w in zip(self.slots, weights):
                keep = w > 0
                r_l.append(np.broadcast_to(rows[:, None], keep.shape)[keep])
                t_l.append(s.target[rows][keep])
                p_l.append(w[keep])
                c_l.append(s.cost[rows][keep])
        r, t, p, c = (np.concatenate(a) for a in (r_l, t_l, p_l, c_l))
        return r, t, p, c * p

    def _edges_of(
        self, ranks: np.ndarray | None, allowed: np.ndarray | None, rows: np.ndarray
    ) -> tuple[np.ndarray, ...]:
        """:meth:`_edges` of playing ``ranks`` (rows of ``rows``; ``None``: uniform over ``allowed``)."""
        if ranks is not None and self.rules.choice == "die":
            return self._edges(None, rows, ranks)
        return self._edges(self.weights(ranks, allowed, rows), rows)

    @cached_property
    def _q_parts(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per slot table ``(prob, target, end chance)``, a slot with no chance pointing at the finish."""
        n_s = self.n_states
        return [(s.prob, np.where(s.prob > 0, s.target, n_s), np.sum(s.prob * s.cost, axis=1)) for s in self.slots]

    # --------------------------------------------------------- evaluation
    def evaluate(
        self, ranks: np.ndarray | None, good: np.ndarray | None = None, allowed: np.ndarray | None = None
    ) -> np.ndarray:
        """Expected turns to the finish from every decision state under ``ranks`` (one exact sparse solve).

        ``inf`` where the policy does not finish surely. ``good`` (the first
        result of :meth:`good_states`) states where the policy is known to
        finish surely: the solve is then restricted to them, and a chain that
        leaves them is a :class:`ModelError`. The states a turn never reaches
        (:attr:`live`) are filled level by level from the solve.

        Cost: one sparse LU of the live states' system in square-major order
        (:class:`~snlmarkov.chain.solve.BlockLU`).
        """
        n_s = self.n_states
        live = self.live
        rows = np.flatnonzero(live if good is None else live & good)
        sel_ranks = None if ranks is None else np.asarray(ranks)[rows]
        sel_allowed = None if allowed is None else allowed[rows]
        r, t, p, c = self._edges_of(sel_ranks, sel_allowed, rows)
        inside = np.zeros(n_s + 1, dtype=bool)
        inside[rows] = True
        inside[n_s] = True
        if not inside[t].all():
            if good is not None:
                raise ModelError("a policy's chain left the states it can finish from")
        if good is None:
            ok = _finishing(n_s, r, t)
            keep = ok[r]
            r, t, p, c = r[keep], t[keep], p[keep], c[keep]
            inside[:n_s] = ok
        v = np.full(n_s, np.inf)
        if r.size:
            v = _solve_turns(n_s, self._major, inside[:n_s], r, t, p, c)
        if not live.all():
            v = self._fill(v, None if ranks is None else np.asarray(ranks), allowed)[1]
        return v

    def q_values(self, v: np.ndarray, rows: Any = slice(None)) -> np.ndarray:
        """Each option's expected turns from each state (of ``rows``), if chosen now and ``v`` followed after.

        Under ``choose_move``: the value of moving each value of the die
        (a value the die cannot show there, the top at the cap under
        ``redeal``, still gets one).
        """
        ext = np.append(v, 0.0)
        if self.rules.choice == "die":
            cols = []
            for prob, target, ends in self._q_parts:
                with np.errstate(invalid="ignore"):  # a slot with no chance points at the finish (0)
                    cols.append(ends[rows] + np.sum(prob[rows] * ext[target[rows]], axis=1))
            return np.stack(cols, axis=1)
        s = self.slots[0]
        return s.cost[rows] + ext[s.target[rows]]

    def _best(self, q: np.ndarray, rows: Any, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(ranks, values)`` of the best choice at ``rows`` given the options' values ``q`` there."""
        if self.rules.choice == "die":
            if allowed is not None:
                q = np.where(allowed, q, np.inf)
            ranks = _ranks_of(np.where(np.isnan(q), np.inf, q))
            return ranks, q.min(axis=1)
        ranks = _ranks_of(np.where(np.isnan(q), np.inf, q))
        return ranks, self._move_value(q, ranks, rows)

    def _move_value(self, q: np.ndarray, ranks: np.ndarray, rows: Any) -> np.ndarray:
        """Under ``choose_move``: the value of choosing by ``ranks`` when moving each value is worth ``q``."""
        law = self.move_law(ranks, rows)
        with np.errstate(invalid="ignore"):
            return np.sum(np.where(law > 0, law * q, 0.0), axis=1)

    def _fill(
        self, v: np.ndarray, ranks: np.ndarray | None, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The states no turn reaches, from the top level down: ``(ranks, values)`` for every state.

        Their bonus rolls lead one level up and every other roll to a turn
        start (:attr:`live`), so one pass per level is exact. With ``ranks``
        the values are those of playing ``ranks`` there; with ``None`` the
        best choice is made (and returned in the ranks).
        """
        v = v.copy()
        out = np.zeros((self.n_states, self.n_options), dtype=np.int16) if ranks is None else np.array(ranks)
        if ranks is None:
            out[:] = np.arange(self.n_options, dtype=np.int16)
        for lev in range(self.shape[0] - 1, -1, -1):
            at = np.flatnonzero(~self.live & (self.sixes == lev))
            if not at.size:
                continue
            q = self.q_values(v, at)
            if ranks is None:
                out[at], v[at] = self._best(q, at, None if allowed is None else allowed[at])
            elif self.rules.choice == "die":
                v[at] = q[np.arange(at.size), np.argmin(out[at], axis=1)]
            else:
                v[at] = self._move_value(q, out[at], at)
        return out, v

    def good_states(self) -> tuple[np.ndarray, np.ndarray]:
        """``(good, allowed)``: the states from which some policy finishes surely, and the dice it may use.

        A die with a chance of falling into a trap (a state no choice brings
        home) is pruned, until nothing changes; under ``choose_move`` a state
        with a value that leads into a trap is a trap (every die may show
        it). Only the :attr:`live` states are searched (the others are never
        good; their choices come from :meth:`evaluate`'s fill).
        """
        n_s = self.n_states
        allowed = np.ones((n_s, len(self.slots)), dtype=bool)
        rows = np.flatnonzero(self.live)
        probs = [s.prob[rows] > 0 for s in self.slots]
        targets = [s.target[rows] for s in self.slots]
        while True:
            r_l, t_l = [], []
            for o in range(len(self.slots)):
                keep = probs[o] & allowed[rows, o : o + 1]
                r_l.append(np.broadcast_to(rows[:, None], keep.shape)[keep])
                t_l.append(targets[o][keep])
            r, t = np.concatenate(r_l), np.concatenate(t_l)
            back = sp.csr_matrix((np.ones(r.size), (t, r)), shape=(n_s + 1, n_s + 1))
            good = np.zeros(n_s + 1, dtype=bool)
            good[breadth_first_order(back, n_s, directed=True, return_predecessors=False)] = True
            changed = False
            for o in range(len(self.slots)):
                bad = (probs[o] & ~good[targets[o]]).any(axis=1) & allowed[rows, o]
                if bad.any():
                    allowed[rows[bad], o] = False
                    changed = True
            if not changed:
                return allowed.any(axis=1) & good[:n_s], allowed

    def refuse_traps(self, good: np.ndarray) -> None:
        """Refuse a board where the token, from 0, cannot be brought home surely with any choice."""
        start = int(self.starts[0])
        if good[start]:
            return
        raise UnwinnableBoardError(
            f"the finish {self.board.size} cannot be reached surely from square 0 with any choice: "
            "some roll always leads to a square the finish cannot be reached from",
            0,
        )

    # -------------------------------------------------------------- solve
    def solve_turns(self, max_iter: int = 200) -> tuple[np.ndarray, np.ndarray, int]:
        """The policy of fewest expected turns: ``(ranks, values, rounds)``, by policy iteration.

        Starts from choosing uniformly among the allowed dice (or the plain
        die, under ``choose_move``): a proper policy. Each round orders every
        live state's options by their value under the last exact solve,
        keeping the current choice unless another is better by more than
        ``IMPROVE_TOL``; it ends when nothing changes, and the values are the
        exact solve of the policy returned. The states no turn reaches get
        their best choice from those values (:meth:`_fill`).

        Raises
        ------
        UnwinnableBoardError
            If from square 0 no choice brings the token home surely.
        ModelError
            If the rounds do not settle within ``max_iter``.
        """
        good, allowed = self.good_states()
        self.refuse_traps(good)
        rows = np.flatnonzero(self.live)
        die = self.rules.choice == "die"
        v = self._solve_live(None, good, allowed)
        ranks = np.zeros((self.n_states, self.n_options), dtype=np.int16)
        ranks[:] = np.arange(self.n_options, dtype=np.int16)
        for it in range(1, max_iter + 1):
            q = self.q_values(v, rows)
            if die:
                q = np.where(allowed[rows], q, np.inf)
            new = _ranks_of(np.where(np.isfinite(q), q, np.inf))
            if it > 1:
                old = ranks[rows]
                keep = ~good[rows] | _still_best(q, old, die)
                new[keep] = old[keep]
                if np.array_equal(new, old):
                    full, v = self._fill(v, None, allowed)
                    full[rows] = ranks[rows]
                    return full, v, it
            ranks[rows] = new
            v = self._solve_live(ranks, good)
        raise ModelError(f"policy iteration did not settle in {max_iter} rounds")

    def _solve_live(self, ranks: np.ndarray | None, good: np.ndarray, allowed: np.ndarray | None = None) -> np.ndarray:
        """The values at the live good states under ``ranks`` (``inf`` elsewhere): no fill."""
        rows = np.flatnonzero(self.live & good)
        r, t, p, c = self._edges_of(
            None if ranks is None else ranks[rows], None if allowed is None else allowed[rows], rows
        )
        inside = np.zeros(self.n_states, dtype=bool)
        inside[rows] = True
        if not np.all((t == self.n_states) | inside[np.minimum(t, self.n_states - 1)]):
            raise ModelError("a policy's chain left the states it can finish from")
        return _solve_turns(self.n_states, self._major, inside, r, t, p, c)

    def solve_within(self, turns: int) -> tuple[list[np.ndarray], np.ndarray]:
        """The largest chance of finishing within ``turns`` turns: the orders by turns left, and the values.

        Finite-horizon dynamic programming over turns, on the :attr:`live`
        states. Inside a turn the levels of sixes are solved from the cap
        down; without a cap the in-turn states are swept until a run of
        sixes that long has a chance below ``NO_CAP_MASS``, or until a sweep
        changes nothing (a fixed point: the rest would repeat it). The states no
        turn reaches take the order of the turn start on their square.
        ``stages[t - 1]`` is the order with ``t`` turns left.

        Raises
        ------
        UnwinnableBoardError
            If from square 0 no choice brings the token home surely (as for
            every analysis of one token).
        LimitError
            When the tables of every turn left would pass the memory limit.
        """
        check_memory(  # a table per turn left, and its copy in the policy of that stage
            4.0 * self.n_states * self.n_options * turns + 8.0 * self.n_states * 4,
            f"the choices of {turns:,} turns left (one table per turn)",
        )
        self.refuse_traps(self.good_states()[0])
        n_s = self.n_states
        levels = self.shape[0]
        no_cap = self.rules.max_sixes is None
        dice = self.rules.choose_die or (self.rules.die,)
        sweeps = max(no_cap_depth(d) for d in dice) if (no_cap and self.rules.bonus_on_six) else 2
        live = self.live
        if no_cap:  # the in-turn states first (swept), then the turn starts
            order = [np.flatnonzero(live & (self.sixes >= 1)), np.flatnonzero(live & (self.sixes == 0))]
            repeat = [sweeps, 1]
        else:
            order = [np.flatnonzero(live & (self.sixes == lev)) for lev in range(levels - 1, -1, -1)]
            repeat = [1] * len(order)
        dead = np.flatnonzero(~live)
        dead_start = self.starts[self.square[dead]]
        w_prev = np.zeros(n_s + 1)
        w_prev[n_s] = 1.0
        stages: list[np.ndarray] = []
        for _ in range(turns):
            w = np.zeros(n_s + 1)
            w[n_s] = 1.0
            ranks = np.zeros((n_s, self.n_options), dtype=np.int16)
            for at, times in zip(order, repeat):
                for _ in range(times):
                    q = self._q_within(w, w_prev, at)
                    r = _ranks_of(-q)
                    best = q.max(axis=1) if self.rules.choice == "die" else self._move_value(q, r, at)
                    settled = np.array_equal(w[at], best)  # a fixed point: more sweeps change nothing
                    w[at] = best
                    ranks[at] = r
                    if settled:
                        break
            ranks[dead] = ranks[dead_start]
            ranks.setflags(write=False)
            stages.append(ranks)
            w_prev = w
        return stages, w_prev[:n_s]

    def _q_within(self, w: np.ndarray, w_prev: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Chance of finishing in time by option: a slot that goes on reads ``w``, one that ends the turn ``w_prev``."""

        def value(s: OptionSlots) -> np.ndarray:
            tgt = s.target[rows]
            return np.where(s.cont[rows], w[tgt], w_prev[tgt])

        if self.rules.choice == "die":
            return np.stack([np.sum(s.prob[rows] * value(s), axis=1) for s in self.slots], axis=1)
        return value(self.slots[0])


def _finishing(n_s: int, r: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The states of the edges ``r -> t`` (finish ``n_s``) from which the chain finishes surely."""
    back = sp.csr_matrix((np.ones(r.size), (t, r)), shape=(n_s + 1, n_s + 1))
    can = np.zeros(n_s + 1, dtype=bool)
    can[breadth_first_order(back, n_s, directed=True, return_predecessors=False)] = True
    present = np.zeros(n_s + 1, dtype=bool)
    present[r] = True
    stuck = np.flatnonzero(present & ~can)
    if not stuck.size:
        return can[:n_s] & present[:n_s]
    # whatever reaches a stuck state backwards may fall into it: one extra node pointing at them
    extra = sp.csr_matrix((np.ones(stuck.size), (np.full(stuck.size, n_s + 1), stuck)), shape=(n_s + 2, n_s + 2))
    both = (sp.csr_matrix((np.ones(r.size), (t, r)), shape=(n_s + 2, n_s + 2)) + extra).tocsr()
    doomed = np.zeros(n_s + 2, dtype=bool)
    doomed[breadth_first_order(both, n_s + 1, directed=True, return_predecessors=False)] = True
    return can[:n_s] & present[:n_s] & ~doomed[:n_s]


def _solve_turns(
    n_s: int, major: np.ndarray, inside: np.ndarray, r: np.ndarray, t: np.ndarray, p: np.ndarray, c: np.ndarray
) -> np.ndarray:
    """Solve ``v = c + P v`` on the states ``inside`` (edges ``r -> t`` of chance ``p``, the finish ``n_s``).

    The states are numbered in square-major order (``major``), where the
    system is nearly block triangular, and factorised by :class:`BlockLU`.
    """
    idx = major[inside[major]]
    pos = np.full(n_s + 1, -1, dtype=np.int64)
    pos[idx] = np.arange(idx.size)
    m = idx.size
    inner = t < n_s
    diag = np.arange(m)
    a = sp.csr_matrix(
        (
            np.concatenate([-p[inner], np.ones(m)]),
            (np.concatenate([pos[r[inner]], diag]), np.concatenate([pos[t[inner]], diag])),
        ),
        shape=(m, m),
    )
    a.sum_duplicates()
    rhs = np.bincount(pos[r], weights=c, minlength=m)
    v = np.full(n_s, np.inf)
    v[idx] = BlockLU(a).solve(rhs)
    if not np.all(np.isfinite(v[idx])):
        raise ModelError("a policy's chain could not be solved")
    return v


def _still_best(q: np.ndarray, ranks: np.ndarray, first_only: bool) -> np.ndarray:
    """Rows where the order ``ranks`` is no worse than the best by more than ``IMPROVE_TOL``."""
    scale = IMPROVE_TOL * np.maximum(1.0, np.abs(np.where(np.isfinite(q), q, 0.0)).max(axis=1))
    in_order = np.take_along_axis(q, np.argsort(ranks, axis=1, kind="stable"), axis=1)
    if first_only:
        return in_order[:, 0] <= q.min(axis=1) + scale
    with np.errstate(invalid="ignore"):
        steps = np.diff(in_order, axis=1)
    return np.all((steps >= -scale[:, None]) | ~np.isfinite(steps), axis=1)


def _ranks_of(q: np.ndarray) -> np.ndarray:
    """Ranks ordering each row by ``q`` ascending (ties: the first option)."""
    n_opt = q.shape[1]
    order = np.argsort(q, axis=1, kind="stable")  # stable: ties keep the options' order
    out = np.empty(q.shape, dtype=np.int16)
    np.put_along_axis(out, order, np.broadcast_to(np.arange(n_opt, dtype=np.int16), q.shape), axis=1)
    return out


#: The decision processes kept by ``_process``: at most this many, and this many decision states in all.
CACHE_PROCESSES, CACHE_STATES = 16, 2_000_000


class _ProcessCache:
    """``(board, rules) -> DecisionProcess``, the most recently used first, bounded in count and in states.

    A process of 10^5 squares holds hundreds of MB: the cache keeps small
    ones freely and large ones only while they fit in ``CACHE_STATES``
    decision states (the last one asked for is always kept).
    """

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[Board, Rules], DecisionProcess] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, board: Board, rules: Rules) -> DecisionProcess:
        key = (board, rules)
        with self._lock:
            dp = self._items.get(key)
            if dp is not None:
                self._items.move_to_end(key)
                return dp
        dp = DecisionProcess.build(board, rules)
        with self._lock:
            self._items[key] = dp
            self._items.move_to_end(key)
            while len(self._items) > 1 and (
                len(self._items) > CACHE_PROCESSES or sum(d.n_states for d in self._items.values()) > CACHE_STATES
            ):
                self._items.popitem(last=False)
        return dp

    def cache_clear(self) -> None:
        """Forget every process."""
        with self._lock:
            self._items.clear()


#: The decision process of ``(board, rules)``, cached (:class:`_ProcessCache`).
_process = _ProcessCache()


def resolve(policy: Policy, board: Board, rules: Rules) -> PolicyTable:
    """``policy`` as a table for ``board`` under ``rules``, a greedy one read from the exact kernel.

    A greedy policy needs how far each option takes the token from each
    decision state: here the mean square after the roll (``choose_die``) or
    the square after moving each value (``choose_move``), jumps applied and
    the finish furthest, read from the decision process.

    Raises
    ------
    PolicyError
        If ``policy`` is not a :class:`~snlmarkov.Policy` or does not fit.

    Examples
    --------
    >>> from snlmarkov import Board, Policy, Rules
    >>> t = resolve(Policy.greedy(), Board(10, {4: 9}), Rules(choose_die=(3, 4)))
    >>> t.die_index(0, 0, 0), t.die_index(5, 0, 5)  # from 0 the d4 (mean 3.75), on 5 the d4 too
    (1, 1)
    """
    if not isinstance(policy, Policy):
        raise PolicyError(f"policy must be a Policy; got {type(policy).__name__}")

    def furthest() -> np.ndarray:
        dp = _process(board, rules)
        n = board.size
        if rules.choice == "die":
            far = np.stack([np.sum(s.prob * np.minimum(s.square, n), axis=1) for s in dp.slots], axis=1)
        else:
            far = np.minimum(dp.slots[0].square, n).astype(float)
        return far.reshape(decision_shape(board, rules))

    return policy.resolve(board, rules, furthest=furthest)


def policy_turn_rows(board: Board, rules: Rules, table: PolicyTable, *, landings: bool = False) -> tuple[Any, ...]:
    """The turn-level rows of one token under a policy: ``(matrix, rolls, (rows, cols, landings))``.

    Each turn is followed roll by roll from every square, as the plain turn
    model does: at each in-turn state the policy gives the chance of each
    slot (:meth:`DecisionProcess.weights`), a turn-ending slot writes the
    square where the turn ends, a six goes on to the next in-turn state.
    Without a cap, runs of sixes rarer than ``NO_CAP_MASS`` are cut and their
    mass stays where the turn began. The landings are empty unless asked for.

    Examples
    --------
    >>> from snlmarkov import Board, Policy, Rules
    >>> board, rules = Board(6), Rules(choose_die=(2, 3), bonus_on_six=False)
    >>> table = resolve(Policy.fixed(3), board, rules)
    >>> m, rolls, _ = policy_turn_rows(board, rules, table)
    >>> m[0].toarray().round(3).tolist(), rolls.tolist()
    ([[0.0, 0.333, 0.333, 0.333, 0.0, 0.0, 0.0]], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0])
    """
    n = board.size
    dp = _process(board, rules)
    weights = dp.weights(table.ranks.reshape(dp.n_states, -1))
    dice = rules.choose_die or (rules.die,)
    if rules.max_sixes is None:
        depth = max(no_cap_depth(d) for d in dice) if rules.bonus_on_six else 2
    else:
        depth = int(rules.max_sixes) + 1
    chained = chain_landings(board) if landings else None
    ends: list[tuple[np.ndarray, ...]] = []
    lands: list[tuple[np.ndarray, ...]] = []
    roll_counts = np.zeros(n + 1)
    state, start_row, weight = dp.starts, np.arange(n), np.ones(n)
    for _ in range(depth):
        roll_counts[:n] += np.bincount(start_row, weights=weight, minlength=n)
        go_state, go_row, go_w = [], [], []
        for s, w_all in zip(dp.slots, weights):
            w = weight[:, None] * w_all[state]
            sq, cont = s.square[state], s.cont[state]
            end = ~cont & (w > 0)
            ends.append((np.broadcast_to(start_row[:, None], end.shape)[end], np.minimum(sq[end], n), w[end]))
            if landings:
                lands.append(_landed(board, chained, s.landing[state], sq, w, start_row))
            r, c = np.nonzero(cont & (w > 0))
            go_state.append(s.target[state][r, c])
            go_row.append(start_row[r])
            go_w.append(w[r, c])
        state, start_row, weight = (np.concatenate(x) for x in (go_state, go_row, go_w))
        if not state.size:
            break
    rows, cols, vals = (np.concatenate(x) for x in zip(*ends))
    deficit = 1.0 - np.bincount(rows, weights=vals, minlength=n + 1)[:n]
    back = np.flatnonzero(deficit > 0)  # the cut runs of sixes stay where the turn began
    matrix = sp.csr_matrix(
        (
            np.concatenate([vals, deficit[back], [1.0]]),
            (np.concatenate([rows, back, [n]]), np.concatenate([cols, back, [n]])),
        ),
        shape=(n + 1, n + 1),
    )
    matrix.sum_duplicates()
    if lands:
        land = tuple(np.concatenate(x) for x in zip(*lands))
    else:
        land = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    return matrix, roll_counts, land


def _landed(
    board: Board, chained: Any, landing: np.ndarray, square: np.ndarray, w: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, ...]:
    """``(rows, squares, weights)`` of every landing of one roll's slots (every jump of a chain)."""
    hit = (landing >= 0) & (w > 0)
    if chained:
        at, sq_l = all_landings(board, np.where(hit, landing, -1).ravel(), square.ravel(), chained)
        return np.repeat(rows, landing.shape[1])[at], sq_l, w.ravel()[at]
    return np.broadcast_to(rows[:, None], hit.shape)[hit], landing[hit], w[hit]


def policy_model(board: Board, rules: Rules, policy: Policy, *, check: bool = True) -> TransitionModel:
    """The exact turn-level chain of one token that plays ``policy`` under a rule set with a choice.

    The same kind of model as :func:`~snlmarkov.turn_model` (row ``p``: where
    a turn begun on ``p`` ends), so every single-token analysis reads it.
    A policy that depends on other tokens' squares (a race policy) is refused.

    Raises
    ------
    PolicyError
        If the policy does not fit the board and rules, or reads other tokens.
    UnwinnableBoardError
        If, playing the policy, the token can reach a square it never finishes from.

    Examples
    --------
    >>> from snlmarkov import Board, Policy, Rules
    >>> m = policy_model(Board(10), Rules(choose_die=(4, 6)), Policy.fixed(6))
    >>> m.matrix.shape, round(float(m.matrix[0, 6]), 4)  # a 6 from 0: a six, then one more roll
    ((11, 11), 0.0)
    """
    table = resolve(policy, board, rules)
    if table.others:
        raise PolicyError(
            f"this policy reads {table.others} other token(s)' squares: a race policy, for race() and Odds(), "
            "not for one token's chain"
        )
    n = board.size
    matrix, rolls, _ = policy_turn_rows(board, rules, table)
    landings = functools.partial(_policy_landings, board, rules, table)
    model = TransitionModel(
        kind="turn",
        board=board,
        rules=rules,
        matrix=matrix.tocsr(),
        squares=np.arange(n + 1),
        absorbing=n,
        start=0,
        turn_start=np.ones(n + 1, dtype=bool),
        rolls=rolls,
        _landings=landings,
    )
    if check:
        _check_winnable(board, model)
    return model


def _policy_landings(board: Board, rules: Rules, table: PolicyTable) -> sp.coo_matrix:
    n = board.size
    _, _, (r, c, v) = policy_turn_rows(board, rules, table, landings=True)
    return sp.coo_matrix((v, (r, c)), shape=(n + 1, n + 1))


def policy_hit_probabilities(board: Board, rules: Rules, policy: Policy) -> np.ndarray:
    """Probability that a roll ever lands on each square ``0..N`` in one game, playing ``policy``.

    For each square ``j``: ``h(s) = sum over outcomes of p * (1 if the roll lands
    on j, else h(next))`` on the roll-level chain the policy induces, one
    sparse solve per square landed on (every square a chain of jumps acts on
    counts as landed on). Meant for boards of up to a few thousand squares:
    beyond ``MAX_POLICY_HIT_WORK`` states x squares it is refused.

    Raises
    ------
    LimitError
        When the states the policy reaches times the squares pass ``MAX_POLICY_HIT_WORK``.

    Examples
    --------
    >>> from snlmarkov import Board, Policy, Rules
    >>> h = policy_hit_probabilities(Board(6), Rules(choose_die=(2, 3)), Policy.fixed(2))
    >>> round(float(h[1]), 6), round(float(h[6]), 9)
    (0.5, 1.0)
    """
    table = resolve(policy, board, rules)
    dp = _process(board, rules)
    n, n_s = board.size, dp.n_states
    flat = table.ranks.reshape(-1, table.ranks.shape[-1])
    ids = np.arange(n_s)
    rows_l, tgt_l, prob_l = [], [], []
    weights = dp.weights(flat)
    for s, w in zip(dp.slots, weights):
        keep = w > 0
        rows_l.append(np.broadcast_to(ids[:, None], w.shape)[keep])
        tgt_l.append(s.target[keep])
        prob_l.append(w[keep])
    rows, tgt, prob = (np.concatenate(a) for a in (rows_l, tgt_l, prob_l))
    # only the states the policy reaches from square 0: elsewhere it may never finish
    start = int(dp.starts[0])
    graph = sp.csr_matrix((np.ones(rows.size), (rows, tgt)), shape=(n_s + 1, n_s + 1))
    reach = np.zeros(n_s + 1, dtype=bool)
    reach[breadth_first_order(graph, start, directed=True, return_predecessors=False)] = True
    reach[n_s] = False
    idx = np.flatnonzero(reach)
    if idx.size * (n + 1) > MAX_POLICY_HIT_WORK:
        raise LimitError(
            f"the hit probabilities under a policy solve one system of the {idx.size:,} states the policy reaches "
            f"for each of the {n + 1:,} squares: over {MAX_POLICY_HIT_WORK:,} states x squares "
            "(snlmarkov.chain.choice.MAX_POLICY_HIT_WORK); the landings (one pass) answer on any board"
        )
    pos = np.full(n_s + 1, -1, dtype=np.int64)
    pos[idx] = np.arange(idx.size)
    chained = chain_landings(board)
    hit_e, hit_sq, offset = [], [], 0
    for s, w in zip(dp.slots, weights):
        lnd = np.where((w > 0) & (s.landing >= 0) & reach[:n_s, None], s.landing, -1)
        at, sq = all_landings(board, lnd[w > 0], s.square[w > 0], chained)
        hit_e.append(at + offset)
        hit_sq.append(sq)
        offset += int(np.count_nonzero(w > 0))
    he, hsq = np.concatenate(hit_e), np.concatenate(hit_sq)
    live = reach[rows]
    inner = live & (tgt < n_s)
    if idx.size <= DENSE_HIT_STATES:
        return _hits_dense(n, idx.size, pos[start], pos[rows], np.where(inner, pos[tgt], -1), prob * live, he, hsq)
    eye = sp.identity(idx.size, format="csr")
    out = np.zeros(n + 1)
    for j in np.unique(hsq):
        landed = np.zeros(rows.size, dtype=bool)
        landed[he[hsq == j]] = True
        rhs = np.bincount(pos[rows[landed & live]], weights=prob[landed & live], minlength=idx.size)
        go = inner & ~landed
        a = (eye - sp.csr_matrix((prob[go], (pos[rows[go]], pos[tgt[go]])), shape=(idx.size, idx.size))).tocsc()
        out[j] = float(np.atleast_1d(spsolve(a, rhs))[pos[start]])
    return out


def _hits_dense(
    n: int, m: int, start: int, rows: np.ndarray, cols: np.ndarray, prob: np.ndarray, he: np.ndarray, hsq: np.ndarray
) -> np.ndarray:
    """:func:`policy_hit_probabilities` from one dense inverse of ``I - Q`` and a small update per square.

    ``rows -> cols`` (``-1``: the finish) are the edges of the chain of the
    ``m`` states reached, ``prob`` their chances; ``he`` the edges landing on
    the squares ``hsq``. Making the landings on ``j`` absorbing changes only
    the rows that can land there (``k`` of them), so by Woodbury's identity
    the chance from ``start`` costs ``O(m k + k^3)`` per square after the
    ``O(m^3)`` inverse.
    """
    inner = cols >= 0
    a = np.eye(m)
    np.add.at(a, (rows[inner], cols[inner]), -prob[inner])
    inv = np.linalg.inv(a)
    x0 = inv[start]
    out = np.zeros(n + 1)
    for j in np.unique(hsq):
        e = np.unique(he[hsq == j])  # the edges that land on j
        e = e[prob[e] > 0]
        src, at = np.unique(rows[e], return_inverse=True)
        b = np.bincount(at, weights=prob[e], minlength=src.size)
        keep = inner[e]
        vt = np.zeros((src.size, m))  # the entries of -Q those landings remove, by source row
        np.add.at(vt, (at[keep], cols[e][keep]), prob[e][keep])
        inv_u = inv[:, src]
        z = inv_u @ b
        small = np.eye(src.size) + vt @ inv_u
        out[j] = float(x0[src] @ b - x0[src] @ np.linalg.solve(small, vt @ z))
    return out

"""The bump race's value equations, solved once for every joint state.

For the joint chain of :mod:`snlmarkov.races.bump` (the square of every
racing token and the seat to move) every figure a state's odds need is a
*value*: a function ``v`` of the joint state with ``v = r + P v``, ``P`` one
turn of the chain and ``r`` what that turn pays (1 on reaching the finish
for a seat's chance of winning, 1 per turn for the expected turns left, 1
per new round for the rounds left). One backward turn is the adjoint of the
forward one (:class:`~snlmarkov.races.bump.JointMover`): the sparse turn
matrix, transposed, applied along the mover's axis of the value tensor,
after the bump has copied the value of ``bump_to`` onto the squares a
moving token would be bumped from.

A round (every seat once) maps the values with seat 0 to move onto
themselves: ``x = c + A x``. It is solved by BiCGSTAB with the round as its
operator (``A`` is never formed), far fewer rounds than running the chain
until its tail is gone; then one more backward round gives the values with
every other seat to move. Under last one standing a finishing token hands
over to the chain of one token fewer, whose values (for the same relative
seat order) are solved first; the single token's are the expected turns of
one player.

Values kept, per chain of ``m`` racing tokens (relabelled ``0..m-1`` in seat
order), for every seat to move and joint state:

- ``classic``: the chance each seat finishes first (the last from the
  others) and the expected turns left (the rounds left follow from these,
  :func:`rounds_from_turns`);
- ``last_one_standing``: the chance of every finishing order of the ``m``
  seats (the last from the others), and the same two expectations.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import SnlError
from .bump import JointMover

__all__ = ["ValueTable", "build_value_table", "rounds_from_turns", "SOLVE_RTOL"]

#: Columns of a value tensor transposed at a time (keeps the copy in cache).
_BLOCK = 2048

#: Relative residual the Krylov solver is asked for (the figures then agree with the forward chain to about 1e-13).
SOLVE_RTOL = 1e-14


@dataclass(frozen=True, eq=False)
class ChainValues:
    """Values of the chain of ``m`` racing tokens.

    ``values[j]`` has shape ``(len(names), n**m)``: row ``names.index(v)``
    is value ``v`` with relabelled seat ``j`` to move, the tensor's axes
    starting at seat ``j`` and going on in playing order.
    """

    m: int
    names: tuple[Any, ...]
    values: tuple[np.ndarray, ...] = field(repr=False)


@dataclass(frozen=True, eq=False)
class ValueTable:
    """Every joint state's values, for chains of ``1..players`` tokens (see the module)."""

    mover: JointMover = field(repr=False)
    mode: str
    players: int
    chains: dict[int, ChainValues] = field(repr=False)
    iterations: int


def _orders(m: int) -> list[tuple[int, ...]]:
    return list(itertools.permutations(range(m)))


class _Backward:
    """Backward turns of the joint chain (the adjoint of :meth:`JointMover.move`)."""

    def __init__(self, mover: JointMover) -> None:
        self.mover = mover
        self.step_t = sp.csr_matrix(mover.step.T)
        self.n = mover.n
        self._buffers: dict[int, np.ndarray] = {}

    def turn(self, nxt: np.ndarray, m: int, finish: np.ndarray, add_moved: np.ndarray) -> np.ndarray:
        """Values before one turn of the seat on axis 0, for ``b`` values.

        ``nxt``: ``(b, n**m)`` values after the turn, one row per value, the
        tensor's axes from the next seat on and the mover last (the layout
        :meth:`JointMover.move` returns); ``finish``: ``(b, n**(m-1))``
        values when the mover finishes, axes from the next seat;
        ``add_moved``: ``(b,)`` paid when the mover does not finish. Returns
        ``(b, n**m)`` with the mover's axis first. Per value: one transposed
        copy (in blocks, to stay in cache) and one sparse product, which
        writes the mover-first layout directly.
        """
        n = self.n
        width = n ** (m - 1)
        b = nxt.shape[0]
        out = np.empty((b, n * width))
        w = self._buffer(m)
        bumped = self.mover.bump and m > 1
        if bumped:
            _, row, col = self.mover._bump_table(m)
        for c in range(b):
            src = nxt[c].reshape(width, n)
            for lo in range(0, width, _BLOCK):
                w[:n, lo : lo + _BLOCK] = src[lo : lo + _BLOCK].T
            if add_moved[c]:
                w[:n] += add_moved[c]
            w[n] = finish[c]
            if bumped:
                w[row, col] = w[self.mover.bump_index, col]
            out[c] = (self.step_t @ w).reshape(-1)
        return out

    def _buffer(self, m: int) -> np.ndarray:
        if m not in self._buffers:
            self._buffers[m] = np.empty((self.n + 1, self.n ** (m - 1)))
        return self._buffers[m]


def _single_turns(mover: JointMover) -> np.ndarray:
    """Expected turns of one token from every resting square."""
    n = mover.n
    q = sp.csr_matrix(mover.step[:n].T)
    return spla.spsolve(sp.identity(n, format="csc") - q.tocsc(), np.ones(n))


def _solve_chain(
    back: _Backward,
    m: int,
    names: tuple[Any, ...],
    finish_of: Any,
    turn_pay: np.ndarray,
    wrap_pay: np.ndarray,
    maxiter: int,
) -> tuple[ChainValues, int]:
    """Solve the values ``names`` of the ``m``-token chain.

    ``finish_of(j)`` gives the ``(n**(m-1), len(names))`` values when seat
    ``j`` finishes; ``turn_pay`` is paid per turn, ``wrap_pay`` per turn of
    seat ``m-1`` that does not finish (play passes back to seat 0: a new
    round).
    """
    n = back.n
    size = n**m
    b = len(names)
    finishes = [finish_of(j) for j in range(m)]

    def sweep(x: np.ndarray, constant: bool) -> list[np.ndarray]:
        """Backward round from ``x`` (seat 0 to move next round): values with each seat to move.

        ``constant`` adds what the turns pay; without it the round is the linear map ``A``.
        """
        out: list[np.ndarray] = [np.empty(0)] * m
        cur = x
        rows = x.shape[0]
        zero_fin, zero_pay = np.zeros((rows, n ** (m - 1))), np.zeros(rows)
        for j in range(m - 1, -1, -1):
            if constant:
                fin, pay = finishes[j], (wrap_pay if j == m - 1 else 0.0 * wrap_pay)
            else:
                fin, pay = zero_fin, zero_pay
            cur = back.turn(cur, m, fin, pay)
            if constant:
                cur += turn_pay[:, None]
            out[j] = cur
        return out

    c = sweep(np.zeros((b, size)), True)[0]
    rounds = [0]

    def apply(v: np.ndarray) -> np.ndarray:
        """``(I - A) v`` for a batch of value tensors (one backward round)."""
        rounds[0] += 1
        return v - sweep(v, False)[0]

    solved = _bicgstab(apply, c, maxiter)
    if solved is None:
        raise SnlError(f"the value equations of the {m}-token bump chain did not converge in {maxiter} steps")
    iterations = rounds[0]
    values = sweep(solved, True)
    return ChainValues(m=m, names=names, values=tuple(values)), iterations


def _dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot products (no BLAS threads: they only contend on a busy machine)."""
    return np.einsum("ij,ij->i", a, b)


def _bicgstab(apply: Any, c: np.ndarray, maxiter: int) -> np.ndarray | None:
    """Solve ``apply(x) = c`` for every row of ``c`` at once by BiCGSTAB (van der Vorst, 1992).

    Each row has its own scalars; a row that has converged (residual below
    ``SOLVE_RTOL`` times its right-hand side) is left as it is. Two
    applications of the operator per step and no growing basis: restarted
    GMRES stalls on these systems, and its orthogonalisation costs more than
    the rounds. Returns None if some row has not converged in ``maxiter`` steps.
    """
    x = c.copy()
    r = c - apply(x)
    r_hat = r.copy()
    goal = SOLVE_RTOL * np.sqrt(_dots(c, c))
    active = np.sqrt(_dots(r, r)) > goal
    rho = alpha = omega = np.ones(c.shape[0])
    v = np.zeros_like(c)
    p = np.zeros_like(c)
    s = np.empty_like(c)
    tmp = np.empty_like(c)
    for _ in range(maxiter):
        if not active.any():
            return x
        rho_new = _dots(r_hat, r)
        stuck = active & (np.abs(rho_new) < 1e-300)
        if stuck.any():  # breakdown: restart those rows from their residual
            r_hat[stuck] = r[stuck]
            rho_new[stuck] = _dots(r[stuck], r[stuck])
            p[stuck] = 0.0
            v[stuck] = 0.0
        beta = np.where(active, (rho_new / np.where(rho == 0, 1, rho)) * (alpha / np.where(omega == 0, 1, omega)), 0.0)
        np.multiply(v, omega[:, None], out=tmp)  # p = r + beta (p - omega v), in place
        p -= tmp
        p *= beta[:, None]
        p += r
        v = apply(p)
        denom = _dots(r_hat, v)
        alpha = np.where(active & (denom != 0), rho_new / np.where(denom == 0, 1, denom), 0.0)
        np.multiply(v, alpha[:, None], out=s)  # s = r - alpha v
        np.subtract(r, s, out=s)
        t = apply(s)
        tt = _dots(t, t)
        omega = np.where(active & (tt > 0), _dots(t, s) / np.where(tt == 0, 1, tt), 0.0)
        np.multiply(p, alpha[:, None], out=tmp)  # x += alpha p + omega s
        x += tmp
        np.multiply(s, omega[:, None], out=tmp)
        x += tmp
        np.multiply(t, omega[:, None], out=r)  # r = s - omega t
        np.subtract(s, r, out=r)
        rho = rho_new
        active &= np.sqrt(_dots(r, r)) > goal
    return x if not active.any() else None


def rounds_from_turns(expected_turns: float, win: np.ndarray, to_move: int) -> float:
    """Expected rounds left in classic, from the expected turns left and each seat's chance of winning.

    Turn ``t`` (from 1) is played by seat ``(j + t - 1) mod k``, ``j`` the
    seat to move, so a game won by seat ``w`` lasts ``T = 1 + ((w - j) mod
    k) + k q`` turns and ``1 + q + [w < j]`` rounds (the round in progress
    counted). Hence ``E[R] = (E[T] - 1 - E[(w - j) mod k]) / k + 1 + P(w < j)``.

    Examples
    --------
    The hand example of the tests (seat 1 to move; 38/11 turns left, seat 0
    wins with probability 9/11): 29/11 rounds.

    >>> round(rounds_from_turns(38 / 11, np.array([9 / 11, 2 / 11]), 1) * 11, 9)
    29.0
    """
    k = win.size
    seats = np.arange(k)
    return float((expected_turns - 1.0 - np.dot(win, (seats - to_move) % k)) / k + 1.0 + win[:to_move].sum())


def _relabel(order: tuple[int, ...], gone: int) -> tuple[int, ...]:
    return tuple(s - (s > gone) for s in order)


def build_value_table(mover: JointMover, players: int, mode: str, *, maxiter: int = 5000) -> ValueTable:
    """Solve the value equations of the joint chain of ``players`` tokens (and, under last one standing, fewer).

    Cost: for each value, a BiCGSTAB solve whose every step is one backward
    round (``players`` sparse products with tensors of ``n**players``
    entries), then one more round; memory: ``players`` tensors per value.

    Examples
    --------
    The example of :func:`~snlmarkov.races.fromstate.joint_from`: seat 1 on
    2 to move, seat 0 on 3; seat 0 wins with probability 5/11. With seat 1
    to move (``values[1]``) the tensor's axes are seat 1's square, then
    seat 0's.

    >>> from snlmarkov import Board, Rules, turn_model
    >>> from snlmarkov.races.bump import JointMover
    >>> rules = Rules.preset("plain").replace(faces=2, bump=True)
    >>> table = build_value_table(JointMover.of(turn_model(Board(4), rules), rules), 2, "classic")
    >>> chain, sq = table.chains[2], list(table.mover.squares)
    >>> round(float(chain.values[1][chain.names.index(("win", 0)), sq.index(2) * len(sq) + sq.index(3)]) * 11, 9)
    5.0
    """
    back = _Backward(mover)
    n = mover.n
    k = int(players)
    chains: dict[int, ChainValues] = {}
    total = 0
    if mode == "classic":
        # the rounds left follow from the turns left and the winner (see rounds_from_turns): no value for them
        names: tuple[Any, ...] = tuple(("win", i) for i in range(k - 1)) + ("turns",)

        def finish_classic(j: int) -> np.ndarray:
            fin = np.zeros((len(names), n ** (k - 1)))
            if j < k - 1:
                fin[names.index(("win", j))] = 1.0
            return fin

        moved = np.array([0.0] * (k - 1) + [1.0])
        wrap = np.zeros(k)
        chain, total = _solve_chain(back, k, names, finish_classic, moved, wrap, maxiter)
        chains[k] = chain
        return ValueTable(mover=mover, mode=mode, players=k, chains=chains, iterations=total)

    # last one standing: chains of 1, 2, ..., k tokens
    turns1 = _single_turns(mover)
    one = (np.vstack([turns1, turns1 - 1.0]),)  # the only order needs no row; wraps = turns - 1
    chains[1] = ChainValues(m=1, names=("turns", "wraps"), values=one)
    for m in range(2, k + 1):
        orders = _orders(m)
        names = tuple(orders[:-1]) + ("turns", "wraps")
        sub = chains[m - 1]

        def finish_los(
            j: int, m: int = m, orders: list = orders, names: tuple = names, sub: ChainValues = sub
        ) -> np.ndarray:
            nxt = j if j < m - 1 else 0
            vals = sub.values[nxt]
            fin = np.zeros((len(names), n ** (m - 1)))
            sub_last = _orders(m - 1)[-1]
            for i, order in enumerate(names[:-2]):
                if order[0] == j:
                    rest = _relabel(order[1:], j)
                    fin[i] = vals[sub.names.index(rest)] if rest != sub_last else 1.0 - _sum_orders(sub, nxt)
            fin[-2] = vals[sub.names.index("turns")]
            fin[-1] = vals[sub.names.index("wraps")] + (1.0 if j == m - 1 else 0.0)
            return fin

        moved = np.array([0.0] * (len(orders) - 1) + [1.0, 0.0])
        wrap = np.array([0.0] * (len(orders) - 1) + [0.0, 1.0])
        chain, its = _solve_chain(back, m, names, finish_los, moved, wrap, maxiter)
        chains[m] = chain
        total += its
    return ValueTable(mover=mover, mode=mode, players=k, chains=chains, iterations=total)


def _sum_orders(chain: ChainValues, j: int) -> np.ndarray:
    """Sum of the stored order values (all but the last order) with seat ``j`` to move."""
    rows = [i for i, name in enumerate(chain.names) if isinstance(name, tuple)]
    return chain.values[j][rows].sum(axis=0)

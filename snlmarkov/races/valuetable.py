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
  others), the expected turns left and the expected number of rounds
  begun after this one;
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

__all__ = ["ValueTable", "build_value_table", "SOLVE_RTOL"]

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

    def turn(self, nxt: np.ndarray, m: int, finish: np.ndarray, add_moved: np.ndarray) -> np.ndarray:
        """Values before one turn of the seat on axis 0.

        ``nxt``: ``(b, n**m)`` values after the turn, axes from the next seat
        on, the mover last (the layout :meth:`JointMover.move` returns);
        ``finish``: ``(b, n**(m-1))`` value when the mover finishes, axes
        from the next seat; ``add_moved``: ``(b,)`` paid when the mover does
        not finish. Returns ``(b, n**m)`` with the mover's axis first.
        """
        n = self.n
        width = n ** (m - 1)
        b = nxt.shape[0]
        w = np.empty((n + 1, b, width))
        w[:n] = nxt.reshape(b, width, n).transpose(2, 0, 1)
        w[:n] += add_moved[None, :, None]
        w[n] = finish
        if self.mover.bump and m > 1:
            _, row, col = self.mover._bump_table(m)
            w[row, :, col] = w[self.mover.bump_index][:, col].T
        out = self.step_t @ w.reshape(n + 1, b * width)
        return np.ascontiguousarray(out.reshape(n, b, width).transpose(1, 0, 2)).reshape(b, n * width)


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

    ``finish_of(j)`` gives the ``(len(names), n**(m-1))`` values when seat
    ``j`` finishes; ``turn_pay`` is paid per turn, ``wrap_pay`` per turn of
    seat ``m-1`` that does not finish (play passes back to seat 0: a new
    round).
    """
    n = back.n
    size = n**m
    b = len(names)
    finishes = [finish_of(j) for j in range(m)]
    zero_fin = np.zeros((1, n ** (m - 1)))
    zero_pay = np.zeros(1)

    def sweep(x: np.ndarray, constant: bool, rows: slice | None = None) -> list[np.ndarray]:
        """Backward round from ``x`` (seat 0 to move next round): values with each seat to move."""
        out: list[np.ndarray] = [np.empty(0)] * m
        cur = x
        for j in range(m - 1, -1, -1):
            if constant:
                fin = finishes[j] if rows is None else finishes[j][rows]
                pay = wrap_pay if j == m - 1 else 0.0 * wrap_pay
                pay = pay if rows is None else pay[rows]
                every = turn_pay if rows is None else turn_pay[rows]
            else:
                fin, pay, every = zero_fin, zero_pay, zero_pay
            cur = back.turn(cur, m, fin, pay)
            if constant and every.any():
                cur += every[:, None]
            out[j] = cur
        return out

    iterations = 0
    solved = np.empty((b, size))
    for i in range(b):
        c = sweep(np.zeros((1, size)), True, slice(i, i + 1))[0][0]
        if not np.any(c):
            solved[i] = 0.0
            continue
        count = [0]

        def matvec(v: np.ndarray, count: list[int] = count) -> np.ndarray:
            count[0] += 1
            v = np.asarray(v).reshape(1, size)
            return (v - sweep(v, False)[0]).ravel()

        op = spla.LinearOperator((size, size), matvec=matvec, dtype=float)
        x, info = _krylov(op, c, maxiter)
        if info != 0:
            res = np.abs(matvec(x) - c).max()
            if res > 1e-12 * max(1.0, np.abs(c).max()):
                raise SnlError(f"the value equations of the {m}-token bump chain did not converge (residual {res:.3g})")
        iterations += count[0]
        solved[i] = x
    values = sweep(solved, True)
    return ChainValues(m=m, names=names, values=tuple(values)), iterations


def _krylov(op: spla.LinearOperator, c: np.ndarray, maxiter: int) -> tuple[np.ndarray, int]:
    """BiCGSTAB on ``(I - A) x = c``: two rounds per step and no growing basis (GMRES's
    orthogonalisation costs more than the rounds here, and restarted GMRES stalls)."""
    return spla.bicgstab(op, c, x0=c.copy(), rtol=SOLVE_RTOL, atol=0.0, maxiter=maxiter)


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
        names: tuple[Any, ...] = tuple(("win", i) for i in range(k - 1)) + ("turns", "wraps")

        def finish_classic(j: int) -> np.ndarray:
            fin = np.zeros((len(names), n ** (k - 1)))
            if j < k - 1:
                fin[names.index(("win", j))] = 1.0
            return fin

        moved = np.array([0.0] * (k - 1) + [1.0, 0.0])
        wrap = np.array([0.0] * (k - 1) + [0.0, 1.0])
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

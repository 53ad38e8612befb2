"""Backward turns of the joint chain: the adjoint of :meth:`~snlmarkov.races.joint.JointMover.move`.

A value of the joint chain (a function of every racing token's square and
the seat to move) is kept as a tensor with the mover's axis first, like the
probabilities. One backward turn gives the values before the mover's turn
from those after it: a blocked transpose (the mover's axis comes last in the
layout after the turn), the bump (the value of ``bump_to`` copied onto the
squares a moving token would be bumped from) and one sparse product with the
turn matrix, in buffers made once.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .joint import JointMover

__all__ = []

#: Columns of a value tensor transposed at a time (keeps the copy in cache).
_BLOCK = 512


class Backward:
    """Backward turns of the joint chain (the adjoint of :meth:`JointMover.move`)."""

    def __init__(self, mover: JointMover) -> None:
        self.mover = mover
        self.step_t = sp.csr_matrix(mover.step.T)
        self.step_t.sort_indices()
        self.n = mover.n
        self._buffers: dict[int, np.ndarray] = {}

    def turn(
        self, nxt: np.ndarray, m: int, finish: np.ndarray, add_moved: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Values before one turn of the seat on axis 0, for ``b`` values.

        ``nxt``: ``(b, n**m)`` values after the turn, one row per value, the
        tensor's axes from the next seat on and the mover last (the layout
        :meth:`JointMover.move` returns); ``finish``: ``(b, n**(m-1))``
        values when the mover finishes, axes from the next seat;
        ``add_moved``: ``(b,)`` paid when the mover does not finish. Returns
        ``(b, n**m)`` with the mover's axis first (into ``out`` if given).
        Per value: one transposed copy (in blocks, to stay in cache) and one
        sparse product, which writes the mover-first layout directly.
        """
        n = self.n
        width = n ** (m - 1)
        b = nxt.shape[0]
        if out is None:
            out = np.empty((b, n * width))
        w = self._buffer(m)
        flat = w.reshape(-1)
        bumped = self.mover.bump and m > 1
        if bumped:
            at, source = self._bumped(m)
        st = self.step_t
        for c in range(b):
            src = nxt[c].reshape(width, n)
            for lo in range(0, width, _BLOCK):
                w[:n, lo : lo + _BLOCK] = src[lo : lo + _BLOCK].T
            if add_moved[c]:
                w[:n] += add_moved[c]
            w[n] = finish[c]
            if bumped:
                flat[at] = flat[source]
            out[c] = (st @ w).reshape(-1)
        return out

    def _bumped(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """Flat indices into the ``(n + 1, n**(m-1))`` buffer: the bumped entries, and the bump_to entry of each."""
        key = -m
        if key not in self._buffers:
            _, row, col = self.mover._bump_table(m)
            width = self.n ** (m - 1)
            self._buffers[key] = np.stack([row * width + col, self.mover.bump_index * width + col])
        pair = self._buffers[key]
        return pair[0], pair[1]

    def _buffer(self, m: int) -> np.ndarray:
        if m not in self._buffers:
            self._buffers[m] = np.empty((self.n + 1, self.n ** (m - 1)))
        return self._buffers[m]


class Turn:
    """``I - T``, ``T`` one backward turn of the ``m``-token classic chain as a linear map of one value tensor.

    Classic play is the same for every seat, and the value tensor is kept
    with the mover's axis first and the others in playing order, so the
    values after a turn are the same function of the next state whoever
    moved: ``(T v)(x) = sum_y P(x, y) v(y)``, ``y`` read with its own mover
    first (nothing is paid: the finish adds 0). One application: a blocked
    transpose (the mover's axis comes last in ``y``'s layout), the bump (the
    value of ``bump_to`` copied onto the squares a moving token would be
    bumped from), and one sparse product, in buffers made once (but the
    product's result). ``(I - T) src`` is one product too, of ``[I, -Q]``
    with ``src`` stacked on the work buffer: each entry starts from ``src``
    and subtracts the turn's terms one by one.
    """

    def __init__(self, mover: JointMover, m: int) -> None:
        n = mover.n
        self.n, self.width = n, n ** (m - 1)
        self.q = sp.csr_matrix(mover.step[:n].T)  # (from, to) among the resting squares
        self.q.sort_indices()
        self.minus = sp.csr_matrix(sp.hstack([sp.identity(n, format="csr"), -self.q]))  # [I, -Q]
        self.minus.sort_indices()  # the identity's entry first in every row
        self.stacked = np.empty((2 * n, self.width))  # src itself, then the work buffer
        self.work = self.stacked[n:]
        self.bumped = mover.bump and m > 1
        if self.bumped:  # flat indices into the work buffer: the bumped entries and the bump_to entry of their column
            _, row, col = mover._bump_table(m)
            self.bumped_at = row * self.width + col
            self.bumped_from = mover.bump_index * self.width + col
        self.turns = 0

    def _gather(self, src: np.ndarray, acc: np.ndarray | None = None, summed: bool = False) -> tuple[np.ndarray, float]:
        """The work buffer (``src`` with the mover's axis first, the bump applied) and ``src``'s sum.

        With ``acc``, ``src`` is also added onto it, block by block while
        each block is in cache.
        """
        n, width, w = self.n, self.width, self.work
        self.turns += 1
        grid = src.reshape(width, n)
        total = 0.0
        for lo in range(0, width, _BLOCK):
            block = grid[lo : lo + _BLOCK]
            w[:, lo : lo + _BLOCK] = block.T
            if acc is not None:
                acc[lo * n : (lo + block.shape[0]) * n] += block.reshape(-1)
            if summed:
                total += float(block.sum())
        flat = w.reshape(-1)
        if self.bumped:
            flat[self.bumped_at] = flat[self.bumped_from]
        return flat, total

    def __call__(self, src: np.ndarray, out: np.ndarray) -> None:
        """Write ``(I - T) src`` into ``out`` (flat tensors of ``n**m`` values)."""
        self._gather(src)
        self.stacked[: self.n] = src.reshape(self.n, self.width)
        out[:] = (self.minus @ self.stacked).reshape(-1)

    def turn(self, src: np.ndarray, acc: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """``T src`` (a new flat tensor) and ``src``'s sum; with ``acc``, ``src`` is also added onto it."""
        _, total = self._gather(src, acc, summed=True)
        return (self.q @ self.work).reshape(-1), total

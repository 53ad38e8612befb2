"""Linear algebra on absorbing chains: one sparse factorisation, many solves.

The systems are ``(I - Q) x = b`` for a sub-stochastic ``Q``. Their
transpose is column diagonally dominant, so Gaussian elimination on it
needs no pivoting (every diagonal pivot is the largest in its column, what
partial pivoting would pick anyway): :func:`factorize` asks SuperLU to keep
the diagonal and spends its effort on the ordering only. Chains whose
states reach only nearby states (bandwidth below :data:`NATURAL_BANDWIDTH`,
the case of boards without long jumps) are factorised in their natural
order, where the fill stays inside the band; others get a minimum-degree
ordering, applied symmetrically so that the diagonal stays the pivot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import breadth_first_order

from ..errors import SnlError
from .model import TransitionModel, can_finish

__all__ = ["AbsorbingSystem", "safe_states", "factorize", "NATURAL_BANDWIDTH"]

#: Matrices whose lower plus upper bandwidth is at most this are factorised
#: in their natural order (little fill, no ordering cost).
NATURAL_BANDWIDTH = 256


def _bandwidth(a: sp.csr_matrix) -> int:
    """Lower plus upper bandwidth of a CSR matrix with sorted indices and no empty row."""
    rows = np.arange(a.shape[0])
    first = a.indices[a.indptr[:-1]].astype(np.int64)
    last = a.indices[a.indptr[1:] - 1].astype(np.int64)
    return int(max(0, np.max(rows - first)) + max(0, np.max(last - rows)))


def factorize(a: sp.csr_matrix) -> spla.SuperLU:
    """Sparse LU of the **transpose** of ``a`` (``a = I - Q``, CSR, sorted, diagonal present).

    The CSR arrays of ``a`` are the CSC arrays of ``a.T``: SuperLU gets them
    without a copy. Solve ``a x = b`` with ``lu.solve(b, trans="T")`` and
    ``a.T y = b`` with ``lu.solve(b)``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[1.0, -0.5], [0.0, 1.0]]))
    >>> factorize(a).solve(np.array([1.0, 1.0]), trans="T").tolist()
    [1.5, 1.0]
    """
    a = sp.csr_matrix(a)
    if not a.has_sorted_indices:
        a = a.sorted_indices()
    n = a.shape[0]
    if n == 0:
        raise SnlError("no state of the chain can finish: nothing to solve")
    at = sp.csc_matrix((a.data, a.indices, a.indptr), shape=(n, n))
    if _bandwidth(a) <= NATURAL_BANDWIDTH:
        return spla.splu(at, permc_spec="NATURAL", diag_pivot_thresh=0.0, relax=1, panel_size=1)
    return spla.splu(at, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})


def _unit_absorbing(matrix: sp.csr_matrix, absorbing: int) -> sp.csr_matrix:
    """``I - M`` with the absorbing row made a unit row: nonsingular when every state can finish."""
    n = matrix.shape[0]
    a = sp.identity(n, format="csr") - sp.csr_matrix(matrix)  # canonical; the absorbing diagonal cancels
    fix = sp.csr_matrix(([1.0], ([absorbing], [absorbing])), shape=(n, n))
    a = (a + fix).tocsr()
    a.sort_indices()
    return a


@dataclass(frozen=True, eq=False)
class AbsorbingSystem:
    """``I - Q`` of a chain, factorised once, over the states that can finish.

    States from which a state that can never finish is reachable are left
    out of the system (their expected times are infinite); :func:`turn_model`
    has already refused boards where such a state is reachable from the start.

    When every transient state can finish (the usual case) the matrix
    factorised is the whole ``I - M`` with the absorbing row made a unit row:
    its solutions restricted to :attr:`states` are those of ``I - Q``, and no
    copy of ``Q`` is made to get there.

    Attributes
    ----------
    model : TransitionModel
    states : numpy.ndarray
        Indices (into the model) of the states in the system.
    q : scipy.sparse.csr_matrix
        ``Q`` restricted to ``states`` (built on first use).
    """

    model: TransitionModel
    states: np.ndarray = field(repr=False)
    _lu: Any = field(repr=False)  # a SuperLU-like object with .solve(b, trans=...)
    _whole: bool = field(repr=False, default=False)

    @classmethod
    def of(cls, model: TransitionModel) -> AbsorbingSystem:
        """Factorise ``I - Q`` for ``model``.

        Examples
        --------
        >>> from snlmarkov import Board, Rules, turn_model
        >>> s = AbsorbingSystem.of(turn_model(Board(3), Rules.preset("plain").replace(faces=2)))
        >>> s.solve(np.ones(3)).round(6).tolist()
        [3.0, 2.0, 2.0]
        """
        m = model.matrix
        states = _safe_states(m, model.absorbing, model._can_finish)
        if states.size == model.n_states - 1:
            lu = factorize(_unit_absorbing(m, model.absorbing))
            return cls(model=model, states=states, _lu=lu, _whole=True)
        q = sp.csr_matrix(m)[states][:, states]
        a = (sp.identity(states.size, format="csr") - q).tocsr()
        a.sort_indices()
        return cls(model=model, states=states, _lu=factorize(a), _whole=False)

    @cached_property
    def q(self) -> sp.csr_matrix:
        """``Q`` restricted to :attr:`states` (CSR)."""
        m = sp.csr_matrix(self.model.matrix)
        a = self.model.absorbing
        if self._whole and a == m.shape[0] - 1:  # drop the last row and column without fancy indexing
            end = m.indptr[a]
            keep = m.indices[:end] != a
            kept = np.zeros(end + 1, dtype=np.int64)
            np.cumsum(keep, out=kept[1:])
            indptr = kept[m.indptr[: a + 1]].astype(m.indptr.dtype)
            q = sp.csr_matrix((m.data[:end][keep], m.indices[:end][keep], indptr), shape=(a, a))
            q.has_canonical_format = m.has_canonical_format  # rows and their order kept, one column dropped
        else:
            q = m[self.states][:, self.states]
        return q

    def _run(self, b: np.ndarray, trans: str) -> np.ndarray:
        b = np.asarray(b, dtype=float)
        if not self._whole:
            return self._lu.solve(b, trans=trans)
        full = np.zeros((self.model.n_states,) + b.shape[1:])
        full[self.states] = b
        return self._lu.solve(full, trans=trans)[self.states]

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``x`` with ``(I - Q) x = b`` (``b`` indexed like :attr:`states`)."""
        return self._run(b, "T")  # the factors are those of the transpose

    def solve_transposed(self, b: np.ndarray) -> np.ndarray:
        """``y`` with ``(I - Q)^T y = b``."""
        return self._run(b, "N")

    def expand(self, x: np.ndarray, fill: float = np.inf, absorbing: float = 0.0) -> np.ndarray:
        """Spread a vector over :attr:`states` back onto every state of the model."""
        out = np.full(self.model.n_states, fill, dtype=float)
        out[self.states] = x
        out[self.model.absorbing] = absorbing
        return out

    def position(self, state: int) -> int:
        """Where model state ``state`` sits in :attr:`states`."""
        pos = int(np.searchsorted(self.states, state))
        if pos >= self.states.size or self.states[pos] != state:
            raise KeyError(state)
        return pos


def safe_states(matrix: sp.spmatrix, absorbing: int) -> np.ndarray:
    """Transient states from which the chain finishes with probability 1.

    A state is left out when it can reach a *trap*: a state from which the
    absorbing state cannot be reached.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix(np.array([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    >>> safe_states(m, 2).tolist()  # 1 is a trap and 0 can fall into it
    []
    """
    m = sp.csr_matrix(matrix)
    return _safe_states(m, absorbing, can_finish(m, absorbing))


def _safe_states(matrix: sp.spmatrix, absorbing: int, finishable: np.ndarray) -> np.ndarray:
    m = sp.csr_matrix(matrix)
    n = m.shape[0]
    traps = np.flatnonzero(~finishable)
    doomed = np.zeros(n, dtype=bool)
    if traps.size:
        # one extra node pointing at every trap: whatever reaches it backwards can reach a trap
        extra = sp.csr_matrix((np.ones(traps.size), (np.full(traps.size, n), traps)), shape=(n + 1, n + 1))
        back = (sp.block_diag([m.T, sp.csr_matrix((1, 1))]).tocsr() + extra).tocsr()
        doomed[breadth_first_order(back, n, directed=True, return_predecessors=False)[1:]] = True
    ok = ~doomed
    ok[absorbing] = False
    return np.flatnonzero(ok)

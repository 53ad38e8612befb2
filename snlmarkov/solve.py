"""Linear algebra on absorbing chains: one sparse factorisation, many solves."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import breadth_first_order

from .model import TransitionModel

__all__ = ["AbsorbingSystem", "safe_states"]


@dataclass(frozen=True, eq=False)
class AbsorbingSystem:
    """``I - Q`` of a chain, factorised once, over the states that can finish.

    States from which a state that can never finish is reachable are left
    out of the system (their expected times are infinite); :func:`turn_model`
    has already refused boards where such a state is reachable from the start.

    Attributes
    ----------
    model : TransitionModel
    states : numpy.ndarray
        Indices (into the model) of the states in the system.
    q : scipy.sparse.csr_matrix
        ``Q`` restricted to ``states``.
    """

    model: TransitionModel
    states: np.ndarray = field(repr=False)
    q: sp.csr_matrix = field(repr=False)
    _lu: object = field(repr=False)

    @classmethod
    def of(cls, model: TransitionModel) -> "AbsorbingSystem":
        """Factorise ``I - Q`` for ``model``.

        Examples
        --------
        >>> from snlmarkov import Board, Rules, turn_model
        >>> s = AbsorbingSystem.of(turn_model(Board(3), Rules.preset("plain").replace(faces=2)))
        >>> s.solve(np.ones(3)).round(6).tolist()
        [3.0, 2.0, 2.0]
        """
        m = model.matrix
        states = safe_states(m, model.absorbing)
        q = m[states][:, states].tocsc()
        a = (sp.identity(states.size, format="csc") - q).tocsc()
        lu = spla.splu(a, permc_spec="COLAMD")
        return cls(model=model, states=states, q=q.tocsr(), _lu=lu)

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``x`` with ``(I - Q) x = b`` (``b`` indexed like :attr:`states`)."""
        return self._lu.solve(np.asarray(b, dtype=float))

    def solve_transposed(self, b: np.ndarray) -> np.ndarray:
        """``y`` with ``(I - Q)^T y = b``."""
        return self._lu.solve(np.asarray(b, dtype=float), trans="T")

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
    """
    m = sp.csr_matrix(matrix)
    n = m.shape[0]
    can_finish = np.zeros(n, dtype=bool)
    can_finish[breadth_first_order(m.T.tocsr(), absorbing, directed=True, return_predecessors=False)] = True
    traps = np.flatnonzero(~can_finish)
    doomed = np.zeros(n, dtype=bool)
    if traps.size:
        # one extra node pointing at every trap: whatever reaches it backwards can reach a trap
        extra = sp.csr_matrix((np.ones(traps.size), (np.full(traps.size, n), traps)), shape=(n + 1, n + 1))
        back = (sp.block_diag([m.T, sp.csr_matrix((1, 1))]).tocsr() + extra).tocsr()
        doomed[breadth_first_order(back, n, directed=True, return_predecessors=False)[1:]] = True
    ok = ~doomed
    ok[absorbing] = False
    return np.flatnonzero(ok)

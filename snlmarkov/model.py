"""Exact transition models of one token: turn by turn, and roll by roll.

:func:`turn_model` gives the ``(N+1) x (N+1)`` matrix whose row ``p`` is the
exact distribution of the square where a turn that begins on ``p`` ends. It
follows every sequence of rolls a turn can hold (bonus sixes, the cap under
``redeal`` or ``forfeit``, the finish rule, six to start), weighting each by
its probability: it is built by construction, not by sampling.

:func:`roll_model` gives the finer chain with one step per die roll, whose
states are ``(square, sixes so far this turn, origin)``. Composing it over the
rolls of one turn reproduces :func:`turn_model` (the tests check this to
1e-12 for every rule combination).

Both are :mod:`scipy.sparse` CSR matrices with labelled states, rows summing
to 1, for any board size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from ._roll import one_roll
from .board import Board
from .errors import UnwinnableBoardError
from .rules import Rules

__all__ = ["TransitionModel", "RollState", "RollTransitions", "turn_model", "roll_model", "roll_transitions", "NO_CAP_MASS"]

#: Without a cap a turn may hold any number of sixes. Runs of sixes whose
#: probability is below this are cut from the turn-level matrix (their mass
#: stays on the square where the turn began).
NO_CAP_MASS = 1e-20

_ROW_SUM_TOL = 1e-12


class RollState(NamedTuple):
    """A state of the roll-level chain.

    Attributes
    ----------
    square : int
        Where the token stands.
    sixes : int
        Sixes rolled so far in this turn: 0 at the start of a turn. Without a
        cap any positive number is stored as 1 ("a bonus roll is due").
    origin : int
        The square the turn began on, tracked only where ``on_cap="forfeit"``
        needs it (a forfeited turn goes back there); -1 elsewhere.

    Examples
    --------
    >>> from snlmarkov import Board, Rules, roll_model
    >>> m = roll_model(Board(20), Rules(on_cap="forfeit"))
    >>> m.labels[0], m.labels[21]
    (RollState(square=0, sixes=0, origin=0), RollState(square=6, sixes=1, origin=0))
    """

    square: int
    sixes: int
    origin: int


@dataclass(frozen=True, eq=False)
class TransitionModel:
    """A Markov chain of one token, with labelled states.

    Attributes
    ----------
    kind : {"turn", "roll"}
        One step is one turn, or one die roll.
    board, rules : Board, Rules
        What the chain models.
    matrix : scipy.sparse.csr_matrix
        Row-stochastic transition matrix (rows sum to 1 within 1e-12).
    labels : tuple
        The state of each row: a square (int) for turn models, a
        :class:`RollState` for roll models.
    absorbing : int
        Index of the absorbing state (the token on the finish).
    start : int
        Index of the starting state (square 0 at the start of a turn).
    turn_start : numpy.ndarray of bool
        Which states are "the start of a turn" (all of them in a turn model).
    rolls : numpy.ndarray
        Expected number of die rolls in one step from each state (1 in a roll
        model, 0 from the absorbing state).
    landings : scipy.sparse.sparray or spmatrix
        (COO in turn models, CSR in roll models) ``landings[i, t]``: expected number of times one step from state ``i``
        lands the token on square ``t`` (before a jump acts).

    Examples
    --------
    >>> from snlmarkov import Board, Rules, turn_model
    >>> m = turn_model(Board(3), Rules.preset("plain").replace(faces=2))
    >>> m.matrix.toarray()
    array([[0. , 0.5, 0.5, 0. ],
           [0. , 0. , 0.5, 0.5],
           [0. , 0. , 0.5, 0.5],
           [0. , 0. , 0. , 1. ]])
    """

    kind: str
    board: Board
    rules: Rules
    matrix: sp.csr_matrix = field(repr=False)
    labels: tuple = field(repr=False)
    absorbing: int
    start: int
    turn_start: np.ndarray = field(repr=False)
    rolls: np.ndarray = field(repr=False)
    landings: sp.spmatrix = field(repr=False)

    def __post_init__(self) -> None:
        n = self.matrix.shape[0]
        if self.matrix.shape != (n, n) or len(self.labels) != n:
            raise ValueError("matrix must be square with one label per state")
        sums = np.asarray(self.matrix.sum(axis=1)).ravel()
        worst = np.max(np.abs(sums - 1.0)) if n else 0.0
        if worst > _ROW_SUM_TOL:
            bad = int(np.argmax(np.abs(sums - 1.0)))
            raise AssertionError(f"row {self.labels[bad]} of the {self.kind} matrix sums to {sums[bad]!r}")

    @property
    def n_states(self) -> int:
        """Number of states."""
        return self.matrix.shape[0]

    @property
    def transient(self) -> np.ndarray:
        """Indices of the transient states (all but the absorbing one)."""
        return np.flatnonzero(np.arange(self.n_states) != self.absorbing)

    def dense(self) -> np.ndarray:
        """The transition matrix as a dense array (small boards only)."""
        return self.matrix.toarray()


def _check_winnable(board: Board, matrix: sp.csr_matrix, labels, start: int, absorbing: int) -> None:
    """Refuse a chain where some state reachable from ``start`` cannot finish."""
    reach = breadth_first_order(matrix, start, directed=True, return_predecessors=False)
    back = breadth_first_order(matrix.T.tocsr(), absorbing, directed=True, return_predecessors=False)
    stuck = np.setdiff1d(reach, back)
    if stuck.size:
        label = labels[int(stuck[0])]
        square = label if isinstance(label, (int, np.integer)) else label.square
        squares = sorted({int(lab if isinstance(lab, (int, np.integer)) else lab.square) for lab in (labels[i] for i in stuck)})
        shown = ", ".join(map(str, squares[:10])) + (" ..." if len(squares) > 10 else "")
        raise UnwinnableBoardError(
            f"the finish {board.size} cannot be reached from square {int(square)}, which the token can reach "
            f"from 0 (stuck squares: {shown})",
            int(square),
        )


def turn_model(board: Board, rules: Rules | None = None, *, check: bool = True) -> TransitionModel:
    """The exact turn-level transition model.

    Row ``p`` is the distribution of the square where a turn that begins on
    ``p`` ends. Every square ``0..N-1`` has a row, jump starts included (a
    bumped token may rest on one).

    Parameters
    ----------
    board : Board
    rules : Rules, optional
        Defaults to ``Rules()`` (the ``app`` preset). The ``bump`` rule has
        nothing to act on with one token and is ignored here.
    check : bool, default True
        Refuse boards where the finish cannot be reached from a square the
        token can reach from 0.

    Returns
    -------
    TransitionModel
        ``kind="turn"``, labels ``0..N``.

    Raises
    ------
    UnwinnableBoardError
        Naming a reachable square from which the finish cannot be reached.

    Examples
    --------
    >>> from snlmarkov import Board, Rules, turn_model
    >>> m = turn_model(Board.builtin())
    >>> m.matrix.shape, m.absorbing
    ((101, 101), 100)
    >>> round(float(m.matrix[0, 38]), 6)  # a 1 climbs the ladder to 38
    0.166667
    """
    rules = Rules() if rules is None else rules
    rules.check_board(board)
    n = board.size
    rows_t, cols_t, vals_t = [], [], []
    rows_l, cols_l, vals_l = [], [], []
    rolls = np.zeros(n + 1)

    # every path of rolls that a turn can take, one level (roll) at a time
    row = np.arange(n, dtype=np.int64)  # the start square of the path = its row
    cur = row.copy()
    sixes = np.zeros(n, dtype=np.int64)
    weight = np.ones(n)
    level = 0
    while row.size:
        out = one_roll(board, rules, cur, sixes, row)
        r = row[out.index]
        w = weight[out.index] * out.prob
        hit = out.landing >= 0
        rows_l.append(r[hit]), cols_l.append(out.landing[hit]), vals_l.append(w[hit])
        end = ~out.cont
        rows_t.append(r[end]), cols_t.append(out.square[end]), vals_t.append(w[end])
        rolls += np.bincount(r[end], weights=w[end] * (level + 1), minlength=n + 1)
        keep = out.cont
        if rules.max_sixes is None and rules.faces ** -(level + 1.0) < NO_CAP_MASS:
            keep = np.zeros_like(keep)  # cut runs of sixes rarer than NO_CAP_MASS
        row, cur, weight = r[keep], out.square[keep], w[keep]
        sixes = sixes[out.index[keep]] + 1
        level += 1

    rows_t.append(np.array([n])), cols_t.append(np.array([n])), vals_t.append(np.array([1.0]))
    shape = (n + 1, n + 1)
    matrix = sp.csr_matrix((np.concatenate(vals_t), (np.concatenate(rows_t), np.concatenate(cols_t))), shape=shape)
    if rules.max_sixes is None:  # put the (< NO_CAP_MASS) mass of endless six runs back where the turn began
        deficit = 1.0 - np.asarray(matrix.sum(axis=1)).ravel()
        matrix = (matrix + sp.diags(np.where(deficit > 0, deficit, 0.0))).tocsr()
    landings = sp.coo_matrix(
        (np.concatenate(vals_l), (np.concatenate(rows_l), np.concatenate(cols_l))), shape=shape
    )
    labels = tuple(range(n + 1))
    if check:
        _check_winnable(board, matrix, labels, 0, n)
    return TransitionModel(
        kind="turn",
        board=board,
        rules=rules,
        matrix=matrix,
        labels=labels,
        absorbing=n,
        start=0,
        turn_start=np.ones(n + 1, dtype=bool),
        rolls=rolls,
        landings=landings,
    )


@dataclass(frozen=True, eq=False)
class RollTransitions:
    """Every transition of the roll-level chain, one entry per roll outcome.

    ``src -> tgt`` with probability ``prob``; ``landing`` is the square the
    roll lands on before a jump acts, or -1. States are numbered as in
    :func:`roll_model`; the absorbing state is ``size`` and has no entries.
    """

    size: int
    src: np.ndarray
    tgt: np.ndarray
    prob: np.ndarray
    landing: np.ndarray
    labels: tuple


def roll_model(board: Board, rules: Rules | None = None, *, check: bool = True) -> TransitionModel:
    """The exact roll-level chain: one step per die roll.

    States are :class:`RollState` ``(square, sixes, origin)``: first the
    start-of-turn states ``(p, 0, ...)`` for ``p = 0..N`` (index ``p``; the
    finish is absorbing), then the in-turn states after ``s`` sixes,
    ``s = 1..max_sixes`` (``s = 1`` only without a cap). Under six to start,
    ``(0, 1, ...)`` is the token that has just rolled its entering six.
    Under ``on_cap="forfeit"`` an in-turn state also remembers where its turn
    began; in-turn states no turn can reach are left out.

    Examples
    --------
    >>> from snlmarkov import Board, Rules, roll_model
    >>> m = roll_model(Board(10), Rules())
    >>> m.n_states, m.labels[11]
    (31, RollState(square=0, sixes=1, origin=-1))
    """
    rules = Rules() if rules is None else rules
    rules.check_board(board)
    n = board.size
    tr = roll_transitions(board, rules)
    size = tr.size
    matrix = sp.csr_matrix((np.append(tr.prob, 1.0), (np.append(tr.src, n), np.append(tr.tgt, n))), shape=(size, size))
    hit = tr.landing >= 0
    landings = sp.csr_matrix((tr.prob[hit], (tr.src[hit], tr.landing[hit])), shape=(size, n + 1))
    if check:
        _check_winnable(board, matrix, tr.labels, 0, n)
    rolls = np.ones(size)
    rolls[n] = 0.0
    turn_start = np.zeros(size, dtype=bool)
    turn_start[: n + 1] = True
    return TransitionModel(
        kind="roll",
        board=board,
        rules=rules,
        matrix=matrix,
        labels=tr.labels,
        absorbing=n,
        start=0,
        turn_start=turn_start,
        rolls=rolls,
        landings=landings,
    )


def roll_transitions(board: Board, rules: Rules) -> RollTransitions:
    """The raw transitions of :func:`roll_model`, with the landing of each."""
    rules.check_board(board)
    n = board.size
    levels = 1 if rules.max_sixes is None else rules.max_sixes
    forfeit = rules.on_cap == "forfeit" and rules.max_sixes is not None

    # in-turn states: square, sixes, origin (origin only under forfeit)
    if forfeit:
        mid_sq, mid_s, mid_o = [], [], []
        row = np.arange(n, dtype=np.int64)
        cur, six = row.copy(), np.zeros(n, dtype=np.int64)
        for s in range(1, levels + 1):
            out = one_roll(board, rules, cur, six, row)
            keep = out.cont
            row, cur = row[out.index[keep]], out.square[keep]
            six = np.full(row.size, s, dtype=np.int64)
            mid_sq.append(cur), mid_s.append(six), mid_o.append(row)
        mid_sq, mid_s, mid_o = (np.concatenate(a) for a in (mid_sq, mid_s, mid_o))
        # index lookup by (origin, sixes)
        lookup = np.full((levels + 1, n), -1, dtype=np.int64)
        lookup[mid_s, mid_o] = n + 1 + np.arange(mid_sq.size)
    else:
        mid_sq = np.tile(np.arange(n, dtype=np.int64), levels)
        mid_s = np.repeat(np.arange(1, levels + 1, dtype=np.int64), n)
        mid_o = np.full(mid_sq.size, -1, dtype=np.int64)

    sq = np.concatenate([np.arange(n, dtype=np.int64), mid_sq])  # all non-absorbing states
    six = np.concatenate([np.zeros(n, dtype=np.int64), mid_s])
    orig = np.concatenate([np.arange(n, dtype=np.int64) if forfeit else np.full(n, -1, dtype=np.int64), mid_o])
    state_index = np.concatenate([np.arange(n), n + 1 + np.arange(mid_sq.size)])

    origin = np.where(six == 0, sq, orig)  # a turn-start state is its own origin
    out = one_roll(board, rules, sq, six, origin)
    src = state_index[out.index]
    nxt_six = np.minimum(six[out.index] + 1, levels)
    if forfeit:
        tgt_mid = lookup[nxt_six, origin[out.index]]
    else:
        tgt_mid = n + 1 + (nxt_six - 1) * n + out.square
    tgt = np.where(out.cont, tgt_mid, out.square)
    if np.any(tgt < 0):  # guards the forfeit lookup; never expected
        raise AssertionError("roll model: a turn reached an in-turn state that was not enumerated")
    labels = tuple(RollState(int(p), 0, int(p) if forfeit else -1) for p in range(n + 1)) + tuple(
        RollState(int(a), int(b), int(c)) for a, b, c in zip(mid_sq, mid_s, mid_o)
    )
    return RollTransitions(n + 1 + mid_sq.size, src, tgt, out.prob, out.landing, labels)

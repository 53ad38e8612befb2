"""Exact transition models of one token: turn by turn, and roll by roll.

:func:`turn_model` gives the ``(N+1) x (N+1)`` matrix whose row ``p`` is the
exact distribution of the square where a turn that begins on ``p`` ends. It
follows every sequence of rolls a turn can hold (bonus sixes, the cap under
``redeal``, ``forfeit`` or ``restart``, the finish rule and whether a jump
acts after a bounce, six to start, chained jumps), weighting each by
its probability: it is built by construction, not by sampling.

:func:`roll_model` gives the finer chain with one step per die roll, whose
states are ``(square, sixes so far this turn, origin)``. Composing it over the
rolls of one turn reproduces :func:`turn_model` (the tests check this to
1e-12 for every rule combination).

Both are :mod:`scipy.sparse` CSR matrices with labelled states, rows summing
to 1, for any board size.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from ..args import board_arg, rules_arg
from ..board import Board
from ..errors import ModelError, UnwinnableBoardError
from ..limits import check_memory
from ..rules import Rules
from .mechanics import all_landings, chain_landings, index_dtype, no_cap_depth, one_roll, roll_slots

__all__ = ["TransitionModel", "RollState", "turn_model", "roll_model"]

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
    squares, sixes, origins : numpy.ndarray of int
        The state of each row as arrays: its square, the sixes of the turn so
        far and the square the turn began on (-1 where not tracked); in a
        turn model ``squares`` is ``0..N`` and the other two are constant.
    labels : tuple
        The same as objects, built on first access: a square (int) for turn
        models, a :class:`RollState` for roll models. No computation of the
        package reads them.
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
        lands the token on square ``t`` (before a jump acts). Turn models
        build it on first use.

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
    squares: np.ndarray = field(repr=False)
    absorbing: int
    start: int
    turn_start: np.ndarray = field(repr=False)
    rolls: np.ndarray = field(repr=False)
    _landings: Any = field(repr=False)  # the matrix, or a function of no argument that builds it (turn models)
    sixes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    origins: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)

    def __post_init__(self) -> None:
        n = self.matrix.shape[0]
        if self.matrix.shape != (n, n) or len(self.squares) != n:
            raise ModelError("matrix must be square with one state per row")
        for name, fill in (("sixes", 0), ("origins", -1)):
            if len(getattr(self, name)) == 0:  # a turn model: constant, without memory (a zero stride)
                object.__setattr__(self, name, np.broadcast_to(np.int64(fill), (n,)))
        sums = np.asarray(self.matrix.sum(axis=1)).ravel()
        worst = np.max(np.abs(sums - 1.0)) if n else 0.0
        if worst > _ROW_SUM_TOL:
            bad = int(np.argmax(np.abs(sums - 1.0)))
            raise ModelError(f"row {self.label(bad)} of the {self.kind} matrix sums to {sums[bad]!r}, not 1")

    def label(self, i: int) -> Any:
        """The state of row ``i`` as an object: its square (turn models) or a :class:`RollState`."""
        if self.kind == "turn":
            return int(self.squares[i])
        return RollState(int(self.squares[i]), int(self.sixes[i]), int(self.origins[i]))

    @cached_property
    def labels(self) -> tuple:
        """Every state as an object (built on first access; see the class docstring)."""
        if self.kind == "turn":
            return tuple(range(self.n_states))
        return tuple(map(RollState, self.squares.tolist(), self.sixes.tolist(), self.origins.tolist()))

    @property
    def landings(self) -> sp.spmatrix:
        """``landings[i, t]``: expected landings on square ``t`` in one step from state ``i``.

        Turn models build it on first use (it costs twice the turn matrix
        itself at 10^6 squares); :func:`turn_landings` gives its product
        with a vector of weights without building it.
        """
        value = self._landings
        if callable(value):
            value = value()
            object.__setattr__(self, "_landings", value)
        return value

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

    @cached_property
    def _can_finish(self) -> np.ndarray:
        """Which states can reach the absorbing state (computed once, shared by the checks and solvers)."""
        return can_finish(self.matrix, self.absorbing)


def turn_levels(rules: Rules) -> int:
    """Rolls a turn can hold, as the matrix builders count them (for memory estimates).

    Examples
    --------
    >>> turn_levels(Rules()), turn_levels(Rules.preset("plain")), turn_levels(Rules(max_sixes=None))
    (3, 1, 26)
    """
    if not rules.bonus_on_six:
        return 1 + int(rules.start_on_six)
    if rules.max_sixes is None:
        return no_cap_depth(rules.die)
    return rules.max_sixes + 1


def check_model_memory(board: Board, rules: Rules, what: str, *, per_entry: int = 24, levels: int = 0) -> None:
    """Refuse, before allocating, a model whose arrays would pass the memory limit.

    The estimate is ``size * values * levels * per_entry`` bytes: every
    (square, roll of the turn, value of the die) is a candidate entry while the matrix is
    built. ``per_entry`` 24 covers the matrix build; the full
    :func:`~snlmarkov.analyze` keeps several such arrays (about 100).

    Raises
    ------
    LimitError
        Naming the board size, the estimate and the limit.
    """
    levels = levels or turn_levels(rules)
    values = len(rules.die.values)
    need = float(board.size + 1) * values * levels * per_entry
    check_memory(need, f"{what} of a {board.size:,}-square board with a die of {values} values")


def can_finish(matrix: sp.spmatrix, absorbing: int) -> np.ndarray:
    """Which states can reach ``absorbing``: one breadth-first search on the reversed edges.

    When ``absorbing`` is the last state and every other state has a
    transition to a higher-numbered one (the usual turn matrix: some roll
    always moves the token on), every state can finish and no search is
    needed.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix(np.array([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.5, 0.5]]))
    >>> can_finish(m, 1).tolist()
    [True, True, True]
    >>> can_finish(m, 0).tolist()  # nothing leads back to 0
    [True, False, False]
    """
    m = matrix if isinstance(matrix, sp.csr_matrix) else sp.csr_matrix(matrix)  # a new wrapper forgets its flags
    if _ascends(m, absorbing):
        return np.ones(m.shape[0], dtype=bool)
    back = m.T.tocsr()  # the edges reversed
    mask = np.zeros(back.shape[0], dtype=bool)
    mask[breadth_first_order(back, absorbing, directed=True, return_predecessors=False)] = True
    return mask


def _ascends(matrix: sp.csr_matrix, absorbing: int) -> bool:
    """True when ``absorbing`` is the last state and every other row has a nonzero entry right of its diagonal.

    Then every state can finish: from any state some transition leads to a
    higher one, and climbing ends on the last state. O(rows), on sorted CSR.
    """
    n = matrix.shape[0]
    if absorbing != n - 1 or not matrix.has_sorted_indices:
        return False
    start, end = matrix.indptr[: n - 1], matrix.indptr[1:n]
    if np.any(end <= start):  # an empty row
        return False
    last = end - 1
    return bool(np.all(matrix.indices[last] > np.arange(n - 1)) and np.all(matrix.data[last] != 0))


def _check_winnable(board: Board, model: TransitionModel) -> None:
    """Refuse a chain where some state reachable from ``model.start`` cannot finish."""
    finishable = model._can_finish
    if finishable.all():
        return
    reach = breadth_first_order(model.matrix, model.start, directed=True, return_predecessors=False)
    _refuse_stuck(board, reach[~finishable[reach]], model.squares)


def _refuse_stuck(board: Board, stuck: np.ndarray, squares: Any) -> None:
    """Raise :class:`UnwinnableBoardError` naming the lowest of ``stuck`` (reachable states that cannot finish)."""
    if not stuck.size:
        return
    stuck = np.sort(stuck)
    at = np.asarray(squares)[stuck]  # the square of each stuck state
    square = int(at[0])
    listed = np.unique(at)
    shown = ", ".join(map(str, listed[:10].tolist())) + (" ..." if listed.size > 10 else "")
    raise UnwinnableBoardError(
        f"the finish {board.size} cannot be reached from square {square}, which the token can reach "
        f"from 0 (stuck squares: {shown})",
        square,
    )


def _turn_system(board: Board, rules: Rules) -> sp.csr_matrix:
    """``I - M`` of the turn chain with the finish row made a unit row, as canonical CSR.

    The fast path to expected turns: no landings, no labels, no second copy.
    Its off-diagonal pattern is that of the turn matrix ``M``.
    """
    rules.check_board(board)
    n = board.size
    rows = _turn_rows(board, rules, landings=False, rolls=False, system=True)
    a = sp.csr_matrix((rows.data, rows.indices, rows.indptr), shape=(n + 1, n + 1))
    a.has_canonical_format = True
    return a


def _turn_system_states(board: Board, a: sp.csr_matrix) -> np.ndarray:
    """States to keep in :func:`_turn_system`'s matrix ``a``, after refusing an unwinnable board.

    All of them when every square can finish (the usual case); else the
    squares reachable from 0 (the finish included), which then all can.
    """
    n = board.size
    finishable = can_finish(a, n)  # the pattern of I - M is that of M, self-loops aside
    if finishable.all():
        return np.arange(n + 1)
    reach = breadth_first_order(a, 0, directed=True, return_predecessors=False)
    _refuse_stuck(board, reach[~finishable[reach]], np.arange(n + 1))
    return np.sort(reach)


def _rows_climb(blk: sp.csr_matrix, lo: int) -> bool:
    """Whether every row of ``blk`` (canonical CSR, rows ``lo..``) has a nonzero entry right of its diagonal.

    Then every square of the block can finish (see ``_ascends``).
    """
    nb = blk.shape[0]
    ptr = blk.indptr
    if np.any(ptr[1:] <= ptr[:-1]):
        return False
    last = ptr[1:] - 1
    return bool(np.all(blk.indices[last] > np.arange(lo, lo + nb)) and np.all(blk.data[last] != 0))


class _TurnRows(NamedTuple):
    """The turn matrix as canonical CSR arrays, with the per-turn rolls and landings."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    rolls: np.ndarray
    landings: tuple  # (rows, cols, values) in COO form, or empty arrays


#: Slots (row x outcome cells) handled at once when building a turn matrix: keeps the
#: temporaries in cache and the peak memory near the size of the result.
_BLOCK_SLOTS = 1 << 20


def _turn_landings_matrix(board: Board, rules: Rules) -> sp.coo_matrix:
    """The turn model's landings matrix (COO), built on its own."""
    rows = _turn_rows(board, rules, landings=True, rolls=False)
    n = board.size
    return sp.coo_matrix((rows.landings[2], (rows.landings[0], rows.landings[1])), shape=(n + 1, n + 1))


def turn_landings(board: Board, rules: Rules, weights: np.ndarray) -> np.ndarray:
    """``weights @ landings`` of the turn model, without building ``landings``.

    With ``weights`` the expected turns begun on each square (the
    occupancy), this is the expected number of landings on each square in a
    game. Cost: one pass over the paths of rolls of every turn, like
    building the turn matrix; memory O(N).

    Examples
    --------
    >>> from snlmarkov import Board, Rules, turn_model
    >>> m = turn_model(Board(3), Rules.preset("plain").replace(faces=2))
    >>> w = np.array([1.0, 0.5, 1.5, 0.0])
    >>> turn_landings(m.board, m.rules, w).tolist(), (m.landings.T @ w).tolist()
    ([0.0, 0.5, 0.75, 1.0], [0.0, 0.5, 0.75, 1.0])
    """
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (board.size + 1,):
        raise ValueError(f"weights must have one entry per square 0..{board.size}")
    return _turn_rows(board, rules, landings=False, rolls=False, landing_weights=weights).landings[2]


def _turn_rows(
    board: Board,
    rules: Rules,
    *,
    landings: bool = True,
    rolls: bool = True,
    system: bool = False,
    landing_weights: np.ndarray | None = None,
) -> _TurnRows:
    """Build the turn-level matrix row block by row block, straight into CSR form.

    The blocks are those of :meth:`_TurnPaths.rows`, written one after the
    other into one buffer shrunk in place at the end. With ``system`` the
    arrays hold ``I - M`` instead, every diagonal entry present, and the
    finish row is ``e_N``: the matrix of :func:`_turn_system`. Without
    ``landings`` or ``rolls`` those come back empty (zeros). With
    ``landing_weights`` (one per row), ``landings`` is instead
    ``(empty, empty, weights @ landings)``: the weighted landings per
    square, summed as the paths are followed (no COO table is kept).
    """
    paths = _TurnPaths(board, rules, landings=landings, rolls=rolls, system=system, landing_weights=landing_weights)
    n = board.size
    capacity = paths.capacity
    out_idx = np.empty(capacity, dtype=paths.out_dtype)
    out_val = np.empty(capacity)
    indptr = np.zeros(n + 2, dtype=paths.out_dtype)
    nnz = 0
    for lo in range(0, n, paths.block):
        hi = min(n, lo + paths.block)
        blk = paths.rows(lo, hi)
        k = blk.nnz
        out_idx[nnz : nnz + k] = blk.indices
        out_val[nnz : nnz + k] = blk.data
        indptr[lo + 1 : hi + 1] = nnz + blk.indptr[1:]
        nnz += k
    out_idx[nnz] = n  # the finish is absorbing (a unit row of I - M too)
    out_val[nnz] = 1.0
    nnz += 1
    indptr[n + 1] = nnz
    out_idx.resize(nnz, refcheck=False)  # give the unused capacity back (realloc, no copy)
    out_val.resize(nnz, refcheck=False)
    return _TurnRows(indptr, out_idx, out_val, paths.roll_counts, paths.landings_found())


def _first_row_unsorted(blk: sp.csr_matrix) -> bool:
    """Whether the first row of a CSR block has its column indices out of order (O(that row))."""
    row = blk.indices[int(blk.indptr[0]) : int(blk.indptr[1])]
    return bool(row.size > 1 and np.any(row[1:] < row[:-1]))


class _TurnPaths:
    """Every path of rolls a turn can take, followed for a block of starting squares at a time.

    :meth:`rows` gives the turn matrix's rows ``lo:hi`` as canonical CSR
    (``I - M`` with ``system``). Every path of rolls a turn can take from
    square ``p`` is followed one roll (level) at a time; each row keeps one
    live path per level (only a six continues a turn, and one roll has one
    six). Level ``l`` writes the turn-ending outcomes of row ``p`` into the
    slots ``l*f .. l*f+f-1`` of a ``(rows, levels*f)`` table, so that its
    outcomes read row by row are the CSR row with duplicates; scipy's
    row-wise sort-and-sum makes it canonical. No COO-to-CSR conversion, no
    global sort. The per-turn rolls (``rolls``) and the landings
    (``landings``, or their sum weighted by ``landing_weights``) gather as
    blocks are built: :attr:`roll_counts`, :meth:`landings_found`.
    """

    def __init__(
        self,
        board: Board,
        rules: Rules,
        *,
        landings: bool = False,
        rolls: bool = False,
        system: bool = False,
        landing_weights: np.ndarray | None = None,
    ) -> None:
        n, f = board.size, len(rules.die.values)
        self.board, self.rules, self.n, self.f = board, rules, n, f
        self.itype = index_dtype(n + 2 * rules.die.top + 2)
        self.dest = board.destination().astype(self.itype)
        self.chained = chain_landings(board) if (landings or landing_weights is not None) else None
        self.no_cap = rules.max_sixes is None
        if self.no_cap and rules.bonus_on_six:  # levels until a run of sixes is rarer than NO_CAP_MASS
            self.depth = no_cap_depth(rules.die)
        elif self.no_cap:  # no bonus: a turn is one roll, or an entering six and one roll
            self.depth = 2
        else:
            self.depth = int(rules.max_sixes or 0) + 1
        est_levels = self.depth + 1 if (rules.bonus_on_six or rules.start_on_six) else 1
        self.extra = int(self.no_cap) + int(system)
        self.block = max(64, _BLOCK_SLOTS // (f * est_levels + self.extra))
        max_levels = self.depth if rules.bonus_on_six else 1 + int(rules.start_on_six)
        if landings and self.chained:  # each roll onto a chain lands on all of it: up to f per square and level
            check_memory(
                48.0 * max_levels * f * float(self.chained.depth.sum()),
                f"the landings matrix of a {n:,}-square board with chains of up to "
                f"{int(self.chained.depth.max()) + 1:,} jumps",
            )
        self.slots = max_levels * f + self.extra  # slots a row can use
        self.capacity = n * self.slots + 1  # every slot an entry
        self.out_dtype = index_dtype(self.capacity, n + 2)
        self.landings, self.rolls, self.system = landings, rolls, system
        self.landing_weights = landing_weights
        self.roll_counts = np.zeros(n + 1)
        self._land: tuple[list, list, list] = ([], [], [])
        weighted = landing_weights is not None
        self._land_sum = np.zeros(n + 1 if weighted else 0)
        self._chain_mass = np.zeros(n + 1 if weighted and self.chained else 0)
        self._buffers: tuple[np.ndarray, np.ndarray] | None = None

    def rows(self, lo: int, hi: int) -> sp.csr_matrix:  # noqa: C901, PLR0915
        """Rows ``lo:hi`` (``0 <= lo < hi <= N``) of the turn matrix (or of ``I - M``), canonical CSR of width ``N + 1``."""
        board, rules, n, f, itype, dest = self.board, self.rules, self.n, self.f, self.itype, self.dest
        no_cap, depth, extra, system = self.no_cap, self.depth, self.extra, self.system
        nb = hi - lo
        cols, vals = self._tables(nb)
        live: Any = slice(None)  # the rows with a live path: all of them, or an index array
        cur = np.arange(lo, hi, dtype=itype)
        origin = cur.copy()
        sixes = np.zeros(nb, dtype=itype)
        weight = np.ones(nb)
        want_land = self.landings or self.landing_weights is not None
        n_levels = 0
        while True:
            s = roll_slots(board, rules, cur, sixes, origin, dest=dest)
            part = slice(n_levels * f, (n_levels + 1) * f)
            n_levels += 1
            six = s.cont[:, f - 1]  # only the six (entering six included) continues a turn
            if isinstance(live, slice) and not want_land:  # every row: the outcomes go straight into the slots
                w = vals[:, part]
                signed = -weight if system else weight
                # the level's f columns in one pass each (the tables are row-major: one value per column at a time
                # would touch every cache line of the table f times)
                cols[:, part] = s.square
                # I - M holds the negated entries: (-w) p is -(w p) exactly, and a sum of negated terms the negated sum
                w[...] = np.multiply(s.prob.T, signed).T  # along the rows, then one transposing copy
                weight = np.where(six, -w[:, f - 1] if system else w[:, f - 1], 0.0)  # the weight going on
                np.copyto(w[:, f - 1], 0.0, where=six)  # a six that goes on ends nothing here
            else:  # the other rows keep value 0 there: no entry (their columns are never read)
                w = weight[:, None] * s.prob
                if want_land:
                    self._land_level(lo, hi, live, s, w)
                weight = np.where(six, w[:, f - 1], 0.0)
                vals[:, part] = 0.0
                cols[live, part] = s.square
                ends = np.where(s.cont, 0.0, w)
                vals[live, part] = -ends if system else ends
            if no_cap and n_levels >= depth:
                break  # cut runs of sixes rarer than NO_CAP_MASS
            n_keep = int(np.count_nonzero(six))
            if not n_keep:
                break
            cur = s.square[:, f - 1]
            if 2 * n_keep < six.size:  # few paths go on: follow only those
                cur, weight = cur[six], weight[six]
                origin, sixes = origin[six], sixes[six]
                live = (np.arange(nb, dtype=itype)[live])[six]
            sixes = sixes + 1  # paths that ended go on with weight 0: no gather, no scatter

        width = n_levels * f
        cols, vals = cols[:, : width + extra], vals[:, : width + extra]
        if self.rolls:
            roll_count = np.repeat(np.arange(1.0, n_levels + 1), f)
            counts = vals[:, :width] @ roll_count  # rolls of a turn = the level its path ended on
            self.roll_counts[lo:hi] = -counts if system else counts
        diag = np.arange(lo, hi, dtype=itype)
        if no_cap:  # put the (< NO_CAP_MASS) mass of endless six runs back where the turn began
            total = vals[:, :width].sum(axis=1)
            cols[:, width] = diag
            if system:  # the entries are negated: -(1 - sum) where that is below 0
                deficit = -1.0 - total
                vals[:, width] = np.where(deficit < 0, deficit, 0.0)
            else:
                deficit = 1.0 - total
                vals[:, width] = np.where(deficit > 0, deficit, 0.0)
        if system:
            cols[:, -1] = diag
            vals[:, -1] = 1.0
        valid = vals != 0
        local_ptr = np.zeros(nb + 1, dtype=self.out_dtype)
        np.cumsum(np.count_nonzero(valid, axis=1), out=local_ptr[1:])
        at = np.flatnonzero(valid)  # the entries, row by row (one index array for both tables)
        # the table read row by row is the CSR block with duplicates; scipy sorts each row and sums equal columns
        data = (vals.ravel() if vals.flags.c_contiguous else vals.reshape(-1)).take(at)
        indices = (cols.ravel() if cols.flags.c_contiguous else cols.reshape(-1)).take(at)
        blk = sp.csr_matrix((data, indices.astype(self.out_dtype, copy=False), local_ptr), shape=(nb, n + 1))
        if _first_row_unsorted(blk):  # then so is the block: what scipy's O(nnz) checks in sum_duplicates would find
            blk.has_sorted_indices = False
        blk.sum_duplicates()
        return blk

    def _tables(self, nb: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``(rows, slots)`` column and value tables of a block of ``nb`` rows, in buffers kept between blocks.

        Reusing them saves the first touch of fresh memory pages on every block.
        """
        width = self.slots
        if self._buffers is None or self._buffers[0].size < nb * width:
            size = max(nb, min(self.block, self.n)) * width
            self._buffers = (np.empty(size, dtype=self.itype), np.empty(size))
        return self._buffers[0][: nb * width].reshape(nb, width), self._buffers[1][: nb * width].reshape(nb, width)

    def _land_level(self, lo: int, hi: int, live: Any, s: Any, w: np.ndarray) -> None:
        """Gather the landings of one level of rolls from rows ``lo:hi`` (``w``: the weights of its outcomes)."""
        n, f, chained = self.n, self.f, self.chained
        hit = (s.landing >= 0) & (w > 0)
        if self.landing_weights is not None:
            rows_w = self.landing_weights[lo:hi][live]
            ww = rows_w[:, None] * w
            self._land_sum += np.bincount(s.landing[hit], weights=ww[hit], minlength=n + 1)
            if chained:  # a chain of jumps lands on every square where one acts: spread once, at the end
                took = hit & (s.square != s.landing)
                self._chain_mass += np.bincount(s.landing[took], weights=ww[took], minlength=n + 1)
        if self.landings:
            rows_l = np.arange(lo, hi, dtype=self.itype)[live]
            land_r, land_c, land_v = self._land
            if chained:  # a chain of jumps lands on every square where one acts
                at, sq_l = all_landings(self.board, np.where(hit, s.landing, -1).ravel(), s.square.ravel(), chained)
                land_r.append(rows_l[at // f])
                land_c.append(sq_l)
                land_v.append(w.ravel()[at])
            else:
                land_r.append(np.broadcast_to(rows_l[:, None], hit.shape)[hit])
                land_c.append(s.landing[hit])
                land_v.append(w[hit])

    def landings_found(self) -> tuple:
        """The landings gathered so far: ``(rows, cols, values)``, or ``(empty, empty, weighted sums)``."""
        empty = np.zeros(0, dtype=self.itype)
        if self.landing_weights is not None:
            land_sum = self._land_sum
            if self.chained:
                land_sum = land_sum + self.chained.spread(self._chain_mass)
            return (empty, empty, land_sum)
        land_r, land_c, land_v = self._land
        if self.landings and land_r:
            return (np.concatenate(land_r), np.concatenate(land_c), np.concatenate(land_v))
        return (empty, empty, np.zeros(0))


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
    board, rules = board_arg(board), rules_arg(rules)
    rules.check_board(board)
    check_model_memory(board, rules, "the turn matrix")
    n = board.size
    rows = _turn_rows(board, rules, landings=False)
    shape = (n + 1, n + 1)
    matrix = sp.csr_matrix((rows.data, rows.indices, rows.indptr), shape=shape)
    matrix.has_canonical_format = True  # sorted, duplicates summed by construction
    landings = functools.partial(_turn_landings_matrix, board, rules)  # built on first use
    model = TransitionModel(
        kind="turn",
        board=board,
        rules=rules,
        matrix=matrix,
        squares=np.arange(n + 1),
        absorbing=n,
        start=0,
        turn_start=np.ones(n + 1, dtype=bool),
        rolls=rows.rolls,
        _landings=landings,
    )
    if check:
        _check_winnable(board, model)
    return model


@dataclass(frozen=True, eq=False)
class RollTransitions:
    """Every transition of the roll-level chain, one entry per roll outcome.

    ``src -> tgt`` with probability ``prob``; ``landing`` is the square the
    roll lands on before a jump acts, or -1. States are numbered as in
    :func:`roll_model`; the absorbing state is ``size`` and has no entries.
    ``landed_at`` and ``landed_on`` list every landing as pairs (entry
    index, square): the ``landing`` of each entry that has one and, on a
    chained board, every later square of the chain where a jump acts.
    """

    size: int
    src: np.ndarray
    tgt: np.ndarray
    prob: np.ndarray
    landing: np.ndarray
    squares: np.ndarray
    sixes: np.ndarray
    origins: np.ndarray
    landed_at: np.ndarray
    landed_on: np.ndarray

    @property
    def labels(self) -> tuple:
        """Every state as a :class:`RollState` (built on request; nothing in the package reads them)."""
        return tuple(map(RollState, self.squares.tolist(), self.sixes.tolist(), self.origins.tolist()))


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
    board, rules = board_arg(board), rules_arg(rules)
    rules.check_board(board)
    check_model_memory(board, rules, "the roll matrix", levels=1 + (rules.max_sixes or 1))
    n = board.size
    tr = roll_transitions(board, rules)
    size = tr.size
    # the entries come state by state: CSR straight away (the finish's unit entry put in its place), then sorted and
    # summed row by row, as a conversion from COO would
    cut = int(np.searchsorted(tr.src, n))
    counts = np.bincount(tr.src, minlength=size)
    counts[n] = 1
    indptr = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.concatenate([tr.tgt[:cut], [n], tr.tgt[cut:]])
    matrix = sp.csr_matrix((np.concatenate([tr.prob[:cut], [1.0], tr.prob[cut:]]), indices, indptr), shape=(size, size))
    matrix.sum_duplicates()
    at = tr.landed_at
    if at.size == np.count_nonzero(tr.landing >= 0):  # no chained landings: they too come state by state
        counts = np.bincount(tr.src[at], minlength=size)
        indptr = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        landings = sp.csr_matrix((tr.prob[at], tr.landed_on, indptr), shape=(size, n + 1))
        landings.sum_duplicates()
    else:
        landings = sp.csr_matrix((tr.prob[at], (tr.src[at], tr.landed_on)), shape=(size, n + 1))
    rolls = np.ones(size)
    rolls[n] = 0.0
    turn_start = np.zeros(size, dtype=bool)
    turn_start[: n + 1] = True
    model = TransitionModel(
        kind="roll",
        board=board,
        rules=rules,
        matrix=matrix,
        squares=tr.squares,
        sixes=tr.sixes,
        origins=tr.origins,
        absorbing=n,
        start=0,
        turn_start=turn_start,
        rolls=rolls,
        _landings=landings,
    )
    if check:
        _check_winnable(board, model)
    return model


def _forfeit_states(board: Board, rules: Rules, levels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The in-turn states under ``on_cap="forfeit"``: ``(squares, sixes, origins, lookup)``.

    Following the sixes from each origin, the square after ``s`` sixes is
    fixed, so an in-turn state is ``(origin, s)``; ``lookup[s, o]`` is its
    index among them plus ``n + 1`` (the numbering of :func:`roll_model`),
    -1 where no turn gets there.
    """
    n = board.size
    sq_parts: list[np.ndarray] = []
    s_parts: list[np.ndarray] = []
    o_parts: list[np.ndarray] = []
    row = np.arange(n, dtype=np.int64)
    cur, six = row.copy(), np.zeros(n, dtype=np.int64)
    for s in range(1, levels + 1):
        out = one_roll(board, rules, cur, six, row)
        keep = out.cont
        row, cur = row[out.index[keep]], out.square[keep]
        six = np.full(row.size, s, dtype=np.int64)
        sq_parts.append(cur)
        s_parts.append(six)
        o_parts.append(row)
    mid_sq, mid_s, mid_o = (np.concatenate(a) for a in (sq_parts, s_parts, o_parts))
    lookup = np.full((levels + 1, n), -1, dtype=np.int64)
    lookup[mid_s, mid_o] = n + 1 + np.arange(mid_sq.size)
    return mid_sq, mid_s, mid_o, lookup


def roll_transitions(board: Board, rules: Rules) -> RollTransitions:
    """The raw transitions of :func:`roll_model`, with the landing of each.

    Read off the tables of :func:`roll_chain` (built block by block), in
    :func:`roll_model`'s numbering: entries state by state, each state's
    outcomes in the order of the die's values. Memory: the tables (about 16
    bytes per slot) and the entries (about 40 bytes each).
    """
    rules.check_board(board)
    n = board.size
    forfeit = rules.on_cap == "forfeit" and rules.max_sixes is not None
    t = _roll_tables(board, rules)
    k, f = t.prob.shape
    size = k + 1
    chain_of = np.empty(size, dtype=np.int64)  # the table row of each roll_model state (the finish has none)
    chain_of[t.model] = np.arange(k)
    rows = np.concatenate([np.arange(n, dtype=np.int64), np.arange(n + 1, size, dtype=np.int64)])
    order = chain_of[rows]
    prob = t.prob[order]
    valid = prob > 0
    src = np.broadcast_to(rows[:, None], valid.shape)[valid]
    nxt = t.target[order][valid]
    prob = prob[valid]
    finish = nxt < 0  # an outcome (prob > 0) to no state is the finish
    tgt = np.where(finish, n, t.model[np.maximum(nxt, 0)])
    square = np.where(finish, n, t.squares[np.maximum(nxt, 0)])  # where the roll leaves the token
    landing = t.landing[order][valid]
    squares = np.empty(size, dtype=np.int64)
    sixes = np.zeros(size, dtype=np.int64)
    origins = np.empty(size, dtype=np.int64)
    squares[t.model], sixes[t.model], origins[t.model] = t.squares, t.sixes, t.origins
    squares[n], origins[n] = n, n if forfeit else -1
    landed_at, landed_on = all_landings(board, landing, square)
    return RollTransitions(size, src, tgt, prob, landing, squares, sixes, origins, landed_at, landed_on)


class RollChain(NamedTuple):
    """The roll-level chain in square order, as ``(states, values)`` tables (see :func:`roll_chain`)."""

    squares: np.ndarray
    start: int
    target: np.ndarray
    prob: np.ndarray
    landing: np.ndarray
    extra: tuple[np.ndarray, np.ndarray]
    system: sp.csr_matrix


def roll_chain(board: Board, rules: Rules) -> RollChain:
    """The roll-level chain with its states ordered by ``(square, sixes, origin)``, built block by block.

    The states are those of :func:`roll_model` but the finish, in square
    order, where ``I - Q`` is block upper triangular with short blocks on
    boards whose snakes are short. Row ``i`` of the ``(states, values)``
    tables is state ``i``, column ``j`` the die's ``j``-th value
    (:func:`~snlmarkov.chain.mechanics.roll_slots`): ``target`` the state
    the roll leads to (-1: the finish, or no outcome), ``prob`` its
    probability (0: no outcome), ``landing`` the square it lands on (-1:
    none). ``extra`` lists, on a chained board, the later landings of a
    roll as pairs (flat slot index ``i * values + j``, square). States the
    game cannot reach from ``start`` (square 0 at the start of a turn) keep
    their rows, with no outcome: in ``system`` (``I - Q``, canonical CSR)
    they are unit rows. Nothing is sorted globally and no per-state object
    is made: memory about 16 bytes per slot plus the system.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> c = roll_chain(Board(3), Rules.preset("plain").replace(faces=2))
    >>> c.squares.tolist()  # (square, sixes 0) and (square, sixes 1): no bonus roll, never reached
    [0, 0, 1, 1, 2, 2]
    >>> c.target[::2].tolist(), c.system.diagonal().tolist()
    ([[2, 4], [4, -1], [-1, 4]], [1.0, 1.0, 1.0, 1.0, 0.5, 1.0])
    """
    rules.check_board(board)
    check_model_memory(board, rules, "the roll chain", per_entry=40, levels=1 + (rules.max_sixes or 1))
    t = _roll_tables(board, rules)
    target, prob, landing, (ex_slot, ex_sq) = t.target, t.prob, t.landing, t.extra
    k, f = prob.shape
    itype = target.dtype
    start = 0  # square 0 at the start of a turn comes first in square order
    # the states the game reaches: a search over the outcomes (a state with none points at itself)
    rows = np.repeat(np.arange(k, dtype=itype), f).reshape(k, f)
    graph = sp.csr_matrix(
        (prob.ravel(), np.where(target >= 0, target, rows).ravel(), np.arange(0, k * f + 1, f)), shape=(k, k)
    )
    del rows
    seen = np.zeros(k, dtype=bool)
    seen[breadth_first_order(graph, start, directed=True, return_predecessors=False)] = True
    del graph
    if not seen.all():
        target[~seen] = -1
        prob[~seen] = 0.0
        landing[~seen] = -1
    if ex_slot.size:
        keep = seen[ex_slot // f]
        ex_slot, ex_sq = ex_slot[keep], ex_sq[keep]
    system = _roll_system(target, prob, t.block)
    return RollChain(t.squares, start, target, prob, landing, (ex_slot, ex_sq), system)


class _RollTables(NamedTuple):
    """Every roll of the roll-level chain as ``(states, values)`` tables, states in square order.

    As in :class:`RollChain` (``target``, ``prob``, ``landing``, ``extra``),
    for every state, reachable or not; ``model`` is each state's index in
    :func:`roll_model`'s numbering, ``block`` the rows handled at once.
    """

    squares: np.ndarray
    sixes: np.ndarray
    origins: np.ndarray
    model: np.ndarray
    target: np.ndarray
    prob: np.ndarray
    landing: np.ndarray
    extra: tuple[np.ndarray, np.ndarray]
    block: int


def _roll_tables(board: Board, rules: Rules) -> _RollTables:
    """The tables of :func:`roll_chain` before the search for reachable states, built block by block."""
    n = board.size
    levels = 1 if rules.max_sixes is None else rules.max_sixes
    forfeit = rules.on_cap == "forfeit" and rules.max_sixes is not None
    f = len(rules.die.values)
    sq, six, orig, lookup, rank, model = _square_order_states(board, rules, levels, forfeit)
    k = sq.size
    itype = index_dtype(k * f + f, n + 2 * rules.die.top + 2)
    dest = board.destination().astype(itype)
    chained = chain_landings(board)
    target = np.empty((k, f), dtype=itype)
    prob = np.empty((k, f))
    landing = np.empty((k, f), dtype=itype)
    ex_slot: list[np.ndarray] = []
    ex_sq: list[np.ndarray] = []
    block = max(64, _BLOCK_SLOTS // f)
    for lo in range(0, k, block):
        hi = min(k, lo + block)
        cur, six_b = sq[lo:hi].astype(itype), six[lo:hi]
        origin = np.where(six_b == 0, cur, orig[lo:hi]).astype(itype)
        s = roll_slots(board, rules, cur, six_b, origin, dest=dest)
        p = s.prob
        nxt_six = np.minimum(six_b + 1, levels)[:, None]
        if forfeit:
            nxt = np.where(s.cont, lookup[nxt_six, origin[:, None]], s.square)
            if np.any(nxt < 0):  # guards the forfeit lookup; never expected
                raise ModelError("roll model: a turn reached an in-turn state that was not enumerated")
            nxt = rank[nxt]
        else:
            nxt = s.square.astype(np.int64) * (levels + 1) + np.where(s.cont, nxt_six, 0)
            nxt[s.square == n] = -1  # the finish
        none = p <= 0
        nxt[none] = -1
        target[lo:hi] = nxt
        prob[lo:hi] = p
        land = s.landing
        land[none] = -1
        landing[lo:hi] = land
        if chained:
            at, on = all_landings(board, land.ravel(), s.square.ravel(), chained)
            first = int(np.count_nonzero(land >= 0))  # all_landings lists the rolls' own landings first
            ex_slot.append(at[first:].astype(np.int64) + lo * f)
            ex_sq.append(on[first:])
    ex = (np.concatenate(ex_slot), np.concatenate(ex_sq)) if ex_slot else (np.zeros(0, np.int64), np.zeros(0, itype))
    return _RollTables(sq, six, orig, model, target, prob, landing, ex, block)


def _square_order_states(board: Board, rules: Rules, levels: int, forfeit: bool) -> tuple:
    """The states of :func:`roll_chain` in square order: ``(squares, sixes, origins, lookup, rank, model)``.

    Without ``forfeit`` state ``(p, s)`` is ``p * (levels + 1) + s`` (and
    ``lookup``, ``rank`` are None); under it the in-turn states are those of
    :func:`_forfeit_states`, and ``rank`` maps the numbering of
    :func:`roll_model` to square order (-1: the finish). ``model`` is the
    inverse: each state's index in :func:`roll_model`'s numbering.
    """
    n = board.size
    if not forfeit:
        sq = np.repeat(np.arange(n, dtype=np.int64), levels + 1)
        six = np.tile(np.arange(levels + 1, dtype=np.int64), n)
        model = np.where(six == 0, sq, n + 1 + (six - 1) * n + sq)
        return sq, six, np.full(sq.size, -1, dtype=np.int64), None, None, model
    mid_sq, mid_s, mid_o, lookup = _forfeit_states(board, rules, levels)
    sq = np.concatenate([np.arange(n, dtype=np.int64), mid_sq])
    six = np.concatenate([np.zeros(n, dtype=np.int64), mid_s])
    orig = np.concatenate([np.arange(n, dtype=np.int64), mid_o])
    order = np.lexsort((orig, six, sq))
    rank = np.empty(n + 1 + mid_sq.size, dtype=np.int64)
    rt_index = np.concatenate([np.arange(n), n + 1 + np.arange(mid_sq.size)])
    rank[rt_index[order]] = np.arange(order.size)
    rank[n] = -1  # the finish
    return sq[order], six[order], orig[order], lookup, rank, rt_index[order]


def _roll_system(target: np.ndarray, prob: np.ndarray, block: int) -> sp.csr_matrix:
    """``I - Q`` from the tables of :func:`roll_chain`, as canonical CSR, row block by row block."""
    k, f = target.shape
    capacity = k * (f + 1)
    itype = index_dtype(capacity, k)
    indices = np.empty(capacity, dtype=itype)
    data = np.empty(capacity)
    indptr = np.zeros(k + 1, dtype=itype)
    nnz = 0
    for lo in range(0, k, block):
        hi = min(k, lo + block)
        nb = hi - lo
        cols = np.empty((nb, f + 1), dtype=itype)
        vals = np.empty((nb, f + 1))
        cols[:, :f] = target[lo:hi]
        vals[:, :f] = -prob[lo:hi]
        cols[:, f] = np.arange(lo, hi, dtype=itype)
        vals[:, f] = 1.0
        valid = cols >= 0
        valid[:, :f] &= vals[:, :f] != 0
        ptr = np.zeros(nb + 1, dtype=itype)
        np.cumsum(np.count_nonzero(valid, axis=1), out=ptr[1:])
        blk = sp.csr_matrix((vals[valid], cols[valid], ptr), shape=(nb, k))
        blk.sum_duplicates()  # sorts each row and sums equal columns
        m = blk.nnz
        indices[nnz : nnz + m] = blk.indices
        data[nnz : nnz + m] = blk.data
        indptr[lo + 1 : hi + 1] = nnz + blk.indptr[1:]
        nnz += m
    indices.resize(nnz, refcheck=False)
    data.resize(nnz, refcheck=False)
    a = sp.csr_matrix((data, indices, indptr), shape=(k, k))
    a.has_canonical_format = True
    return a

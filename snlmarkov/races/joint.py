"""The joint chain of every racing token under ``bump``: its states and one turn.

A state of the chain is the resting square of every unfinished token and
the seat to move. Its probabilities are kept as a flat tensor of ``n**m``
entries (``n`` resting squares, ``m`` tokens) with the axis of the seat to
move first and the others in playing order:

- A seat's turn moves only its own token: the square where the turn ends has
  the distribution of row ``p`` of :func:`snlmarkov.chain.model.turn_model`
  (the rolls inside a turn do not depend on the other tokens; only the
  final resting square counts). So one turn is the sparse turn matrix
  applied along one axis of the tensor, then the bump: mass that ended on a
  square ``1..N-1`` held by another token is moved to ``bump_to`` (tokens on
  0 or ``N`` occupy nothing), and mass that reached ``N`` leaves the tensor.
- One turn is a single sparse-times-dense product ``(n+1, n) @ (n,
  n**(m-1))``; transposing the result puts the next seat first, so the axes
  rotate with the play and no other reshuffle is needed.
- Only squares where a token can rest are kept (square 0, ``bump_to``, and
  the squares turns can end on from them): jump starts drop out.
- The full tensor of a large race (4 tokens on the jungle board: 45 million
  entries) is moved by :class:`JointTensor` instead, the same chain with
  fewer passes over memory: two buffers that are reused, the product a
  slice at a time into the other buffer, each axis moved where it lies
  (the turn of the axis before the last written with the last axis first,
  so no pass of its own rotates the axes), and the turn applied to prefix
  sums along the mover's axis (:func:`prefix_form`: a die's faces land on
  runs of consecutive squares, two entries of the matrix per run instead
  of one per face); each product is written into a buffer that is reused
  (:func:`product_into`), the tensor's own where the slice is whole rows
  of it, cleared as the turn before read it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from ..chain.model import TransitionModel
from ..errors import GameError, ModelError

try:  # scipy's own kernel of ``csr @ dense`` (y += A x), to write a product into a buffer of ours
    from scipy.sparse._sparsetools import csr_matvecs as _csr_matvecs
except ImportError:  # pragma: no cover - a scipy without it: the public product, then a copy
    _csr_matvecs = None

__all__ = []


def bumps(end: Any, held: Any, bump_to: int, size: int) -> np.ndarray:
    """Whether a token whose turn ends on ``end`` is bumped by a token resting on ``held`` (arrays broadcast).

    The one statement of the bump rule on the exact side (docs/rules.md,
    ``bump``): a token that ends its turn on a square ``1..N-1`` (``N`` =
    ``size``) where another token stands goes back to ``bump_to``; square 0
    and the finish hold nothing, and a token ending on ``bump_to`` stays.
    The caller asks only under ``rules.bump``.

    Examples
    --------
    >>> bumps(np.array([0, 3, 3, 1, 10]), np.array([0, 3, 4, 1, 10]), 1, 10).tolist()
    [False, True, False, False, False]
    """
    end, held = np.asarray(end), np.asarray(held)
    return (end == held) & (end >= 1) & (end < size) & (end != bump_to)


def reachable(model: TransitionModel, origins: Sequence[int]) -> np.ndarray:
    """Bool per square ``0..N``: a token starting on one of ``origins`` can end a turn there.

    Found by a breadth-first search of the turn matrix.

    Examples
    --------
    >>> from snlmarkov import Board, Rules, turn_model
    >>> reachable(turn_model(Board(4, {2: 3}), Rules.preset("plain")), (0,)).tolist()
    [True, True, False, True, True]
    """
    return reachable_in(model.matrix, origins)


def reachable_in(matrix: Any, origins: Sequence[int]) -> np.ndarray:
    """:func:`reachable` for a turn matrix (any square matrix: an entry is a way from its row to its column)."""
    m = sp.csr_matrix(matrix)
    seen = np.zeros(m.shape[0], dtype=bool)
    for origin in origins:
        if not seen[origin]:
            seen[breadth_first_order(m, int(origin), directed=True, return_predecessors=False)] = True
    return seen


def resting_squares(model: TransitionModel, bump_to: int) -> np.ndarray:
    """The squares ``0..N-1`` where a token can end a turn.

    Square 0 (the start), ``bump_to`` (where a bumped token is placed) and
    every square a turn can end on from those.

    Examples
    --------
    >>> from snlmarkov import Board, Rules, turn_model
    >>> m = turn_model(Board(6, {2: 5}), Rules.preset("plain"))
    >>> resting_squares(m, 1).tolist()  # the ladder foot 2 is never a resting square
    [0, 1, 3, 4, 5]
    """
    seen = reachable(model, (0, int(bump_to)))
    seen[model.absorbing] = False
    return np.flatnonzero(seen)


@dataclass(frozen=True, eq=False)
class JointMover:
    """One seat's turn applied to a joint probability tensor.

    A tensor of ``m`` tokens is a flat array of ``n**m`` entries, ``n`` the
    number of resting squares; axis 0 is the seat to move, the other axes
    the seats after it in playing order.

    Attributes
    ----------
    squares : numpy.ndarray
        The resting squares, in increasing order (square 0 first).
    step : scipy.sparse.csr_matrix
        ``(n + 1, n)``: the turn matrix restricted to the resting squares,
        transposed; the last row is the finish.
    bump : bool
        Whether the bump rule acts.
    bump_index : int
        Position of ``bump_to`` in :attr:`squares`.

    Examples
    --------
    Two tokens on a board of 3 squares with a two-faced die; the mover is
    on square 1, the other token on square 2:

    >>> import numpy as np
    >>> from snlmarkov import Board, Rules, turn_model
    >>> rules = Rules.preset("plain").replace(faces=2, bump=True)
    >>> mover = JointMover.of(turn_model(Board(3), rules), rules)
    >>> mover.squares.tolist()
    [0, 1, 2]
    >>> x = np.zeros(9); x[1 * 3 + 2] = 1.0
    >>> nxt, out = mover.move(x, 2)
    >>> float(out.sum())  # a roll of 2 finishes
    0.5
    >>> float(nxt[2 * 3 + 1])  # a roll of 1 lands on 2, held by the other token: back to 1
    0.5
    """

    squares: np.ndarray = field(repr=False)
    step: sp.csr_matrix = field(repr=False)
    bump: bool
    bump_index: int
    _tables: dict = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, model: TransitionModel, rules: Any) -> JointMover:
        """Build the mover from a turn model and its rules."""
        return cls.on(model.matrix, resting_squares(model, rules.bump_to), rules)

    @classmethod
    def on(cls, matrix: Any, squares: np.ndarray, rules: Any, **extra: Any) -> JointMover:
        """Build the mover from a turn matrix restricted to ``squares`` (closed under its turns)."""
        return cls(
            squares=squares,
            step=_step(matrix, squares),
            bump=bool(rules.bump),
            bump_index=int(np.searchsorted(squares, rules.bump_to)),
            **extra,
        )

    @property
    def n(self) -> int:
        """Number of resting squares."""
        return int(self.squares.size)

    def _bump_table(self, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The bumped entries of a ``(n, n**(m-1))`` result: flat index, row (square) and column."""
        if m not in self._tables:
            src, where = self._axis_bump_table(m, 0)  # axis 0 moved: the flat index is row * width + column
            self._tables[m] = (src, src // self.n ** (m - 1), where)
        return self._tables[m]

    def _prefix(self) -> tuple[sp.csr_matrix, bool]:
        """:func:`prefix_form` of :attr:`step` (cached)."""
        if "prefix" not in self._tables:
            self._tables["prefix"] = prefix_form(self.step)
        return self._tables["prefix"]

    def _rows_matrix(self, b: int) -> sp.csr_matrix:
        """``b`` copies of the :meth:`_prefix` matrix on the diagonal, their finish rows last (cached).

        The turn of ``b`` whole rows ``x3[a : a + b]`` of a ``(q, n, r)``
        tensor in one product: rows ``i * n .. i * n + n - 1`` are row
        ``a + i`` after the turn, row ``b * n + i`` its finish; each row's
        entries in the order of the matrix it copies (the same sums).
        """
        key = ("rows", b)
        if key not in self._tables:
            a_mat, _ = self._prefix()
            if b == 1:
                self._tables[key] = a_mat
            else:
                n = self.n
                stacked = sp.kron(sp.identity(b, format="csr"), a_mat, format="csr")
                order = np.arange(b * (n + 1)).reshape(b, n + 1)
                k_mat = sp.csr_matrix(stacked[np.concatenate([order[:, :n].ravel(), order[:, n]])])
                k_mat.sort_indices()
                self._tables[key] = k_mat
        return self._tables[key]

    def _bumpable(self) -> np.ndarray:
        """Whether the mover is bumped on each resting square by a token resting there (:func:`bumps`; cached)."""
        if "bumpable" not in self._tables:
            sq = self.squares
            self._tables["bumpable"] = bumps(sq, sq, int(sq[self.bump_index]), int(sq[-1]) + 1)
        return self._tables["bumpable"]

    def _axis_bump_table(self, m: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The bumped entries of an ``m``-token tensor whose axis ``k`` has moved: flat index, and index among the others.

        The tensor is ``(n**k, n, n**(m-1-k))``, the mover's axis in the
        middle; an entry is bumped when the mover's square is held by a token
        on another axis (the rule: :func:`bumps`), its mass going to
        ``bump_index`` on the mover's axis with the other axes unchanged.
        """
        key = ("axis", m, k)
        if key not in self._tables:
            n = self.n
            r = n ** (m - 1 - k)
            others = np.arange(n ** (m - 1), dtype=np.int64)
            bumpable = self._bumpable()
            src, where = [], []
            for axis in range(m - 1):
                held = (others // n ** (m - 2 - axis)) % n
                hit = bumpable[held]
                g = others[hit]
                src.append((g // r) * (n * r) + held[hit] * r + g % r)
                where.append(g)
            src_all, first = np.unique(np.concatenate(src), return_index=True)
            self._tables[key] = (src_all, np.concatenate(where)[first])
        return self._tables[key]

    def _turn(self, x: np.ndarray, m: int) -> np.ndarray:
        """``(n + 1, n**(m-1))``: where the mover's turn ends (the finish last), before the bump."""
        return np.ascontiguousarray(self.step @ x.reshape(self.n, -1))

    def _turn_many(self, xs: list[np.ndarray], m: int) -> np.ndarray:
        """``(n + 1, batch, n**(m-1))``: :meth:`_turn` of several tensors in one product."""
        n, batch = self.n, len(xs)
        stacked = np.stack([x.reshape(n, -1) for x in xs], axis=1).reshape(n, -1)
        return np.ascontiguousarray(self.step @ stacked).reshape(n + 1, batch, -1)

    def move(self, x: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
        """One turn of the seat on axis 0 of an ``m``-token tensor.

        Parameters
        ----------
        x : numpy.ndarray
            Flat tensor of ``n**m`` probabilities.
        m : int
            Tokens in the tensor.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            The tensor after the turn, rotated so that the next seat is on
            axis 0 and the mover on the last axis; and the mass that reached
            the finish, a flat tensor of the other ``m - 1`` tokens in the
            same order (the next seat first).
        """
        n = self.n
        width = n ** (m - 1)
        y = self._turn(x, m)
        out = y[n].copy()
        if self.bump and m > 1:
            src, _, col = self._bump_table(m)
            flat = y.reshape(-1)
            moved = flat[src]
            flat[src] = 0.0
            y[self.bump_index] += np.bincount(col, weights=moved, minlength=width)
        return np.ascontiguousarray(y[:n].T).reshape(-1), out

    def move_many(self, xs: list[np.ndarray], m: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`move` applied to several ``m``-token tensors at once.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            Row ``b`` of the first array is the moved tensor ``b``, row ``b``
            of the second its finished mass.
        """
        if len(xs) == 1:
            nxt, out = self.move(xs[0], m)
            return nxt[None, :], out[None, :]
        n = self.n
        width = n ** (m - 1)
        batch = len(xs)
        y = self._turn_many(xs, m)
        out = y[n].copy()
        if self.bump and m > 1:
            _, row, col = self._bump_table(m)
            moved = y[row, :, col]  # (entries, batch)
            y[row, :, col] = 0.0
            where = (col[:, None] + width * np.arange(batch)[None, :]).ravel()
            y[self.bump_index] += np.bincount(where, weights=moved.ravel(), minlength=batch * width).reshape(
                batch, width
            )
        return np.ascontiguousarray(y[:n].transpose(1, 2, 0)).reshape(batch, n * width), out

    def move_all(self, keys: list, store: dict, size_of: Any) -> list:
        """:meth:`move` of the tensors ``store[key]`` for ``keys`` (``size_of(key)`` tokens each).

        Tensors of at most :data:`BATCH_ENTRIES` entries go through
        :meth:`move_many` together, by size; a larger one is moved on its
        own (batching it costs more in copies than it saves in calls).
        Returns ``[(key, moved, finished), ...]``.
        """
        groups: dict[int, list] = defaultdict(list)
        done: list = []
        for key in keys:
            m = size_of(key)
            if self.n**m <= BATCH_ENTRIES:
                groups[m].append(key)
            else:
                done.append((key, *self.move(store[key], m)))
        for m, group in groups.items():
            nxt, out = self.move_many([store[key] for key in group], m)
            done.extend(zip(group, nxt, out))
        return done

    def point(self, squares: Sequence[int], seats: Sequence[int] | None = None) -> np.ndarray:
        """A point mass on the tokens' ``squares`` (the seat to move first, the others in playing order).

        ``seats`` (the seat of each square) only names the token in the error.

        Raises
        ------
        GameError
            If a token is on a square where no turn ends.

        Examples
        --------
        >>> from snlmarkov import Board, Rules, turn_model
        >>> rules = Rules.preset("plain").replace(bump=True)
        >>> mover = JointMover.of(turn_model(Board(3), rules), rules)
        >>> int(np.flatnonzero(mover.point((2, 0)))[0])  # square 2 is index 2, square 0 index 0: 2 * 3 + 0
        6
        """
        n = self.n
        index = 0
        for i, p in enumerate(squares):
            at = int(np.searchsorted(self.squares, p))
            if at >= n or self.squares[at] != p:
                seat = i if seats is None else seats[i]
                raise GameError(f"GameState.positions[{seat}] = {p}: no turn ends on that square under these rules")
            index = index * n + at
        x = np.zeros(n ** len(squares))
        x[index] = 1.0
        return x


def _step(matrix: Any, squares: np.ndarray) -> sp.csr_matrix:
    """``(n + 1, n)``: the turn matrix among ``squares`` (and the finish, last), transposed."""
    n = matrix.shape[0] - 1
    sub = sp.csr_matrix(matrix)[squares][:, np.append(squares, n)]
    lost = np.abs(np.asarray(sub.sum(axis=1)).ravel() - 1.0).max()
    if lost > 1e-12:  # the resting squares are closed under turns by construction
        raise ModelError("a turn left the resting squares: the joint chain would lose mass")
    step = sp.csr_matrix(sub.T)
    step.sum_duplicates()
    return step


def _next_in(alive: tuple[int, ...], seat: int) -> int:
    """The first seat of ``alive`` after ``seat`` in playing order (cyclic)."""
    for a in alive:
        if a > seat:
            return a
    return alive[0]


def _add(store: dict, key: Any, x: np.ndarray) -> None:
    if key in store:
        store[key] += x
    else:
        store[key] = x


#: Tensors of at most this many entries are moved together by :meth:`JointMover.move_all`.
BATCH_ENTRIES = 2048

#: Columns of a tensor slice per sparse product in :class:`JointTensor` (the slice stays in cache).
BLOCK_COLUMNS = 8192

#: The full tensor of a race is moved by :class:`JointTensor` from this many tokens ``m`` on,
IN_PLACE_TOKENS = 3
#: when ``n**(m-2)`` (the columns of a product along axis 1) is at least this (else the calls cost more than they save).
IN_PLACE_SLICE = 1024

#: Side of the tiles in which :class:`JointTensor` transposes its tensor.
TILE = 512

#: :class:`JointTensor` moves an axis where it lies when the axes after it hold at least this many entries
#: (the columns of its products); else the axes before it are rotated to the end first.
ROW_COLUMNS = 64


def product_into(a_mat: sp.csr_matrix, part: np.ndarray, out: np.ndarray, *, zeroed: bool = False) -> np.ndarray:
    """``a_mat @ part`` written into ``out``, returned as ``(rows, columns)``.

    ``part`` is a C-contiguous ``(a_mat.shape[1], columns)`` array and
    ``out`` a flat buffer of at least ``a_mat.shape[0] * columns`` entries.
    The product is scipy's own ``csr @ dense`` kernel run on ``out`` (the
    same sums in the same order: equal to the last bit), without the array
    of the result that the public product allocates and fills; where scipy
    has no such kernel, that product and a copy. ``zeroed``: the caller
    knows those entries of ``out`` are 0.0 already (the kernel adds to what
    is there), so they are not cleared again.

    Examples
    --------
    >>> a = sp.csr_matrix(np.array([[0.5, 0.5], [0.0, 1.0], [0.25, 0.0]]))
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> out = np.empty(9)
    >>> bool(np.array_equal(product_into(a, x, out), a @ x))
    True
    """
    rows, cols = a_mat.shape[0], part.shape[1]
    res = out[: rows * cols]
    if _csr_matvecs is None:
        res[:] = (a_mat @ part).reshape(-1)
    else:
        if not zeroed:
            res[:] = 0.0  # the kernel adds to what is there
        _csr_matvecs(rows, a_mat.shape[1], cols, a_mat.indptr, a_mat.indices, a_mat.data, part.reshape(-1), res)
    return res.reshape(rows, cols)


def prefix_matrix(step: Any) -> sp.csr_matrix:
    """``k`` with ``step @ x == k @ cumsum(x)`` (prefix sums along the rows of ``x``): ``k[:, j] = step[:, j] - step[:, j + 1]``.

    A run of equal entries along a row of ``step`` is two entries of ``k``.

    Examples
    --------
    >>> prefix_matrix(sp.csr_matrix(np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]))).toarray().tolist()
    [[0.0, 0.5, 0.0], [-0.5, 0.0, 0.5]]
    """
    s = sp.csc_matrix(step)
    rows = s.shape[0]
    shifted = sp.hstack([s[:, 1:], sp.csc_matrix((rows, 1))], format="csc")
    k = sp.csr_matrix(s - shifted)
    k.eliminate_zeros()
    k.sort_indices()
    return k


def prefix_form(step: Any) -> tuple[sp.csr_matrix, bool]:
    """The turn matrix to apply to a tensor, and whether it acts on prefix sums of the mover's axis.

    :func:`prefix_matrix` when it has fewer entries than ``step`` by more
    than the rows the prefix sums cost (the faces of a die land on
    consecutive resting squares: runs), else ``step``.

    Examples
    --------
    >>> k, prefix = prefix_form(sp.csr_matrix(np.array([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]])))
    >>> k.toarray().tolist(), prefix
    ([[0.0, 0.0, 0.5], [0.0, 0.0, 0.5]], True)
    """
    k = prefix_matrix(step)
    if k.nnz + step.shape[1] < step.nnz:
        return k, True
    return sp.csr_matrix(step), False


class JointTensor:
    """The joint tensor of ``m >= 3`` tokens, moved turn by turn in two buffers.

    The same chain as :meth:`JointMover.move`, with fewer passes over the
    tensor: its axes are not rotated every turn. Seen as ``(q, n, r)``
    with the mover's axis ``k`` in the middle, a turn goes through the
    sparse product a slice at a time (at most :data:`BLOCK_COLUMNS`
    columns) into the other buffer:

    - ``"columns"``: a row ``x[a]`` of more than :data:`BLOCK_COLUMNS`
      columns in slices, each product in a buffer of its own and copied;
    - ``"rows"``: whole rows ``x[a : a + b]`` in one product (``b`` copies
      of the turn matrix, :meth:`JointMover._rows_matrix`) written straight
      into the other buffer, which the turn before cleared as it read it
      (scipy's kernel adds to what is there);
    - ``"rotating"``: the axis before the last, whose slices are copied
      mover first in cache and written with the last axis first, so that
      the tensor comes out rotated by ``m - 1``, the next seat on axis 0;
    - ``"rotate"``: an axis with fewer than :data:`ROW_COLUMNS` entries
      after it (5 tokens or more, or a seat moved out of turn): the axes
      before it go to the end in one tiled copy first.

    With every seat in turn, the axes of 4 tokens are moved 0, 1, 2
    (rotating), 0, 1, 2, ... and never rotated by a pass of their own.
    The turn acts on prefix sums of the mover's axis when that is cheaper
    (:func:`prefix_form`); the bump is the rule of :func:`bumps`, moved
    slab by slab after the turn (:meth:`_bump`), or, in the rotating turn,
    slice by slice while each is in cache (:meth:`_bump_rows`).

    Parameters
    ----------
    x : numpy.ndarray
        Flat tensor of ``n**m`` probabilities, axes in the order of ``seats``
        (taken over: it is overwritten).
    seats : tuple of int
        The seat of each axis, in playing order from the seat to move.
    movers : tuple of JointMover
        One mover per seat (indexed by seat), on the same squares.

    Examples
    --------
    Three tokens on a board of 3 squares with a two-faced die, as
    :meth:`JointMover.move` does it:

    >>> from snlmarkov import Board, Rules, turn_model
    >>> rules = Rules.preset("plain").replace(faces=2, bump=True)
    >>> mover = JointMover.of(turn_model(Board(3), rules), rules)
    >>> x = mover.point((1, 2, 0))
    >>> t = JointTensor(x.copy(), (0, 1, 2), (mover,) * 3)
    >>> out = t.move(0)
    >>> nxt, old = mover.move(x, 3)
    >>> bool(np.allclose(t.ordered(1), nxt, atol=1e-15)), float(out.sum()), float(old.sum())
    (True, 0.5, 0.5)
    """

    def __init__(self, x: np.ndarray, seats: tuple[int, ...], movers: tuple[JointMover, ...]) -> None:
        self.seats = tuple(seats)
        self.m = len(self.seats)
        self.n = movers[self.seats[0]].n
        self.movers = movers
        self.x = x
        self.spare = np.zeros_like(x)
        self._spare_zero = True  # every entry of the spare buffer is 0.0 (a whole-row product need not clear it)
        self._sum: float | None = None
        self._scratch: dict[str, np.ndarray] = {}

    def sum(self) -> float:
        """The probability in the tensor (read once after each turn)."""
        if self._sum is None:
            self._sum = float(self.x.sum())
        return self._sum

    def _buffer(self, name: str, size: int) -> np.ndarray:
        """A scratch buffer of ``size`` entries, kept from turn to turn (one per ``name``; its contents are not kept)."""
        buf = self._scratch.get(name)
        if buf is None or buf.size < size:
            buf = self._scratch[name] = np.empty(size)
        return buf[:size]

    def ordered(self, seat: int) -> np.ndarray:
        """The tensor with ``seat`` on axis 0 and the others in playing order after it (a copy)."""
        n, m, k = self.n, self.m, self.seats.index(seat)
        return np.ascontiguousarray(self.x.reshape(n**k, n ** (m - k)).T).reshape(-1)

    def _rotate(self, k: int) -> None:
        """Move the first ``k`` axes to the end (one copy, by tiles that stay in cache)."""
        n, m = self.n, self.m
        rows, cols = n**k, n ** (m - k)
        src, dst = self.x.reshape(rows, cols), self.spare.reshape(cols, rows)
        for i in range(0, rows, TILE):
            for j in range(0, cols, TILE):
                dst[j : j + TILE, i : i + TILE] = src[i : i + TILE, j : j + TILE].T
        self.x, self.spare = self.spare, self.x
        self._spare_zero, self._sum = False, None
        self.seats = self.seats[k:] + self.seats[:k]

    def _path(self, k: int) -> str:
        """How a turn along axis ``k`` is moved (see the class).

        ``"rotating"`` for the axis before the last (its turn written with
        the last axis first, so no pass rotates the axes), ``"rows"`` when
        the axes after ``k`` hold at most :data:`BLOCK_COLUMNS` entries
        (whole rows of the ``(q, n, r)`` view a product), ``"columns"``
        when they hold more (a row cut in slices), ``"rotate"`` when they
        hold fewer than :data:`ROW_COLUMNS` (the axes before ``k`` go to
        the end first).
        """
        n, m = self.n, self.m
        r = n ** (m - 1 - k)
        if k == m - 2 and k >= 1:
            return "rotating"
        if k > 1 and r < ROW_COLUMNS:
            return "rotate"
        return "rows" if r <= BLOCK_COLUMNS else "columns"

    def move(self, seat: int, *, ordered: bool = True) -> np.ndarray:
        """``seat``'s turn; the mass that reached the finish, a flat tensor of the other tokens.

        With ``ordered`` the other tokens are in playing order from the next
        seat, as from :meth:`JointMover.move`; else in the order of the
        tensor's axes (for its sum).
        """
        k = self.seats.index(seat)
        path = self._path(k)
        if path == "rotate":
            self._rotate(k)
            k = 0
            path = self._path(0)
        n, m = self.n, self.m
        mover = self.movers[seat]
        q, r = n**k, n ** (m - 1 - k)
        x3 = self.x.reshape(q, n, r)
        fin = np.empty((q, r))
        # the next seat's axis (k + 1) writes its products straight into this tensor's buffer when it
        # takes whole rows: then this turn clears each slice of the tensor as soon as it is read (while
        # in cache), and the next turn's kernel, which adds to what is there, need not clear it again
        clear = path != "rotating" and self._path((k + 1) % m) == "rows"
        if path == "rotating":
            self._rotating_rows(mover, x3, fin)  # the bump too, slice by slice
            self.seats = self.seats[m - 1 :] + self.seats[: m - 1]
        else:
            if path == "rows":
                self._whole_rows(mover, x3, fin, clear=clear)
            else:
                self._sliced_rows(mover, x3, fin, clear=clear)
            if mover.bump:
                self._bump(mover, k)
        self.x, self.spare = self.spare, self.x
        self._spare_zero, self._sum = clear, None
        if ordered and k:
            return np.ascontiguousarray(fin.T).reshape(-1)
        return fin.reshape(-1)

    def _sliced_rows(self, mover: JointMover, x3: np.ndarray, fin: np.ndarray, *, clear: bool) -> None:
        """The turn of ``x3``'s middle axis into the spare buffer, each row ``x3[a]`` in slices of :data:`BLOCK_COLUMNS`."""
        n = self.n
        q, r = x3.shape[0], x3.shape[2]
        y3 = self.spare.reshape(q, n, r)
        a_mat, prefix = mover._prefix()
        width = BLOCK_COLUMNS
        buf = self._buffer("part", n * width)
        res_buf = self._buffer("result", (n + 1) * width)
        for a in range(q):
            for c in range(0, r, width):
                blk = x3[a, :, c : c + width]
                part = buf[: blk.size].reshape(blk.shape)  # contiguous, for the product
                _gather(blk, part, prefix, clear)
                res = product_into(a_mat, part, res_buf)
                y3[a, :, c : c + width] = res[:n]
                fin[a, c : c + width] = res[n]

    def _rotating_rows(self, mover: JointMover, x3: np.ndarray, fin: np.ndarray) -> None:
        """The turn of ``x3``'s middle axis (``(q, n, r)``, the tensor's axis before the last) into the spare buffer as ``(r, q, n)``.

        A slice of rows ``x3[a : a + b]`` is copied mover's axis first,
        ``(n, b * r)`` (in cache), takes its prefix sums and one product
        with the turn matrix, and is written with the last axis first and
        the mover's last: the tensor's axes come out rotated by ``m - 1``,
        the next seat first, with no pass of its own to rotate them.
        """
        n = self.n
        q, r = x3.shape[0], x3.shape[2]
        a_mat, prefix = mover._prefix()
        rows = min(q, max(1, BLOCK_COLUMNS // r))
        buf = self._buffer("part", n * rows * r)
        res_buf = self._buffer("result", (n + 1) * rows * r)
        out = self.spare.reshape(r, q, n)
        hit = np.flatnonzero(mover._bumpable()) if mover.bump else None
        for a in range(0, q, rows):
            b = min(rows, q - a)
            part = buf[: n * b * r].reshape(n, b, r)
            np.copyto(part.transpose(1, 0, 2), x3[a : a + b])
            flat = part.reshape(n, b * r)
            if prefix:
                _gather(flat, flat, prefix, False)  # the prefix sums in place
            res = product_into(a_mat, flat, res_buf).reshape(n + 1, b, r)
            if hit is not None:
                self._bump_rows(mover, res[:n], a, hit)
            np.copyto(out[:, a : a + b, :], res[:n].transpose(2, 1, 0))
            fin[a : a + b] = res[n]

    def _bump_rows(self, mover: JointMover, res: np.ndarray, a: int, hit: np.ndarray) -> None:
        """The bump of :meth:`_bump` on one slice of the rotating turn, while it is in cache.

        ``res`` is the slice ``(n, b, r)`` of the turn's result, the mover's
        axis first, rows ``a .. a + b`` of the axes before the mover's and
        the last axis (``r == n``) last; ``hit`` the squares where the mover
        is bumped (:meth:`JointMover._bumpable`). The tensor comes out with that last
        axis first, then the axes before the mover's, then the mover's, so
        :meth:`_bump` would go through the last axis first, then the others
        in order: so does this, each entry given the same sums in the same
        order (equal to the last bit).
        """
        n, m = self.n, self.m
        bi, on = mover.bump_index, mover._bumpable()
        # the last axis on a square of ``hit``, the mover on the same square
        res[bi, :, hit] += res[hit, :, hit]
        res[hit, :, hit] = 0.0
        row = np.arange(a, a + res.shape[1])
        for d in range(m - 2):  # the axes before the mover's, in order: digit d of the row's index
            t = (row // n ** (m - 3 - d)) % n
            sel = np.flatnonzero(on[t])
            if sel.size:
                ts = t[sel]
                res[bi, sel, :] += res[ts, sel, :]
                res[ts, sel, :] = 0.0

    def _bump(self, mover: JointMover, k: int) -> None:
        """The bump after axis ``k``'s turn, in the spare buffer: the rule of :func:`bumps`, slab by slab.

        For each other axis ``l`` and each square ``s`` where a token can be
        bumped, the entries with the mover and axis ``l`` both on ``s`` (an
        ``n**(m-2)`` slab) go to the mover on ``bump_to``. Entries where
        several tokens share the mover's square are moved by the first such
        axis; the later ones find them empty.
        """
        n, m = self.n, self.m
        y = self.spare.reshape((n,) * m)
        hit = np.flatnonzero(mover._bumpable())
        for axis in range(m):
            if axis == k:
                continue
            for s in hit.tolist():
                src: list[Any] = [slice(None)] * m
                src[k] = src[axis] = s
                dst = list(src)
                dst[k] = mover.bump_index
                slab = y[tuple(src)]
                y[tuple(dst)] += slab
                slab[...] = 0.0

    def _whole_rows(self, mover: JointMover, x3: np.ndarray, fin: np.ndarray, *, clear: bool) -> None:
        """The turn of ``x3``'s middle axis (``(q, n, r)``) into the spare buffer, whole rows ``x3[a]`` a product.

        Up to ``n`` rows (their finish rows must fit in the next row) and
        :data:`BLOCK_COLUMNS` columns go in one product. The product of
        ``b`` rows is :meth:`JointMover._rows_matrix` (``b``
        copies of the turn matrix, the finish rows last) on their prefix
        sums, written straight into the spare buffer: its ``b * n`` rows
        are ``y3[a : a + b]``, and its ``b`` finish rows spill onto the
        next rows of the buffer, which are written after they have been
        read (and cleared again when the buffer was all 0.0). The last
        product goes through a buffer of its own.
        """
        n = self.n
        q, r = x3.shape[0], x3.shape[2]
        y3 = self.spare.reshape(q, n, r)
        _, prefix = mover._prefix()
        rows = min(n, q, BLOCK_COLUMNS // r)
        buf = self._buffer("part", rows * n * r)
        res_buf = self._buffer("result", rows * (n + 1) * r)
        zeroed = self._spare_zero
        flat = self.spare
        for a in range(0, q, rows):
            b = min(rows, q - a)
            blk = x3[a : a + b]
            part = buf[: blk.size].reshape(blk.shape)
            _gather(blk, part, prefix, clear, axis=1)
            k_mat = mover._rows_matrix(b)
            if a + b < q:
                res = product_into(k_mat, part.reshape(b * n, r), flat[a * n * r :], zeroed=zeroed)
                fin[a : a + b] = res[b * n :]
                if zeroed:
                    res[b * n :] = 0.0
            else:
                res = product_into(k_mat, part.reshape(b * n, r), res_buf)
                y3[a : a + b] = res[: b * n].reshape(b, n, r)
                fin[a : a + b] = res[b * n :]


def _gather(blk: np.ndarray, part: np.ndarray, prefix: bool, clear: bool, *, axis: int = 0) -> None:
    """Copy ``blk`` into the contiguous ``part``, as prefix sums along ``axis`` when ``prefix``; clear ``blk`` with ``clear``.

    Each slice of ``blk`` is cleared just after it is read, while it is in cache.
    """
    if not prefix:
        np.copyto(part, blk)
        if clear:
            blk[...] = 0.0
        return
    head = (slice(None),) * axis
    np.copyto(part[head + (0,)], blk[head + (0,)])
    if clear:
        blk[head + (0,)] = 0.0
    for j in range(1, blk.shape[axis]):
        np.add(part[head + (j - 1,)], blk[head + (j,)], out=part[head + (j,)])
        if clear:
            blk[head + (j,)] = 0.0

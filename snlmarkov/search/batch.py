"""Exact figures of many boards at once: stacked turn matrices and batched dense solves.

A search over board layouts needs the exact mean and spread of thousands of
candidate boards a second. One board's turn matrix depends on the board only
through where a landing on each square leads (:meth:`Board.destination`), so
this module builds the turn matrices of a whole batch of boards with array
operations over ``(board, square)`` at once: every roll of a turn comes from
the exact kernel (:func:`~snlmarkov.chain.mechanics.roll_slots_batch`, the
boards' squares on one flat axis), level after level as
:mod:`snlmarkov.chain.model` does, and the systems are solved with one
stacked :func:`numpy.linalg.solve` on a ``(boards, N, N)`` array. Rules the
kernel cannot batch (:func:`~snlmarkov.chain.mechanics.batchable`) go to the
general per-board model.

Cost: building a batch is ``O(boards * N * values * rolls per turn)``; the
mean and variance take one LU factorization a board (:func:`moments`,
``O(boards * N**3)`` with LAPACK) and two triangular solves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg.lapack import dgetrf, dgetrs

from ..board import Board
from ..chain.mechanics import batchable, no_cap_depth, roll_slots_batch
from ..errors import BoardError, ModelError, SnlError, UnwinnableBoardError
from ..limits import check_memory
from ..rules import Rules

__all__ = []

#: Boards stacked per dense solve (keeps the (B, N, N) arrays in cache-sized pieces).
BATCH = 256
#: Most (state, die value) slots one roll of a block handles.
_BLOCK_SLOTS = 1 << 22


_CONTROLLER: Any = None


def single_threaded() -> Any:
    """A context in which BLAS and LAPACK use one thread.

    Stacked solves of small matrices gain nothing from BLAS threads and lose
    much to them on a busy machine; parallel work goes through an executor
    instead. (The limit is set with :mod:`threadpoolctl`, process-wide, for
    the duration of the context.)
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def destinations(boards: Sequence[Board]) -> np.ndarray:
    """Where a landing on each square ends up, one row per board (chains of jumps followed).

    All boards must have the same size.

    Examples
    --------
    >>> from snlmarkov import Board
    >>> destinations([Board(6, {2: 5}), Board(6, {4: 1})]).tolist()
    [[0, 1, 5, 3, 4, 5, 6], [0, 1, 2, 3, 1, 5, 6]]
    """
    sizes = {b.size for b in boards}
    if len(sizes) != 1:
        raise BoardError(f"a batch holds boards of one size; got sizes {sorted(sizes)}")
    dest = np.stack([b.destination() for b in boards]).astype(np.int64)
    return _follow_chains(dest)


def _follow_chains(dest: np.ndarray) -> np.ndarray:
    """Follow jumps that end on another jump's start until they rest (boards refuse cycles)."""
    rows = np.arange(dest.shape[0])[:, None]
    for _ in range(dest.shape[1]):
        nxt = dest[rows, np.minimum(dest, dest.shape[1] - 1)]
        nxt = np.where(dest >= dest.shape[1], dest, nxt)  # a sentinel beyond the finish stays
        if np.array_equal(nxt, dest):
            return dest
        dest = nxt
    raise SnlError("jumps form a cycle")  # pragma: no cover - Board refuses cycles


def _fast(rules: Rules) -> bool:
    """True when the exact kernel can roll these rules for a whole batch (:func:`~snlmarkov.chain.mechanics.batchable`)."""
    return batchable(rules)


def _boards_per_block(rules: Rules, size: int) -> int:
    """Boards stacked per solve: :data:`BATCH`, fewer when the die has many values (the kernel's slots stay bounded)."""
    return max(1, min(BATCH, _BLOCK_SLOTS // max(1, size * len(rules.die.values))))


def turn_matrices(dest: np.ndarray, rules: Rules, states: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """The turn matrices of a batch of boards, as one dense array.

    Parameters
    ----------
    dest : numpy.ndarray
        Shape ``(B, N + 1)``: :func:`destinations` of the boards. A value
        ``N + 1`` marks a square whose landing ends the game in a second
        absorbing state (used to compute the chance a jump is ever used).
    rules : Rules
        One rule set for the whole batch (``bump`` is ignored: one token).
    states : numpy.ndarray, optional
        Shape ``(B, S)``: for each board, the sorted squares (0 first) to
        build rows and columns for; every square a turn can end on must be
        among them (see :func:`resting_states`). Default: all of ``0..N-1``.

    Returns
    -------
    matrix : numpy.ndarray
        Shape ``(B, S, S + 2)``: ``matrix[b, i, j]`` is the chance that a turn
        begun on square ``states[b, i]`` of board ``b`` ends on
        ``states[b, j]`` (``j = S`` the finish, ``j = S + 1`` the second
        absorbing state).
    ascends : numpy.ndarray of bool
        Shape ``(B,)``: every square of the board has a turn ending higher up,
        so every square can finish and ``I - Q`` is invertible.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> q, ok = turn_matrices(destinations([Board(3)]), Rules.preset("plain").replace(faces=2))
    >>> q[0, :, :4].tolist(), ok.tolist()
    ([[0.0, 0.5, 0.5, 0.0], [0.0, 0.0, 0.5, 0.5], [0.0, 0.0, 0.5, 0.5]], [True])
    """
    dest = np.asarray(dest, dtype=np.int64)
    b_count, n1 = dest.shape
    n = n1 - 1
    if states is None:
        states = np.broadcast_to(np.arange(n, dtype=np.int64), (b_count, n))
    squares = np.asarray(states, dtype=np.int64)
    c = squares.shape[1]
    boards = np.arange(b_count, dtype=np.int64)[:, None]
    pos = np.full((b_count, n + 2), -1, dtype=np.int64)  # square -> its row/column, or -1
    pos[boards, squares] = np.arange(c)
    pos[:, n], pos[:, n + 1] = c, c + 1
    flat_pos = pos.ravel()
    # one state per (board, row), flattened: where each looks up its board's squares
    pos_base = np.repeat(np.arange(b_count, dtype=np.int64) * (n + 2), c)[:, None]
    row_base = (np.arange(b_count * c, dtype=np.int64) * (c + 2))[:, None]
    dest_base = np.repeat(np.arange(b_count, dtype=np.int64) * n1, c)
    flat_dest = dest.ravel()
    origin = squares.ravel()
    cur = origin.copy()
    weight = np.ones(b_count * c)
    top = np.full(b_count * c, -1, dtype=np.int64)
    depth = no_cap_depth(rules.die) if rules.max_sixes is None and rules.bonus_on_six else 0
    idx_parts: list[np.ndarray] = []
    w_parts: list[np.ndarray] = []
    level = 0
    left = np.zeros(b_count * c)
    while True:
        s = roll_slots_batch(n, rules, cur, np.full(cur.size, level), origin, flat_dest, dest_base)
        w = weight[:, None] * s.prob
        ends = np.where(s.cont, 0.0, w)
        col = flat_pos[pos_base + s.square]
        if np.any((col < 0) & (ends > 0)):
            raise SnlError("a turn ends on a square outside the states given")  # pragma: no cover
        idx_parts.append((row_base + np.maximum(col, 0)).ravel())
        w_parts.append(ends.ravel())
        np.maximum(top, np.where(ends > 0, s.square, -1).max(axis=1), out=top)
        go_on = s.cont[:, -1]  # only the top value (the six, or the entering six) continues a turn
        if not go_on.any():
            break
        next_w = np.where(go_on, w[:, -1], 0.0)
        level += 1
        if depth and level >= depth:
            left = next_w  # runs of sixes rarer than NO_CAP_MASS: back where the turn began
            break
        cur, weight = s.square[:, -1], next_w
    if left.any():
        idx_parts.append(row_base.ravel() + np.tile(np.arange(c, dtype=np.int64), b_count))
        w_parts.append(left)
    flat = np.bincount(np.concatenate(idx_parts), np.concatenate(w_parts), minlength=b_count * c * (c + 2))
    matrix: np.ndarray = flat.reshape(b_count, c, c + 2)
    ascends: np.ndarray = np.asarray((top.reshape(b_count, c) > squares).all(axis=1))
    return matrix, ascends


def resting_states(dest: np.ndarray, rules: Rules) -> np.ndarray:
    """For each board, the squares a turn can end on (padded to one count for the batch), 0 first.

    With one token a turn never ends on a jump's start (the jump acts), so
    those squares are never entered and drop out of every system: on a
    100-square board with 16 jumps the solves shrink from 100 to about 84
    unknowns. Boards with fewer resting squares than the most in the batch
    keep some jump starts too (rows no turn enters, harmless), so that the
    batch stacks. Under ``bounce`` without ``jump_after_bounce`` a bounce may
    rest on a jump's start: every square is kept.

    Examples
    --------
    >>> from snlmarkov import Board, Rules
    >>> resting_states(destinations([Board(6, {2: 5}), Board(6, {4: 1, 3: 5})]), Rules()).tolist()
    [[0, 1, 3, 4, 5], [0, 1, 2, 3, 5]]
    """
    dest = np.asarray(dest)
    b_count, n1 = dest.shape
    n = n1 - 1
    rest = dest[:, :n] == np.arange(n)
    if rules.finish == "bounce" and not bool(getattr(rules, "jump_after_bounce", True)):
        rest[:] = True
    counts = rest.sum(axis=1)
    width = int(counts.max()) if b_count else n
    short = width - counts
    if short.any():  # keep the lowest jump starts of boards with fewer resting squares
        extra = np.cumsum(~rest, axis=1) <= short[:, None]
        rest = rest | (~rest & extra)
    return np.nonzero(rest)[1].reshape(b_count, width)


@dataclass(frozen=True, eq=False)
class BatchFigures:
    """Exact figures of a batch of boards, one entry per board.

    Attributes
    ----------
    mean, var : numpy.ndarray
        Expected turns from square 0, and the variance of the number of turns.
        ``inf`` (and ``nan`` variance) for a board that cannot be won.
    winnable : numpy.ndarray of bool
        False where finishing is impossible from a square the token can reach.
    survival : numpy.ndarray
        Shape ``(B, horizon + 1)``: ``P(length > t)`` for ``t = 0..horizon``;
        empty (``horizon = -1``) unless asked for.
    tail_mass : numpy.ndarray
        ``P(length > horizon)`` per board (the mass beyond the computed horizon).
    jump_share : numpy.ndarray
        Shape ``(B, J)``: the chance that one game uses each of the jumps asked
        for (the share of games in which a roll lands on its start); empty unless asked.
    """

    mean: np.ndarray
    var: np.ndarray
    winnable: np.ndarray
    survival: np.ndarray
    tail_mass: np.ndarray
    jump_share: np.ndarray

    @property
    def sd(self) -> np.ndarray:
        """Standard deviation of the number of turns."""
        return np.sqrt(np.maximum(self.var, 0.0))

    def quantile(self, q: float) -> np.ndarray:
        """Smallest ``t`` with ``P(length <= t) >= q`` per board (``inf`` beyond the horizon)."""
        cdf = 1.0 - self.survival
        hit = cdf >= q - 1e-15
        out = np.where(hit.any(axis=1), hit.argmax(axis=1), np.inf).astype(float)
        return out

    def longer_than(self, t: int) -> np.ndarray:
        """``P(length > t)`` per board (``t`` must lie within the horizon)."""
        if not 0 <= t < self.survival.shape[1]:
            raise SnlError(f"P(length > {t}) needs a horizon of at least {t}; computed {self.survival.shape[1] - 1}")
        return self.survival[:, t]

    def first_seat_win(self, players: int) -> np.ndarray:
        """Chance that seat 0 wins a race of ``players`` independent tokens (seat 0 moves first).

        Seat 0 wins when it finishes no later (in its own turns) than every
        other seat: ``sum_t P(T = t) * P(T >= t) ** (players - 1)``, over the
        computed horizon (the error is at most ``tail_mass``).
        """
        s = self.survival
        pmf = s[:, :-1] - s[:, 1:]  # P(T = t) for t = 1..horizon
        at_least = s[:, :-1]  # P(T >= t) = P(T > t - 1)
        return (pmf * at_least ** (players - 1)).sum(axis=1)


#: Bytes per entry of one board's dense turn matrix while a batch is solved (the matrix, ``I - Q`` and its LU).
BYTES_PER_ENTRY = 24


def check_batch_memory(boards: int, size: int, rules: Rules, what: str) -> None:
    """Refuse, before allocating, solving ``boards`` boards of ``size`` squares under ``rules`` with dense matrices.

    :func:`evaluate` holds one block of boards at a time (:data:`BATCH`,
    fewer for long boards or many-valued dice), each board's dense
    ``(size, size)`` matrix three times over (:data:`BYTES_PER_ENTRY`):
    the cost grows with the square of the board.

    Raises
    ------
    LimitError
        Naming ``what``, the estimate and the limit.

    Examples
    --------
    >>> check_batch_memory(32, 10**6, Rules(), "design()")
    Traceback (most recent call last):
    ...
    snlmarkov.errors.LimitError: design() (1 board of 1,000,000 squares at a time, as dense matrices) would need about 21.8 TiB of memory, over the limit of 8.0 GiB; use smaller boards; set SNLMARKOV_MEMORY_LIMIT (e.g. 32G) to raise it
    """
    at_once = max(1, min(int(boards), _boards_per_block(rules, size + 1)))
    need = float(BYTES_PER_ENTRY) * at_once * float(size + 2) ** 2
    many = "board" if at_once == 1 else "boards"
    check_memory(
        need,
        f"{what} ({at_once} {many} of {size:,} squares at a time, as dense matrices)",
        hint="use smaller boards",
    )


def evaluate(
    dest: np.ndarray,
    rules: Rules,
    *,
    horizon: int = -1,
    tail: float = 0.0,
    max_horizon: int = 20_000,
    shares: Any = (),
    boards: Sequence[Board] = (),
    compact: bool = True,
) -> BatchFigures:
    """Exact mean, variance (and, if asked, length distribution and jump shares) of a batch of boards.

    Parameters
    ----------
    dest : numpy.ndarray
        Shape ``(B, N + 1)``, from :func:`destinations` (or built by a search).
    rules : Rules
    horizon : int, default -1
        Compute ``P(length > t)`` for ``t = 0..horizon`` (none when -1).
    tail : float, default 0
        If positive, carry the distribution on past ``horizon`` until every
        board has less than ``tail`` left (at most ``max_horizon`` turns).
    shares : sequence of int
        Jump starts (column indices of ``dest``) whose chance of being used in
        one game is wanted; ``shares[j]`` of board ``b`` must start a jump.
        Alternatively a ``(B, J)`` array, one set of squares per board.
    boards : sequence of Board, optional
        The boards themselves, used only for the (rare) board whose squares do
        not all climb, which is solved by the general sparse model.
    compact : bool, default True
        Solve only for the squares a turn can end on (:func:`resting_states`,
        padded to the batch's largest count: faster). With False every square
        is kept, so that a board's figures do not depend on the other boards
        of its batch, to the last bit (what :func:`~snlmarkov.sweep` needs:
        its table must not depend on how it is split into tasks).

    Examples
    --------
    >>> import snlmarkov as snl
    >>> fig = evaluate(destinations([snl.Board.builtin()]), snl.Rules())
    >>> round(float(fig.mean[0]), 4), round(float(fig.sd[0]), 4)
    (55.6148, 44.5133)
    """
    dest = np.asarray(dest, dtype=np.int64)
    if dest.ndim != 2:
        raise SnlError("dest must be a (boards, N + 1) array")
    b_count, n1 = dest.shape
    n = n1 - 1
    check_batch_memory(b_count, n, rules, "evaluate()")
    share_sq = np.asarray(shares, dtype=np.int64)
    if share_sq.ndim == 1:
        share_sq = np.broadcast_to(share_sq, (b_count, share_sq.size))
    parts = []
    with single_threaded():
        per_block = _boards_per_block(rules, dest.shape[1])
        for lo in range(0, b_count, per_block):
            hi = min(b_count, lo + per_block)
            sub_boards = boards[lo:hi] if len(boards) else ()
            parts.append(
                _evaluate_block(dest[lo:hi], rules, horizon, tail, max_horizon, share_sq[lo:hi], sub_boards, n, compact)
            )
    if not parts:
        empty = np.zeros(0)
        return BatchFigures(empty, empty, np.zeros(0, bool), np.zeros((0, 0)), empty, np.zeros((0, 0)))
    width = max(p[3].shape[1] for p in parts)
    surv = np.concatenate([_pad_survival(p[3], p[4], width) for p in parts])
    mean, var, win, _, tail_m, share = (np.concatenate([p[i] for p in parts]) for i in range(6))
    if width:
        tail_m = surv[:, -1]
    return BatchFigures(mean, var, win, surv, tail_m, share)


def _pad_survival(surv: np.ndarray, tail_m: np.ndarray, width: int) -> np.ndarray:
    if surv.shape[1] == width:
        return surv
    # blocks stopped at different horizons: beyond its own, a block is known only to its tail bound
    pad = np.repeat(surv[:, -1:], width - surv.shape[1], axis=1) if surv.shape[1] else np.zeros((surv.shape[0], width))
    return np.concatenate([surv, pad], axis=1)


def _evaluate_block(dest, rules, horizon, tail, max_horizon, share_sq, boards, n, compact=True):
    b_count = dest.shape[0]
    if _fast(rules):
        matrix, ascends = turn_matrices(dest, rules, resting_states(dest, rules) if compact else None)
    else:
        matrix, ascends = _general_matrices(dest, rules, boards)
    c = matrix.shape[1]
    q = matrix[:, :, :c]
    mean = np.full(b_count, np.inf)
    var = np.full(b_count, np.nan)
    winnable = ascends.copy()
    good = np.flatnonzero(ascends)
    if good.size:
        mean[good], var[good] = moments(q[good])
    for i in np.flatnonzero(~ascends):  # some square cannot climb: the exact sparse model decides
        mean[i], var[i], winnable[i] = _general_one(dest[i], rules, boards[i] if len(boards) else None)
    surv, tail_m = _survival(q, winnable, horizon, tail, max_horizon)
    if share_sq.shape[1]:
        share = _shares(dest, rules, share_sq, winnable, ascends, boards, compact)
    else:
        share = np.zeros((b_count, 0))
    return mean, var, winnable, surv, tail_m, share


def _system(q: np.ndarray) -> np.ndarray:
    """``I - Q`` of each block of a ``(B, S, S)`` stack, as a new C-ordered array."""
    a = np.negative(q, order="C")
    diag = np.arange(q.shape[1])
    a[:, diag, diag] += 1.0
    return a


def moments(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of the number of turns from the first state, for each of a stack of transient blocks.

    One LU factorization of ``A = I - Q`` a block (LAPACK ``getrf``, of
    ``A`` transposed: that is the C-ordered array read in Fortran order, no
    copy) and two solves with it: the expected turns left from every state,
    ``m = A^-1 1``, and the expected visits to every state from the first,
    ``r = (A^T)^-1 e_0``. The second moment from the first state is then
    ``r . (2 m - 1)`` (it solves ``A m_2 = 2 m - 1``), so one factorization
    serves both moments where two solves would factorize twice. Each block
    is solved alone: its figures do not depend on the others in the stack.

    Parameters
    ----------
    q : numpy.ndarray
        Shape ``(B, S, S)``: the turn matrices among the transient states,
        state 0 the start; every state must reach the finish (``I - Q``
        invertible).

    Returns
    -------
    mean, var : numpy.ndarray
        Shape ``(B,)`` each.

    Raises
    ------
    ModelError
        If some ``I - Q`` is singular (a state that never finishes).

    Examples
    --------
    A token on one square that finishes with probability 1/2 each turn:

    >>> mean, var = moments(np.array([[[0.5]]]))
    >>> float(mean[0]), float(var[0])
    (2.0, 2.0)
    """
    b_count, c = q.shape[0], q.shape[1]
    a = _system(q)  # each a[i] C-ordered: a[i].T is Fortran-ordered, as LAPACK reads it
    ones = np.ones(c)
    first = np.zeros(c)
    first[0] = 1.0
    mean = np.empty(b_count)
    var = np.empty(b_count)
    for i in range(b_count):
        lu, piv, info = dgetrf(a[i].T, overwrite_a=1)  # the factors of A^T, in place
        if info != 0:
            raise ModelError(f"a turn matrix of the batch is singular (LAPACK getrf: {info}): a state never finishes")
        m, _ = dgetrs(lu, piv, ones, trans=1)  # A m = 1
        r, _ = dgetrs(lu, piv, first)  # A^T r = e_0
        mean[i] = m[0]
        var[i] = r @ (2.0 * m - 1.0) - m[0] ** 2
    return mean, var


def _survival(q: np.ndarray, winnable: np.ndarray, horizon: int, tail: float, max_horizon: int):
    """``P(length > t)`` for ``t = 0..`` by running the start distribution forwards."""
    b_count, n, _ = q.shape
    if horizon < 0 and tail <= 0:
        return np.zeros((b_count, 0)), np.ones(b_count)
    v = np.zeros((b_count, 1, n))
    v[:, 0, 0] = 1.0
    out = [np.ones(b_count)]  # P(length > 0) = 1
    t = 0
    while True:
        v = np.matmul(v, q)
        t += 1
        alive = v[:, 0, :].sum(axis=1)
        out.append(alive)
        if t >= horizon and (tail <= 0 or not np.any(alive[winnable] >= tail) or t >= max_horizon):
            break
    surv = np.stack(out, axis=1)
    surv[~winnable] = 1.0
    return surv, surv[:, -1]


def _shares(dest, rules, share_sq, winnable, ascends, boards, compact=True):
    """The chance that one game lands on each asked square (a jump start) at least once.

    Landing on the square is made a second absorbing state; its absorption
    probability from square 0 is the share of games that use the jump.
    """
    b_count, j = share_sq.shape
    n = dest.shape[1] - 1
    out = np.full((b_count, j), np.nan)
    fast = _fast(rules)
    good = np.flatnonzero(winnable & ascends) if fast else np.zeros(0, dtype=np.int64)
    if good.size:
        mod = np.repeat(dest[good], j, axis=0)  # one copy of the board per asked square
        mod[np.arange(mod.shape[0]), share_sq[good].ravel()] = n + 1
        states = resting_states(mod, rules) if compact else None
        matrix, _ = turn_matrices(mod, rules, states)  # still climbs: the landing absorbs
        c = matrix.shape[1]
        res = np.linalg.solve(_system(matrix[:, :, :c]), matrix[:, :, c + 1 :])[:, 0, 0]
        out[good] = res.reshape(good.size, j)
    from ..analysis.single import analyze

    for i in np.flatnonzero(winnable):
        if i in good:
            continue
        board = boards[i] if len(boards) else _board_of(dest[i])
        out[i] = analyze(board, rules).hit_probability[share_sq[i]]
    return out


def _board_of(dest_row: np.ndarray) -> Board:
    n = dest_row.size - 1
    jumps = {int(s): int(e) for s, e in enumerate(dest_row) if e != s}
    return Board(n, jumps)


def _general_matrices(dest, rules, boards):
    """Turn matrices from the general sparse model, one board at a time (rules the batch builder does not know)."""
    from ..chain.model import turn_model

    b_count, n1 = dest.shape
    n = n1 - 1
    out = np.zeros((b_count, n, n + 2))
    ok = np.zeros(b_count, dtype=bool)
    for i in range(b_count):
        board = boards[i] if len(boards) else _board_of(dest[i])
        out[i, :, :n1] = turn_model(board, rules, check=False).matrix.toarray()[:n, :]
        top = np.array([np.flatnonzero(out[i, p] > 0).max() for p in range(n)])
        ok[i] = bool(np.all(top > np.arange(n)))
    return out, ok


def _general_one(dest_row, rules, board):
    """Mean and variance of one board from the exact sparse model; ``(inf, nan, False)`` if it cannot be won."""
    from ..analysis.single import analyze

    board = _board_of(dest_row) if board is None else board
    try:
        a = analyze(board, rules)
    except UnwinnableBoardError:
        return np.inf, np.nan, False
    return a.expected_turns, a.var_turns, True

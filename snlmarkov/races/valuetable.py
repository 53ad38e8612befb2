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

Under ``classic`` the equations are solved a turn at a time: play is the
same for every seat and the value tensor is kept mover-first, so one
backward turn ``T`` maps the values onto themselves (relabelled: the seat
``r`` places after the mover becomes ``r - 1`` places after the next one).
The expected turns left solve ``(I - T) E = 1``, and every chance of
winning follows from the same series ``d_t = T^t 1`` (the chance that
nobody has finished ``t`` turns from a state), summed by its residue
``t mod k``: it is run a turn at a time, with one addition per turn, until
``d_t`` is ``rho`` times ``d_{t-k}`` in every entry (to
:data:`POWER_SETTLE_TOL` of the largest), and the rest of each residue
class is summed as the geometric series of ``rho``
(:func:`_classic_series_values`; 3 players on the jungle board with family
rules: about 500 turns, the forward race's 480 and one addition each, no
Krylov vector work). The true residual of every equation is checked
(``k + 1`` more turns). If the series has not settled within
:data:`POWER_MAX_TURNS` turns or a residual is too large, the chances of
winning, Fourier-transformed over ``r``, are solved as the same system
shifted by the ``k``-th roots of unity (:func:`_classic_turn_values`). One run of
BiCGSTAB for shifted systems (:func:`~snlmarkov.races.shifted.shifted_bicgstab`)
gives them all, two turns per step: for 3 players on the jungle board
with family rules, about 130 steps (260 turns, against the forward race's
480 turns and its geometric tail). If that run falls short (no
convergence, or a true residual above :data:`_TRUE_RESIDUAL` times the
goal), the round below is used instead. The values agree with the forward
chain from any state to about 1e-13 (tests: 1e-12 on probabilities).

A round (every seat once) maps the values with seat 0 to move onto
themselves: ``x = c + A x``. It is solved by BiCGSTAB with the round as its
operator (``A`` is never formed), far fewer rounds than running the chain
until its tail is gone; then one more backward round gives the values with
every other seat to move. This is how ``last_one_standing`` is solved,
where a finishing token hands over to the chain of one token fewer, whose
values (for the same relative seat order) are solved first; the single
token's are the expected turns of one player.

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

from ..chain.threads import one_blas_thread
from ..errors import SnlError
from .bump import JointMover
from .shifted import shifted_bicgstab

try:  # the sparse product straight into a buffer (``A @ X`` allocates its result: page faults on every turn)
    from scipy.sparse._sparsetools import csr_matvecs as _csr_matvecs
except ImportError:  # pragma: no cover - a scipy that moved its private kernels: fall back to ``@``
    _csr_matvecs = None

__all__ = ["ValueTable", "build_value_table", "rounds_from_turns", "SOLVE_RTOL", "TURN_RTOL"]

#: Columns of a value tensor transposed at a time (keeps the copy in cache).
_BLOCK = 512

#: The series of :func:`_classic_series_values` is taken as settled when every
#: entry of ``d_t`` is ``rho d_{t-k}`` to this, relative to its largest entry.
POWER_SETTLE_TOL = 1e-13

#: The class sums are iterated until the ratio of the series' round-on-round
#: mass has settled to this; the series itself then takes over.
SWITCH_TOL = 1e-9

#: Most turns of that series before the Krylov solver takes over.
POWER_MAX_TURNS = 5000

#: Relative residual the Krylov solver is asked for (the figures then agree with the forward chain to about 1e-13).
SOLVE_RTOL = 1e-14

#: Relative residual of the turn-level classic solve (its figures agree with the forward chain to about 1e-13:
#: its step lengths favour the shifted systems, whose residuals end well below this).
TURN_RTOL = 1e-13

#: The true residual of the turn-level solve may be this much above ``SOLVE_RTOL`` (rounding: the recursively
#: updated residuals drift from the true ones); more falls back to rounds.
_TRUE_RESIDUAL = 100.0


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
            if _csr_matvecs is None:  # pragma: no cover
                out[c] = (st @ w).reshape(-1)
            else:  # straight into the output row (``@`` would allocate a result and copy it)
                out[c] = 0.0
                _csr_matvecs(n, n + 1, width, st.indptr, st.indices, st.data, flat, out[c])
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


class _Turn:
    """``I - T``, ``T`` one backward turn of the ``m``-token classic chain as a linear map of one value tensor.

    Classic play is the same for every seat, and the value tensor is kept
    with the mover's axis first and the others in playing order, so the
    values after a turn are the same function of the next state whoever
    moved: ``(T v)(x) = sum_y P(x, y) v(y)``, ``y`` read with its own mover
    first (nothing is paid: the finish adds 0). One application: a blocked
    transpose (the mover's axis comes last in ``y``'s layout), the bump (the
    value of ``bump_to`` copied onto the squares a moving token would be
    bumped from), and one sparse product accumulated onto a copy of the
    input, all in buffers made once.
    """

    def __init__(self, mover: JointMover, m: int) -> None:
        n = mover.n
        self.n, self.width = n, n ** (m - 1)
        self.q = sp.csr_matrix(mover.step[:n].T)  # (from, to) among the resting squares
        self.q.sort_indices()
        self.minus = -self.q.data
        self.work = np.empty((n, self.width))
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
        flat, _ = self._gather(src)
        if _csr_matvecs is None:  # pragma: no cover
            np.subtract(src, (self.q @ self.work).reshape(-1), out=out)
            return
        np.copyto(out, src)
        _csr_matvecs(self.n, self.n, self.width, self.q.indptr, self.q.indices, self.minus, flat, out)

    def turn(self, src: np.ndarray, out: np.ndarray, acc: np.ndarray | None = None) -> float:
        """Write ``T src`` into ``out`` (and add ``src`` onto ``acc``); return ``src``'s sum."""
        flat, total = self._gather(src, acc, summed=True)
        if _csr_matvecs is None:  # pragma: no cover
            out[:] = (self.q @ self.work).reshape(-1)
            return total
        out.fill(0.0)
        _csr_matvecs(self.n, self.n, self.width, self.q.indptr, self.q.indices, self.q.data, flat, out)
        return total


def _classic_series_values(  # noqa: C901, PLR0915
    mover: JointMover, k: int, max_turns: int = POWER_MAX_TURNS
) -> tuple[list[np.ndarray], np.ndarray, int] | None:
    """Classic values from the series ``d_t = T^t 1``, summed exactly to a settled geometric tail.

    ``d_t(x)`` is the chance that ``t`` turns from ``x`` nobody has finished.
    With ``D_r = sum_{t = r mod k} d_t``: ``E = D_0 + ... + D_{k-1}`` and,
    since the mover after ``t`` turns is ``t mod k`` places after the first
    and finishes there with chance ``d_t - d_{t+1}``,
    ``F_r = D_r - D_{r+1 mod k} + [r = k - 1]``. Once every entry of
    ``d_t`` is ``rho`` times ``d_{t-k}`` (one round earlier) to
    :data:`POWER_SETTLE_TOL` of the largest, for ``k`` turns running, the
    rest of each class is the geometric series of ``rho``. Until the
    round-on-round ratio of ``sum d_t`` has settled to :data:`SWITCH_TOL`
    the class sums are iterated themselves (``C_{t+1} = T C_t + [k divides
    t + 1]``: one tensor in and one out per turn, as in the forward race);
    then ``d_t = C_t - C_{t-k}`` is iterated and added onto them, for the
    last few dozen turns, where the settling is tested to full precision
    (differences of the class sums would lose about three digits). 3
    players on the jungle board with family rules: 495 turns. ``None``
    when the series has not settled within ``max_turns`` turns or the true
    residuals of the equations (checked with ``k + 1`` more turns) are above
    the goal of :func:`_classic_turn_values`.
    """
    apply = _Turn(mover, k)
    size = mover.n**k
    # first the class sums themselves: C_t = sum of d_s, s <= t, s = t mod k, so that
    # C_{t+1} = T C_t + [k divides t + 1]: one tensor in, one out per turn (as the forward race)
    classes = [np.empty(size) for _ in range(k + 1)]  # C_t, ..., C_{t-k}
    classes[0].fill(1.0)
    totals = [float(size)]  # sum of every C_t so far
    t = 0
    rho = prev_rho = 0.0
    while True:
        if t >= max_turns:
            return None
        cur, nxt = classes[t % (k + 1)], classes[(t + 1) % (k + 1)]
        totals[t] = apply.turn(cur, nxt)  # nxt = T C_t (the sum of C_t comes with it)
        totals.append(0.0)
        if (t + 1) % k == 0:
            nxt += 1.0
        t += 1
        if t - 1 >= 2 * k:  # sum d_{t-1} / sum d_{t-1-k}: differences of the class sums
            new = totals[t - 1] - totals[t - 1 - k]
            old = totals[t - 1 - k] - totals[t - 1 - 2 * k]
            if not (new > 0.0 and old > 0.0):
                return None
            prev_rho, rho = rho, new / old
            if abs(rho - prev_rho) <= SWITCH_TOL * rho:
                break
    # then d_t itself (the class sums' differences lose digits), summed onto the class sums so far
    ring = [np.empty(size) for _ in range(k + 1)]  # d_t, ..., d_{t-k}
    np.subtract(classes[t % (k + 1)], classes[(t - k) % (k + 1)], out=ring[t % (k + 1)])
    sums = np.empty((k, size))
    for j in range(k):  # class of t - j: C_{t-j}, but d_t is added by its turn below
        sums[(t - j) % k] = classes[(t - j) % (k + 1)] if j else classes[(t - k) % (k + 1)]
    del classes
    mass = np.zeros(k + 1)  # the sums of the ring's tensors, in the same slots
    start = t
    rho = prev_rho = 0.0
    passed = 0
    while t < max_turns:
        cur = ring[t % (k + 1)]
        nxt = ring[(t + 1) % (k + 1)]  # overwrites d_{t-k}, no longer needed
        mass[t % (k + 1)] = apply.turn(cur, nxt, sums[t % k])  # d_{t+1} = T d_t; D_(t mod k) += d_t
        t += 1
        if t <= start + k + 1:
            continue
        # the ratio of d_{t-1} (summed in this turn) to d_{t-1-k}, a round before it
        last, first = mass[(t - 1) % (k + 1)], mass[(t - 1 - k) % (k + 1)]
        if not (first > 0.0 and last > 0.0):
            return None
        prev_rho, rho = rho, last / first
        if abs(rho - prev_rho) > POWER_SETTLE_TOL * rho:  # the scalar ratio first, then every entry
            passed = 0
            continue
        back = ring[(t - k) % (k + 1)]  # d_{t-k}, a round before d_t
        top = float(nxt.max())
        spread = float(np.max(np.abs(nxt - rho * back)))
        passed = passed + 1 if spread <= POWER_SETTLE_TOL * top else 0
        if passed >= k:
            break
    else:
        return None
    if not 0.0 < rho < 1.0:
        return None
    # d_t is not summed yet; d_{t-1} .. d_{t-k+1} are: each class goes on as a geometric series of rho
    sums[t % k] += ring[t % (k + 1)] / (1.0 - rho)
    for u in range(t - k + 1, t):
        sums[u % k] += ring[u % (k + 1)] * (rho / (1.0 - rho))
    expected = sums.sum(axis=0)
    f = [sums[r] - sums[(r + 1) % k] for r in range(k)]
    f[k - 1] += 1.0
    goal = _TRUE_RESIDUAL * SOLVE_RTOL * np.sqrt(size)
    res, tmp = ring[0], ring[1]
    apply(expected, res)  # (I - T) E = 1
    res -= 1.0
    if not np.sqrt(np.dot(res, res)) <= goal:
        return None
    apply(np.ones(size), tmp)  # f = (I - T) 1: the chance that the mover finishes now
    for r in range(k):  # F_r = [r = 0] f + T F_{r-1}, i.e. F_r - F_{r-1} + (I - T) F_{r-1} - [r = 0] f = 0
        apply(f[(r - 1) % k], res)
        res += f[r]
        res -= f[(r - 1) % k]
        if r == 0:
            res -= tmp
        if not np.sqrt(np.dot(res, res)) <= goal:
            return None
    return f, expected, apply.turns


def _classic_turn_values(mover: JointMover, k: int, maxiter: int) -> tuple[list[np.ndarray], np.ndarray, int] | None:
    """Classic values from the turn-level equations, all from one shifted Krylov run; None if it falls short.

    With the mover's axis first, let ``F_r`` be the chance that the seat
    ``r`` places after the mover wins and ``E`` the expected turns left; one
    turn ``T`` (:class:`_Turn`) gives ``F_r = [r = 0] f + T F_{r-1 mod k}``
    (``f`` the chance that the mover finishes now) and ``E = 1 + T E``. The
    discrete Fourier transform over ``r``, ``G_j = sum_r w^(-jr) F_r`` with
    ``w = exp(2 pi i / k)``, decouples the first: ``(I - w^-j T) G_j = f``,
    and ``G_0 = 1``. Since the turn keeps or finishes every token, ``f = (I
    - T) 1``, so ``G_j = w^j + (1 - w^j) y_j`` with ``(I - w^-j T) y_j = 1``,
    i.e. ``((w^j - 1) I + (I - T)) (y_j / w^j) = 1``: the same right-hand
    side as ``(I - T) E = 1``, shifted by ``w^j - 1``. One run of
    :func:`~snlmarkov.races.shifted.shifted_bicgstab` on ``I - T`` gives
    ``E`` and every ``y_j`` (``j = 1..k//2``; the others are conjugates)
    with two turns per step. The true residual of every system is checked
    at the end (two more turns per shift, one for ``E``).

    Returns ``(F_0..F_{k-1}, E, turns applied)``.
    """
    apply = _Turn(mover, k)
    size = mover.n**k
    ones = np.ones(size)
    roots = np.exp(2j * np.pi * np.arange(1, k // 2 + 1) / k)
    sol = shifted_bicgstab(apply, ones, tuple(roots - 1.0), rtol=TURN_RTOL, maxiter=maxiter)
    if not sol.converged:
        return None
    goal = _TRUE_RESIDUAL * SOLVE_RTOL * np.sqrt(size)
    res, res_i = np.empty(size), np.empty(size)
    apply(sol.x, res)
    res -= 1.0
    if not np.sqrt(np.dot(res, res)) <= goal:
        return None
    # F_r = (1/k) sum_j w^(jr) G_j over all j (G_0 = 1, G_(k-j) the conjugate of G_j), with
    # G_j = w^j + (1 - w^j) w^j u_j: each F_r is 1/k plus a real combination of the parts of every u_j
    f = [np.full(size, 1.0 / k) for _ in range(k)]
    for j, (w, (u_re, u_im)) in enumerate(zip(roots, sol.parts), start=1):
        sig = w - 1.0
        apply(u_re, res)  # the true residual of ((w - 1) I + I - T) u = 1, real and imaginary parts
        apply(u_im, res_i)
        res += sig.real * u_re
        res -= sig.imag * u_im
        res -= 1.0
        res_i += sig.imag * u_re
        res_i += sig.real * u_im
        if not np.sqrt(np.dot(res, res) + np.dot(res_i, res_i)) <= goal:
            return None
        c = (1.0 - w) * w
        twice = 1.0 if 2 * j == k else 2.0
        for r in range(k):
            z = np.exp(2j * np.pi * j * r / k)  # Re(z G_j) = Re(z w) + Re(z c) u_re - Im(z c) u_im
            f[r] += twice / k * (z * w).real
            f[r] += twice / k * (z * c).real * u_re
            f[r] -= twice / k * (z * c).imag * u_im
    return f, sol.x, apply.turns


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
                cur = back.turn(cur, m, fin, pay)
            else:  # the linear map: only the last turn's values are kept, so two buffers take turns
                cur = back.turn(cur, m, zero_fin, zero_pay, out=scratch[j % 2])
            if constant:
                cur += turn_pay[:, None]
            out[j] = cur
        return out

    scratch = [np.empty((b, size)), np.empty((b, size))]
    results = [np.empty((b, size)) for _ in range(3)]  # BiCGSTAB holds at most two results at a time
    c = sweep(np.zeros((b, size)), True)[0]
    rounds = [0]

    def apply(v: np.ndarray) -> np.ndarray:
        """``(I - A) v`` for a batch of value tensors (one backward round)."""
        rounds[0] += 1
        res = results[rounds[0] % 3]
        np.subtract(v, sweep(v, False)[0], out=res)
        return res

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


def build_value_table(
    mover: JointMover, players: int, mode: str, *, maxiter: int = 5000, turn_level: bool = True
) -> ValueTable:
    """Solve the value equations of the joint chain of ``players`` tokens (and, under last one standing, fewer).

    Cost under ``classic`` (``turn_level``): one shifted BiCGSTAB run of
    two backward turns (one sparse product with a tensor of ``n**players``
    entries each) per step, for every value at once; memory: about 12
    tensors. Otherwise, for each value, a BiCGSTAB solve whose every step is
    one backward round (``players`` sparse products), then one more round;
    memory: ``players`` tensors per value. ``turn_level=False`` solves
    ``classic`` by rounds too (a cross-check, and the fallback).

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

        lone = _single_turns(mover)
        if not np.all(np.isfinite(lone)) or lone.min() < 1.0 or lone.max() > 1e12:
            raise SnlError("a token cannot finish from some resting square: the race would never end")
        with one_blas_thread():
            solved = (
                (_classic_series_values(mover, k) or _classic_turn_values(mover, k, maxiter)) if turn_level else None
            )
        if solved is not None:
            f, expected, total = solved
            # seat j to move: absolute seat i places (i - j) mod k after the mover
            values = tuple(np.stack([f[(i - j) % k] for i in range(k - 1)] + [expected]) for j in range(k))
            chains[k] = ChainValues(m=k, names=names, values=values)
            return ValueTable(mover=mover, mode=mode, players=k, chains=chains, iterations=total)
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

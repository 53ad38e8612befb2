"""The bump race's value equations, solved once for every joint state.

For the joint chain of :mod:`snlmarkov.races.joint` (the square of every
racing token and the seat to move) every figure a state's odds need is a
*value*: a function ``v`` of the joint state with ``v = r + P v``, ``P`` one
turn of the chain and ``r`` what that turn pays (1 on reaching the finish
for a seat's chance of winning, 1 per turn for the expected turns left, 1
per new round for the rounds left). One backward turn
(:mod:`snlmarkov.races.backward`) is the adjoint of the forward one.

Under ``classic`` play is the same for every seat and the value tensor is
kept mover-first, so one backward turn ``T`` maps the values onto
themselves (relabelled: the seat ``r`` places after the mover becomes
``r - 1`` places after the next one). The expected turns left solve ``(I -
T) E = 1`` and the chances of winning follow from the same operator. Three
solvers are tried in turn, each checked by the true residual of every
equation, the next taking over when one falls short:

1. the series ``d_t = T^t 1`` (the chance that nobody has finished ``t``
   turns from a state), summed by its residue ``t mod k``, run a turn at a
   time until ``d_t`` is ``rho`` times ``d_{t-k}`` in every entry (to
   :data:`POWER_SETTLE_TOL` of the largest); the rest of each residue class
   is the geometric series of ``rho`` (:func:`_classic_series_values`);
2. the chances of winning, Fourier-transformed over ``r``, as the system of
   ``E`` shifted by the ``k``-th roots of unity, all from one run of
   BiCGSTAB for shifted systems (:func:`_classic_turn_values`,
   :func:`~snlmarkov.races.shifted.shifted_bicgstab`);
3. the round-level solve below.

A round (every seat once) maps the values with seat 0 to move onto
themselves: ``x = c + A x``. It is solved by BiCGSTAB with the round as its
operator (``A`` is never formed); then one more backward round gives the
values with every other seat to move. This is how ``last_one_standing`` is
solved, where a finishing token hands over to the chain of one token fewer,
whose values (for the same relative seat order) are solved first; the
single token's are the expected turns of one player.

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
from ..errors import ModelError, SnlError
from .backward import Backward, Turn
from .joint import JointMover
from .shifted import shifted_bicgstab

__all__ = []

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
    (differences of the class sums would lose about three digits). ``None``
    when the series has not settled within ``max_turns`` turns or the true
    residuals of the equations (checked with ``k + 1`` more turns) are above
    the goal of :func:`_classic_turn_values`.
    """
    apply = Turn(mover, k)
    size = mover.n**k
    # first the class sums themselves: C_t = sum of d_s, s <= t, s = t mod k, so that
    # C_{t+1} = T C_t + [k divides t + 1]: one tensor in, one out per turn (as the forward race)
    classes = [np.ones(size)] + [np.empty(0)] * k  # C_t, ..., C_{t-k}
    totals = [float(size)]  # sum of every C_t so far
    t = 0
    rho = prev_rho = 0.0
    while True:
        if t >= max_turns:
            return None
        nxt, totals[t] = apply.turn(classes[t % (k + 1)])  # nxt = T C_t (the sum of C_t comes with it)
        classes[(t + 1) % (k + 1)] = nxt
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
        # d_{t+1} = T d_t (in the place of d_{t-k}, no longer needed); D_(t mod k) += d_t
        nxt, mass[t % (k + 1)] = apply.turn(ring[t % (k + 1)], sums[t % k])
        ring[(t + 1) % (k + 1)] = nxt
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
    turn ``T`` (:class:`~snlmarkov.races.backward.Turn`) gives ``F_r = [r = 0] f + T F_{r-1 mod k}``
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
    apply = Turn(mover, k)
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
    back: Backward,
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
        raise ModelError(f"the value equations of the {m}-token bump chain did not converge in {maxiter} steps")
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

    Cost under ``classic`` (``turn_level``): the series of backward turns
    (one sparse product with a tensor of ``n**players`` entries each) to its
    settled tail, every value at once, memory ``2 * players + 2`` tensors;
    failing that, one shifted BiCGSTAB run of two backward turns per step
    (about 12 tensors). Otherwise, for each value, a BiCGSTAB solve whose
    every step is one backward round (``players`` sparse products), then one
    more round; memory: ``players`` tensors per value. ``turn_level=False``
    solves ``classic`` by rounds (a cross-check, and the last fallback).

    Examples
    --------
    The example of :func:`~snlmarkov.races.bump.joint_race` (from a state): seat 1 on
    2 to move, seat 0 on 3; seat 0 wins with probability 5/11. With seat 1
    to move (``values[1]``) the tensor's axes are seat 1's square, then
    seat 0's.

    >>> from snlmarkov import Board, Rules, turn_model
    >>> from snlmarkov.races.joint import JointMover
    >>> rules = Rules.preset("plain").replace(faces=2, bump=True)
    >>> table = build_value_table(JointMover.of(turn_model(Board(4), rules), rules), 2, "classic")
    >>> chain, sq = table.chains[2], list(table.mover.squares)
    >>> round(float(chain.values[1][chain.names.index(("win", 0)), sq.index(2) * len(sq) + sq.index(3)]) * 11, 9)
    5.0
    """
    back = Backward(mover)
    n = mover.n
    k = int(players)
    chains: dict[int, ChainValues] = {}
    total = 0
    if mode == "classic":
        chains[k], total = _classic_chain(back, k, maxiter, turn_level)
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


def _classic_chain(back: Backward, k: int, maxiter: int, turn_level: bool) -> tuple[ChainValues, int]:
    """The classic values of ``k`` tokens: the series, else the shifted Krylov run, else rounds (see the module)."""
    mover, n = back.mover, back.n
    # the rounds left follow from the turns left and the winner (see rounds_from_turns): no value for them
    names: tuple[Any, ...] = tuple(("win", i) for i in range(k - 1)) + ("turns",)
    lone = _single_turns(mover)
    if not np.all(np.isfinite(lone)) or lone.min() < 1.0 or lone.max() > 1e12:
        raise SnlError("a token cannot finish from some resting square: the race would never end")
    solved = None
    if turn_level:
        with one_blas_thread():
            solved = _classic_series_values(mover, k) or _classic_turn_values(mover, k, maxiter)
    if solved is not None:
        f, expected, total = solved
        # seat j to move: absolute seat i places (i - j) mod k after the mover
        values = tuple(np.stack([f[(i - j) % k] for i in range(k - 1)] + [expected]) for j in range(k))
        return ChainValues(m=k, names=names, values=values), total

    def finish(j: int) -> np.ndarray:
        fin = np.zeros((len(names), n ** (k - 1)))
        if j < k - 1:
            fin[names.index(("win", j))] = 1.0
        return fin

    return _solve_chain(back, k, names, finish, np.array([0.0] * (k - 1) + [1.0]), np.zeros(k), maxiter)


def _sum_orders(chain: ChainValues, j: int) -> np.ndarray:
    """Sum of the stored order values (all but the last order) with seat ``j`` to move."""
    rows = [i for i, name in enumerate(chain.names) if isinstance(name, tuple)]
    return chain.values[j][rows].sum(axis=0)

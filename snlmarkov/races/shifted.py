"""BiCGSTAB for a family of shifted systems ``(A + s I) x_s = b`` with one product by ``A`` per step.

Every shifted system has the same Krylov space as the seed system ``A x =
b``, so one run of BiCGSTAB on the seed gives them all: the residual of each
shifted system stays a scalar multiple of the seed's (the BiCG part by the
classical collinearity of shifted Krylov residuals, the stabilising part by
taking ``omega_s = omega / (1 + omega s)``), and each shifted system only
adds its own solution and search direction, updated from the seed's vectors
with scalar recurrences (Frommer, *BiCGStab(l) for families of shifted
linear systems*, Computing 70, 2003). The shifts may be complex while ``A``
and ``b`` are real: the products by ``A`` stay real.

The shadow residual is a fixed pseudo-random vector, not ``b``: with ``b``
close to an eigenvector of ``A`` (as the constant vector is for a chain's
turn operator) the choice ``b`` makes the BiCG coefficients huge and the
shifted recurrences lose all accuracy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg import blas

__all__ = []

#: Seed of the shadow residual (any fixed vector with no special structure will do).
_SHADOW_SEED = 5

#: The shadow residual is nonzero on one entry in this many (of a long vector; a prime, so that the entries
#: it sees are spread over every axis of a tensor whose sides are not multiples of it).
_SHADOW_EVERY = 17

#: Step lengths tried, as multiples of the seed's own minimal-residual ``omega``: each step takes the one
#: that minimises the sum of the shifted residuals plus :data:`_SEED_WEIGHT` times the seed's. (The seed's
#: own choice leaves the shifted systems behind: on the 3-player jungle chain they then need about 15%
#: more steps; without the seed's term the seed's residual peaks and its true residual stalls near 1e-12.)
_OMEGA_GRID = np.concatenate([-np.geomspace(30.0, 1e-3, 300), [1.0], np.geomspace(1e-3, 30.0, 300)])

#: Weight of the seed's residual in the choice of ``omega`` (see :data:`_OMEGA_GRID`).
_SEED_WEIGHT = 1e-2

#: Entries per chunk of the fused vector update (a few such chunks of every vector stay in cache).
_CHUNK = 1 << 15


@dataclass(frozen=True, eq=False)
class ShiftedSolution:
    """The seed's solution, each shift's solution, and the steps taken.

    Attributes
    ----------
    x : numpy.ndarray
        Solution of ``A x = b`` (real).
    parts : numpy.ndarray
        ``(shifts, 2, size)``: the real and imaginary parts of the solution
        of ``(A + s I) x_s = b`` for each shift (:attr:`shifted` gives them
        as complex vectors).
    steps : int
        BiCGSTAB steps (two products by ``A`` each).
    converged : bool
        Whether every system's (recursively updated) residual fell below the goal.
    """

    x: np.ndarray
    parts: np.ndarray
    steps: int
    converged: bool

    @property
    def shifted(self) -> tuple[np.ndarray, ...]:
        """Each shift's solution as a complex vector."""
        return tuple(part[0] + 1j * part[1] for part in self.parts)


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


def shifted_bicgstab(  # noqa: C901, PLR0915
    apply: Callable[[np.ndarray, np.ndarray], None],
    b: np.ndarray,
    shifts: tuple[complex, ...],
    *,
    rtol: float,
    maxiter: int,
) -> ShiftedSolution:
    """Solve ``A x = b`` and ``(A + s I) x_s = b`` for every ``s`` of ``shifts`` at once.

    Parameters
    ----------
    apply : callable
        ``apply(src, out)`` writes ``A @ src`` into ``out`` (real vectors of ``b``'s size).
    b : numpy.ndarray
        Real right-hand side.
    shifts : tuple of complex
        The shifts ``s``; none may make ``A + s I`` singular.
    rtol : float
        Stop once every residual is below ``rtol * ||b||``.
    maxiter : int
        Most steps.

    Returns
    -------
    ShiftedSolution

    Notes
    -----
    Cost per step: two products by ``A``, 9 vector operations and 3 dot
    products (plus 3 with a sparse shadow vector) of the seed's, and 12
    ``axpy`` per shift. Memory: 5 real vectors plus 4 per shift. The step
    length ``omega`` of each step is chosen for the shifted systems (see
    ``_OMEGA_GRID``), not for the seed alone. Call it with one BLAS thread (its level-1 BLAS calls only
    contend on a busy machine). The residuals tested are the recursively
    updated ones; check the true residual of what you need.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> a = np.eye(30) * 3 + rng.normal(size=(30, 30)) * 0.2
    >>> b = rng.normal(size=30)
    >>> def apply(src, out):
    ...     out[:] = a @ src
    >>> sol = shifted_bicgstab(apply, b, (0.5 + 0.5j, -1.0), rtol=1e-13, maxiter=100)
    >>> bool(np.allclose(a @ sol.x, b, atol=1e-11)), sol.converged
    (True, True)
    >>> bool(np.allclose((a - np.eye(30)) @ sol.shifted[1], b, atol=1e-11))
    True
    """
    size = b.size
    sig = np.asarray(shifts, dtype=complex)
    ns = sig.size
    bnorm = float(np.sqrt(_dot(b, b)))
    goal = rtol * bnorm
    if bnorm == 0.0:
        return ShiftedSolution(np.zeros(size), np.zeros((ns, 2, size)), 0, True)
    x = np.zeros(size)
    r = b.astype(float).copy()  # the residual; each step turns it into s, then into the next residual, in place
    gen = np.random.default_rng(_SHADOW_SEED)
    # the shadow residual: pseudo-random on every _SHADOW_EVERY-th entry of a long vector (a strided view)
    every = _SHADOW_EVERY if size >= 64 * _SHADOW_EVERY else 1
    shadow = gen.random(len(range(0, size, every))) - 0.5

    def with_shadow(vec: np.ndarray) -> float:
        return float(np.dot(shadow, vec[::every]))

    p = r.copy()  # the seed's direction is kappa * p
    kappa = 1.0
    v, t = np.empty(size), np.empty(size)
    # shift i's direction is pi_i * d_i, its solution xs_i, both kept as real and imaginary rows (the seed's
    # vectors are real); the scale pi_i makes the direction's update add the seed's vectors to d_i only
    xs = np.zeros((ns, 2, size))
    d = np.zeros((ns, 2, size))
    d[:, 0] = b
    pi = np.ones(ns, dtype=complex)
    axpy = blas.daxpy
    zeta = np.ones(ns, dtype=complex)  # shifted BiCG residual = zeta * seed's (zeta = 1 / phi_n(-s))
    zeta_old = np.ones(ns, dtype=complex)
    tau = np.ones(ns, dtype=complex)  # stabilising factor: prod 1 / (1 + omega_j s)
    alpha_old, beta_old = 1.0, 0.0
    rho = with_shadow(r)
    steps = 0
    converged = False
    chunks = [slice(lo, min(lo + _CHUNK, size)) for lo in range(0, size, _CHUNK)]
    while steps < maxiter:
        steps += 1
        apply(p, v)  # the product with the direction is kappa * v
        alpha = rho / (kappa * with_shadow(v))
        ak = alpha * kappa
        c = alpha * beta_old / alpha_old
        zeta_new = 1.0 / ((1.0 + c + alpha * sig) / zeta - c / zeta_old)
        alpha_s = alpha * zeta_new / zeta
        axpy(v, r, a=-ak)  # r is now s = r - alpha kappa v
        apply(r, t)
        tt = ts = ss = 0.0
        for sl in chunks:  # t.t, t.s, s.s in one pass
            tc, sc = t[sl], r[sl]
            tt += _dot(tc, tc)
            ts += _dot(tc, sc)
            ss += _dot(sc, sc)
        omega = ts / tt if tt > 0 else 0.0
        if ns and omega != 0.0:  # the step length that is best for the shifted systems (see _OMEGA_GRID)
            om = omega * _OMEGA_GRID
            seed_sq = np.maximum(ss - 2.0 * om * ts + om * om * tt, 0.0)
            weight = np.abs(tau * zeta_new) ** 2 / np.abs(1.0 + np.outer(om, sig)) ** 2
            omega = float(om[np.argmin(seed_sq * (weight.sum(axis=1) + _SEED_WEIGHT))])
        rho_new = with_shadow(r) - omega * with_shadow(t)  # shadow . (s - omega t), before it is formed
        beta = (alpha / omega) * (rho_new / rho) if omega != 0 else 0.0
        # the shifted systems (r_old = s + alpha v, r_new = s - omega t):
        #   x_s += alpha_s p_s + omega_s tau zeta_new s
        #   p_s = beta_s (p_s - omega_s / alpha_s (tau zeta r_old - tau zeta_new s)) + tau_new zeta_new r_new
        omega_s = omega / (1.0 + omega * sig)
        tau_new = tau / (1.0 + omega * sig)
        beta_s = beta * (zeta_new / zeta) ** 2
        pi_new = beta_s * pi
        if beta == 0.0 or np.any(pi_new == 0):  # breakdown
            break
        q = beta_s * omega_s / alpha_s
        c_old, c_s, c_new = -q * tau * zeta, q * tau * zeta_new, tau_new * zeta_new
        to_x = alpha_s * pi  # times d
        x_s = omega_s * tau * zeta_new  # times s
        d_s, d_v, d_t = (c_old + c_s + c_new) / pi_new, c_old * ak / pi_new, -c_new * omega / pi_new
        kappa_new = beta * kappa
        # one pass over the vectors, a cache-sized chunk at a time
        rn2 = 0.0
        for sl in chunks:
            pc, sc, vc, tc = p[sl], r[sl], v[sl], t[sl]
            xc = x[sl]
            axpy(pc, xc, a=ak)
            axpy(sc, xc, a=omega)
            for i in range(ns):
                d0, d1, x0, x1 = d[i, 0, sl], d[i, 1, sl], xs[i, 0, sl], xs[i, 1, sl]
                a_i, cs = to_x[i], x_s[i]
                axpy(d0, x0, a=a_i.real)
                axpy(d1, x0, a=-a_i.imag)
                axpy(d0, x1, a=a_i.imag)
                axpy(d1, x1, a=a_i.real)
                axpy(sc, x0, a=cs.real)
                axpy(sc, x1, a=cs.imag)
                for vec, cf in ((sc, d_s[i]), (vc, d_v[i]), (tc, d_t[i])):
                    axpy(vec, d0, a=cf.real)
                    axpy(vec, d1, a=cf.imag)
            axpy(tc, sc, a=-omega)  # the next residual, s - omega t
            rn2 += _dot(sc, sc)
            axpy(vc, pc, a=-omega)  # kappa_new p_new = r_new + beta kappa (p - omega v), kappa_new = beta kappa
            axpy(sc, pc, a=1.0 / kappa_new)
        pi, kappa = pi_new, kappa_new
        if not 1e-100 < abs(kappa) < 1e100:  # fold the scale into p
            p *= kappa
            kappa = 1.0
        for i in range(ns):
            if not 1e-100 < abs(pi[i]) < 1e100:  # fold the scale into d
                _scale(d[i], pi[i])
                pi[i] = 1.0
        rnorm = float(np.sqrt(rn2))
        rho, alpha_old, beta_old = rho_new, alpha, beta
        zeta_old, zeta, tau = zeta, zeta_new, tau_new
        shifted_norms = np.abs(tau * zeta) * rnorm
        if rnorm <= goal and bool(np.all(shifted_norms <= goal)):
            converged = True
            break
        if not np.isfinite(rnorm) or not np.all(np.isfinite(shifted_norms)) or omega == 0.0 or kappa == 0.0:
            break
    return ShiftedSolution(x, xs, steps, converged)


def _scale(rows: np.ndarray, c: complex) -> None:
    """Multiply the complex vector kept as ``rows`` (real part, imaginary part) by ``c``, in place."""
    axpy = blas.daxpy
    re = rows[0].copy()
    rows[0] *= c.real
    axpy(rows[1], rows[0], a=-c.imag)
    rows[1] *= c.real
    axpy(re, rows[1], a=c.imag)

"""The exact distribution of a game's length, computed to a stated horizon."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..chain.threads import single_blas_thread
from ..errors import LimitError, SnlError
from ..limits import check_rng

__all__ = ["LengthDistribution", "DEFAULT_TAIL"]

#: Default bound on the probability left beyond the horizon.
DEFAULT_TAIL = 1e-13

#: Largest chain (transient states reachable from the start) whose decay rate is computed (a dense eigen-solve).
DENSE_EIG_STATES = 1000

#: Largest chain whose length distribution carries the geometric tail from the start: the
#: eigen-solve is cubic, so past this it would cost more than the stepping itself.
LENGTH_TAIL_STATES = 256


@dataclass(frozen=True, eq=False)
class LengthDistribution:
    """Exact distribution of a count of steps (turns, rounds) to the end.

    ``pmf[k]`` is exact (to floating point) for ``k = 0..horizon``; the
    probability that the count exceeds the horizon is ``tail_mass``, stated
    explicitly rather than dropped. Moments are taken over ``0..horizon``.

    Attributes
    ----------
    probabilities : numpy.ndarray
        ``P(K = k)`` for ``k = 0..horizon``.
    tail_mass : float
        ``P(K > horizon)``.
    unit : str
        What is counted (``"turns"``, ``"rounds"``, ...), for labels.
    tail_rate, tail_constant : float
        The geometric tail ``P(K > k) ~ tail_constant * tail_rate ** k``
        (:func:`geometric_tail`: the spectral radius of the chain's transient
        block). Beyond the horizon :meth:`pmf`, :meth:`cdf` and :meth:`sf`
        answer from it, without stepping. ``nan`` when the distribution was
        given without its chain; beyond the horizon ``sf`` is then
        ``tail_mass`` and ``pmf`` 0.

    Examples
    --------
    >>> from snlmarkov import LengthDistribution
    >>> d = LengthDistribution(np.array([0.0, 0.5, 0.25, 0.25]), tail_mass=0.0)
    >>> d.mean(), d.median(), d.mode, d.minimum, d.horizon
    (1.75, 1, 1, 1, 3)
    >>> float(d.cdf(2)), float(d.sf(2))
    (0.75, 0.25)
    """

    probabilities: np.ndarray = field(repr=False)
    tail_mass: float = 0.0
    unit: str = "turns"
    tail_rate: float = float("nan")
    tail_constant: float = float("nan")
    _cdf: np.ndarray = field(init=False, repr=False, compare=False)  # set in __post_init__

    def __post_init__(self) -> None:
        p = np.asarray(self.probabilities, dtype=float)
        if p.ndim != 1 or p.size == 0:
            raise SnlError("probabilities must be a non-empty 1-d array")
        if np.any(p < -1e-15) or not np.isfinite(p).all():
            raise SnlError("probabilities must be finite and non-negative")
        if not 0.0 <= self.tail_mass <= 1.0:
            raise SnlError(f"tail_mass must be in [0, 1], got {self.tail_mass}")
        if abs(p.sum() + self.tail_mass - 1.0) > 1e-9:
            raise SnlError(f"probabilities and tail mass sum to {p.sum() + self.tail_mass}, not 1")
        p = np.clip(p, 0.0, None)
        p.setflags(write=False)
        object.__setattr__(self, "probabilities", p)
        object.__setattr__(self, "tail_mass", float(self.tail_mass))
        rate, const = float(self.tail_rate), float(self.tail_constant)
        if not (np.isnan(rate) and np.isnan(const)) and not (0.0 <= rate < 1.0 and 0.0 <= const < np.inf):
            raise SnlError(f"tail_rate must be in [0, 1) and tail_constant >= 0; got {rate}, {const}")
        object.__setattr__(self, "tail_rate", rate)
        object.__setattr__(self, "tail_constant", const)
        cdf = np.cumsum(p)
        cdf.setflags(write=False)
        object.__setattr__(self, "_cdf", cdf)

    # -------------------------------------------------------------- basics
    @property
    def horizon(self) -> int:
        """The largest count whose probability was computed."""
        return self.probabilities.size - 1

    @property
    def support(self) -> np.ndarray:
        """The counts ``0..horizon``."""
        return np.arange(self.probabilities.size)

    @property
    def minimum(self) -> int:
        """The smallest count with positive probability."""
        return int(np.flatnonzero(self.probabilities > 0)[0])

    @property
    def mode(self) -> int:
        """The most likely count."""
        return int(np.argmax(self.probabilities))

    def pmf(self, k: Any) -> Any:
        """``P(K = k)``; 0 outside ``0..horizon`` and between integers (vectorised).

        Raises
        ------
        SnlError
            If ``k`` is not numeric or holds NaN.

        Examples
        --------
        >>> d = LengthDistribution(np.array([0.0, 0.5, 0.5]))
        >>> d.pmf(1), d.pmf(1.5), d.pmf(7)
        (0.5, 0.0, 0.0)
        """
        k = _numbers(k, "pmf")
        whole = k == np.floor(k)
        inside = (k >= 0) & (k <= self.horizon) & whole
        out = np.where(inside, self.probabilities[np.clip(np.nan_to_num(k), 0, self.horizon).astype(int)], 0.0)
        if self.has_tail:  # P(K = k) = P(K > k - 1) - P(K > k) on the geometric tail
            far = whole & (k > self.horizon)
            out = np.where(far, self._far_sf(k - 1) * (1.0 - self.tail_rate), out)
        return out if out.ndim else float(out)

    def cdf(self, k: Any) -> Any:
        """``P(K <= k)`` (vectorised); beyond the horizon it is ``1 - tail_mass``."""
        k = np.floor(_numbers(k, "cdf"))
        out = np.where(k < 0, 0.0, self._cdf[np.clip(k, 0, self.horizon).astype(int)])
        if self.has_tail:
            out = np.where(k > self.horizon, 1.0 - self._far_sf(k), out)
        return out if out.ndim else float(out)

    def sf(self, k: Any) -> Any:
        """``P(K > k)`` (vectorised)."""
        k = np.floor(_numbers(k, "sf"))
        tail = 1.0 - self._cdf - self.tail_mass  # P(horizon >= K > k)
        out = np.where(k < 0, 1.0, np.clip(tail[np.clip(k, 0, self.horizon).astype(int)], 0.0, None) + self.tail_mass)
        if self.has_tail:
            out = np.where(k > self.horizon, self._far_sf(k), out)
        return out if out.ndim else float(out)

    @property
    def has_tail(self) -> bool:
        """Whether the geometric tail is known (:attr:`tail_rate` is not ``nan``)."""
        return not np.isnan(self.tail_rate)

    def _far_sf(self, k: np.ndarray) -> np.ndarray:
        """``tail_constant * tail_rate ** k``, in logarithms (no underflow before it is due)."""
        with np.errstate(divide="ignore"):
            log = np.log(self.tail_constant) + np.asarray(k, dtype=float) * np.log(self.tail_rate)
        return np.exp(log)

    def ppf(self, q: Any) -> Any:
        """Smallest ``k`` with ``P(K <= k) >= q``; ``inf`` where ``q`` lies in the tail."""
        q = _numbers(q, "ppf")
        if np.any((q < 0) | (q > 1)):
            raise SnlError("ppf takes probabilities in [0, 1]")
        k = np.searchsorted(self._cdf, q - 1e-15, side="left").astype(float)
        k = np.where(k > self.horizon, np.inf, k)
        if k.ndim:
            return k
        return int(k) if np.isfinite(k) else float(k)

    def median(self) -> int:
        """The median count."""
        return self.ppf(0.5)

    def mean(self) -> float:
        """The mean over ``0..horizon``."""
        return float(np.dot(self.support, self.probabilities))

    def var(self) -> float:
        """The variance over ``0..horizon``."""
        k = self.support
        m = self.mean()
        return float(np.dot((k - m) ** 2, self.probabilities))

    def std(self) -> float:
        """The standard deviation over ``0..horizon``."""
        return float(np.sqrt(self.var()))

    def rvs(self, size: Any = None, *, rng: Any = None) -> Any:
        """Random counts drawn from the distribution (the tail renormalised away).

        Examples
        --------
        >>> d = LengthDistribution(np.array([0.0, 0.5, 0.5]))
        >>> sorted(set(d.rvs(100, rng=1).tolist()))
        [1, 2]
        """
        gen = check_rng(rng)
        p = self.probabilities / self.probabilities.sum()
        return gen.choice(self.support, size=size, p=p)


def _numbers(x: Any, what: str) -> np.ndarray:
    """``x`` as a float array; SnlError for text, objects or NaN."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise SnlError(f"{what} takes numbers; got {type(x).__name__}") from None
    if np.isnan(a).any():
        raise SnlError(f"{what} takes numbers, not NaN")
    # an infinite count is beyond any horizon: clip it so integer indexing stays defined
    return np.clip(a, -1.0, 2.0**62) if what != "ppf" else a


#: Largest chain that :func:`absorption_times` steps with a dense ``Q`` (:func:`_dense_times`).
DENSE_STEP_STATES = 256

#: Steps :func:`_dense_times` takes between two looks at the mass left (a power of two).
_BATCH = 32

#: The least mass a state keeps in :func:`absorption_times`: above the subnormal numbers, slow to multiply.
_FLUSH = 1e-280


def _support(v: np.ndarray, offset: int) -> tuple[int, int]:
    """``(lo, hi)``: the first nonzero entry of ``v`` and one past the last, shifted by ``offset``."""
    nz = np.flatnonzero(v)
    if not nz.size:
        return offset, offset
    return offset + int(nz[0]), offset + int(nz[-1]) + 1


@single_blas_thread
def absorption_times(
    transient: sp.csr_matrix,
    start: np.ndarray,
    exit: np.ndarray | None = None,
    *,
    tail: float = DEFAULT_TAIL,
    max_steps: int = 10_000_000,
    unit: str = "turns",
    progress: Any = None,
) -> LengthDistribution:
    """Distribution of steps to absorption of a chain started from ``start``.

    ``transient`` is the transient block ``Q`` of the transition matrix,
    ``start`` the initial distribution over transient states and ``exit`` the
    probability of absorption in one step from each (by default ``1`` minus
    the row sums of ``Q``). The mass still transient after ``k`` steps is
    ``start @ Q^k`` and ``P(K = k) = start @ Q^(k-1) @ exit``; steps continue
    until the transient mass is below ``tail``.

    A state's mass below ``tail * 1e-20`` (and never below ``1e-280``, so
    that no subnormal number, a hundred times slower to multiply, appears)
    is dropped at each step: over at most ``max_steps`` steps and ``10^8``
    states that loses under ``1e-18`` of probability. The mass then sits in
    a window of states around the token's likely squares, and while that
    window holds under a quarter of the states only its rows of ``Q`` are
    read.

    ``progress``, if given, is called as ``progress(steps, alive)`` every 64
    steps (the command line draws a tqdm bar from it).

    Cost: one sparse matrix-vector product per step, restricted to the
    window, so at most ``horizon * nnz(Q)``; the horizon grows with the
    board (a few hundred turns at 100 squares, about 10^5 at 10^5 squares).
    A chain of at most :data:`DENSE_STEP_STATES` states is stepped with a
    dense ``Q`` instead, :data:`_BATCH` steps between two looks at the mass
    left, and its mass is flushed once a batch rather than every step;
    after its first ``n`` steps a batch is two products with the powers of
    ``Q`` (:func:`_dense_times`), so the cost is about ``n^3 + horizon *
    n^2 / B`` operations rather than ``horizon * n^2``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> q = sp.csr_matrix(np.array([[0.5]]))
    >>> d = absorption_times(q, np.array([1.0]), tail=1e-3)
    >>> d.probabilities.tolist(), d.tail_mass
    ([0.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625, 0.001953125, 0.0009765625], 0.0009765625)
    """
    if tail <= 0:
        raise SnlError("tail must be positive")
    q = sp.csr_matrix(transient)
    qt = q.T.tocsr()
    if exit is None:
        exit = 1.0 - np.asarray(q.sum(axis=1)).ravel()
        exit[np.abs(exit) < 1e-14] = 0.0
    exit = np.asarray(exit, dtype=float)
    n = q.shape[0]
    flush = max(_FLUSH, tail * 1e-20)
    v = np.asarray(start, dtype=float).copy()
    pmf = [max(1.0 - v.sum(), 0.0)]
    alive = v.sum()
    if n <= DENSE_STEP_STATES:
        return _dense_times(q, v, exit, pmf, tail=tail, flush=flush, max_steps=max_steps, unit=unit, progress=progress)
    lo, hi = _support(v, 0)
    while alive > tail:
        if 4 * (hi - lo) > n:  # the mass is spread: one product with the whole matrix
            pmf.append(float(v @ exit))
            v = qt @ v
            v[v < flush] = 0.0
            lo, hi = _support(v, 0)
        else:  # the mass sits in a window of states: only their rows are read
            pmf.append(float(v[lo:hi] @ exit[lo:hi]))
            a, b = q.indptr[lo], q.indptr[hi]
            cols = q.indices[a:b]
            moved = q.data[a:b] * np.repeat(v[lo:hi], np.diff(q.indptr[lo : hi + 1]))
            v[lo:hi] = 0.0
            if cols.size:
                c_lo, c_hi = int(cols.min()), int(cols.max()) + 1
                part = np.bincount(cols - c_lo, weights=moved, minlength=c_hi - c_lo)
                part[part < flush] = 0.0
                v[c_lo:c_hi] = part
                lo, hi = _support(part, c_lo)
            else:
                lo = hi = 0
        alive = v[lo:hi].sum()
        if progress is not None and len(pmf) % 64 == 0:
            progress(len(pmf), float(alive))
        if len(pmf) > max_steps:
            raise SnlError(f"the length distribution still has mass {alive:.3g} after {max_steps} steps")
    return LengthDistribution(np.asarray(pmf), tail_mass=float(max(alive, 0.0)), unit=unit)


def _dense_times(
    q: sp.csr_matrix,
    v: np.ndarray,
    exit: np.ndarray,
    pmf: list[float],
    *,
    tail: float,
    flush: float,
    max_steps: int,
    unit: str,
    progress: Any,
) -> LengthDistribution:
    """:func:`absorption_times` for a small chain: ``Q`` dense, steps taken :data:`_BATCH` at a time.

    At first each step is one matrix-vector product into a preallocated
    block of rows, and the probabilities of ending and the mass left are
    read from the whole block at once. Once the steps taken cost about what
    the powers ``Q^j`` (``j <= B``, ``B`` = :data:`_BATCH`) do (``n`` steps
    for ``n`` states), they are formed (:func:`_batch_powers`) and a batch
    is two products with the vector at its start ``v``: ``v Q^B`` and the
    reads ``v Q^j exit`` and ``v Q^(j + 1) 1``. The last vector of a batch
    is flushed and carried on.
    """
    qd = q.toarray()
    n = v.size
    rows = np.empty((_BATCH + 1, n))
    powers: tuple[np.ndarray, np.ndarray] | None = None
    alive = float(v.sum())
    while alive > tail:
        first = len(pmf)
        if powers is None and first >= n:
            powers = _batch_powers(qd, exit)
        if powers is None:
            rows[0] = v
            for j in range(_BATCH):
                np.matmul(rows[j], qd, out=rows[j + 1])
            left = rows[1:].sum(axis=1)  # left[j]: the mass still transient after step j + 1
            steps = _steps_in_batch(left, tail)
            ends = rows[:steps] @ exit
            v = rows[steps].copy()
        else:
            jump, reads = powers
            r = v @ reads
            left = r[_BATCH:]
            steps = _steps_in_batch(left, tail)
            ends = r[:steps]
            v = v @ jump
        pmf.extend(ends.tolist())
        if progress is not None:
            for k in range(-(-(first + 1) // 64) * 64, len(pmf) + 1, 64):
                progress(k, float(left[k - first - 1]))
        v[v < flush] = 0.0
        alive = float(v.sum()) if steps == _BATCH else float(left[steps - 1])
        if len(pmf) > max_steps:
            raise SnlError(f"the length distribution still has mass {alive:.3g} after {max_steps} steps")
    return LengthDistribution(np.asarray(pmf), tail_mass=max(alive, 0.0), unit=unit)


def _steps_in_batch(left: np.ndarray, tail: float) -> int:
    """Steps of a batch to keep: up to the first whose mass left is at most ``tail``, else all."""
    done = np.flatnonzero(left <= tail)
    return int(done[0]) + 1 if done.size else _BATCH


def _batch_powers(qd: np.ndarray, exit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Q^B, R)`` for ``B`` = :data:`_BATCH`: ``R[:, j] = Q^j exit`` and ``R[:, B + j] = Q^(j + 1) 1``, ``j < B``.

    ``Q^B`` by repeated squaring (``B`` is a power of two). Every entry is
    non-negative, so each product is accurate to a few units in the last
    place, relative.

    Examples
    --------
    >>> qd = np.array([[0.5, 0.25], [0.0, 0.5]])
    >>> jump, reads = _batch_powers(qd, 1.0 - qd.sum(axis=1))
    >>> bool(np.allclose(jump, np.linalg.matrix_power(qd, _BATCH), rtol=1e-14, atol=0))
    True
    >>> reads.shape, reads[:, 0].tolist(), reads[:, _BATCH].tolist()
    ((2, 64), [0.25, 0.5], [0.75, 0.5])
    """
    jump = qd
    for _ in range(_BATCH.bit_length() - 1):
        jump = jump @ jump
    reads = np.empty((qd.shape[0], 2 * _BATCH))
    pair = np.column_stack([exit, qd.sum(axis=1)])
    for j in range(_BATCH):
        reads[:, j], reads[:, _BATCH + j] = pair[:, 0], pair[:, 1]
        pair = qd @ pair
    return jump, reads


#: Inverse iterations for the Perron vectors (:func:`_perron_vectors`).
_INVERSE_ITERATIONS = 4


def _perron_vectors(qd: np.ndarray, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """The left and right Perron vectors of ``qd``, non-negative, by inverse iteration.

    ``rho`` is a simple eigenvalue, every other one at least ``1e-6 rho``
    away. With the shift ``rho (1 + 1e-10)`` each iteration shrinks the
    other components by ``1e-4`` or more: after
    :data:`_INVERSE_ITERATIONS` they are below rounding. One LU
    factorisation serves both sides (the left one solves with the
    transpose). Should a vector not come out an eigenvector to ``1e-12``
    (a pivot that vanished), both are taken from a dense eigen-solve.

    Examples
    --------
    >>> pi, h = _perron_vectors(np.array([[0.5, 0.25], [0.0, 0.25]]), 0.5)
    >>> np.round(pi / pi.sum(), 12).tolist(), np.round(h / h.max(), 12).tolist()
    ([0.5, 0.5], [1.0, 0.0])
    """
    import scipy.linalg as la
    from scipy.linalg import lapack

    n = qd.shape[0]
    shift = rho * (1.0 + 1e-10) if rho > 0 else 1.0
    lu, piv, info = lapack.dgetrf(qd - shift * np.eye(n))
    out = []
    for trans, mat in ((1, qd.T), (0, qd)):
        if info != 0:  # a pivot vanished
            break
        x = np.full(n, 1.0 / n)  # not orthogonal to a non-negative Perron vector
        for _ in range(_INVERSE_ITERATIONS):
            x, _ = lapack.dgetrs(lu, piv, x, trans=trans)
            x /= np.abs(x).max()
        if not (np.isfinite(x).all() and np.abs(mat @ x - rho * x).max() <= 1e-12):
            break
        out.append(x * np.sign(x.sum()) if x.sum() else x)
    if len(out) < 2:
        vals, left, right = la.eig(qd, left=True, right=True)
        i = int(np.argmin(np.abs(vals - rho)))
        out = [x.real * np.sign(x.real.sum()) if x.real.sum() else x.real for x in (left[:, i], right[:, i])]
    return np.clip(out[0], 0.0, None), np.clip(out[1], 0.0, None)


@dataclass(frozen=True, eq=False)
class GeometricTail:
    """The long-run decay of an absorbing chain: ``P(K > k) ~ constant * rate ** k``.

    Attributes
    ----------
    rate : float
        The spectral radius of the transient block ``Q`` (restricted to the
        states the start reaches): the Perron root.
    constant : float
        ``C`` in ``P(K > k) ~ C * rate ** k`` for the given start.
        ``nan`` when the Perron root is not simple (see ``simple``).
    quasi_stationary : numpy.ndarray
        The quasi-stationary distribution over the transient states (the left
        Perron vector, summing to 1): where the chain is, given that it has
        not been absorbed, in the long run. Empty when the root is not simple.
    simple : bool
        Whether the Perron root is a simple eigenvalue. When two classes of
        states share it (or nearly: within ``1e-6``), the tail is
        ``C k rho^k`` or the long run depends on the start, and only
        ``rate`` is given.
    """

    rate: float
    constant: float
    quasi_stationary: np.ndarray = field(repr=False)
    simple: bool = True


def geometric_tail(transient: sp.csr_matrix, start: np.ndarray) -> GeometricTail:
    """The decay rate, constant and quasi-stationary distribution of an absorbing chain.

    With ``Q`` the transient block and ``rho`` its Perron root (the largest
    eigenvalue, real and non-negative), ``P(K > k) = start Q^k 1 ~ C rho^k``
    where ``C = (start . h)(pi . 1) / (pi . h)`` for the right and left Perron
    vectors ``h`` and ``pi``. Only the states reachable from ``start`` count.
    It is a dense eigen-solve, for chains of at most :data:`DENSE_EIG_STATES`
    states (an iterative solve of larger ones, whose spectra crowd near 1,
    is not reliable enough to be called exact). A Perron root shared by two classes
    of states makes the tail ``C k rho^k``: then only the rate is given
    (``simple`` is False).

    Raises
    ------
    ModelError
        When the eigen-solve gives no real root in ``[0, 1)``.
    LimitError
        For a chain of more than :data:`DENSE_EIG_STATES` states.

    Examples
    --------
    >>> q = sp.csr_matrix(np.array([[0.5, 0.25], [0.0, 0.25]]))
    >>> g = geometric_tail(q, np.array([1.0, 0.0]))
    >>> g.rate, g.constant, g.quasi_stationary.tolist()
    (0.5, 2.0, [0.5, 0.5])
    """
    from scipy.sparse.csgraph import breadth_first_order

    from ..errors import ModelError

    q = sp.csr_matrix(transient)
    start = np.asarray(start, dtype=float)
    n = q.shape[0]
    seeds = np.flatnonzero(start > 0)
    seen = np.zeros(n, dtype=bool)
    for s0 in seeds:
        if not seen[s0]:
            seen[breadth_first_order(q, int(s0), directed=True, return_predecessors=False)] = True
    keep = np.flatnonzero(seen)
    qr = q[keep][:, keep].tocsr()
    m = keep.size
    if m <= DENSE_EIG_STATES:
        import scipy.linalg as la

        qd = qr.toarray()
        vals = la.eigvals(qd)
        i = int(np.argmax(np.where(np.abs(vals.imag) < 1e-12, vals.real, -np.inf)))
        rho = float(vals[i].real)
        near = int(np.sum(np.abs(vals - rho) < 1e-6 * max(rho, 1e-300)))
    else:
        raise LimitError(
            f"the decay rate is computed exactly for chains of at most {DENSE_EIG_STATES:,} states "
            f"(snlmarkov.analysis.distribution.DENSE_EIG_STATES); this one has {m:,}"
        )
    if near == 0 or not 0.0 <= rho < 1.0:
        raise ModelError(f"the transient block has no real Perron root in [0, 1) (found {rho!r})")
    if near > 1:
        return GeometricTail(rate=rho, constant=float("nan"), quasi_stationary=np.zeros(0), simple=False)
    pi, h = _perron_vectors(qd, rho)
    pi /= pi.sum()
    const = float(start[keep] @ h) / float(pi @ h)
    qsd = np.zeros(n)
    qsd[keep] = pi
    qsd.setflags(write=False)
    return GeometricTail(rate=rho, constant=const, quasi_stationary=qsd)

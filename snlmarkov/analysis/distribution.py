"""The exact distribution of a game's length, computed to a stated horizon."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..chain.threads import single_blas_thread
from ..errors import SnlError
from ..limits import check_rng

__all__ = ["LengthDistribution", "absorption_times", "DEFAULT_TAIL"]

#: Default bound on the probability left beyond the horizon.
DEFAULT_TAIL = 1e-13


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
        inside = (k >= 0) & (k <= self.horizon) & (k == np.floor(k))
        out = np.where(inside, self.probabilities[np.clip(np.nan_to_num(k), 0, self.horizon).astype(int)], 0.0)
        return out if out.ndim else float(out)

    def cdf(self, k: Any) -> Any:
        """``P(K <= k)`` (vectorised); beyond the horizon it is ``1 - tail_mass``."""
        k = np.floor(_numbers(k, "cdf"))
        out = np.where(k < 0, 0.0, self._cdf[np.clip(k, 0, self.horizon).astype(int)])
        return out if out.ndim else float(out)

    def sf(self, k: Any) -> Any:
        """``P(K > k)`` (vectorised)."""
        k = np.floor(_numbers(k, "sf"))
        tail = 1.0 - self._cdf - self.tail_mass  # P(horizon >= K > k)
        out = np.where(k < 0, 1.0, np.clip(tail[np.clip(k, 0, self.horizon).astype(int)], 0.0, None) + self.tail_mass)
        return out if out.ndim else float(out)

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

"""The length's decay rate, its constant and the quasi-stationary distribution.

Independent values: numpy's dense eigen-solve of the turn chain's transient
block (small boards), and the stepped distribution itself (the ratio of
successive survival probabilities, and the conditioned position distribution).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import snlmarkov as snl
from snlmarkov.analysis import distribution, single
from snlmarkov.analysis.distribution import LengthDistribution, geometric_tail

RULES = [
    snl.Rules(),
    snl.Rules.preset("family").replace(bump=False),
    snl.Rules.preset("plain"),
    snl.Rules(on_cap="restart"),
    snl.Rules(finish="bounce", jump_after_bounce=False),
    snl.Rules(max_sixes=None, on_cap="forfeit", start_on_six=True),
    snl.Rules(die="2d6", finish="none"),
    snl.Rules.preset("plain").replace(die=snl.Die.weighted({1: 1, 2: 1, 6: 4})),
]
IDS = ["app", "family", "plain", "restart", "nojump", "nocap-forfeit", "2d6", "loaded"]


def _stepped_sf(d):
    """P(K > k) from the stepped pmf alone, summed from the far end (no cancellation)."""
    return d.tail_mass + np.concatenate([np.cumsum(d.probabilities[::-1])[::-1][1:], [0.0]])


def _dense_rate(board, rules):
    m = snl.turn_model(board, rules).matrix.toarray()
    q = np.delete(np.delete(m, board.size, 0), board.size, 1)
    vals = np.linalg.eigvals(q)
    return float(vals[np.argmax(vals.real)].real)


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_the_rate_is_the_dense_perron_root(rules):
    board = snl.Board.builtin()
    a = snl.analyze(board, rules)
    assert a.tail_rate == pytest.approx(_dense_rate(board, rules), abs=1e-12)


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_rate_and_constant_match_the_stepped_distribution(rules):
    d = snl.analyze(snl.Board.builtin(), rules).length
    k = np.arange(d.horizon // 2, d.horizon - 5)
    sf = _stepped_sf(d)[k]
    np.testing.assert_allclose(sf[1:] / sf[:-1], d.tail_rate, rtol=1e-8)
    np.testing.assert_allclose(d.tail_constant * d.tail_rate ** k.astype(float), sf, rtol=1e-7)


@pytest.mark.parametrize("rules", RULES[:4], ids=IDS[:4])
def test_the_quasi_stationary_distribution_is_the_conditioned_long_run_position(rules):
    a = snl.analyze(snl.Board.builtin(), rules)
    t = min(a.length.horizon, 600)
    pos = a.position_distributions(t)[-1]
    alive = pos[: a.board.size]
    np.testing.assert_allclose(alive / alive.sum(), a.quasi_stationary[: a.board.size], atol=1e-9)
    assert a.quasi_stationary.sum() == pytest.approx(1.0, abs=1e-12) and a.quasi_stationary[-1] == 0


def test_far_tail_queries_need_no_stepping():
    d = snl.analyze().length
    assert d.sf(10**6) == 0.0 and d.cdf(10**6) == 1.0  # underflows as the true value does
    k = d.horizon + 1000
    assert d.sf(k) == pytest.approx(d.tail_constant * d.tail_rate**k, rel=1e-12)
    assert d.pmf(k) == pytest.approx(d.sf(k - 1) - d.sf(k), rel=1e-9)
    assert d.sf(d.horizon + 1) < d.sf(d.horizon)


def test_a_chain_over_the_limit_is_refused_and_its_length_keeps_its_tail_mass(monkeypatch):
    monkeypatch.setattr(distribution, "DENSE_EIG_STATES", 10)
    a = snl.analyze(snl.Board.builtin())
    with pytest.raises(snl.LimitError, match="DENSE_EIG_STATES"):
        _ = a.tail_rate
    d = a.length  # the distribution itself is still exact to its horizon
    assert not d.has_tail and d.sf(d.horizon + 10) == d.sf(d.horizon)  # constant past the horizon


def test_a_larger_chain_solves_its_rate_only_when_asked(monkeypatch):
    """Past LENGTH_TAIL_STATES the length is stepped as before and the rate is solved on request."""
    monkeypatch.setattr(single, "LENGTH_TAIL_STATES", 10)
    a = snl.analyze(snl.Board.builtin())
    assert not a.length.has_tail and "_tail" not in a.__dict__  # no eigen-solve behind the length
    assert a.tail_rate == pytest.approx(_dense_rate(a.board, a.rules), abs=1e-12)


def test_a_hand_derived_chain():
    # from state 0: stay with 1/2, move to 1 with 1/4; state 1 stays with 1/4
    q = sp.csr_matrix(np.array([[0.5, 0.25], [0.0, 0.25]]))
    g = geometric_tail(q, np.array([1.0, 0.0]))
    # P(K > k) = 0.5^k + 0.25 * sum_j 0.5^j 0.25^(k-1-j) = 2 * 0.5^k - 0.25^k
    assert g.rate == 0.5 and g.constant == pytest.approx(2.0, abs=1e-14)
    np.testing.assert_allclose(g.quasi_stationary, [0.5, 0.5], atol=1e-14)
    # only the states the start reaches count: from state 1 the rate is 1/4
    assert geometric_tail(q, np.array([0.0, 1.0])).rate == pytest.approx(0.25, abs=1e-15)


def test_a_doubled_perron_root_gives_the_rate_only():
    q = sp.csr_matrix(np.array([[0.5, 0.25], [0.0, 0.5]]))  # Jordan block: P(K > k) ~ k 0.5^k
    g = geometric_tail(q, np.array([1.0, 0.0]))
    assert g.rate == pytest.approx(0.5, abs=1e-12) and not g.simple and np.isnan(g.constant)
    # on a board: squares 1 (a 1 lands on the snake 2->1) and 3 (a 2 overshoots) each keep the
    # token with chance 1/2, one after the other
    board = snl.Board(4, {2: 1})
    a = snl.analyze(board, snl.Rules.preset("plain").replace(faces=2))
    assert not a.length.has_tail and a.length.sf(a.length.horizon + 50) == a.length.tail_mass
    with pytest.raises(snl.ModelError, match="shared by two classes"):
        _ = a.quasi_stationary


def test_a_distribution_given_without_its_chain_keeps_its_tail_mass():
    d = LengthDistribution(np.array([0.0, 0.5, 0.25]), tail_mass=0.25)
    assert not d.has_tail and d.sf(10) == 0.25 and d.pmf(10) == 0.0
    with pytest.raises(snl.SnlError, match="tail_rate"):
        LengthDistribution(np.array([1.0]), tail_rate=1.5, tail_constant=1.0)


def _dense_perron(q):
    """Perron root, left and right vectors of a dense matrix by numpy's eigen-solves (independent)."""
    vals, right = np.linalg.eig(q)
    i = int(np.argmax(vals.real))
    lvals, left = np.linalg.eig(q.T)
    j = int(np.argmin(np.abs(lvals - vals[i])))
    h, pi = np.abs(right[:, i].real), np.abs(left[:, j].real)
    return float(vals[i].real), pi / pi.sum(), h


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("iterations", [None, 0], ids=["inverse-iteration", "fallback"])
def test_the_perron_vectors_match_a_dense_eigen_solve(seed, iterations, monkeypatch):
    """The quasi-stationary distribution and constant from the Perron vectors, held against numpy's eig.

    With no inverse iteration the vectors fail their residual check and come from the fallback eigen-solve.
    """
    if iterations is not None:
        monkeypatch.setattr(distribution, "_INVERSE_ITERATIONS", iterations)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 120))
    q = rng.uniform(0, 1, (n, n)) * (rng.uniform(0, 1, (n, n)) < 0.2) + np.diag(rng.uniform(0.01, 1, n))
    q[np.arange(n), (np.arange(n) + 1) % n] += 0.05  # irreducible: a cycle through every state
    q *= (rng.uniform(0.3, 0.999, n) / q.sum(axis=1))[:, None]
    start = rng.dirichlet(np.ones(n))
    rho, pi, h = _dense_perron(q)
    g = geometric_tail(sp.csr_matrix(q), start)
    assert g.simple and g.rate == pytest.approx(rho, abs=1e-12)
    np.testing.assert_allclose(g.quasi_stationary, pi, rtol=1e-9, atol=1e-13)
    assert g.constant == pytest.approx(float(start @ h) / float(pi @ h), rel=1e-10)

"""LengthDistribution: the API on a distribution known in closed form."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from snlmarkov import LengthDistribution, SnlError
from snlmarkov.analysis.distribution import absorption_times


@pytest.fixture
def geometric():
    # steps to absorption when each step absorbs with probability 0.3
    return absorption_times(sp.csr_matrix(np.array([[0.7]])), np.array([1.0]), tail=1e-13)


def test_matches_scipy_geometric(geometric):
    g = stats.geom(0.3)
    k = np.arange(0, geometric.horizon + 1)
    np.testing.assert_allclose(geometric.pmf(k), g.pmf(k), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(geometric.cdf(k), g.cdf(k), rtol=1e-12)
    np.testing.assert_allclose(geometric.sf(k), g.sf(k), rtol=1e-9, atol=1e-15)
    assert geometric.tail_mass == pytest.approx(g.sf(geometric.horizon), rel=1e-9)
    assert geometric.tail_mass < 1e-13
    assert geometric.mean() == pytest.approx(g.mean(), rel=1e-11)
    assert geometric.var() == pytest.approx(g.var(), rel=1e-9)
    assert geometric.std() == pytest.approx(g.std(), rel=1e-9)
    assert geometric.median() == g.median()
    for q in (0.01, 0.25, 0.5, 0.9, 0.999):
        assert geometric.ppf(q) == g.ppf(q)
    assert geometric.mode == 1 and geometric.minimum == 1
    assert geometric.ppf(1.0) == np.inf
    assert geometric.pmf(-1) == 0 and geometric.pmf(10**6) == 0


def test_rvs_follow_the_pmf(geometric):
    draws = geometric.rvs(200_000, rng=11)
    assert geometric.rvs(5, rng=11).tolist() == draws[:5].tolist()
    counts = np.bincount(draws, minlength=30)[1:30]
    expected = geometric.pmf(np.arange(1, 30)) * draws.size
    keep = expected >= 5
    obs = np.append(counts[keep], draws.size - counts[keep].sum())
    exp = np.append(expected[keep], draws.size - expected[keep].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-6


def test_validation():
    with pytest.raises(SnlError):
        LengthDistribution(np.array([0.5, 0.6]))
    with pytest.raises(SnlError):
        LengthDistribution(np.array([1.0]), tail_mass=2.0)
    with pytest.raises(SnlError):
        LengthDistribution(np.array([[1.0]]))
    with pytest.raises(SnlError):
        absorption_times(sp.csr_matrix(np.array([[0.5]])), np.array([1.0]), tail=0)
    d = LengthDistribution(np.array([0.0, 1.0]))
    with pytest.raises(SnlError):
        d.ppf(1.5)
    with pytest.raises(ValueError):
        d.probabilities[0] = 1.0


def _random_chain(rng, n):
    """A random substochastic ``Q`` on ``n`` states (each row keeps 50-99.9% of its mass)."""
    m = sp.random(n, n, density=float(rng.uniform(0.02, 0.5)), random_state=rng, format="csr")
    m.data = rng.uniform(0.0, 1.0, m.nnz)
    sums = np.asarray(m.sum(axis=1)).ravel()
    sums[sums == 0] = 1.0
    return sp.csr_matrix(sp.diags(rng.uniform(0.5, 0.999, n) / sums) @ m)


def test_two_state_chain_in_closed_form():
    # from state 0: stay w.p. a, move to 1 w.p. b; state 1 stays w.p. c.
    # after k steps the mass in 0 is a^k, in 1 b (a^k - c^k) / (a - c); they leave w.p. 1-a-b, 1-c
    a, b, c = 0.6, 0.3, 0.85
    d = absorption_times(sp.csr_matrix(np.array([[a, b], [0.0, c]])), np.array([1.0, 0.0]), tail=1e-13)
    k = np.arange(d.horizon + 1)
    in0, in1 = a**k, b * (a**k - c**k) / (a - c)
    want = np.concatenate([[0.0], in0[:-1] * (1 - a - b) + in1[:-1] * (1 - c)])
    np.testing.assert_allclose(d.probabilities, want, rtol=1e-10, atol=1e-300)
    left = in0[-1] + in1[-1]
    assert d.tail_mass == pytest.approx(left, rel=1e-10)
    assert left <= 1e-13 < in0[-2] + in1[-2]


@pytest.mark.parametrize("seed", range(12))
def test_dense_stepping_matches_sparse_stepping(seed, monkeypatch):
    """Small chains are stepped with a dense Q in batches; the sparse loop gives the same distribution."""
    import snlmarkov.analysis.distribution as dist

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, dist.DENSE_STEP_STATES + 1))
    q = _random_chain(rng, n)
    start = rng.dirichlet(np.ones(n)) if seed % 3 == 0 else np.eye(n)[rng.integers(n)]
    tail = float(10 ** rng.uniform(-14, -4))
    seen_dense: list = []
    dense = absorption_times(q, start, tail=tail, progress=lambda *a: seen_dense.append(a))
    monkeypatch.setattr(dist, "DENSE_STEP_STATES", 0)
    seen_sparse: list = []
    sparse = absorption_times(q, start, tail=tail, progress=lambda *a: seen_sparse.append(a))
    assert dense.horizon == sparse.horizon
    np.testing.assert_allclose(dense.probabilities, sparse.probabilities, rtol=1e-12, atol=1e-16)
    assert dense.tail_mass == pytest.approx(sparse.tail_mass, rel=1e-10)
    assert dense.tail_mass <= tail
    assert [k for k, _ in seen_dense] == [k for k, _ in seen_sparse]
    np.testing.assert_allclose([m for _, m in seen_dense], [m for _, m in seen_sparse], rtol=1e-10)


@pytest.mark.parametrize("n", [1, 7, 60, 200])
def test_the_batch_powers_match_sparse_stepping_over_a_long_horizon(n, monkeypatch):
    """Past its first n steps the dense loop reads a batch from the powers of Q: still the stepped values."""
    import snlmarkov.analysis.distribution as dist

    rng = np.random.default_rng(n)
    q = _random_chain(rng, n).toarray() + np.eye(n)
    q *= (0.995 / q.sum(axis=1))[:, None]  # every row keeps 99.5%: a horizon of thousands of steps
    q = sp.csr_matrix(q)
    start = np.eye(n)[0]
    seen_dense: list = []
    dense = absorption_times(q, start, tail=1e-12, progress=lambda *a: seen_dense.append(a))
    assert dense.horizon > n + 4 * dist._BATCH  # most batches came from the powers
    monkeypatch.setattr(dist, "DENSE_STEP_STATES", 0)
    seen_sparse: list = []
    sparse = absorption_times(q, start, tail=1e-12, progress=lambda *a: seen_sparse.append(a))
    assert dense.horizon == sparse.horizon
    np.testing.assert_allclose(dense.probabilities, sparse.probabilities, rtol=1e-11, atol=1e-300)
    assert dense.tail_mass == pytest.approx(sparse.tail_mass, rel=1e-11)
    assert [k for k, _ in seen_dense] == [k for k, _ in seen_sparse]
    np.testing.assert_allclose([m for _, m in seen_dense], [m for _, m in seen_sparse], rtol=1e-11)


def test_dense_stepping_stops_at_max_steps():
    with pytest.raises(SnlError, match="after 100 steps"):
        absorption_times(sp.csr_matrix(np.array([[0.999]])), np.array([1.0]), max_steps=100)

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

"""Tests for symsgd_core.balance.data: the Gaussian teacher law, its exact moments, finite datasets."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core.balance.data import Dataset, GaussianData, moments_of_samples

EPS = np.finfo(np.float64).eps


def test_scalar_sample_shapes_and_draw_order():
    law = GaussianData(k=2.0, sigma=0.5)
    x, y = law.sample(7, 3)
    assert x.shape == (7,) and y.shape == (7,)
    rng = np.random.default_rng(3)
    x_ref = rng.standard_normal(7)
    eps = rng.standard_normal(7)
    np.testing.assert_array_equal(x, x_ref)
    np.testing.assert_array_equal(y, 2.0 * x_ref + 0.5 * eps)


def test_vector_sample_shapes_and_teacher():
    K = np.arange(6.0).reshape(2, 3)
    law = GaussianData(d_in=3, d_out=2, teacher=K, sigma=0.0)
    x, y = law.sample(5, np.random.default_rng(0))
    assert x.shape == (5, 3) and y.shape == (5, 2)
    np.testing.assert_allclose(y, x @ K.T, rtol=0, atol=1e-13)
    default = GaussianData(k=1.5, d_in=3, d_out=2)
    np.testing.assert_array_equal(default.teacher, 1.5 * np.eye(2, 3))


def test_same_seed_same_numbers():
    law = GaussianData()
    a = law.sample(10, 5)
    b = law.sample(10, 5)
    c = law.sample(10, 6)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    np.testing.assert_array_equal(law.dataset(10, 5).x, a[0])


@pytest.mark.parametrize("k,sigma", [(1.0, 1.0), (-0.7, 0.3), (2.0, 0.0)])
def test_exact_moments_match_monte_carlo(k, sigma):
    """The closed-form α, β agree with the sample moments of 4·10⁵ draws within 5 standard errors."""
    law = GaussianData(k=k, sigma=sigma)
    m = law.moments()
    assert (m.alpha1, m.alpha2, m.alpha3, m.beta1, m.beta2) == (2.0, 2 * k, 2 * k * k + sigma**2, 1.0, k)
    assert m.delta == pytest.approx(m.alpha1 * m.alpha3 - m.alpha2**2, abs=1e-12)
    n = 400_000
    x, y = law.sample(n, 11)
    emp = moments_of_samples(x, y)
    # standard errors of the sample moments, estimated from the sample itself
    x2, xy = x * x, x * y
    se = {
        "beta1": x2.std() / np.sqrt(n),
        "beta2": xy.std() / np.sqrt(n),
        "alpha1": ((x2 - x2.mean()) ** 2).std() / np.sqrt(n),
        "alpha2": ((x2 - x2.mean()) * (xy - xy.mean())).std() / np.sqrt(n),
        "alpha3": ((xy - xy.mean()) ** 2).std() / np.sqrt(n),
    }
    for name, s in se.items():
        assert abs(getattr(emp, name) - getattr(m, name)) <= 5 * s + 1e-12, name


def test_sample_moments_are_consistent():
    x, y = GaussianData(k=0.8, sigma=0.4).sample(500, 2)
    m = moments_of_samples(x, y)
    # Δ computed without cancellation equals α1α3 − α2² to round-off
    assert m.delta == pytest.approx(m.alpha1 * m.alpha3 - m.alpha2**2, rel=1e-10)
    # g(v) = Var[v x² − xy] and loss(v) = mean (v x − y)² for any v
    for v in (-1.0, 0.0, 0.3, 2.5):
        assert m.g(v) == pytest.approx(np.var(v * x * x - x * y), rel=1e-12)
        assert m.loss(v) == pytest.approx(np.mean((v * x - y) ** 2), rel=1e-12)
    assert m.loss_floor == pytest.approx(m.y2 - m.beta2**2 / m.beta1, rel=1e-12)


def test_moments_refused_for_vector_law():
    with pytest.raises(ValueError, match="scalar"):
        GaussianData(d_in=2).moments()
    with pytest.raises(ValueError, match="scalar"):
        Dataset(np.ones((3, 2)), np.ones(3)).moments()


def test_gaussian_data_validation():
    with pytest.raises(ValueError, match="sigma"):
        GaussianData(sigma=-1.0)
    with pytest.raises(ValueError, match="k"):
        GaussianData(k=float("nan"))
    with pytest.raises(ValueError, match="d_in"):
        GaussianData(d_in=0)
    with pytest.raises(ValueError, match="teacher"):
        GaussianData(d_in=2, d_out=2, teacher=np.ones((3, 2)))
    with pytest.raises(ValueError, match="n"):
        GaussianData().sample(0, 0)
    with pytest.raises(ValueError, match="seed"):
        GaussianData().sample(3, None)


def test_dataset_validation():
    with pytest.raises(ValueError, match="x must contain only finite"):
        Dataset([1.0, np.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="y must contain only finite"):
        Dataset([1.0, 2.0], [1.0, np.inf])
    with pytest.raises(ValueError, match="same number of samples"):
        Dataset([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="x must have shape"):
        Dataset(np.ones((2, 2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="at least one"):
        Dataset(np.ones(0), np.ones(0))


def test_dataset_is_read_only_copy():
    x = np.arange(4.0)
    ds = Dataset(x, 2 * x)
    x[0] = 100.0
    assert ds.x[0] == 0.0
    with pytest.raises(ValueError):
        ds.x[0] = 5.0
    assert ds.n == len(ds) == 4 and ds.is_scalar


def test_minibatches_with_replacement():
    ds = GaussianData().dataset(20, 0)
    xb, yb = ds.minibatches(np.random.default_rng(1), runs=6, batch_size=3)
    assert xb.shape == (6, 3) and yb.shape == (6, 3)
    idx = np.random.default_rng(1).integers(0, 20, size=(6, 3))
    np.testing.assert_array_equal(xb, ds.x[idx])
    # with replacement a batch larger than N is allowed
    xb, _ = ds.minibatches(1, runs=2, batch_size=50)
    assert xb.shape == (2, 50)


def test_minibatches_without_replacement_are_distinct_and_uniform():
    ds = Dataset(np.arange(10.0), np.zeros(10))
    idx = ds.minibatch_indices(np.random.default_rng(2), runs=4000, batch_size=4, replace=False)
    assert idx.shape == (4000, 4)
    assert all(len(set(row)) == 4 for row in idx)
    # each point appears with probability S/N = 0.4 per batch; 5 binomial standard errors
    freq = np.bincount(idx.ravel(), minlength=10) / 4000
    assert np.all(np.abs(freq - 0.4) <= 5 * np.sqrt(0.4 * 0.6 / 4000))
    full = ds.minibatch_indices(0, runs=3, batch_size=10, replace=False)
    assert all(sorted(row) == list(range(10)) for row in full)


def test_minibatch_validation():
    ds = Dataset(np.arange(5.0), np.zeros(5))
    with pytest.raises(ValueError, match="batch_size"):
        ds.minibatches(0, runs=2, batch_size=6, replace=False)
    with pytest.raises(ValueError, match="runs"):
        ds.minibatches(0, runs=0, batch_size=1)
    with pytest.raises(ValueError, match="batch_size"):
        ds.minibatches(0, runs=1, batch_size=0)


def test_vector_dataset_minibatch_shapes():
    ds = GaussianData(d_in=3, d_out=2).dataset(15, 0)
    xb, yb = ds.minibatches(0, runs=4, batch_size=5)
    assert xb.shape == (4, 5, 3) and yb.shape == (4, 5, 2)
    assert not ds.is_scalar


def test_one_moments_class_two_forms_of_g():
    """The stationary problem is the data layer's Moments plus a weight decay; Δ and g are defined once, in
    Moments, with g in two forms: the stable one (balance) and the polynomial one (the stationary laws)."""
    from symsgd_core.balance.data import Moments
    from symsgd_core.stationary.laws import DiagonalNetProblem

    p = DiagonalNetProblem(2.0, 2.0, 3.0, 1.0, 1.0, 0.1)
    assert isinstance(p, Moments) and p.weight_decay == 0.1
    assert p.delta == 2.0 * 3.0 - 2.0**2 and p.y2 is None and p.loss_floor is None
    m = GaussianData(k=1.3, sigma=0.6).moments()
    assert Moments(m.alpha1, m.alpha2, m.alpha3, m.beta1, m.beta2).delta == m.alpha1 * m.alpha3 - m.alpha2**2
    v = np.linspace(-3.0, 4.0, 71)
    for mom in (m, DiagonalNetProblem.from_moments(m)):
        np.testing.assert_allclose(mom.g(v), mom.g_polynomial(v), rtol=1e-13)
    assert np.iscomplexobj(p.g_polynomial(np.array([1.0 + 1e-20j])))
    with pytest.raises(ValueError, match="loss_floor"):
        p.loss(1.0)

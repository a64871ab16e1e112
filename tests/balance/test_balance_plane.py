"""symsgd_core.balance.plane: the curves of the (u, w) plane lie on their sets, inside the box, gaps as None."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core.balance.data import GaussianData
from symsgd_core.balance.plane import (
    hyperbola_family_xy,
    hyperbola_xy,
    orbit_xy,
    population_loss_surface,
    product_level_xy,
    records_in_box,
    sample_loss_surface,
)


def _points(u, w) -> np.ndarray:
    assert len(u) == len(w) and [a is None for a in u] == [b is None for b in w]  # gaps at the same places
    return np.array([(a, b) for a, b in zip(u, w) if a is not None])


def test_hyperbola_and_product_curves_lie_on_their_sets():
    for c in (-2.0, 0.0, 1.5):
        u, w = hyperbola_xy(c, 3.0)
        pts = _points(u, w)
        np.testing.assert_allclose(pts[:, 0] ** 2 - pts[:, 1] ** 2, c, atol=1e-12)
        assert np.all(np.abs(pts) <= 3.0)
        assert u[-1] is None and len(u) == 2 * (241 + 1)  # two branches, each closed by a gap
    u, w = product_level_xy(0.75, 4.0)
    pts = _points(u, w)
    np.testing.assert_allclose(pts[:, 0] * pts[:, 1], 0.75, rtol=1e-12)
    assert product_level_xy(0.0, 2.0) == ([-2.0, 2.0, None, 0.0, 0.0], [0.0, 0.0, None, -2.0, 2.0])
    assert product_level_xy(20.0, 4.0) == ([], [])  # |c| > extent²: no point in the box
    with pytest.raises(ValueError, match="extent"):
        hyperbola_xy(1.0, 0.0)
    with pytest.raises(ValueError, match="n must be"):
        hyperbola_xy(1.0, 1.0, n=1)


def test_a_family_is_its_hyperbolas_one_after_the_other():
    u, w = hyperbola_family_xy([-1, 2], 3.0)
    a, b = hyperbola_xy(-1.0, 3.0)
    c, d = hyperbola_xy(2.0, 3.0)
    assert (u, w) == (a + c, b + d)


def test_orbit_keeps_the_product_and_leaves_gaps_outside_the_box():
    lams = np.geomspace(1 / 8, 8, 50)
    u, w = orbit_xy(1.5, 0.5, lams, 2.0)
    assert len(u) == lams.size and u[-1] is None and w[0] is None  # λ = 8: u = 12; λ = 1/8: w = 4
    pts = _points(u, w)
    np.testing.assert_allclose(pts[:, 0] * pts[:, 1], 0.75, rtol=1e-12)
    assert np.all(np.abs(pts) <= 2.0)


def test_records_in_box_cuts_a_diverged_path_where_it_leaves_the_box():
    path = np.array([[1.0, 0.5], [2.0, 1.0], [9.0, 1.0], [1e7, 1.0]])
    assert records_in_box(path, False, 8.0) == 4  # a run that did not diverge is drawn whole
    assert records_in_box(path, True, 8.0) == 2
    assert records_in_box(path, True, 1e8) == 4  # never left the box
    assert records_in_box(path * 10, True, 8.0) == 1  # at least the start


def test_loss_surfaces_are_the_losses_on_the_grid():
    grid, z = sample_loss_surface(0.7, -0.4, 3.0, n=31)
    U, W = np.meshgrid(grid, grid)  # z[i, j] at (u = grid[j], w = grid[i])
    np.testing.assert_array_equal(grid, np.linspace(-3.0, 3.0, 31))
    np.testing.assert_allclose(z, np.abs(U * W * 0.7 + 0.4), atol=1e-12)
    m = GaussianData(k=2.0, sigma=0.5).moments()  # L = E[(uw x − y)²] = (uw − 2)² + σ²
    grid, z = population_loss_surface(m, 4.0, n=21)
    U, W = np.meshgrid(grid, grid)
    np.testing.assert_allclose(z, np.abs(U * W - 2.0), atol=1e-12)

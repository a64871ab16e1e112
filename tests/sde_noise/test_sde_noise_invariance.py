"""The aligned rank-1 subspace M_u (sde_noise.invariance): its geometry, the tangency of the SDE's vectors, the
registered check (passes; fails on each broken input), the evidence experiment and its claims."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from symsgd_core import registered_checks
from symsgd_core.dln.network import Architecture, Params, exact_rank_tol, init_params, make_architecture
from symsgd_core.dln.problems import epsilon_completion, random_low_rank_completion
from symsgd_core.rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from symsgd_core.rank_jumps.experiments import rank_one_minimum
from symsgd_core.sde_noise import claims as sc
from symsgd_core.sde_noise import invariance as inv
from symsgd_core.sde_noise.checks import OFF_SUBSPACE_OFFSET, check_invariant_rank1_subspace

ARCH = make_architecture((2, 2), EXP.depth, EXP.width)  # the ε-completion's (2, 8, 8, 8, 2): P = 160, dim M_u = 6
OTHER = Architecture((3, 5, 4, 2))  # n = 3, m = 2, L = 3: dim M_u = 3 + 1 + 2 = 6
SHALLOW = Architecture((3, 4, 2))  # L = 2: dim M_u = 3 + 2 = 5
PROBLEM = epsilon_completion(EXP.eps)


def _one(directions, i=0):
    return [u[i] for u in directions]


@pytest.mark.parametrize("arch, dim", [(ARCH, 6), (OTHER, 6), (SHALLOW, 5)])
def test_the_projector_is_an_orthogonal_projector_of_the_stated_rank(arch, dim):
    us = _one(inv.random_directions(arch, 1, seed=3))
    B = inv.subspace_basis(arch, us)
    Pi = inv.subspace_projector(arch, us)
    assert inv.subspace_dim(arch) == dim == B.shape[1] and B.shape[0] == arch.n_params
    np.testing.assert_allclose(B.T @ B, np.eye(dim), atol=1e-14)
    np.testing.assert_allclose(Pi @ Pi, Pi, atol=1e-14)
    np.testing.assert_allclose(Pi, Pi.T, atol=0)
    assert np.linalg.matrix_rank(Pi) == dim and abs(np.trace(Pi) - dim) < 1e-12
    assert inv.subspace_dim(ARCH) == EXP.depth + 2  # L + 2 for the 2×2 completion


def test_project_coordinates_and_basis_agree_and_project_is_idempotent():
    theta = init_params(OTHER, 3, seed=1)
    us = inv.random_directions(OTHER, 3, seed=2)
    proj = inv.project(theta, us)
    for r in range(3):
        Pi = inv.subspace_projector(OTHER, _one(us, r))
        np.testing.assert_allclose(proj.flat[r], Pi @ theta.flat[r], atol=1e-14)
        b, c, a = inv.coordinates(theta.select([r]), _one(us, r))
        np.testing.assert_allclose(np.concatenate([b[0], c[0], a[0]]),
                                   inv.subspace_basis(OTHER, _one(us, r)).T @ theta.flat[r], atol=1e-14)
    np.testing.assert_allclose(inv.project(proj, us).flat, proj.flat, atol=1e-15)
    # the residual is orthogonal to M_u: a wrong (e.g. one-sided) projection would leave a part in it
    resid = Params(OTHER, theta.flat - proj.flat)
    assert np.max(np.abs(inv.project(resid, us).flat)) < 1e-14


@pytest.mark.parametrize("arch", [ARCH, OTHER, SHALLOW])
def test_A_has_rank_at_most_one_on_M_u_and_rank_two_off_it(arch):
    pts = inv.random_points(arch, 6, seed=4)
    A = pts.params.end_to_end()
    s = np.linalg.svd(A, compute_uv=False)
    assert np.all(s[:, 0] > 1e-3)
    assert all(s[r, 1] <= exact_rank_tol(A[r]) for r in range(6))
    generic = init_params(arch, 6, seed=4).end_to_end()
    assert np.all(np.linalg.svd(generic, compute_uv=False)[:, 1] > 1e-3)


def test_the_gradients_drift_and_noise_are_tangent_at_points_of_M_u_only():
    pts = inv.random_points(ARCH, 8, seed=0)
    d = inv.tangent_defect(pts.params, PROBLEM, pts.directions, weight_decay=EXP.weight_decay_hot)
    assert np.all(d.worst < 1e-14), d
    # off M_u by 1e-6 · ‖θ‖: a defect of that order (not round-off)
    off = inv.offset_off_subspace(pts.params, pts.directions, 1e-6, seed=0)
    d_off = inv.tangent_defect(off, PROBLEM, pts.directions, weight_decay=EXP.weight_decay_hot)
    assert np.all(d_off.worst > 1e-8) and np.all(d_off.worst < 1e-4)
    # the same point measured against another subspace: not tangent (the defect sees the subspace)
    wrong = inv.random_directions(ARCH, 8, seed=99)
    assert np.all(inv.tangent_defect(pts.params, PROBLEM, wrong, weight_decay=0.0).gradient > 1e-2)
    # Langevin's columns e_p stick out of M_u almost entirely
    lang = inv.tangent_defect(pts.params, PROBLEM, pts.directions, weight_decay=0.0, noise="langevin")
    assert np.all(lang.noise > 0.99) and np.all(lang.gradient < 1e-14)


def test_tangency_holds_for_another_loss_and_architecture():
    problem = random_low_rank_completion((2, 3), 1, 0.7, seed=5)
    arch = Architecture((3, 5, 4, 2))
    pts = inv.random_points(arch, 5, seed=6)
    d = inv.tangent_defect(pts.params, problem, pts.directions, weight_decay=0.1)
    assert np.all(d.worst < 1e-14)


def test_transverse_distance_to_a_given_and_to_the_own_subspace():
    pts = inv.random_points(ARCH, 4, seed=1)
    assert np.all(inv.transverse_distance(pts.params, pts.directions) < 1e-15)
    assert np.all(inv.transverse_distance(pts.params) < 1e-14)  # own top singular vectors
    flipped = tuple(-u for u in pts.directions)  # M_u does not depend on the signs
    assert np.all(inv.transverse_distance(pts.params, flipped) < 1e-15)
    size = 1e-3
    off = inv.offset_off_subspace(pts.params, pts.directions, size, seed=2)
    np.testing.assert_allclose(inv.transverse_distance(off, pts.directions), size / np.sqrt(1 + size**2), rtol=1e-9)
    generic = init_params(ARCH, 3, seed=0)
    assert np.all(inv.transverse_distance(generic) > 0.3)
    flat = np.vstack([pts.params.flat[:1], np.zeros((1, ARCH.n_params)), np.full((1, ARCH.n_params), np.nan)])
    d = inv.transverse_distance(Params(ARCH, flat))
    assert d[0] < 1e-14 and d[1] == 0.0 and np.isnan(d[2])


def test_random_points_are_seeded_do_not_depend_on_n_and_like_keeps_A_and_the_norm():
    a, b = inv.random_points(ARCH, 3, seed=7), inv.random_points(ARCH, 5, seed=7)
    np.testing.assert_array_equal(a.params.flat, b.params.flat[:3])
    assert not np.array_equal(a.params.flat, inv.random_points(ARCH, 3, seed=8).params.flat)
    for u, v in zip(a.directions, inv.random_directions(ARCH, 3, seed=7)):
        np.testing.assert_array_equal(u, v)
    for u, d in zip(a.directions, ARCH.dims[1:-1]):
        assert u.shape == (3, d)
        np.testing.assert_allclose(np.linalg.norm(u, axis=1), 1.0, rtol=1e-15)
    like = rank_one_minimum()
    pts = inv.random_points(ARCH, 3, seed=0, like=like)
    np.testing.assert_allclose(pts.params.end_to_end(), np.repeat(like.end_to_end(), 3, axis=0), rtol=1e-12)
    np.testing.assert_allclose(pts.params.norm_sq(), like.norm_sq()[0], rtol=1e-12)
    assert np.all(inv.transverse_distance(pts.params, pts.directions) < 1e-15)


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="depth L ≥ 2"):
        inv.subspace_dim(Architecture((2, 2)))
    with pytest.raises(ValueError, match="need 3 directions"):
        inv.subspace_basis(ARCH, [np.ones(8) / np.sqrt(8)] * 2)
    with pytest.raises(ValueError, match="unit vectors"):
        inv.subspace_basis(ARCH, [np.ones(8)] * 3)
    with pytest.raises(ValueError, match="shape"):
        inv.subspace_basis(ARCH, [np.ones(7) / np.sqrt(7)] * 3)
    pts = inv.random_points(ARCH, 2, seed=0)
    with pytest.raises(ValueError, match="noise"):
        inv.tangent_defect(pts.params, PROBLEM, pts.directions, weight_decay=0.0, noise="isotropic")
    with pytest.raises(ValueError, match="whole number"):
        inv.invariance_evidence(t_end=12.0, record_dt=5.0)


def test_the_check_is_registered_passes_and_fails_on_each_broken_input():
    assert "sde_noise.invariant_rank1_subspace" in registered_checks()
    good = check_invariant_rank1_subspace(seed=0)
    assert [r.name for r in good] == ["sde_noise.invariant_rank1_subspace[tangent]",
                                      "sde_noise.invariant_rank1_subspace[paths]"]
    assert all(r.passed and np.isfinite(r.measured) and r.tolerance_source for r in good), good
    tangent, paths = good
    assert tangent.measured < 1e-14 and paths.measured < 1e-13
    assert paths.details["ended_early"] == 0 and paths.details["amplification"] < 1
    for broken in ("off_subspace", "langevin_noise"):
        bad = check_invariant_rank1_subspace(seed=0, broken=broken)
        assert not any(r.passed for r in bad), (broken, bad)
    off = check_invariant_rank1_subspace(seed=0, broken="off_subspace")
    assert OFF_SUBSPACE_OFFSET / 10 < off[0].measured < OFF_SUBSPACE_OFFSET * 10  # of the order of the offset
    with pytest.raises(ValueError, match="broken"):
        check_invariant_rank1_subspace(broken="nonsense")


@pytest.fixture(scope="module")
def small_evidence():
    """A small setting (about 1.5 s): 4 paths to t = 800, records every 10."""
    return inv.invariance_evidence(n_paths=4, t_end=800.0, record_dt=10.0, seed=3)


def test_the_evidence_on_a_small_setting(small_evidence):
    e = small_evidence
    assert e.times.shape == (81,) and e.distance.shape == e.s2.shape == (4, 81)
    assert e.used.sum() >= 2 and e.n_jumped_bounded >= e.used.sum()
    assert np.all(np.abs(e.rate_over_two_gamma - 1) < 0.02)
    assert np.all(e.end_distance <= e.floor) and np.all(e.decades > 9)
    assert np.all(e.distance[:, 0] > 0.3)  # the rank-2 start is far from every aligned subspace
    for i in np.flatnonzero(~e.bounded):  # a path that ended is NaN from then on and not fitted
        assert np.isnan(e.distance[i, -1]) and np.isnan(e.rate[i])
    assert all(c.passed for c in sc.invariance_claims(e)), sc.invariance_claims(e)


def test_the_evidence_is_seeded():
    a = inv.invariance_evidence(n_paths=2, t_end=20.0, record_dt=10.0, seed=1)
    b = inv.invariance_evidence(n_paths=2, t_end=20.0, record_dt=10.0, seed=1)
    c = inv.invariance_evidence(n_paths=2, t_end=20.0, record_dt=10.0, seed=2)
    np.testing.assert_array_equal(a.distance, b.distance)
    assert not np.array_equal(a.distance[:, -1], c.distance[:, -1])


def test_the_claims_fail_on_broken_copies(small_evidence):
    e = small_evidence
    names = [c.name for c in sc.invariance_claims(e)]

    def failed(copy):
        return {n for n, c in zip(names, sc.invariance_claims(copy)) if not c.passed}

    assert failed(dataclasses.replace(e, rate=e.rate * 1.05)) == {"sde_noise.invariance.rate_2gamma"}
    assert failed(dataclasses.replace(e, max_residual=e.max_residual + 1.0)) == {"sde_noise.invariance.exponential"}
    assert failed(dataclasses.replace(e, after_floor_max=e.after_floor_max * 1e3)) == {"sde_noise.invariance.stays"}
    late = e.floor_time.copy()
    late[np.flatnonzero(e.used)[0]] = np.nan
    assert "sde_noise.invariance.decay_complete" in failed(dataclasses.replace(e, floor_time=late))
    nothing = dataclasses.replace(e, rate=np.full_like(e.rate, np.nan), jump_time=np.full_like(e.jump_time, np.nan))
    assert failed(nothing) == set(names)  # a claim about no path fails

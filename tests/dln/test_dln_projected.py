"""The projected Euler–Maruyama step (symsgd_core.dln._projected_kernel; Beyn, Isaak & Kruse 2016): its radius rule,
its kernel against its reference on the same draws, EM bit for bit inside the ball, the projection before the step,
finite where EM (and the tamed step) blow up, the same numbers on 1 and 2 numba threads, and its warm-up. Its
declaration, one step's mean and covariance and its step mean's order are the registry's parametrised tests
(tests/dln/test_dln_integrators.py)."""

import numba
import numpy as np
import pytest

from symsgd_core.core.checking import roundoff_tolerance
from symsgd_core.dln import Params, epsilon_completion, make_architecture, replicate
from symsgd_core.dln._kernels import n_blocks
from symsgd_core.dln._projected_kernel import (
    fit_norm,
    project,
    projected_chunks,
    projection_exponent,
    projection_radius,
)
from symsgd_core.dln.integrators import INTEGRATORS, EulerMaruyama, integrator
from symsgd_core.dln.problems import CompletionProblem
from symsgd_core.dln.sde import run_sde
from symsgd_core.rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from symsgd_core.rank_jumps.experiments import start_minimum
from symsgd_core.sde_noise.checks import _test_point

PROJECTED = integrator("sde_projected")
EM = EulerMaruyama()
PROBLEM = epsilon_completion(EXP.eps)
LR, WD = EXP.lr_hot, EXP.weight_decay_hot
DT = PROJECTED.time_step(LR, 16)


def _minimum(scale=1.0, runs=3):
    s = start_minimum(weight_decay=WD)[0]
    return Params(s.arch, np.repeat(s.flat[:1] * scale, runs, axis=0))


def _kw(**extra):
    return {**dict(lr=LR, weight_decay=WD, dt=DT, seed=2, record_every=1, record_layers=False), **extra}


def test_it_is_declared_with_its_kernel():
    assert INTEGRATORS[("sde_projected", "gaussian")] is PROJECTED
    assert (PROJECTED.label, PROJECTED.kernel) == ("SDE projected", "dln._projected_kernel")
    assert (PROJECTED.weak_order, PROJECTED.strong_order, PROJECTED.step_divides_lr) == (1.0, 0.5, True)


def test_the_radius_rule():
    """α = 1/(2(q − 1)) with q = 2L − 1; ρ* = sqrt(L Σ σ_i^(2/L)) (the identity: sqrt(2L)); R = ρ* dt^(−α) ≥ ρ* at
    dt ≤ 1, so the ball holds the minimum (‖θ*‖ ≤ ρ*: γ‖θ*‖² ≤ 𝓛_γ(θ*) ≤ γρ*²) at every such dt."""
    assert projection_exponent(4) == 1.0 / 12.0 and projection_exponent(2) == 0.25 and projection_exponent(1) == np.inf
    eye = CompletionProblem(np.eye(2), np.ones((2, 2), dtype=bool))
    assert fit_norm(eye, 3) == pytest.approx(np.sqrt(6.0), rel=1e-15)
    arch = _minimum().arch
    rho = fit_norm(PROBLEM, arch.depth)
    assert projection_radius(1.0, arch, PROBLEM) == pytest.approx(rho, rel=1e-15)
    assert projection_radius(DT, arch, PROBLEM) == pytest.approx(rho * DT ** (-1 / 12), rel=1e-15)
    assert float(np.linalg.norm(_minimum().flat[0])) <= rho <= projection_radius(LR, arch, PROBLEM)
    assert projection_radius(0.5, make_architecture((2, 2), 1, 1), PROBLEM) == np.inf  # depth 1: no projection


def test_the_radius_rule_is_achieved_by_the_balanced_factorisation():
    """ρ* is the norm of a network that fits the observed target (zeros elsewhere): W_1 = Σ^(1/L) Vᵀ, W_ℓ = Σ^(1/L)
    (1 < ℓ < L), W_L = U Σ^(1/L), padded to the widths."""
    arch = _minimum().arch
    L, width = arch.depth, arch.dims[1]
    observed = np.where(PROBLEM.mask, PROBLEM.target, 0.0)
    U, s, Vt = np.linalg.svd(observed)
    root = np.diag(s ** (1.0 / L))
    pad = np.zeros((width, width))
    pad[:2, :2] = root
    first, last = np.zeros((width, 2)), np.zeros((2, width))
    first[:2] = root @ Vt
    last[:, :2] = U @ root
    theta = Params.from_layers([first] + [pad] * (L - 2) + [last])
    np.testing.assert_allclose(theta.end_to_end()[0], observed, atol=roundoff_tolerance(1.0, 4 * L))
    assert float(np.sqrt(theta.norm_sq()[0])) == pytest.approx(fit_norm(PROBLEM, L), rel=roundoff_tolerance(1.0, 4))


def test_project_holds_each_run_on_the_ball_and_leaves_the_inside_alone():
    theta = np.array([[3.0, 4.0], [0.3, 0.4], [np.inf, 0.0]])
    out = project(theta, 2.0)
    np.testing.assert_allclose(out[0], [1.2, 1.6], rtol=1e-15)
    assert np.array_equal(out[1], theta[1]) and np.array_equal(out[2], theta[2])  # inside; not finite: left
    assert np.array_equal(theta[0], [3.0, 4.0])  # a new array


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="depth must be at least 1"):
        projection_exponent(0)
    with pytest.raises(ValueError, match="dt"):
        projection_radius(0.0, _minimum().arch, PROBLEM)
    with pytest.raises(ValueError, match="radius must be positive"):
        run_sde(_minimum(), PROBLEM, 1, chunks=projected_chunks(0.0), **_kw())
    with pytest.raises(ValueError, match="start must be a Params"):
        PROJECTED.run(_minimum().flat, PROBLEM, 1, **_kw())


def test_compiled_equals_its_reference_on_the_same_draws_with_the_projection_at_work():
    """70 steps (past one flush, FLUSH_EVERY = 64), 3 runs from the minimum ×1.6 (‖θ‖ = 4.35 > R(η/16) = 3.94): the
    projection acts in the first steps (and EM blows up there). Round-off of 70 steps of P-term sums (each step's norm
    is one more), relative to the largest entry: 64·n·P·eps, as EM's kernel against its reference
    (tests/sde_noise/test_sde_noise_sde.py)."""
    n, P, start = 70, _minimum().arch.n_params, _minimum(1.6)
    R = projection_radius(DT, start.arch, PROBLEM)
    a = PROJECTED.run(start, PROBLEM, n, **_kw())
    b = PROJECTED.run(start, PROBLEM, n, engine="reference", **_kw())
    assert a.settings["engine"] == "compiled" and b.settings["engine"] == "reference"
    beyond = (np.sqrt(a.norm_sq[:, :-1]) > R).sum(axis=1)  # steps that started outside the ball
    assert beyond.min() >= 1 and beyond.max() >= 3
    assert EM.run(start, PROBLEM, n, **_kw()).diverged.any()  # EM here is not what the projected step does
    assert not a.diverged.any()
    rel = float(np.max(np.abs(a.final.flat - b.final.flat)) / np.max(np.abs(a.final.flat)))
    assert rel <= roundoff_tolerance(1.0, n * P), rel
    np.testing.assert_allclose(a.norm_sq, b.norm_sq, rtol=roundoff_tolerance(1.0, n * P))


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_inside_the_ball_it_is_euler_maruyama_bit_for_bit(engine):
    """From the test point, on the radius rule's ball (every path stays inside) and on a ball of radius 10⁶: the same
    numbers as EM on the same draws, bit for bit (no projection multiplies; the step is EM's, operation by
    operation)."""
    start, n = replicate(_test_point(), 3), 70
    em = EM.run(start, PROBLEM, n, engine=engine, **_kw())
    ruled = PROJECTED.run(start, PROBLEM, n, engine=engine, **_kw())
    assert float(np.sqrt(ruled.norm_sq.max())) < projection_radius(DT, start.arch, PROBLEM)
    wide = run_sde(start, PROBLEM, n, engine=engine, chunks=projected_chunks(1e6), **_kw())
    for r in (ruled, wide):
        assert np.array_equal(r.final.flat, em.final.flat) and np.array_equal(r.norm_sq, em.norm_sq)


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_a_start_outside_is_projected_before_the_step(engine):
    """One step from the blow-up tests' brink ×3 (‖θ‖ = 8.16 > R = 3.94) is one EM step from ``project(start, R)``
    on the same draws, to round-off of one step (P-term sums, scale ‖θ‖); EM from the start itself leaves."""
    start = _minimum(3.0)
    R = projection_radius(DT, start.arch, PROBLEM)
    on_ball = Params(start.arch, project(start.flat, R))
    assert np.allclose(np.sqrt(on_ball.norm_sq()), R, rtol=1e-15, atol=0)
    got = PROJECTED.run(start, PROBLEM, 1, engine=engine, **_kw()).final.flat
    want = EM.run(on_ball, PROBLEM, 1, engine=engine, **_kw()).final.flat
    tol = roundoff_tolerance(float(np.max(np.abs(want))), start.arch.n_params)
    assert float(np.max(np.abs(got - want))) <= tol
    unprojected = EM.run(start, PROBLEM, 1, engine=engine, **_kw()).final.flat
    assert float(np.max(np.abs(unprojected - want))) > 1e6 * tol


@pytest.mark.parametrize("batch_size", [10**6, 1])
def test_it_stays_finite_where_euler_maruyama_blows_up(batch_size):
    """The tamed step's setting (tests/dln/test_dln_integrators.py): the brink ×3, η = 0.3, dt = η/16, 400 steps.
    At S = 10⁶ (the drift superlinear) EM leaves the divergence rule at once; at S = 1 the diffusion too, and the
    tamed step (only its drift tamed) leaves as well. The projected step never does: every step starts on the ball,
    where the residuals are bounded far below the divergence rule."""
    start = _minimum(3.0, runs=8)
    kw = dict(lr=0.3, weight_decay=0.027, dt=0.3 / 16, batch_size=batch_size, seed=0, record_every=100,
              record_layers=False)
    em = EM.run(start, epsilon_completion(0.2), 400, **kw)
    projected = PROJECTED.run(start, epsilon_completion(0.2), 400, **kw)
    assert em.diverged.all() and int(em.diverged_step.max()) <= 3
    if batch_size == 1:
        assert integrator("sde_tamed").run(start, epsilon_completion(0.2), 400, **kw).diverged.all()
    assert not projected.diverged.any() and np.all(np.isfinite(projected.final.flat))


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
def test_the_same_numbers_on_one_and_two_threads():
    """32 runs (two blocks of MIN_BLOCK_RUNS on two threads: the prange driver) from the minimum ×1.6, the
    projection at work: bit for bit the numbers of one thread (one block)."""
    start = _minimum(1.6, runs=32)
    before = numba.get_num_threads()
    out = {}
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            assert n_blocks(32) == threads
            out[threads] = PROJECTED.run(start, PROBLEM, 70, **_kw(seed=7))
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(out[1].final.flat, out[2].final.flat)
    assert np.array_equal(out[1].norm_sq, out[2].norm_sq, equal_nan=True)
    assert np.array_equal(out[1].diverged_step, out[2].diverged_step)


def test_the_warm_up_compiles_its_kernel():
    """The warm-up runs it (it declares ``kernel``) on one and on every thread; then every kernel of the module has
    an entry in its cache."""
    from symsgd_core.warm import KERNEL_MODULES, _integrator_kernel, cold_kernels

    assert "dln._projected_kernel" in KERNEL_MODULES
    _integrator_kernel("dln._projected_kernel")
    cold = cold_kernels(("dln._projected_kernel",))
    unused = {"dln._projected_kernel._projected_par"} if numba.config.NUMBA_NUM_THREADS < 2 else set()
    assert not set(cold) - unused, cold

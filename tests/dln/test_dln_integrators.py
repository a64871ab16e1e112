"""The integrators as declared types (symsgd_core.dln.integrators): every declaration is consistent, the shipped
grid's keys resolve to one, and every integrator with a declared weak order has, over one step, its declared mean
(``step_mean``: the drift's ``b dt`` up to O(dt²), checked) and the covariance of the SDE it declares (the first two
moments of a weak order-1 step). A new integrator is tested by declaring it; the tamed Euler–Maruyama step (the first
added after the move to dln) has its own tests at the end: its kernel against its reference, O(dt²) from EM per
step, finite where EM blows up, and its weak order by simulation."""

import json
import math
from importlib import resources

import numpy as np
import pytest
from scipy.optimize import brentq

from symsgd_core.core.checking import roundoff_tolerance
from symsgd_core.core.seeding import tagged_stream
from symsgd_core.dln import Params, epsilon_completion, replicate
from symsgd_core.dln._tamed_kernel import tamed_factor
from symsgd_core.dln.integrators import INTEGRATORS, EulerMaruyama, Integrator, TamedEulerMaruyama, integrator
from symsgd_core.rank_jumps.analysis import loss_hessian_top_eigenvalue
from symsgd_core.rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
from symsgd_core.rank_jumps.experiments import start_minimum
from symsgd_core.sde_noise.checks import Z_TOL, _test_point

ALL = list(INTEGRATORS.values())
WITH_ORDER = [i for i in ALL if i.weak_order is not None]
LR, M_REFINE, TAU, RUNS = EXP.lr_hot, 16, 1e-3, 4_000


def _ids(integ: Integrator) -> str:
    return f"{integ.name}-{integ.increments}"


@pytest.mark.parametrize("integ", ALL, ids=_ids)
def test_declaration_is_consistent(integ):
    assert integ.name and integ.label and integrator(integ.name, integ.increments) is integ
    assert integ.time_step(LR, 4) == pytest.approx(LR / 4 if integ.step_divides_lr else LR, rel=0)
    assert integ.weak_order is None or integ.weak_order > 0
    assert integ.strong_order is None or (integ.weak_order is not None and 0 < integ.strong_order <= integ.weak_order)


@pytest.mark.parametrize("integ", [i for i in ALL if not i.adaptive], ids=_ids)
def test_a_fixed_step_run_records_its_integrators_own_name(integ):
    """``RunResult.settings["method"]`` is the integrator's ``name`` (the tamed step's is not Euler–Maruyama's)."""
    problem = epsilon_completion(EXP.eps)
    r = integ.run(replicate(_test_point(), 2), problem, 1, lr=LR, weight_decay=EXP.weight_decay_hot, seed=0,
                  dt=integ.time_step(LR, 4), tau=TAU, record_every=1, record_layers=False)
    assert r.settings["method"] == integ.name


def test_the_recorded_method_must_be_a_name():
    from symsgd_core.dln.sde import run_sde

    with pytest.raises(ValueError, match="method must be a non-empty string"):
        run_sde(replicate(_test_point(), 1), epsilon_completion(EXP.eps), 1, lr=LR, weight_decay=0.0, dt=LR,
                method="")


@pytest.mark.parametrize("integ", [i for i in ALL if i.kernel], ids=_ids)
def test_a_kernel_of_its_own_is_warmed(integ):
    """A declared kernel module is ``dln/_<name>_kernel.py`` and the warm-up lists it (found by its file name)."""
    from symsgd_core.warm import KERNEL_MODULES

    assert integ.kernel.startswith("dln._") and integ.kernel.endswith("_kernel") and integ.kernel in KERNEL_MODULES


def test_the_warm_up_refuses_a_kernel_file_no_integrator_declares():
    from symsgd_core.warm import _integrator_kernel

    with pytest.raises(RuntimeError, match="no declared fixed-step integrator names dln._nope_kernel"):
        _integrator_kernel("dln._nope_kernel")


def test_unknown_integrator_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown integrator.*known"):
        integrator("heun")


def test_every_key_of_the_shipped_grid_names_one_integrator():
    grid = json.loads(resources.files("symsgd_core.data_files").joinpath("sde05_grid.json").read_text())
    keys = {(t["params"]["method"], t["params"].get("increments", "gaussian"))
            for t in grid["tasks"] if t["kind"] in ("dynamics", "dynamics_events")}
    keys |= {("follow", "gaussian")} if any(t["kind"] == "follow" for t in grid["tasks"]) else set()
    assert len(keys) >= 7 and all(integrator(*k) for k in keys)


def _one_step(integ, start, problem, dt):
    kw = dict(lr=LR, weight_decay=EXP.weight_decay_hot, seed=3)
    if integ.adaptive:
        r = integ.run(start, problem, dt, m=M_REFINE, rho=0.05, rec_dt=dt, record_layers=False, **kw).result
    else:
        r = integ.run(start, problem, 1, dt=dt, tau=TAU, record_every=1, record_layers=False, **kw)
    assert not r.diverged.any()
    return r.final.flat - start.flat[:1]


@pytest.mark.parametrize("integ", WITH_ORDER, ids=_ids)
def test_one_step_has_the_declared_sdes_mean_and_covariance(integ):
    """Over one step (dt = η, or η/16), ``Δθ`` has mean ``b dt`` and covariance ``D dt`` of the declared generator:
    |z| ≤ Z_TOL in the eigenbasis of D (exact Gaussian/Wishart standard errors on RUNS draws), and outside span D
    ``Δθ = b dt`` to round-off."""
    problem = epsilon_completion(EXP.eps)
    point = _test_point()
    dt = integ.time_step(LR, M_REFINE)
    d = _one_step(integ, replicate(point, RUNS), problem, dt)
    b, D = integ.generator(point, problem, lr=LR, weight_decay=EXP.weight_decay_hot, tau=TAU)
    P = b.size
    Sigma = D * dt
    evals, evecs = np.linalg.eigh(Sigma)
    U = evecs[:, evals > roundoff_tolerance(float(max(evals.max(), 0.0)) or 1.0, P)] if evals.max() > 0 else \
        np.zeros((P, 0))
    resid = d - integ.step_mean(b, dt)
    y = resid @ U
    outside = float(np.max(np.abs(resid - y @ U.T))) / float(np.max(np.abs(d)))
    assert outside <= roundoff_tolerance(1.0, 4 * P), outside
    if U.shape[1]:
        S_U = U.T @ Sigma @ U
        z_mean = y.mean(0) / np.sqrt(np.diag(S_U) / RUNS)
        emp = (y - y.mean(0)).T @ (y - y.mean(0)) / (RUNS - 1)
        z_cov = (emp - S_U) / np.sqrt((np.outer(np.diag(S_U), np.diag(S_U)) + S_U**2) / RUNS)
        assert max(np.max(np.abs(z_mean)), np.max(np.abs(z_cov))) <= Z_TOL


#: The local order of ``step_mean − b dt`` (as dt halves) that weak order 1 needs is 2; order 3/2 gives weak order ½.
#: Band: halfway between them.
LOCAL_MEAN_ORDER_MIN = (2.0 + 1.5) / 2


def _local_mean_order(integ, b, dt):
    """``log2`` of the ratio of ``‖step_mean(b, dt) − b dt‖`` at dt and dt/2 (inf where the mean is exactly b dt)."""
    defect = [float(np.linalg.norm(integ.step_mean(b, h) - b * h)) for h in (dt, dt / 2)]
    return math.inf if defect[0] == 0.0 else math.log2(defect[0] / defect[1])


@pytest.mark.parametrize("integ", WITH_ORDER, ids=_ids)
def test_declared_step_mean_is_the_drift_to_second_order(integ):
    b, _ = integ.generator(_test_point(), epsilon_completion(EXP.eps), lr=LR, weight_decay=EXP.weight_decay_hot)
    assert _local_mean_order(integ, b, integ.time_step(LR, M_REFINE)) >= LOCAL_MEAN_ORDER_MIN


def test_a_first_order_mean_defect_fails_the_step_mean_test():
    """A step whose mean is off by O(dt^{3/2}) (weak order ½) must fail the local-order test."""
    class Sloppy(EulerMaruyama):
        def step_mean(self, drift, dt):
            return drift * dt * (1.0 + math.sqrt(dt))

    with pytest.raises(AssertionError):
        test_declared_step_mean_is_the_drift_to_second_order(Sloppy())


def test_a_wrong_declared_generator_fails_the_moment_test():
    """The moment test must catch an integrator that runs one SDE but declares another (noise 4× too strong)."""
    class Wrong(EulerMaruyama):
        def generator(self, *a, **k):
            b, D = super().generator(*a, **k)
            return b, 4.0 * D

    with pytest.raises(AssertionError):
        test_one_step_has_the_declared_sdes_mean_and_covariance(Wrong())


def test_the_weak_order_check_reads_the_declared_order():
    from symsgd_core.sde_noise import checks

    assert checks.WEAK_ORDER_INTEGRATOR.weak_order == 1.0 == integrator("sde").weak_order


def test_a_wrong_declared_step_mean_fails_the_moment_test():
    """The tamed step declaring EM's mean ``b dt`` (its mean is ``b dt/(1 + dt‖b‖)``) must fail: the O(dt²) part
    lies partly outside span D, where the test allows round-off only."""
    class Untamed(TamedEulerMaruyama):
        def step_mean(self, drift, dt):
            return EulerMaruyama.step_mean(self, drift, dt)

    with pytest.raises(AssertionError):
        test_one_step_has_the_declared_sdes_mean_and_covariance(Untamed())


# -- the tamed Euler–Maruyama step (Hutzenthaler, Jentzen & Kloeden 2012) ------------------------------------------

TAMED = integrator("sde_tamed")
EPS = np.finfo(float).eps


def test_tamed_factor_is_one_over_one_plus_dt_norm():
    b = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_array_equal(tamed_factor(b, 0.5), [1.0 / 3.5, 1.0])


def test_tamed_compiled_equals_its_reference_on_the_same_draws():
    """70 steps (past one flush, FLUSH_EVERY = 64), 3 runs, records every 10: round-off of 70 steps of P-term sums
    (as EM's kernel against its reference, tests/sde_noise/test_sde_noise_sde.py)."""
    problem, P, n = epsilon_completion(EXP.eps), _test_point().arch.n_params, 70
    kw = dict(lr=LR, weight_decay=EXP.weight_decay_hot, dt=LR / 4, seed=2, record_every=10, record_layers=False)
    a = TAMED.run(replicate(_test_point(), 3), problem, n, **kw)
    b = TAMED.run(replicate(_test_point(), 3), problem, n, engine="reference", **kw)
    assert a.settings["engine"] == "compiled" and b.settings["engine"] == "reference"
    rel = float(np.max(np.abs(a.final.flat - b.final.flat)) / np.max(np.abs(a.final.flat)))
    assert rel <= 64 * n * P * EPS, rel
    np.testing.assert_allclose(a.norm_sq, b.norm_sq, rtol=64 * n * P * EPS)


def test_tamed_step_is_euler_maruyama_to_second_order():
    """One step from the same point with the same draws: the tamed step minus EM's is exactly the taming,
    ``−dt² ‖b‖ b / (1 + dt‖b‖)`` (norm ``dt²‖b‖²/(1 + dt‖b‖) ≤ dt²‖b‖²``), to round-off; here dt‖b‖ ≈ 2e-3."""
    problem, point = epsilon_completion(EXP.eps), _test_point()
    dt = TAMED.time_step(LR, M_REFINE)
    kw = dict(lr=LR, weight_decay=EXP.weight_decay_hot, dt=dt, seed=5, record_every=1, record_layers=False)
    start = replicate(point, 4)
    gap = TAMED.run(start, problem, 1, **kw).final.flat - EulerMaruyama().run(start, problem, 1, **kw).final.flat
    b, _ = TAMED.generator(point, problem, lr=LR, weight_decay=EXP.weight_decay_hot)
    hb = dt * float(np.linalg.norm(b))
    assert hb < 1e-2  # the regime of the claim: ‖b‖ dt small
    expected = -dt * dt * float(np.linalg.norm(b)) * b / (1.0 + hb)
    assert float(np.linalg.norm(expected)) <= (dt * float(np.linalg.norm(b))) ** 2
    tol = roundoff_tolerance(float(np.max(np.abs(start.flat))), 4 * point.arch.n_params)
    assert float(np.max(np.abs(gap - expected))) <= tol <= 1e-3 * float(np.max(np.abs(expected)))


def test_tamed_stays_finite_where_euler_maruyama_blows_up():
    """The blow-up tests' brink (tests/sde_noise/test_sde_noise_adaptive.py: the rank-1 minimum with every layer
    scaled), here ×3 and at a low temperature (S = 10⁶, T = η/S = 3e-7) so the drift, not the noise, is superlinear:
    fixed-step EM at dt = η/16 leaves the divergence rule at once, the tamed step (drift increment < 1 per step) never
    does in 400 steps. (At S = 1 the diffusion, growing like ‖θ‖^{4L−2}, blows both up: only the drift is tamed.)"""
    s = start_minimum(weight_decay=0.027)[0]
    brink = Params(s.arch, np.repeat(s.flat[:1] * 3.0, 8, axis=0))
    kw = dict(lr=0.3, weight_decay=0.027, dt=0.3 / 16, batch_size=10**6, seed=0, record_every=100,
              record_layers=False)
    em = EulerMaruyama().run(brink, epsilon_completion(0.2), 400, **kw)
    tamed = TAMED.run(brink, epsilon_completion(0.2), 400, **kw)
    assert em.diverged.all() and int(em.diverged_step.max()) <= 3
    assert not tamed.diverged.any() and np.all(np.isfinite(tamed.final.flat))


def _two_level_weak_order(integ, M=16_384, t_end=0.25, lr=0.1, levels=(8, 16, 64), seed=0):
    """Weak order from two step sizes ``h = t_end/8, t_end/16`` and a reference ``t_end/64``, all on the same Brownian
    path (as :func:`~symsgd_core.sde_noise.checks.check_sde_weak_order`: start at the rank-2 minimum, φ = 𝓛_γ at
    ``t_end``, T = ``lr``): ``e_j = E[φ_{h_j} − φ_ref] = K (h_j^p − h_ref^p)``, so ``e_1/e_2 = g(p) =
    (2^p − 4^{−p})/(1 − 4^{−p})``. Returns ``(p, se)``: the root of ``g(p) = ē_1/ē_2`` and its delta-method standard
    error from the paired differences' covariance."""
    wd = EXP.weight_decay_hot
    problem, point = epsilon_completion(EXP.eps), start_minimum(weight_decay=wd)[0]
    n_ref = levels[-1]
    xi = tagged_stream(seed, 35).standard_normal((M, n_ref, problem.n_observed))
    phi = np.empty((M, len(levels)))
    for j, n in enumerate(levels):
        r = integ.run(replicate(point, M), problem, n, lr=lr, weight_decay=wd, dt=t_end / n, xi=xi,
                      coarsen=n_ref // n, record_every=n, record_layers=False)
        assert not r.diverged.any()
        phi[:, j] = r.loss[:, -1]
    d = phi[:, :2] - phi[:, 2:]
    e, S = d.mean(axis=0), np.cov(d, rowvar=False) / M
    p = brentq(lambda q: _ratio(q) - e[0] / e[1], 0.05, 4.0)
    se_log = math.sqrt(S[0, 0] / e[0] ** 2 + S[1, 1] / e[1] ** 2 - 2 * S[0, 1] / (e[0] * e[1]))
    slope = (math.log(_ratio(p + 1e-6)) - math.log(_ratio(p - 1e-6))) / 2e-6
    return p, se_log / slope


def _ratio(p):
    return (2.0**p - 4.0**-p) / (1.0 - 4.0**-p)


def _ou_offset(a, t_end=0.25, levels=(8, 16, 64)):
    """The two-level estimator's systematic offset from order 1 at these steps: its value on EM's exact second
    moment ``v_{k+1} = (1 − ah)² v_k + h`` of an Ornstein–Uhlenbeck mode of rate ``a`` (the loss sees the modes'
    variances at first order), minus 1."""
    def v(n):
        h, x = t_end / n, 0.0
        for _ in range(n):
            x = (1.0 - a * h) ** 2 * x + h
        return x

    return brentq(lambda q: _ratio(q) - (v(levels[0]) - v(levels[2])) / (v(levels[1]) - v(levels[2])), 0.05, 4.0) - 1


def _weak_order_holds(p, se, declared, offset):
    """``|p − declared| ≤ Z_TOL·se + |offset|``: the Monte-Carlo error and the steps' systematic offset."""
    return abs(p - declared) <= Z_TOL * se + abs(offset)


def test_tamed_weak_error_decreases_at_the_declared_order():
    """The tamed step's weak error at h = 1/32 and 1/64 decreases at its declared weak order (measured p ≈ 1.06,
    SE ≈ 0.06; offset from the stiffest mode, a = λ_max(∇²𝓛_γ) ≈ 3.97 at the minimum: +0.066), and a mis-declared
    order (½ or 2) fails the same test."""
    a = loss_hessian_top_eigenvalue(start_minimum(weight_decay=EXP.weight_decay_hot)[0], epsilon_completion(EXP.eps),
                                    EXP.weight_decay_hot)
    offset = _ou_offset(a)
    p, se = _two_level_weak_order(TAMED)
    assert Z_TOL * se + abs(offset) < 0.5  # strong enough to tell the declared order from its neighbours ±½
    assert _weak_order_holds(p, se, TAMED.weak_order, offset), (p, se, offset)
    assert not _weak_order_holds(p, se, TAMED.weak_order - 0.5, offset)
    assert not _weak_order_holds(p, se, TAMED.weak_order + 1.0, offset)

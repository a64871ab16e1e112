"""The integrators as declared types (symsgd_core.dln.integrators): every declaration is consistent, the shipped
grid's keys resolve to one, and every integrator with a declared weak order has, over one step, the mean and
covariance of the SDE it declares (the first two moments of a weak order-1 step: error O(dt²), here 0 or below the
Monte-Carlo error). A new integrator is tested by declaring it."""

import json
from importlib import resources

import numpy as np
import pytest

from symsgd_core.core.checking import roundoff_tolerance
from symsgd_core.dln import epsilon_completion, replicate
from symsgd_core.dln.integrators import INTEGRATORS, EulerMaruyama, Integrator, integrator
from symsgd_core.rank_jumps.experiments import EPSILON_EXPERIMENT as EXP
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
    resid = d - b * dt
    y = resid @ U
    outside = float(np.max(np.abs(resid - y @ U.T))) / float(np.max(np.abs(d)))
    assert outside <= roundoff_tolerance(1.0, 4 * P), outside
    if U.shape[1]:
        S_U = U.T @ Sigma @ U
        z_mean = y.mean(0) / np.sqrt(np.diag(S_U) / RUNS)
        emp = (y - y.mean(0)).T @ (y - y.mean(0)) / (RUNS - 1)
        z_cov = (emp - S_U) / np.sqrt((np.outer(np.diag(S_U), np.diag(S_U)) + S_U**2) / RUNS)
        assert max(np.max(np.abs(z_mean)), np.max(np.abs(z_cov))) <= Z_TOL


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

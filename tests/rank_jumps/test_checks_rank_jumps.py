"""The rank_jumps checks pass on the real model and fail on broken inputs."""

from __future__ import annotations

import numpy as np
import pytest

from symsgd_core import dln, rank_jumps, registered_checks
from symsgd_core.rank_jumps import checks as rj

NAMES = [
    "rank_jumps.balanced_at_gd_minimum",
    "rank_jumps.induced_penalty_at_balanced_points",
    "rank_jumps.induced_penalty_is_minimal",
    "rank_jumps.forced_sampling_decay",
    "rank_jumps.absorption_after_forced_sampling",
]


def test_checks_are_registered():
    assert set(NAMES) <= set(registered_checks())


@pytest.mark.parametrize("name", NAMES)
def test_check_passes_on_the_real_model(name):
    res = registered_checks()[name](seed=0)
    assert res.passed, res
    assert res.tolerance_source and np.isfinite(res.measured)


def test_balance_fails_with_a_penalty_without_the_rescaling_symmetry():
    # weight decay twice as strong on layer 2: critical points have λ₃W₃ᵀW₃ = λ₂W₂W₂ᵀ, not balance
    res = rj.check_balanced_at_gd_minimum(layer_decay=(1.0, 2.0, 1.0, 1.0), n_steps=4000, lr=0.1, n_runs=1)
    assert not res.passed, res
    assert res.measured > 100 * res.tolerance


def test_induced_penalty_fails_with_a_wrong_formula_or_an_unbalanced_factorisation():
    wrong_formula = rj.check_induced_penalty_at_balanced_points(penalty=lambda s, L: L * float(np.sum(s ** (1.0 / L))))
    assert not wrong_formula.passed, wrong_formula

    def unbalanced(A, arch, seed=None):
        ws = [w[0].copy() for w in dln.network.balanced_factorisation(A, arch, seed=seed).layers()]
        if len(ws) >= 2:  # A unchanged, norms changed
            ws[0] *= 2.0
            ws[1] /= 2.0
        return rank_jumps.Params.from_layers(ws)

    res = rj.check_induced_penalty_at_balanced_points(factorise=unbalanced)
    assert not res.passed, res


def test_minimality_fails_with_an_overestimated_penalty():
    # an off-by-one depth in the formula, (L + 1) Σ s^{2/L}, exceeds some factorisations' ‖θ‖²
    res = rj.check_induced_penalty_is_minimal(penalty=lambda s, L: (L + 1) * float(np.sum(s ** (2.0 / L))))
    assert not res.passed, res


def test_forced_decay_fails_with_a_leaky_sampler():
    leaky = rank_jumps.epsilon_completion(0.2).mask.copy()  # row-1 entry (1, 1) leaks into the pool
    res = rj.check_forced_sampling_decay(entries=leaky)
    assert not res.passed, res


def test_absorption_says_its_precondition_failed_when_forcing_did_not_reach_rank_one():
    """At η = 0.01 the 1000 forced steps leave every layer's s₂ ≈ 0.48 > ε₁ = 0.1 (A still rank 2): the
    claim is not tested, and the result says so instead of FAIL (it measured s₂ regrowing ×1.14 from there)."""
    res = rj.check_absorption_after_forced_sampling(lr=0.01)
    assert not res.passed and res.outcome == "PRECONDITION NOT MET" and np.isnan(res.measured)
    assert "did not put every run in B₁" in res.precondition and "ε₁ = 0.1" in res.precondition
    assert min(res.details["s2_after_forcing"]) > 0.1 and res.details["rank_after_forcing"] == [2, 2]
    assert "PRECONDITION NOT MET" in str(res) and "FAIL" not in str(res)
    # enough forced steps at the same η reach B_1: the claim is tested again, and holds
    assert rj.check_absorption_after_forced_sampling(lr=0.01, forced_steps=20_000).passed


@pytest.mark.parametrize("broken", [dict(depth=2), dict(methods=("langevin",))], ids=["depth2", "langevin"])
def test_absorption_fails_for_depth_two_or_isotropic_noise(broken):
    res = rj.check_absorption_after_forced_sampling(**broken)
    assert not res.passed, res
    assert res.measured > 10.0  # the second direction regrows by orders of magnitude

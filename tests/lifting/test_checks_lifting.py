"""The lifting checks pass on the three models, over random sizes/data/parameters (hypothesis), and
each one FAILS when fed a broken thing (the seed's chain rule, a wrong ŵ, a loss without the symmetry)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symsgd_core.core.checking import registered
from symsgd_core.lifting import checks as cl
from symsgd_core.lifting.liftings import generic_lifting_gradients, seed_chain_rule, w_free_lifting_loss
from symsgd_core.lifting.models import RankOneModel, linear_layer, make_case, model_loss, squared_error

NAMES = ["lifting.rescaling_symmetry", "lifting.generic_agrees_on_rank1", "lifting.chain_rule",
         "lifting.euler_identity", "lifting.generic_depends_on_w", "lifting.w_free_lifting",
         "lifting.natural_tangent_action", "lifting.natural_differs", "lifting.theorem31_traces",
         "lifting.noise_null_direction", "lifting.sign_caveat"]


def test_all_lifting_checks_registered_and_pass():
    reg = registered()
    for name in NAMES:
        assert name in reg, name
        result = reg[name](seed=0)
        assert result.passed, result
        assert np.isfinite(result.tolerance) and result.tolerance > 0
        assert "eps" in result.tolerance_source


def test_checks_are_deterministic():
    a, b = cl.check_chain_rule(seed=3), cl.check_chain_rule(seed=3)
    assert a.measured == b.measured and a.details == b.details


# ---------------------------------------------------------------- property tests (check 9)
sizes = st.tuples(st.integers(2, 4), st.integers(2, 4), st.integers(1, 6), st.integers(0, 2**31 - 1))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes, st.floats(0.1, 10.0))
def test_lifting_checks_hold_for_random_cases(size, scale):
    m, n, n_samples, seed = size
    rng = np.random.default_rng(seed)
    cases = []
    for key in ("linear", "attention", "relu"):
        base = make_case(key, m, n, n_samples, rng)
        # off-balance parameters: move along the orbit by `scale`
        cases.append(base.with_params(scale * base.u, base.w / scale))
    for check in (cl.check_rescaling_symmetry, cl.check_generic_agrees, cl.check_chain_rule,
                  cl.check_euler_identity, cl.check_generic_depends_on_w, cl.check_w_free_lifting,
                  cl.check_natural_tangent_action, cl.check_natural_differs, cl.check_theorem31_traces,
                  cl.check_noise_null_direction):
        result = check(cases=cases)
        assert result.passed, (result, size, scale)
    assert cl.check_sign_caveat(cases=[c for c in cases if c.model.key == "relu"]).passed


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_identities_hold_in_every_dimension_including_one(m, n, seed):
    """m = 1 or n = 1 is allowed for the identities (not for the 'is not zero' claims)."""
    for check in (cl.check_chain_rule, cl.check_euler_identity, cl.check_w_free_lifting,
                  cl.check_natural_tangent_action, cl.check_theorem31_traces):
        assert check(seed=seed, m=m, n=n, n_samples=3).passed


# ---------------------------------------------------------------- each check can fail
def _asymmetric_model() -> RankOneModel:
    base = linear_layer()

    def predict(u, w, data):  # an extra ‖w‖² breaks ℓ(λu, w/λ) = ℓ(u, w)
        return base.predict(u, w, data) + 0.3 * (w * w).sum(-1, keepdim=True)

    return RankOneModel("asym", "no symmetry", "u wᵀx + 0.3‖w‖²", predict, None, base.make_data, False)


def _wrong_normalisation(model, M, w, data):
    """ℓ(M w/‖w‖, w): not ℓ on the rank-1 set and not invariant under w → λw."""
    u_of = torch.einsum("kij,kj->ki", M, w) / torch.linalg.vector_norm(w, dim=-1, keepdim=True)
    return model_loss(model, u_of, w, data)


def _ignores_w(model, M, w, data):
    """The seed's conclusion taken as a definition: a lifting without w (here F with r = w)."""
    return w_free_lifting_loss(model, M, data, w.detach()[0])


def test_rescaling_check_fails_without_symmetry():
    case = make_case(_asymmetric_model(), 2, 3, 6, seed=1)
    assert not cl.check_rescaling_symmetry(cases=[case]).passed


def test_generic_agrees_fails_for_wrong_normalisation():
    assert not cl.check_generic_agrees(lifting=_wrong_normalisation).passed


def test_chain_rule_check_fails_for_the_seeds_display():
    result = cl.check_chain_rule(chain_rule=seed_chain_rule)
    assert not result.passed and result.measured > 1e-3, result


def test_chain_rule_check_fails_when_the_extra_term_is_dropped():
    def dropped(G, gw, u, w):
        return G @ w, np.einsum("kij,i->kj", G, u)

    assert not cl.check_chain_rule(chain_rule=dropped).passed


def test_euler_check_fails_without_symmetry_or_with_a_wrong_lifting():
    case = make_case(_asymmetric_model(), 2, 3, 6, seed=1)
    assert not cl.check_euler_identity(cases=[case]).passed
    assert not cl.check_euler_identity(lifting=_wrong_normalisation).passed


def test_depends_on_w_check_fails_for_a_w_free_lifting():
    result = cl.check_generic_depends_on_w(lifting=_ignores_w)
    assert not result.passed and result.measured == 0.0, result


def test_depends_on_w_requires_two_dimensions():
    with pytest.raises(ValueError, match="n must be >= 2"):
        cl.check_generic_depends_on_w(n=1)


def _r_direction(M, r):
    return (r / torch.linalg.vector_norm(r)).expand(*M.shape[:-2], r.shape[0])


def _badly_normalised_direction(M, r):
    v = torch.einsum("...ij,...i->...j", M, torch.einsum("...ij,j->...i", M, r))
    return v / (v * v).sum(-1, keepdim=True)


@pytest.mark.parametrize("direction", [_r_direction, _badly_normalised_direction])
def test_w_free_check_fails_for_a_wrong_w_hat(direction):
    assert not cl.check_w_free_lifting(direction=direction).passed


def test_w_free_check_refuses_the_other_sign_class():
    case = make_case("linear", 2, 3, 4, seed=0)
    flipped = case.with_params(-case.u, -case.w)
    with pytest.raises(ValueError, match="sign class"):
        cl.check_w_free_lifting(cases=[flipped])


def test_natural_tangent_check_fails_for_a_wrong_natural_lifting():
    def wrong(M, data):
        f = torch.einsum("kij,kj->ki", M, data["x"]) + 0.1 * M.sum((1, 2))[:, None]
        return squared_error(f, data["y"])

    case = make_case("linear", 2, 3, 6, seed=2)
    assert not cl.check_natural_tangent_action(cases=[case], natural=wrong).passed


def test_natural_differs_fails_when_the_natural_lifting_is_F_itself():
    case = make_case("linear", 2, 3, 6, seed=2)
    r = torch.as_tensor(case.r)
    result = cl.check_natural_differs(cases=[case],
                                      natural=lambda M, d: w_free_lifting_loss(case.model, M, d, r))
    assert not result.passed, result


def test_natural_differs_requires_a_normal_space():
    with pytest.raises(ValueError, match="m and n must be >= 2"):
        cl.check_natural_differs(m=1)


def test_traces_check_fails_for_the_generic_M_gradient_alone():
    """∂ℓ̃/∂M of the w-dependent construction misses ∂ℓ̃/∂w, so its Aᵀu is not ∂ℓ/∂w."""
    broken = {"generic ∂ℓ̃/∂M": lambda c: generic_lifting_gradients(c)[0]}
    assert not cl.check_theorem31_traces(matrix_gradients=broken).passed


def test_traces_check_fails_for_the_transposed_convention():
    broken = {"Aᵀ": lambda c: np.swapaxes(cl.w_free_lifting_gradient(c), 1, 2)}
    assert not cl.check_theorem31_traces(m=3, n=3, matrix_gradients=broken).passed


def test_noise_null_direction_fails_without_symmetry():
    case = make_case(_asymmetric_model(), 2, 3, 6, seed=1)
    assert not cl.check_noise_null_direction(cases=[case]).passed


def test_lifting_checks_list_matches_the_registry():
    assert [f.check_name for f in cl.LIFTING_CHECKS] == NAMES


def test_sign_caveat_fails_for_a_negation_symmetric_model():
    for key in ("linear", "attention"):
        result = cl.check_sign_caveat(cases=[make_case(key, 2, 3, 8, seed=4)])
        assert not result.passed, result


def test_sign_caveat_reports_both_losses():
    result = cl.check_sign_caveat(seed=0)
    d = result.details["relu"]
    assert d["M_difference"] == 0.0 and d["loss_u_w"] != d["loss_minus_u_minus_w"]


def test_cases_argument_is_validated():
    with pytest.raises(ValueError, match="cases"):
        cl.check_chain_rule(cases=[])
    with pytest.raises(ValueError, match="lambdas"):
        cl.check_rescaling_symmetry(lambdas=(1.0, -2.0))

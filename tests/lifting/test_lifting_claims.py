"""Notebook 02's claims beyond the registered checks (symsgd_core.lifting.claims): they hold at the figures'
settings and fail on a broken input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from symsgd_core import lifting as lf
from symsgd_core.lifting import claims


def _failed(rows):
    return {r.name for r in rows if not r.passed}


@pytest.mark.parametrize("phi", [30.0, 120.0, 180.0])
def test_rank_one_slice_claims_hold_and_fail_for_a_wrong_midpoint(phi):
    q = lf.rank_one_slice(phi=phi)
    assert not _failed(claims.rank_one_slice_claims(q, phi))
    assert "lifting.slice_midpoint_det" in _failed(claims.rank_one_slice_claims(q, phi + 10))
    flat = dataclasses.replace(q, det_mid=0.0, det_sum=0.0)  # a midpoint of rank 1
    assert {"lifting.slice_midpoint_rank_two", "lifting.slice_midpoint_det"} <= _failed(
        claims.rank_one_slice_claims(flat, phi))


@pytest.mark.parametrize("model", ["linear", "attention", "relu"])
def test_trace_scaling_claims_hold_on_the_orbit_and_fail_off_it(model, monkeypatch):
    case = lf.demo_case(model, np.array([0.8, -0.3]), np.array([0.5, 0.9]))
    rows = claims.trace_scaling_claims(case, model, lam=3.0)
    assert not _failed(rows), [str(r) for r in rows]
    assert rows[0].details["ratio_u"] == pytest.approx(1 / 9, rel=1e-9)
    # a wrong orbit, (λu, λw) instead of (λu, w/λ): both traces then scale otherwise
    monkeypatch.setattr(claims, "demo_case", lambda key, u, w: lf.demo_case(key, u, 9 * w))
    assert _failed(claims.trace_scaling_claims(case, model, lam=3.0)) == {"lifting.trace_u_scaling",
                                                                           "lifting.trace_w_scaling"}


def test_tangent_projection_claim_holds_and_fails_for_an_untangent_gradient(monkeypatch):
    case = lf.make_case("linear", 3, 4, 8, seed=0)
    assert claims.tangent_projection_claim(case).passed
    monkeypatch.setattr(claims, "w_free_lifting_gradient", lambda c: lf.natural_lifting_gradient(c))
    assert not claims.tangent_projection_claim(case).passed

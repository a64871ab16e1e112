import math

import numpy as np
import pytest

from symsgd_core.balance.law import corollary_bound, gaussian_rate, half_life
from symsgd_core.ui.start import BalanceTeaser


def test_bound_halves_at_half_life():
    rate = gaussian_rate(0.02, 1.5)
    assert rate == pytest.approx(4 * 0.02 * 1.5**2, rel=1e-15)
    assert corollary_bound(half_life(rate), 2.0, rate) == pytest.approx(1.0, rel=1e-12)
    assert half_life(gaussian_rate(0.0, 1.0)) == math.inf


def test_bound_rejects_negative_temperature():
    with pytest.raises(ValueError, match="temperature"):
        gaussian_rate(-0.1, 1.0)


def test_teaser_updates_and_says_when_nothing_decays():
    c = BalanceTeaser()
    y0 = np.array(c.trace("SGD bound exp(−4Tσ²t)").y)
    c.set(temperature=0.05)
    assert not np.allclose(np.array(c.trace("SGD bound exp(−4Tσ²t)").y), y0)
    assert "Half-life" in c.status.value
    c.set(temperature=0.0)
    assert "conserved" in c.status.value
    assert c.last_update_seconds < 5  # sanity only; latency is benchmarked, not asserted

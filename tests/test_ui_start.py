import math

import numpy as np
import pytest

from symsgd_core.ui.base import figure_is_finite, sweep_sliders
from symsgd_core.ui.start import BalanceTeaser, balance_bound, half_life


def test_bound_halves_at_half_life():
    t_half = half_life(0.02, 1.5)
    assert balance_bound(t_half, 2.0, 0.02, 1.5) == pytest.approx(1.0, rel=1e-12)
    assert half_life(0.0, 1.0) == math.inf


def test_bound_rejects_negative_temperature():
    with pytest.raises(ValueError, match="temperature"):
        balance_bound(1.0, 1.0, -0.1, 1.0)


def test_teaser_updates_and_survives_every_slider_end():
    c = BalanceTeaser()
    y0 = np.array(c.figure.data[1].y)
    c.set(temperature=0.05)
    assert not np.allclose(np.array(c.figure.data[1].y), y0)
    assert "Half-life" in c.status.value
    sweep_sliders(c)
    assert figure_is_finite(c.figure)
    c.set(temperature=0.0)
    assert "conserved" in c.status.value
    assert c.last_update_seconds < 5  # sanity only; latency is benchmarked, not asserted

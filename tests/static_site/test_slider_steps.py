"""The static-edition test's choice of the one slider step it drags to (slider_steps.py): no browser."""

from __future__ import annotations

import itertools

import pytest
from slider_steps import MIS_WIRINGS, exposed, telling_step


@pytest.mark.parametrize("n", range(4, 13))
def test_one_step_exposes_every_mis_wiring_when_the_frames_differ(n):
    shows = [f"frame {j}" for j in range(n)]
    for start in range(n):
        k = telling_step(start, shows)
        assert k != start
        for name, frame in MIS_WIRINGS.items():  # the page a mis-wiring makes shows another frame at step k
            assert shows[frame(k, n, start)] != shows[k], (n, start, k, name)


def test_an_end_alone_misses_an_off_by_one_clamped_at_that_end():
    """Why not the far end: a page one step high, clamped at the top, shows the right frame there."""
    n, start = 9, 0
    shows = [f"frame {j}" for j in range(n)]
    assert "one step high" not in exposed(n - 1, start, shows)
    assert "one step high" in exposed(telling_step(start, shows), start, shows)


def test_nor_the_middle_alone_a_reversed_order():
    n, start = 9, 0
    shows = [f"frame {j}" for j in range(n)]
    assert "reversed" not in exposed(4, start, shows)
    assert telling_step(start, shows) != 4


def test_short_sliders_get_the_step_that_exposes_most():
    for n in (2, 3):
        shows = [f"frame {j}" for j in range(n)]
        for start in range(n):
            k = telling_step(start, shows)
            best = max(len(exposed(j, start, shows)) for j in range(n) if j != start)
            assert len(exposed(k, start, shows)) == best and k != start


def test_frames_that_repeat_are_told_apart_where_they_can_be():
    # the frames of steps 0-3 are alike (a slider that changes this figure only past step 3)
    shows = ["a", "a", "a", "a", "b", "c", "d", "e"]
    k = telling_step(0, shows)
    assert len(exposed(k, 0, shows)) == 4 and k > 3


def test_a_figure_the_slider_leaves_alone_gets_the_far_end():
    for n, start in itertools.product((2, 5, 8), (0, 1)):
        assert telling_step(start, ["same"] * n) == (n - 1 if start < n / 2 else 0)


@pytest.mark.parametrize("start, n", [(0, 1), (3, 3), (-1, 4)])
def test_no_step_to_drag_to_is_an_error(start, n):
    with pytest.raises(ValueError, match="no step to drag to"):
        telling_step(start, ["x"] * n)

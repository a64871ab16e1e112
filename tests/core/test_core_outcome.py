"""The Outcome of an experiment (symsgd_core.core.results): numbers are numbers, texts are labels."""

from __future__ import annotations

import pytest

from symsgd_core.core.results import Outcome


def test_numbers_and_labels_are_kept_apart():
    o = Outcome("compared", False, {"n_runs": 8, "wait": (1.0, 0.5, 2.0), "ok": True}, {"where": "here",
                                                                                         "rows": ("EM", "adaptive")})
    assert o.numbers["wait"] == (1.0, 0.5, 2.0) and o.labels == {"where": "here", "rows": ("EM", "adaptive")}
    assert Outcome("k", True, {}).labels == {}  # no labels by default


@pytest.mark.parametrize("numbers", [{"integrator": ("EM", "adaptive")}, {"paper_error": "file missing"}])
def test_a_text_among_the_numbers_is_refused(numbers):
    with pytest.raises(TypeError, match="labels"):
        Outcome("rates", False, numbers)


@pytest.mark.parametrize("labels", [{"where": 3}, {"rows": ("EM", 2)}])
def test_a_label_that_is_not_a_text_is_refused(labels):
    with pytest.raises(TypeError, match="text"):
        Outcome("rates", False, {}, labels)


def test_with_numbers_adds_quoted_numbers_and_never_overwrites_the_decision():
    o = Outcome("jumped", False, {"jumped": 3}, {"where": "here"})
    more = o.with_numbers(lr=0.3, boundary=(0.1, 0.2))
    assert more == Outcome("jumped", False, {"jumped": 3, "lr": 0.3, "boundary": (0.1, 0.2)}, {"where": "here"})
    assert o.numbers == {"jumped": 3}  # the original is unchanged
    with pytest.raises(ValueError, match="jumped"):
        o.with_numbers(jumped=4)

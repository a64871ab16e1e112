"""One drawing contract: a figure's ``words(result, **values)`` reads only the result's ``Outcome`` (and the slider
values), so what a figure says is decided by its experiment (ARCHITECTURE.md, "Where a new figure goes").

Each controller is built at its defaults (Run pressed where it waits for it; the small settings of
``small_settings.py``); its words from the full result must equal its words from a stand-in that holds the outcome
alone. A words that reads any other field of the result raises AttributeError on the stand-in (checked on purpose
below with the old §3 words of notebook 02, which read ``q.gw``).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from small_settings import SMALL

from symsgd_core.ui import lifting as ul
from symsgd_core.ui.base import Words
from tools.figure_data import controller_classes


def drawn_result(controller):
    """The result the controller's words were given: its simulation (a stationary figure's Run) or its result."""
    if getattr(controller, "run_button", None) is not None and controller.result is None:
        controller.run()
    simulation = getattr(controller, "simulation", None)
    return simulation if simulation is not None else controller.result


def words_from_outcome_alone(controller) -> tuple[Words, Words]:
    """The controller's words from its result and from a stand-in holding only the result's ``outcome``."""
    result, values = drawn_result(controller), controller.values()
    return controller.words(result, **values), controller.words(SimpleNamespace(outcome=result.outcome), **values)


@pytest.mark.parametrize("cls", controller_classes(), ids=lambda c: c.__name__)
def test_words_come_from_the_outcome_alone(cls):
    full, alone = words_from_outcome_alone(cls(**SMALL.get(cls, {})))
    assert alone == full


CLOSED_FORMS = [c for c in controller_classes() if c.closed_form is not None]


@pytest.mark.parametrize("cls", CLOSED_FORMS, ids=lambda c: c.__name__)
def test_closed_form_words_come_from_the_outcome_alone(cls):
    """A figure that draws a closed form at once before its Run words it from that experiment's outcome too."""
    controller = cls(**SMALL.get(cls, {}))
    result, values = controller.result, controller.values()
    alone = controller.closed_form_words(SimpleNamespace(outcome=result.outcome), **values)
    assert alone == controller.closed_form_words(result, **values)


def test_every_figure_draws_through_the_one_contract():
    """No figure overrides the base's _update (a closed form drawn at once is its ``closed_form``), and notebook
    03's five figures with a closed form before their Run declare it."""
    from symsgd_core.ui.base import Controller

    assert [c.__name__ for c in controller_classes() if c._update is not Controller._update] == []
    assert {c.__name__ for c in CLOSED_FORMS} == {"DepthComparison", "FluctuationInversion", "WrongSign", "Tails",
                                                  "DiscreteSGD"}


class _WordsReadingAField(ul.ChainRuleController):
    """§3 as its words were before this change: ∂ℓ̃/∂w read from the result, not from its outcome."""

    def words(self, q, **values) -> Words:
        return Words(None, "info", f"∂ℓ̃/∂w = {q.gw}")


def test_a_words_that_reads_another_field_is_caught():
    with pytest.raises(AttributeError, match="gw"):
        words_from_outcome_alone(_WordsReadingAField())

"""The before/after figure comparison (``python -m tools.figure_data``) sees a change and only a change."""

from __future__ import annotations

import copy

from symsgd_core.ui.start import BalanceTeaser
from tools.figure_data import capture_class, controller_classes, differences


def test_every_notebook_controller_is_found():
    names = {cls.__name__ for cls in controller_classes()}
    assert {"BalanceTeaser", "TrapController", "SdeCompareController", "Tails"} <= names


def test_two_captures_of_the_same_figure_are_identical_and_a_changed_number_or_word_is_a_difference():
    before = {"BalanceTeaser": capture_class(BalanceTeaser)}
    assert before["BalanceTeaser"]["sliders"], "the teaser has sliders to move"
    assert differences(before, {"BalanceTeaser": capture_class(BalanceTeaser)}) == []

    moved = copy.deepcopy(before)
    trace = moved["BalanceTeaser"]["sliders"][1]["snapshot"]["figures"]["traces"][0][0]
    trace["y"][-1] = trace["y"][-1] + 1e-12
    found = differences(before, moved)
    assert len(found) == 1 and "at its high end: figure data differs" in found[0] and ".y[" in found[0]

    reworded = copy.deepcopy(before)
    reworded["BalanceTeaser"]["defaults"]["status"] += " (changed)"
    assert any("defaults: status differs" in line for line in differences(before, reworded))


def test_a_renamed_slider_is_matched_by_position_and_a_renamed_class_by_the_map():
    before = {"BalanceTeaser": capture_class(BalanceTeaser)}
    after = copy.deepcopy(before)
    for s in after["BalanceTeaser"]["sliders"]:
        s["name"] = s["name"] + "_renamed"
    assert differences(before, after) == []
    assert differences(before, {"Teaser": after["BalanceTeaser"]}, {"BalanceTeaser": "Teaser"}) == []
    assert differences(before, {"Teaser": after["BalanceTeaser"]}) == ["BalanceTeaser: missing after",
                                                                         "Teaser: new (not in the capture before)"]

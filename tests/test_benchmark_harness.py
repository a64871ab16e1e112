"""The benchmark harness itself (not the timings: those are printed by `make bench`, never asserted)."""

import json

from symsgd_core.__main__ import main
from symsgd_core.benchmarks import registry
from symsgd_core.benchmarks.latency import controller_latency, slider_toggle
from symsgd_core.benchmarks.registry import BenchResult
from symsgd_core.ui.start import BalanceTeaser

EXPECTED_KEYS = {"name", "figure", "unit", "baseline", "ratio", "target", "met"}


def test_slider_toggle_alternates_between_value_and_upper_end():
    c = BalanceTeaser()
    move = slider_toggle(c, "sigma")
    move()
    assert c.controls["sigma"].value == c.controls["sigma"].max
    move()
    assert c.controls["sigma"].value == 1.0


def test_controller_latency_row_is_consistent():
    row = controller_latency("test.teaser", BalanceTeaser, target_seconds=1e9, repeat=2)
    assert row.figure > 0 and row.baseline > 0
    assert abs(row.ratio - row.baseline / row.figure) < 1e-12
    assert row.met is True  # an unreachable-to-miss target
    assert controller_latency("test.teaser", BalanceTeaser, target_seconds=0.0, repeat=1).met is False


def test_bench_json_lists_every_field():
    def fake():
        return [BenchResult("test.fake", 1.0, "s", 4.0, 4.0, "<= 2 s", True)]

    registry.register_benchmark("test_fake")(fake)
    try:
        import io
        from contextlib import redirect_stdout

        buf = io.StringIO()
        with redirect_stdout(buf):
            assert main(["bench", "--json", "--only", "test_fake"]) == 0
        (row,) = json.loads(buf.getvalue())
        assert set(row) == EXPECTED_KEYS and row["ratio"] == 4.0
    finally:
        registry._BENCHMARKS.pop("test_fake")


def test_one_slider_move_costs_one_simulation():
    """A RunController with live=False re-simulates on set(); the harness must not press Run again (that
    doubled the measured latency of every Notebook 01 figure). A live figure with a Run button gets one Run."""
    from symsgd_core.ui import balance as ub
    from symsgd_core.ui import stationary as us

    for cls, slider, values in ((ub.DiscreteBreakdown, "seed", (1, 2)), (us.WrongSign, "temperature", (0.1, 0.2))):
        c = cls()
        calls = []

        def counted(_original=c._run, _calls=calls, **settings):
            _calls.append(settings)
            _original(**settings)

        c._run = counted
        slider_toggle(c, slider, values)()
        assert len(calls) == 1, cls.__name__

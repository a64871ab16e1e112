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

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


def test_a_run_button_row_times_the_answer_in_the_page_and_reports_the_full_run_after_a_first_look():
    """``answer_rows``: the row is the time until a Run pressed in the page shows something (its first look when
    the Run is long); the full Run, drawn later from the background, is an information row."""
    import time

    import ipywidgets as widgets
    import plotly.graph_objects as go

    from symsgd_core.benchmarks.runs import answer_rows
    from symsgd_core.ui.base import RunController

    class Probe(RunController):
        def __init__(self):
            super().__init__()
            self.controls = {"n": widgets.IntSlider(value=1, min=1, max=3)}
            self._setup_run()
            self.figures = [go.FigureWidget(go.Scatter(x=[0.0], y=[0.0]))]
            self.update()

        def _first_look(self, values):
            return (dict(n=1), "1 of 3") if values["n"] == 3 else None

        def _compute(self, progress, n):
            time.sleep(0.1 * n)
            progress(1.0)
            return float(n)

        def _draw(self, result, n):
            self.figure.data[0].y = [result]
            self.say(f"n = {n}")

    long_run = answer_rows("probe", Probe(), dict(n=3), 1.0, "worst end")
    assert [r.name for r in long_run] == ["probe", "probe.full"]
    # (lower bounds only: the sleeps. The full Run includes the first look's 0.1 s and then its own 0.3 s, so it
    # takes at least 0.4 s; not "the answer + 0.3 s": its worker starts before start_run returns and the answer is
    # timed, so the two overlap by the time start_run takes to return)
    assert long_run[0].figure >= 0.1 and long_run[1].figure >= 0.4 and long_run[1].figure > long_run[0].figure
    assert long_run[1].met
    short_run = answer_rows("probe", Probe(), dict(n=2), 1.0, "defaults")
    assert [r.name for r in short_run] == ["probe"] and short_run[0].figure >= 0.2


def test_paired_times_alternates_the_two_and_quotes_the_median_ratio(monkeypatch):
    """A fake clock: the figure takes 1 s and the baseline 2 s, except one slow baseline call (a noisy machine):
    the median ratio is 2, the spread shows the outlier, and the calls alternate which goes first."""
    clock = [0.0]
    calls = []
    baseline_costs = iter([2.0, 2.0, 9.0, 2.0, 2.0, 2.0])  # the first call is the untimed warm-up

    def func():
        calls.append("f")
        clock[0] += 1.0

    def baseline():
        calls.append("b")
        clock[0] += next(baseline_costs)

    monkeypatch.setattr(registry.time, "perf_counter", lambda: clock[0])
    pair = registry.paired_times(func, baseline, repeat=5)
    assert calls == ["f", "b", "f", "b", "b", "f", "f", "b", "b", "f", "f", "b"]
    assert (pair.figure, pair.baseline, pair.ratio, pair.ratio_min, pair.ratio_max, pair.pairs) == (
        1.0, 2.0, 2.0, 2.0, 9.0, 5)
    assert pair.spread() == "median of 5 pairs; 2.00–9.00"

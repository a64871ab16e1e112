"""A Run pressed in the page that would take seconds: a first look at once, the full Run in a worker thread, the
widgets live meanwhile, a newer Run superseding an older one (symsgd_core/ui/base.py ``RunController.start_run``,
symsgd_jupyter/background.py).

The kernel is stood in for by an asyncio loop in this thread (the kernel handles the page's messages on its event
loop, in its main thread); a page click is the message ipywidgets receives from the page.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.utils import PlotlyJSONEncoder
from small_settings import SMALL

from symsgd_core.sde_noise.experiments import compare_point
from symsgd_core.ui import rank_jumps as rj
from symsgd_core.ui import sde_noise as usn
from symsgd_core.ui.base import RunController, experiment_defaults
from symsgd_jupyter.background import RunButton, changed_by_page, running_loop
from symsgd_jupyter.handled_inputs import SHOW_HANDLED_ENV


def page_click(button: widgets.Button) -> None:
    """The click message the page sends (ipywidgets dispatches it to the button's handler)."""
    button._handle_msg({"content": {"data": {"method": "custom", "content": {"event": "click"}}}, "buffers": []})


def figures_data(controller) -> list:
    """Every trace of every figure as plotly sends it (without the traces' random ``uid``), and every layout."""
    traces = [[{k: v for k, v in t.to_plotly_json().items() if k != "uid"} for t in f.data] for f in controller.figures]
    layouts = [f.layout.to_plotly_json() for f in controller.figures]
    return json.loads(json.dumps([traces, layouts], cls=PlotlyJSONEncoder))


class _Slow(RunController):
    """A figure whose Run at n > 2 takes seconds: first look at n = 1; records the thread of every widget change."""

    def __init__(self, n: int = 5, seconds: float = 0.4):
        super().__init__()
        self.seconds = seconds
        self.controls = {"n": widgets.IntSlider(value=n, min=1, max=9)}
        self._setup_run()
        self.figures = [go.FigureWidget(go.Scatter(x=[0.0], y=[0.0]),
                                        layout=dict(title=dict(text="a figure without a verdict title")))]
        self.widget_threads: set[str] = set()
        self.computed_on: list[str] = []
        self._wire()
        self.update()

    def set_progress(self, fraction: float) -> None:
        self.widget_threads.add(threading.current_thread().name)
        super().set_progress(fraction)

    def _first_look(self, values):
        return (dict(n=1), f"1 of {values['n']} items") if values["n"] > 2 else None

    def _compute(self, progress, n):
        self.computed_on.append(threading.current_thread().name)
        for k in range(n):
            time.sleep(self.seconds / n if n > 1 else 0.0)  # (sleep releases the GIL, as the compiled kernels do)
            progress((k + 1) / n)
        return np.arange(n, dtype=float) ** 2

    def _draw(self, result, n):
        self.widget_threads.add(threading.current_thread().name)
        self.figure.data[0].x, self.figure.data[0].y = np.arange(n, dtype=float), result
        self.say(f"drew {n} items")


def test_a_code_click_runs_at_once_and_a_page_click_is_told_apart():
    button = RunButton(description="Run")
    seen = []
    button.on_click(lambda b: seen.append(b.from_page))
    button.click()
    page_click(button)
    assert seen == [False, True] and button.from_page is False


def test_a_page_click_draws_a_first_look_at_once_and_the_full_run_from_a_worker(monkeypatch):
    monkeypatch.setenv(SHOW_HANDLED_ENV, "1")
    c = _Slow(n=5)
    c.view()
    main = threading.current_thread().name

    async def reader():
        handled = c.inputs_handled
        ticks = []
        page_click(c.run_button)
        # the first look is drawn before the click's handler returns; the full Run is still computing
        assert list(c.figure.data[0].y) == [0.0] and "First look (1 of 5 items)" in c.status.value
        assert c.figure.layout.title.text == "First look (1 of 5 items): the full Run follows"
        assert "computing the full Run" in c.status.value and c.pending is not None and not c.pending.done()
        assert c.inputs_handled == handled  # the page is told the input is handled only when the full Run is drawn

        async def tick():  # the kernel's loop keeps handling messages meanwhile (the widgets stay live)
            while not c.pending.done():
                ticks.append(time.perf_counter())
                await asyncio.sleep(0.02)

        await asyncio.gather(asyncio.wrap_future(c.pending), tick())
        assert len(ticks) >= 5
        assert list(c.figure.data[0].y) == [0.0, 1.0, 4.0, 9.0, 16.0] and "drew 5 items" in c.status.value
        assert c.figure.layout.title.text == "a figure without a verdict title"  # its own title back
        assert c.progress.value == c.progress.max and c.inputs_handled > handled
        assert c.computed_on[-1] != main  # the full Run computed in the worker ...
        assert c.widget_threads == {main}  # ... and every widget changed on the main thread

    asyncio.run(reader())


def test_a_newer_run_supersedes_an_older_one_and_only_the_newer_is_drawn():
    c = _Slow(n=5, seconds=1.0)

    async def reader():
        page_click(c.run_button)
        first = c.pending
        await asyncio.sleep(0.1)
        c.controls["n"].value = 4
        page_click(c.run_button)  # a newer Run: the older stops at its next progress report
        second = c.pending
        await asyncio.wrap_future(second)
        await asyncio.sleep(0.3)  # whatever the older worker still hands back arrives by now and is dropped
        assert first.cancelled() and second.done() and not second.cancelled()
        assert list(c.figure.data[0].y) == [0.0, 1.0, 4.0, 9.0] and "drew 4 items" in c.status.value

    asyncio.run(reader())


def test_a_run_from_code_supersedes_a_background_run():
    c = _Slow(n=5, seconds=0.6)

    async def reader():
        page_click(c.run_button)
        pending = c.pending
        c.set(n=2)  # a cell sets the slider: the Run happens at once, and the background one is dropped
        assert list(c.figure.data[0].y) == [0.0, 1.0]
        await asyncio.sleep(1.0)
        assert pending.cancelled() and list(c.figure.data[0].y) == [0.0, 1.0]

    asyncio.run(reader())


def test_a_short_run_pressed_in_the_page_is_drawn_in_one_go():
    c = _Slow(n=2)

    async def reader():
        page_click(c.run_button)
        assert c.pending is None and list(c.figure.data[0].y) == [0.0, 1.0] and "drew 2 items" in c.status.value

    asyncio.run(reader())


def test_a_failing_background_run_says_so():
    c = _Slow(n=5, seconds=0.1)

    def broken(progress, n):
        raise ValueError(f"n = {n} is too many")

    async def reader():
        c.set(n=6)
        c._compute = lambda progress, n: broken(progress, n) if n > 1 else np.zeros(n)
        page_click(c.run_button)
        assert await asyncio.wrap_future(c.pending)
        assert "symsgd-status-error" in c.status.value and "n = 6 is too many" in c.status.value

    asyncio.run(reader())


def test_a_long_rank_jump_run_refined_in_the_background_equals_the_same_run_in_one_go():
    """The worker runs the engine on one numba thread, the kernel's cell on all of them: the numbers (hence the
    figure) are the same, and the first look is drawn at once."""
    settings = dict(steps=70_000, n_seeds=4)  # more work than at the defaults: a first look, then the full Run
    in_one_go = rj.TrapController(**settings)
    c = rj.TrapController(**settings)
    look = c._first_look(c.values())
    assert look is not None and look[0]["n_seeds"] == 1 and look[0]["steps"] == 10_000
    assert look[1] == "1 of 4 SGD seeds, 10 000 of 70 000 steps"

    async def reader():
        page_click(c.run_button)
        assert "First look (1 of 4 SGD seeds, 10 000 of 70 000 steps)" in c.status.value
        assert c.figure.layout.title.text.startswith("First look")  # not the shorter run's own verdict
        assert max(c.figure.data[0].x) <= 10_000  # the first look's horizon
        await asyncio.wrap_future(c.pending)

    asyncio.run(reader())
    assert figures_data(c) == figures_data(in_one_go) and c.status.value == in_one_go.status.value


#: Each Run-button figure's costliest slider end (the bench's ``@worst`` rows), where its Run takes seconds.
WORST = {
    rj.TrapController: dict(depth=6, width=16, n_seeds=8, steps=100_000),
    rj.EnsembleController: dict(n_runs=64, steps=120_000),
    rj.LangevinController: dict(n_runs=8, steps=100_000),
}


@pytest.mark.parametrize("cls", list(WORST), ids=lambda c: c.__name__)
def test_a_long_run_first_looks_at_no_more_work_than_a_run_in_one_go(cls):
    """A Run of at most ``ONE_GO`` times the defaults' work (those answer in ≤ 0.5 s: bench) is drawn in one go;
    above it, a first look does at most that work and says what it leaves out."""
    c = cls(**SMALL.get(cls, {}))
    defaults = {**c.values(), **{k: v for k, v in experiment_defaults(cls.experiment).items() if k in c.controls}}
    work = cls.FIRST_LOOK[0]
    one_go = cls.ONE_GO * work(defaults)
    assert (c._first_look(defaults) is None) == (work(defaults) <= one_go)
    worst = {**defaults, **WORST[cls]}
    small, what = c._first_look(worst)
    assert work(small) <= one_go < work(worst)
    assert set(small) == set(worst) and " of " in what


def test_the_sde_comparison_first_looks_at_a_bounded_number_of_sde_steps():
    c = usn.SdeCompareController.__new__(usn.SdeCompareController)  # (_first_look reads only the settings)
    c.settings = experiment_defaults(compare_point)
    assert c._first_look(dict(lr=0.2, weight_decay=0.027, m=4, temp_factor=1.0, seed=0)) is None  # 30 000 steps: one go
    for lr, m in ((0.3, 16), (0.2, 64)):
        small, what = c._first_look(dict(lr=lr, weight_decay=0.027, m=m, temp_factor=1.0, seed=0))
        steps = small["t_max"] / (lr / m)
        assert steps <= usn.SdeCompareController.FIRST_LOOK_SDE_STEPS and small["t_max"] % c.settings["rec_dt"] == 0
        assert small["n_runs_sde"] < c.settings["n_runs_sde"] and f"to t = {small['t_max']:g} of 1500" in what


def test_a_change_from_the_page_is_told_apart_from_a_change_by_code():
    slider = widgets.IntSlider(value=1)
    seen = []
    slider.observe(lambda change: seen.append(changed_by_page(change["owner"])), names="value")
    slider.value = 2
    slider.set_state({"value": 3})  # as a message from the page does (ipywidgets' set_state)
    assert seen == [False, True] and slider.value == 3


def test_the_running_loop_is_the_kernels_while_it_handles_a_message():
    async def inside():
        return running_loop()

    assert running_loop() is None and asyncio.run(inside()) is not None

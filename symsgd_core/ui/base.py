r"""The controller pattern shared by every interactive figure (the layers and how a figure is declared:
ARCHITECTURE.md).

A :class:`Controller` owns its widgets (``controls``), its plotly ``FigureWidget``\ s and a ``status`` line (a
failing setting is said there in words, never drawn as NaN); it reads its widgets, calls its experiment and draws the
result (``controller.result``). A :class:`RunController`
re-simulates ("Computing…" in ``status`` while busy); an :class:`ExperimentFigure` is one whose Run is one call of its
experiment. Tests drive a controller without a kernel or a browser: ``controller.set(name=value)``, then read
``controller.result``, ``controller.trace(name)`` and ``status_text(controller)``. The browser suite finds the root
widget by its class ``symsgd-controller`` (and ``symsgd-auto-run``), and waits on the handled-input count
(:mod:`symsgd_jupyter.handled_inputs`).

The batch rule: inside one ``figure.batch_update()`` assign each property of a trace at most once (compute the
values first). plotly.py compares an assignment in a batch with the value before the batch, so ``t.x = []`` followed
by ``t.x = old`` leaves ``[]`` and the same slider value draws two figures depending on the previous one
(tests/ui/test_ui_every_slider.py fails such an update for every controller).
"""

from __future__ import annotations

import asyncio
import html
import inspect
import logging
import re
import time
from concurrent.futures import Future
from dataclasses import dataclass

import ipywidgets as widgets
import plotly.graph_objects as go

from symsgd_jupyter.a11y import accessible_names
from symsgd_jupyter.background import RunButton, changed_by_page, compute_in_background, running_loop
from symsgd_jupyter.describe import ALT_CLASS, figure_description, plain_text, visually_hidden_html
from symsgd_jupyter.distinguish import distinguish
from symsgd_jupyter.handled_inputs import show_count, watch_inputs
from symsgd_jupyter.kernel import install
from symsgd_jupyter.plotly_loading import answer_state_requests, sync_figure_state

from ..warm import cold_loaded_kernels
from .sliders import Range
from .style import PLOTLY_CONFIG, STATUS, finish, headline

#: Class of the root widget of a figure that re-simulates when a slider is released (``RunController.auto_run``).
AUTO_RUN_CLASS = "symsgd-auto-run"
#: Sliders whose values are floats computed in the page (step arithmetic), so they can be off by a few ulps.
_FLOAT_SLIDERS = (widgets.FloatSlider, widgets.FloatLogSlider)
#: Significant digits a float slider's value is rounded to (far more than any slider shows).
SLIDER_DIGITS = 12


#: The platform's own words (not a figure's: those are its ``words``): what the status line and the headline say
#: about a Run itself. The one home of these sentences; formatted with the named fields.
PLATFORM_WORDS = dict(
    computing="Computing…",
    computing_cold=("Computing… {n} kernels of the simulation engine are not compiled yet, so this Run may first "
                    "compile some of them (once, up to a minute; 'make' or 'python -m symsgd_core warm' does it "
                    "ahead)."),
    first_look_title="First look ({what}): the full Run follows",
    first_look_status="First look ({what}); {doing}",
    first_look_doing="computing the full Run…",
    error="Error: {kind}: {error}",
)


@dataclass(frozen=True)
class Words:
    """What a figure says about one result (its ``words``): the ``headline`` (the main figure's title: a text in
    the project's headline style, vermillion unless ``level`` is "info"; a plotly title dict; or None, no title of
    its own), the status line's ``level`` ("info", "warning" or "error") and its ``text``."""

    headline: str | dict | None
    level: str
    text: str

    def __post_init__(self) -> None:
        if self.level not in ("info", "warning", "error"):
            raise ValueError(f"level must be 'info', 'warning' or 'error', got {self.level!r}")

    def __iter__(self):
        """``headline, level, text = words``."""
        return iter((self.headline, self.level, self.text))


def canonical(value: float) -> float:
    """A float slider's value as the decimal it stands for: ``0.30000000000000004`` (three steps of 0.1 in the
    page) becomes ``0.3``, so the same slider position always gives the same number, hence the same figure."""
    return float(f"{value:.{SLIDER_DIGITS}g}")


class Controller:
    """A figure declared by its ``experiment``, its ``sliders``, its empty figures (:meth:`_figures`), how it draws
    a result (:meth:`_show`, drawing only) and what it says about it (:meth:`words`); the base class builds the
    sliders at the experiment's defaults (overridden by the constructor's ``settings``), calls the experiment on
    every control change while ``live`` (:meth:`_update`), draws and words the result, and wires the sliders."""

    #: Set ``live = False`` in subclasses that re-simulate (they use a Run button).
    live = True
    #: The figure's experiment (``staticmethod(fn)``): its keyword defaults are the sliders' starting values.
    experiment = None
    #: A re-simulating figure's part drawn at once, before its Run (``staticmethod(fn)``, called with the sliders'
    #: values; notebook 03's closed forms): on every control change :meth:`_update` calls it instead of the
    #: experiment, keeps it in ``self.result``, draws it (:meth:`_show_closed_form`) and words it
    #: (:meth:`closed_form_words`). None: the live part is the experiment itself.
    closed_form = None
    #: ``name → Range`` (or ``name → callable(value) → widget`` for a control that is not a slider, or whose options
    #: come from data: then set on the instance before ``super().__init__``, as notebook 05's grid readers do), in
    #: the order shown; each name is a keyword of :attr:`experiment`. Empty: the subclass builds its controls itself.
    sliders: dict = {}
    #: The CSS width of every slider of the figure (None: as wide as its label and track need).
    slider_width: str | None = None
    #: While a first look is drawn (:meth:`RunController.start_run`), what it leaves out ("1 of 8 SGD seeds, …"):
    #: its status line and headline are then the first look's, never its shorter run's own verdict.
    _looking: str | None = None

    def __init__(self, **settings) -> None:
        # the kernel's plumbing (plotly's code once per page, compact printed text in classroom mode), before any
        # figure is made: a FigureWidget's module is fixed when it is created (see symsgd_jupyter/kernel.py)
        install()
        # the accessible-names helper is made first: the page starts loading its code before any slider's model
        # arrives, so the sliders are named as they are drawn (symsgd_jupyter/a11y.js)
        self._names = accessible_names()
        self.controls: dict[str, widgets.Widget] = {}
        self.figures: list[go.FigureWidget] = []
        self.status = widgets.HTML(value="")
        self.last_update_seconds = float("nan")
        self._root: widgets.Widget | None = None
        #: inputs handled so far (shown in the page as the root's ``symsgd-handled-<n>`` class)
        self.inputs_handled = 0
        if self.sliders:
            self._build_declared(settings)
        elif settings:
            raise TypeError(f"{type(self).__name__} takes no settings {sorted(settings)}")

    def _build_declared(self, settings: dict) -> None:
        """Build the declared sliders at the experiment's defaults overridden by ``settings`` (kept, with the
        experiment's other keywords, in ``self.settings``), the figures (:meth:`_figures`), draw and wire."""
        self.settings = (experiment_settings(type(self).experiment, settings) if type(self).experiment is not None
                         else dict(settings))
        self.controls = {name: (spec.widget(self.settings[name], self.slider_width) if isinstance(spec, Range)
                                else spec(self.settings[name]))
                         for name, spec in self.sliders.items()}
        if isinstance(self, RunController):
            self._setup_run()
        self.result = None
        self.figures = self._figures()
        self._wire()
        self.update()

    def _figures(self) -> list[go.FigureWidget]:  # pragma: no cover - abstract
        """The figure's empty figures: traces, axes, titles (drawn by :meth:`_update` or ``_draw``)."""
        raise NotImplementedError

    # -- building -------------------------------------------------------------
    @property
    def figure(self) -> go.FigureWidget:
        """The main figure (the first one)."""
        return self.figures[0]

    def _observed(self) -> bool:
        """Whether a control's change redraws the figure by itself (:meth:`_on_change`)."""
        return self.live

    def _wire(self) -> None:
        """Observe every control (call at the end of the subclass ``__init__``)."""
        if self._observed():
            for w in self.controls.values():
                w.observe(self._on_change, names="value")

    def _on_change(self, _change) -> None:
        self.update()

    def view(self) -> widgets.Widget:
        """The widget to display: controls, figures and status, in a VBox (a subclass changes the layout in
        :meth:`_children`). Each call re-sends every figure's full state to the front end first
        (:func:`sync_figure_state`): updates made before a figure was shown leave no partial copy in the browser."""
        for fig in self.figures:
            if self._root is None:
                fig._config = {**PLOTLY_CONFIG, **fig._config}  # no control that reaches the internet (style.py)
            self._finish(fig)
            self._distinguish(fig)
            sync_figure_state(fig)
            answer_state_requests(fig)
        if self._root is None:
            # one visually hidden description per figure, in the figures' order (a11y.py links them to the plots)
            self._alts = [widgets.HTML("", _dom_classes=(ALT_CLASS,),
                                       layout=widgets.Layout(height="0px", margin="0px", overflow="hidden"))
                          for _ in self.figures]
            self._refresh_alts()
            self._root = widgets.VBox([*self._children(), *self._alts, self._names])
            self._root.add_class("symsgd-controller")
            if getattr(self, "auto_run", False):
                self._root.add_class(AUTO_RUN_CLASS)
            # counted after the subclass's own handlers (registered before): its update has reached the page by then
            watch_inputs(self._root, self._mark_handled, skip=self._controls_counted_by_run())
            self._mark_handled()
        return self._root

    def _controls_counted_by_run(self) -> list:
        """Controls (and buttons) whose input is counted as handled only when the figure's re-simulation has drawn
        it (a debounced Run, a full Run computed in the background)."""
        return []

    def _mark_handled(self) -> None:
        """Count one handled input (shown in the page for the browser suite: :mod:`symsgd_jupyter.handled_inputs`)."""
        self.inputs_handled += 1
        if self._root is not None:
            show_count(self._root, self.inputs_handled)

    def trace(self, name: str, figure: int = 0, xaxis: str | None = None):
        """The one trace named ``name`` in figure ``figure`` (and on the x axis ``xaxis``, e.g. ``"x2"``, where a
        name is used in several panels): what a test reads instead of a position in ``figure.data``, so a figure can
        add or reorder traces without changing its tests. KeyError (listing the names) unless exactly one."""
        data = self.figures[figure].data
        found = [t for t in data if t.name == name and (xaxis is None or (t.xaxis or "x") == xaxis)]
        if len(found) != 1:
            raise KeyError(f"{len(found)} traces named {name!r} in figure {figure}"
                           f"{'' if xaxis is None else ' on ' + xaxis}; names: {[t.name for t in data]}")
        return found[0]

    def _children(self) -> list:
        """The rows of the displayed VBox: controls, figures, status."""
        ctrl = list(self.controls.values()) + list(getattr(self, "extra_widgets", []))
        return [widgets.HBox(ctrl, layout=widgets.Layout(flex_flow="row wrap")), *self.figures, self.status]

    def _ipython_display_(self):  # so that a bare controller in a cell displays itself
        from IPython.display import display

        display(self.view())

    # -- updating -------------------------------------------------------------
    def values(self) -> dict:
        """Current control values, by name; a float slider's value as the decimal it shows (see :func:`canonical`)."""
        return {name: canonical(w.value) if isinstance(w, _FLOAT_SLIDERS) else w.value
                for name, w in self.controls.items()}

    def set(self, **values) -> None:
        """Set control values (as a reader would) and update once."""
        for name in values:
            if name not in self.controls:
                raise ValueError(f"unknown control {name!r}; controls are {sorted(self.controls)}")
        observed = self._observed()
        if observed:
            for w in self.controls.values():
                w.unobserve(self._on_change, names="value")
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            if observed:
                for w in self.controls.values():
                    w.observe(self._on_change, names="value")
        self.update()

    def update(self) -> None:
        """Recompute from the current control values and redraw (timed)."""
        self._redraw()
        self._mark_handled()

    def _redraw(self) -> None:
        """:meth:`_update` at the current control values, timed in ``last_update_seconds``, then restyled and
        synced (not counted as a handled input)."""
        t0 = time.perf_counter()
        try:
            self._update(**self.values())
        finally:
            self.last_update_seconds = time.perf_counter() - t0
        self._restyle_and_sync()

    def _update(self, **values) -> None:
        """The one drawing contract: the experiment at the settings and ``values`` (:meth:`_call`), kept in
        ``self.result``, drawn (:meth:`_show`) and worded (:meth:`words`, shown by :meth:`_speak`). A closed form or a
        stored grid is an experiment too; a re-simulating figure that draws a closed form at once before its Run
        (notebook 03's) declares it as :attr:`closed_form`, called, drawn and worded the same way."""
        if type(self).closed_form is not None:
            result = self.result = type(self).closed_form(**values)
            self._show_closed_form(result, **values)
            self._speak(self.closed_form_words(result, **values))
            return
        result = self.result = self._call(values)
        self._show(result, **values)
        self._speak(self.words(result, **values))

    def _call(self, values: dict, progress=None, engine: str | None = None):
        """``experiment(**settings, **values[, progress=…][, engine=…])``: the one place a figure's experiment is
        called (any thread, no widget); ``progress`` and ``engine`` are passed where the experiment takes them."""
        experiment = type(self).experiment
        kw = {**self.settings, **values}
        if progress is not None and "progress" in inspect.signature(experiment).parameters:
            kw["progress"] = progress
        if engine is not None:
            kw["engine"] = engine
        return experiment(**kw)

    def _show(self, result, **values) -> None:  # pragma: no cover - abstract
        """Draw ``result`` (the experiment's at ``values``): traces by key, axes, annotations; never words."""
        raise NotImplementedError

    def _show_closed_form(self, result, **values) -> None:
        """Draw the :attr:`closed_form`'s ``result`` at ``values`` (never words; nothing by default: a closed form
        that only states the setting)."""

    def closed_form_words(self, result, **values) -> Words:  # pragma: no cover - abstract
        """What the figure says about its :attr:`closed_form`'s ``result``, from its ``outcome``."""
        raise NotImplementedError

    def words(self, result, **values) -> Words:  # pragma: no cover - abstract
        """What the figure says about ``result`` (the experiment's at ``values``): its :class:`Words`, from the
        result's ``outcome`` where the experiment decides one."""
        raise NotImplementedError

    def _speak(self, words: Words) -> None:
        """Show ``words``: the headline on the main figure (none when ``words.headline`` is None), the text in the
        status line."""
        if isinstance(words.headline, str):
            self._headline(words.headline, words.level != "info")
        elif words.headline is not None:
            self._title(words.headline)
        self.say(words.text, words.level)

    def _restyle_and_sync(self) -> None:
        """After drawing: no two curves told apart by colour only (:func:`~symsgd_core.ui.style.distinguish`),
        and every figure's full state stored, since a page that connects later (Voilà) reads only that."""
        for fig in self.figures:
            self._finish(fig)
            self._distinguish(fig)
            sync_figure_state(fig)
        self._refresh_alts()

    def _finish(self, fig: go.FigureWidget) -> None:
        """The project's layout (one plot background, white paper) on a new figure, and powers of ten on every log
        axis of every figure (:func:`~symsgd_core.ui.style.finish`), after each drawing: an axis a drawing made
        logarithmic gets them too."""
        finished = self.__dict__.setdefault("_finished_figures", set())
        finish(fig, layout=id(fig) not in finished)
        finished.add(id(fig))

    # -- text alternatives ----------------------------------------------------
    def settings_shown(self) -> dict[str, str]:
        """The controls as the reader sees them: ``{description: value as shown}`` (a selection by its label)."""
        out = {}
        for name, w in self.controls.items():
            label = plain_text(getattr(w, "description", "") or name).rstrip(":") or name
            # a selection (slider, dropdown, buttons) shows its option's label, read from its options: ipywidgets leaves
            # ``label`` empty for a selection built at its first option (notebook 05's "Langevin τ / matched τ = ,")
            labels, index = getattr(w, "_options_labels", None), getattr(w, "index", None)
            value = labels[index] if labels and isinstance(index, int) and 0 <= index < len(labels) else None
            if not isinstance(value, str):
                value = f"{canonical(w.value):g}" if isinstance(w, _FLOAT_SLIDERS) else str(w.value)
            out[label] = value
        return out

    def describe(self, k: int = 0) -> str:
        """The text alternative of figure ``k`` (see :mod:`.describe`): what it plots, the current settings and
        the status line's finding."""
        return figure_description(self.figures[k], self.settings_shown(), status_text(self), number=k + 1,
                                  of=len(self.figures))

    def _refresh_alts(self) -> None:
        for k, alt in enumerate(getattr(self, "_alts", ())):
            name = plain_text(self.figures[k].layout.title.text) or f"figure {k + 1}"
            value = visually_hidden_html(self.describe(k), name)
            if alt.value != value:
                alt.value = value

    def _distinguish(self, fig: go.FigureWidget) -> None:
        """:func:`~symsgd_core.ui.style.distinguish` ``fig`` when it is new or its number of traces changed (the
        controllers set line styles when they build a figure and change only data afterwards: a pass costs up to
        ~60 ms on a figure of 70 traces, too much for every slider move)."""
        styled = self.__dict__.setdefault("_styled_traces", {})
        if styled.get(id(fig)) != len(fig.data):
            distinguish(fig)
            styled[id(fig)] = len(fig.data)

    # -- messages -------------------------------------------------------------
    def say(self, text: str, level: str = "info") -> None:
        """Show ``text`` in the status line (level: info, warning, error). The text keeps the theme's colour (light
        and dark themes); a warning or an error is marked by a coloured left border (:data:`~.style.STATUS`) and
        the CSS class ``symsgd-status-<level>``; the messages themselves say what went wrong in words. While a first
        look is drawn, the status says that instead (:func:`first_look_status`): its verdict is not the Run's."""
        if self._looking is not None:
            text, level = first_look_status(self._looking), "info"
        level = level if level in ("info", "warning", "error") else "info"
        mark = "" if level == "info" else f' style="border-left:4px solid {STATUS[level]};padding-left:6px"'
        self.status.value = f'<span class="symsgd-status symsgd-status-{level}"{mark}>{html.escape(text)}</span>'
        self._refresh_alts()

    def _headline(self, text: str, warning: bool = False) -> None:
        """Write ``text`` as the main figure's headline (:func:`~.style.headline`; a figure's verdict on what it
        draws), or while a first look is drawn the first look's title (:func:`first_look_title`)."""
        if self._looking is not None:
            headline(self.figure, first_look_title(self._looking))
        else:
            headline(self.figure, text, warning)

    def _title(self, title: dict) -> None:
        """Set the main figure's ``title`` (a plotly title dict holding the figure's verdict), or while a first look
        is drawn the first look's title (:func:`first_look_title`)."""
        if self._looking is not None:
            headline(self.figure, first_look_title(self._looking))
        else:
            self.figure.layout.title = title


def first_look_title(what: str) -> str:
    """The headline of a first look that leaves out ``what`` ("1 of 8 SGD seeds, …")."""
    return PLATFORM_WORDS["first_look_title"].format(what=what)


def first_look_status(what: str, doing: str | None = None) -> str:
    """The status line of a first look that leaves out ``what``: every line a first look shows says it is one."""
    return PLATFORM_WORDS["first_look_status"].format(
        what=what, doing=PLATFORM_WORDS["first_look_doing"] if doing is None else doing)


def computing_notice() -> str:
    """The status while a Run computes: "Computing…", and while some imported engine's kernel is not compiled yet
    (:func:`~symsgd_core.warm.cold_loaded_kernels`) also that this Run may wait for it, so a long first Run says why."""
    cold = cold_loaded_kernels()
    if cold:
        return PLATFORM_WORDS["computing_cold"].format(n=len(cold))
    return PLATFORM_WORDS["computing"]


#: The first-look rule: a figure with a Run button whose full Run takes more than this at its costliest slider end
#: (CPU seconds after a warm-up Run, on the 2-core machine the notebooks are served from; its ``FULL_RUN_SECONDS``)
#: draws a first look at once and the full Run from a worker thread; one whose full Run takes at most this is drawn
#: in one go ("Computing…" in the status line meanwhile): a partial figure shown for less than 2 s would be replaced
#: before it is read, and says less than the status line already does.
FIRST_LOOK_ABOVE_SECONDS = 2.0

#: Seconds a figure that re-simulates by itself (:attr:`RunController.auto_run`) waits after a slider move from the
#: page before it runs: keyboard steps and releases in quick succession are simulated once, at the last value.
DEBOUNCE_SECONDS = 0.15

_log = logging.getLogger(__name__)


class RunController(Controller):
    """A figure that re-simulates: "Computing…" in the status while busy. It implements ``_run(**values)``
    (compute and draw on the main thread), or ``_compute(progress, **values)`` (any thread, no widget touched) and
    ``_draw(result, **values)``, which a background Run needs; with ``live = True`` the sliders also redraw an
    analytic part at once (``_update``).

    * ``auto_run = True`` (a Run of at most half a second at every slider end, ``python -m symsgd_core bench``): no
      Run button; a slider released in the page re-simulates after :data:`DEBOUNCE_SECONDS` without a further move
      (moves meanwhile are simulated once, at the last value); a value set by code re-simulates at once.
    * ``auto_run = False``: a Run button and a progress bar, the sliders choose the next Run's settings. A long Run
      pressed in the page draws a first look at once (:meth:`_first_look`) and computes the full Run in a worker
      thread (:meth:`start_run`): the widgets stay live, and a newer Run supersedes it.
    """

    live = False
    #: Re-simulate on every slider release (no Run button); see the class docstring.
    auto_run = False
    #: A figure with a Run button: its costliest slider end (every slider that adds work at its costly end) and its
    #: full Run's cost there, measured (CPU seconds after a warm-up Run; ``python -m symsgd_core bench``'s ``@worst``
    #: rows). It declares a first look exactly when ``FULL_RUN_SECONDS`` > :data:`FIRST_LOOK_ABOVE_SECONDS`
    #: (``tests/ui/test_ui_base.py``, which also measures it again).
    COSTLIEST: dict = {}
    FULL_RUN_SECONDS: float | None = None

    def _setup_run(self) -> None:
        self.run_button = None if self.auto_run else RunButton(
            description="Run", button_style="primary", icon="play", tooltip="re-simulate with the slider values")
        self.progress = widgets.IntProgress(value=0, min=0, max=100, description="",
                                            layout=widgets.Layout(width="160px"))
        if self.run_button is not None:
            self.run_button.on_click(self._on_run_click)
            self.extra_widgets = [self.run_button, self.progress]
        else:
            self.extra_widgets = []  # a Run of at most half a second: "Computing…" in the status says it is busy
        self.last_run_seconds = float("nan")
        #: the full Run computing in the background (:meth:`start_run`), done once drawn, cancelled if superseded
        self.pending: Future | None = None
        self._pending_run: asyncio.TimerHandle | None = None
        self._generation = 0  # counts Runs started: a background Run whose number is no longer current is dropped

    @classmethod
    def declares_first_look(cls) -> bool:
        """Whether a Run pressed in the page can draw a first look (``FIRST_LOOK`` or an own ``_first_look``)."""
        own = cls._first_look not in (RunController._first_look, ExperimentFigure._first_look)
        return own or getattr(cls, "FIRST_LOOK", None) is not None

    def set_progress(self, fraction: float) -> None:
        """Show ``fraction`` (0 to 1) of the work as done."""
        self.progress.value = int(round(100 * min(max(float(fraction), 0.0), 1.0)))

    def _observed(self) -> bool:
        return self.live or self.auto_run

    def _controls_counted_by_run(self) -> list:
        return [*(self.controls.values() if self.auto_run else ()), *([self.run_button] if self.run_button else ())]

    def _on_run_click(self, button) -> None:
        if getattr(button, "from_page", False):
            self.start_run()
        else:
            self.run()

    def _say_error(self, exc: Exception) -> None:
        """Show a Run's exception in the status line."""
        self.say(PLATFORM_WORDS["error"].format(kind=type(exc).__name__, error=exc), "error")

    def _first_look(self, values: dict) -> tuple[dict, str] | None:
        """``(settings, what)``: smaller settings to draw at once when a Run at ``values`` takes longer than half a
        second, and what they leave out ("1 of 8 SGD seeds, …"), or None: the Run is drawn in one go."""
        return None

    def _on_change(self, change) -> None:
        if not self.auto_run:
            self.update()
            return
        if self.live:
            self._redraw()  # the analytic part at once; the input counts as handled when the Run has drawn it
        loop = running_loop() if changed_by_page(change["owner"]) else None
        if loop is None:
            self.run()
            return
        if self._pending_run is not None:
            self._pending_run.cancel()
        self._pending_run = loop.call_later(DEBOUNCE_SECONDS, self._run_when_quiet)

    def _run_when_quiet(self) -> None:
        """The debounced Run of a slider move (an error is shown in the status line by :meth:`run`)."""
        self._pending_run = None
        try:
            self.run()
        except Exception:  # noqa: BLE001 - run() shows it in the status line; no cell to raise into
            _log.exception("%s: a Run after a slider move failed", type(self).__name__)

    def update(self) -> None:
        if self.live:
            self._redraw()
        if not self.live or self.auto_run:
            self.run()
        else:
            self._mark_handled()

    def start_run(self, loop: asyncio.AbstractEventLoop | None = None) -> Future | None:
        """What the Run button does when pressed in the page: a Run with a first look (:meth:`_first_look`) draws
        it at once, then computes the full Run in a worker thread (:mod:`symsgd_jupyter.background`) and draws it
        when it arrives, unless a newer Run superseded it; any other Run is :meth:`run`. Returns the full Run's
        future (also ``self.pending``), or None when the Run was drawn in one go."""
        loop = loop or running_loop()
        values = self.values()
        look = self._first_look(values)
        if loop is None or look is None:
            self.run()
            return None
        small, what = look
        self._generation += 1
        generation = self._generation
        t0 = time.perf_counter()
        self.say(first_look_status(what, computing_notice()))
        self.progress.value = 0
        title_before = self.figure.layout.title.to_plotly_json()
        # the first look's own verdict (e.g. "no jump within the budget" of its shorter run) is not the Run's: while
        # it is drawn, every status line and headline says what is shown (say, _headline, _title), until the full
        # Run is drawn
        look_title = first_look_title(what)
        self._looking = what
        try:
            self._run(**small)
            headline(self.figure, look_title)  # (a figure whose drawing sets no headline)
            self.say(first_look_status(what))
        except Exception as exc:
            self._looking = None
            self._say_error(exc)
            self._mark_handled()
            raise
        finally:
            self._looking = None
        self._restyle_and_sync()

        def current() -> bool:
            return self._generation == generation

        def show_progress(fraction: float) -> None:
            if current():
                self.set_progress(fraction)

        def finish(outcome) -> None:
            self.progress.value = self.progress.max
            self.last_run_seconds = time.perf_counter() - t0
            try:
                if isinstance(outcome, Exception):
                    raise outcome
                self._draw(outcome, **values)
                if self.figure.layout.title.text == look_title:  # a figure whose drawing sets no title of its own
                    self.figure.layout.title = title_before
            except Exception as exc:  # noqa: BLE001 - shown in the status line; no cell to raise into
                self._say_error(exc)
                _log.exception("%s: a Run computed in the background failed", type(self).__name__)
            self._restyle_and_sync()
            self._mark_handled()

        self.pending = compute_in_background(loop, lambda progress: self._compute(progress, **values), current,
                                             show_progress, finish, name=f"symsgd-{type(self).__name__}")
        return self.pending

    def run(self) -> None:
        """Re-simulate (``_run``) and redraw, "Computing…" in the status meanwhile, timed in ``last_run_seconds``;
        a background Run still computing (:meth:`start_run`) is superseded. An exception is shown in the status
        line and re-raised (for tests and logs)."""
        self._generation += 1
        t0 = time.perf_counter()
        self.say(computing_notice())
        self.progress.value = 0
        if self.run_button is not None:
            self.run_button.disabled = True
        try:
            self._run(**self.values())
        except Exception as exc:
            self._say_error(exc)
            raise
        finally:
            if self.run_button is not None:
                self.run_button.disabled = False
            self.progress.value = self.progress.max
            self.last_run_seconds = time.perf_counter() - t0
            if not self.live:
                self.last_update_seconds = self.last_run_seconds
        self._restyle_and_sync()
        self._mark_handled()

    def _run(self, **values) -> None:
        """Re-simulate and draw, on the main thread: ``_draw(_compute(...))`` unless a figure implements it."""
        self._draw(self._compute(self.set_progress, **values), **values)

    def _compute(self, progress, **values):  # pragma: no cover - abstract
        """The figure's experiment at ``values``, reporting ``progress(fraction)`` (any thread; no widget)."""
        raise NotImplementedError

    def _draw(self, result, **values) -> None:  # pragma: no cover - abstract
        """Draw ``result`` (what :meth:`_compute` returned at ``values``) and say what it shows."""
        raise NotImplementedError


class ExperimentFigure(RunController):
    """A re-simulating figure of one experiment, called by keyword with the sliders' values and the experiment's
    other settings (``self.settings``: the constructor's, else the experiment's defaults), with ``progress`` and,
    where the experiment takes one, the figure's ``engine``; ``_draw`` keeps the result in ``self.result``, draws
    it (``_show(result, **values)``) and words it (``words(result, **values)``). A setting the experiment refuses
    (an exception of ``refused``) is drawn as a failure: empty traces, ``REFUSED_HEADLINE`` and the reason. A
    figure whose Run can take seconds declares its first look (``FIRST_LOOK``, ``FIRST_LOOK_WORDS``,
    ``ONE_GO``)."""

    #: The exceptions by which the experiment refuses a setting (e.g. no starting minimum): drawn as a failure.
    refused: tuple = ()
    #: The headline of a refused setting (a text in the headline style, or a plotly title dict).
    REFUSED_HEADLINE: str | dict = "FAILURE MODE: nothing to draw"

    def __init__(self, engine: str | None = None, **settings) -> None:
        if engine is not None and "engine" not in inspect.signature(type(self).experiment).parameters:
            raise TypeError(f"{type(self).__name__}'s experiment {type(self).experiment.__name__} has no engine "
                            "to choose")
        self.engine = engine
        super().__init__(**settings)

    #: ``(work, smaller)`` of a figure whose Run can take seconds: ``work(values)``, the run-steps a Run simulates
    #: (times the network's size where it varies), and ``smaller(values)``, the settings of its first look (see
    #: :meth:`_first_look`). None: every Run is drawn in one go.
    FIRST_LOOK = None
    #: The sliders a first look shrinks, with the words that count them ("SGD seeds").
    FIRST_LOOK_WORDS: dict = {}
    #: The most work a Run does in one go, as a fraction of the work at the notebook's defaults.
    ONE_GO = 1.0

    def _first_look(self, values: dict) -> tuple[dict, str] | None:
        """A first look when the Run asks for more than ``ONE_GO`` times the work at the notebook's defaults (Runs
        of at most that work answer in at most 0.5 s: ``python -m symsgd_core bench``), at the settings of
        ``FIRST_LOOK`` (at most that work)."""
        if self.FIRST_LOOK is None:
            return None
        work, smaller = self.FIRST_LOOK
        if work(values) <= self.ONE_GO * work(experiment_defaults(type(self).experiment)):
            return None
        small = {**values, **smaller(values)}
        if small == values:  # nothing to leave out
            return None
        return small, ", ".join(f"{small[k]:,} of {values[k]:,} {words}".replace(",", " ")
                                for k, words in self.FIRST_LOOK_WORDS.items() if small[k] != values[k])

    def _compute(self, progress, **values):
        """``experiment(**settings, **values, progress=progress[, engine=...])`` (:meth:`_call`; any thread, no
        widget); a setting it refuses (``refused``) is returned as the exception, drawn as a failure."""
        try:
            return self._call(values, progress=progress, engine=self.engine)
        except self.refused as exc:
            return exc

    def _draw(self, result, **values) -> None:
        """Keep ``result``, draw it and word it (a refused setting: empty traces, the headline, the reason)."""
        if isinstance(result, Exception):
            self.result = None
            with self.figure.batch_update():
                for tr in self.figure.data:
                    tr.x, tr.y = [], []
            self._speak(Words(self.REFUSED_HEADLINE, "error", str(result)))
            return
        self.result = result
        self._show(result, **values)
        self._speak(self.words(result, **values))


def experiment_defaults(func) -> dict:
    """The keyword defaults of an experiment function (the one place a figure's starting settings live)."""
    return {name: p.default for name, p in inspect.signature(func).parameters.items()
            if p.default is not inspect.Parameter.empty}


def experiment_settings(experiment, overrides: dict) -> dict:
    """The experiment's defaults with the caller's ``overrides`` (a controller's starting values); ValueError for
    an override the experiment does not take (named, with the settings it does take)."""
    values = experiment_defaults(experiment)
    unknown = sorted(set(overrides) - set(values))
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown} of {experiment.__name__}; settings are {sorted(values)}")
    return {**values, **overrides}


def status_text(controller: Controller) -> str:
    """The controller's status line as plain text (for printing in a notebook cell; in classroom mode what a cell
    prints shows as one compact line, see :mod:`symsgd_jupyter.compact_output`)."""
    return html.unescape(re.sub(r"<[^>]+>", "", controller.status.value))

"""Runs inside a notebook's kernel after the notebook ran: what every displayed widget shows, and its slider's frames.

The builder (:mod:`.execute`) passes the model ids of the notebook's widget outputs, in page order. For each:

* a **controller** (its root carries the CSS class ``symsgd-controller``; the controller is the
  :class:`symsgd_core.ui.base.Controller` whose figures sit in that root) gives its figures as they are now (the
  live ``FigureWidget`` state, not saved widget state), its status line and controls; then its main slider
  (:mod:`.config`) is moved over a grid of values (:mod:`.grid`) exactly as a reader moves it — the widget's
  value is set, which redraws a live controller, and the controller's Run button is clicked when it has one —
  and the figures and status are read after each value. No figure is computed here: the controller and its
  experiment functions do all of it.
* a plotly **figure** shown on its own gives its current state;
* any other **widget** (the "Check yourself" panel) gives a static HTML copy of its text and inputs.

A controller or text covered until the reader answers a prediction (``reveal_after``, symsgd_core/lesson/reveal.py) is
captured uncovered: the controller's root is still the displayed output, and a cover's prompt (its text and "Show
the result" button) is left out, since the static page has no kernel to check an answer.

Uses only the controller interface (``controls``, ``figures``, ``status``, the Run button among its widgets),
never a controller's internals.
"""

from __future__ import annotations

import gc
import html
import json
import re
import time
import warnings

from .config import DEFAULT_FRAMES, MIN_FRAMES, choice_for
from .grid import allocate_frames, label, lattice_size, lattice_value, slider_grid, spec_of

#: CSS class of a controller's root widget (see symsgd_core/ui/base.py).
CONTROLLER_CLASS = "symsgd-controller"
_RUN = re.compile(r"\brun\b", re.IGNORECASE)


def capture(model_ids: list[str], out_path: str, frame_budget_bytes: int) -> dict:
    """Capture every widget output of the page and write the result to ``out_path`` (JSON).

    First every controller's figures are read as the notebook left them, and each slider is moved once to the
    end of its range farthest from the notebook's value, to measure what one frame adds to the page; then the
    page's frame budget is shared among the sliders (:func:`edition.grid.allocate_frames`) and each slider's
    grid is computed.

    Args:
        model_ids: the model ids of the notebook's widget outputs, in page order.
        out_path: where to write ``{"outputs": {model_id: entry}}``.
        frame_budget_bytes: bytes all the frames of the page may take.

    Returns:
        A short summary (model id → kind, class, frames) for the builder's log.
    """
    from plotly.io.json import to_json_plotly

    from symsgd_core.lesson.exercise_panel import settle_waiting_panels

    # the instructor edition: a panel in the notebook's last cell opens its worked solutions after the next cell,
    # which is this one (symsgd_core/lesson/exercise_panel.py): decide before reading it
    settle_waiting_panels()
    outputs, drives = {}, {}
    for mid in model_ids:
        root = _widget(mid)
        if root is None:
            outputs[mid] = {"kind": "missing"}
        elif _is_controller_root(root):
            outputs[mid], drive = prepare_controller(controller_of(root), root)
            if drive is not None:
                drives[mid] = drive
        elif _is_figure(root):
            outputs[mid] = {"kind": "figure", "figures": [figure_state(root)]}
        else:
            outputs[mid] = {"kind": "widgets", "html": static_html(root)}
    ids = list(drives)
    counts = allocate_frames([drives[m].cost for m in ids], [drives[m].wanted for m in ids],
                             int(frame_budget_bytes), MIN_FRAMES)
    for mid, n in zip(ids, counts):
        finish_controller(outputs[mid], drives[mid], n)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(to_json_plotly({"outputs": outputs}))
    return {mid: {"kind": e["kind"], "class": e.get("class"),
                  "frames": len(e["slider"]["values"]) if e.get("slider") else 0} for mid, e in outputs.items()}


# ---------------------------------------------------------------------------------------------- finding widgets
def _widget(model_id: str):
    from ipywidgets.widgets import widget as _widget_module

    return _widget_module._instances.get(model_id)


def _is_controller_root(w) -> bool:
    return CONTROLLER_CLASS in tuple(getattr(w, "_dom_classes", ()))


def _is_figure(w) -> bool:
    from plotly.basewidget import BaseFigureWidget

    return isinstance(w, BaseFigureWidget)


def descendants(root) -> list:
    """``root`` and every widget inside it (through ``children``), depth first."""
    out, stack = [], [root]
    while stack:
        w = stack.pop()
        out.append(w)
        stack.extend(reversed(list(getattr(w, "children", ()) or ())))
    return out


def controller_of(root):
    """The controller whose figures are shown in ``root`` (exactly one; RuntimeError otherwise)."""
    from symsgd_core.ui.base import Controller

    inside = {id(w) for w in descendants(root)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # type(), not isinstance(): isinstance reads __class__, which raises ReferenceError on a dead weakref.proxy
        controllers = [o for o in gc.get_objects() if issubclass(type(o), Controller)]
    owners = [c for c in controllers if c.figures and all(id(f) in inside for f in c.figures)]
    if len(owners) != 1:
        raise RuntimeError(f"expected one controller drawing into the displayed root {root.model_id}, found "
                           f"{[type(c).__name__ for c in owners]}")
    return owners[0]


def run_button(root):
    """The controller's Run button (a ``Button`` whose description says Run), or ``None``."""
    import ipywidgets as widgets

    for w in descendants(root):
        if isinstance(w, widgets.Button) and (_RUN.search(w.description or "") or _RUN.search(w.tooltip or "")):
            return w
    return None


# ---------------------------------------------------------------------------------------------- reading state
def figure_state(fig, keep_template: bool = True) -> dict:
    """A figure's current state as a plotly dict (numpy arrays as plotly's base64 arrays)."""
    d = fig.to_dict()
    if not keep_template:
        d.get("layout", {}).pop("template", None)
    return d


def _plain(value):
    """A control value as JSON (numbers, strings, booleans; anything else as its repr)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return repr(value)


def shown_value(w) -> str:
    """What control ``w`` shows: a selection widget (SelectionSlider, Dropdown, ToggleButtons) the label of its option,
    any other its value. The label is read from the options at ``index``, not from ``w.label``: ipywidgets leaves
    ``label`` empty for a widget built at its first option (``index`` starts at 0 and never changes, so the label is
    never filled in; notebook 05's settings line read "setting ." that way)."""
    labels, index = getattr(w, "_options_labels", None), getattr(w, "index", None)
    if labels and isinstance(index, int) and 0 <= index < len(labels):
        return labels[index]
    return label(_plain(w.value))


def controls_of(controller, sliders: list[str]) -> list[dict]:
    """Every control: name, label (its description), value as shown, and whether it is a slider."""
    rows = []
    for name, w in controller.controls.items():
        rows.append({"name": name, "label": (getattr(w, "description", "") or name).strip(), "value": _plain(w.value),
                     "shown": shown_value(w), "slider": name in sliders})
    return rows


class SliderDrive:
    """Moves one controller's slider as a reader does, and reads its figures and status at each value.

    Setting the widget's value redraws a live controller (its observers run); the Run button, when the controller
    has one, is then clicked. Each value is computed once (the measuring move is reused by the grid).
    """

    def __init__(self, controller, widget, name: str, button, wanted: int):
        self.controller, self.widget, self.name, self.button, self.wanted = controller, widget, name, button, wanted
        self.spec = spec_of(widget)
        self.cost = 1
        self._done: dict = {}

    def at(self, value) -> dict:
        if value not in self._done:
            t0 = time.perf_counter()
            try:
                self.widget.value = value
                if self.button is not None:
                    self.button.click()
            except Exception as exc:  # noqa: BLE001 - re-raised with the setting that failed
                raise RuntimeError(f"{type(self.controller).__name__}: setting slider {self.name!r} to {value!r} "
                                   f"raised {type(exc).__name__}: {exc}") from exc
            self._done[value] = {"figures": [figure_state(f, keep_template=False) for f in self.controller.figures],
                                 "shown": shown_value(self.widget),  # the slider's value as its settings line says it
                                 "status": self.controller.status.value,
                                 "descriptions": descriptions_of(self.controller),
                                 "seconds": round(time.perf_counter() - t0, 3)}
        return self._done[value]

    def far_end(self):
        """The end of the slider's range farthest from its current value."""
        spec = self.spec
        ends = (lattice_value(spec, 0), lattice_value(spec, lattice_size(spec) - 1))
        return max(ends, key=lambda v: abs(_position(spec, v) - _position(spec, spec.value)))


def descriptions_of(controller) -> list[str]:
    """The text alternative of each of the controller's figures now (symsgd_jupyter/describe.py), as the live page
    has it: what is plotted, the settings, the finding."""
    return [controller.describe(k) for k in range(len(controller.figures))]


def prepare_controller(controller, root) -> tuple[dict, SliderDrive | None]:
    """A controller's figures, status and controls now, and a :class:`SliderDrive` for its main slider (with the
    bytes one frame adds, measured by one move to the far end of its range), or ``None`` when it has no slider.

    Raises:
        ValueError: the edition's choice names a slider the controller does not have.
        RuntimeError: a slider value raised in the controller (the message names the controller and value).
    """
    from symsgd_jupyter.figure_checks import slider_names

    cls = type(controller).__name__
    sliders = slider_names(controller)
    button = run_button(root)
    # a figure that re-simulates when its slider is released (RunController.auto_run) costs a simulation per frame
    kind = "re-simulating" if button is not None or getattr(controller, "auto_run", False) else "analytic"
    entry = {"kind": "controller", "class": cls, "live": bool(controller.live), "has_run": button is not None,
             "controls": controls_of(controller, sliders),
             "figures": [figure_state(f) for f in controller.figures], "status": controller.status.value,
             "descriptions": descriptions_of(controller), "slider": None, "why_no_slider": None}
    choice = choice_for(cls)
    name = choice.slider or (sliders[0] if sliders else None)
    if name is None:
        entry["why_no_slider"] = "it has no slider"
        return entry, None
    if name not in sliders:
        raise ValueError(f"the edition's choice for {cls} names slider {name!r}, but its sliders are {sliders}")
    drive = SliderDrive(controller, controller.controls[name], name, button, choice.frames or DEFAULT_FRAMES[kind])
    drive.cost = changed_bytes(entry["figures"], drive.at(drive.far_end())["figures"])
    return entry, drive


def finish_controller(entry: dict, drive: SliderDrive, n: int) -> None:
    """Compute ``n`` frames of the slider into ``entry`` (``n = 0``: say why the figure has no slider)."""
    if n < MIN_FRAMES:
        entry["why_no_slider"] = (f"its figures change by {drive.cost / 1e6:.2f} MB per slider value, too much to "
                                  "fit the page budget")
        return
    values, current = slider_grid(drive.spec, n)
    frames = [drive.at(v) for v in values]
    entry["slider"] = {"name": drive.name, "label": (getattr(drive.widget, "description", "") or drive.name).strip(),
                       "values": values, "labels": [label(v) for v in values], "current": current,
                       "frames": frames, "asked_frames": drive.wanted, "frame_bytes": drive.cost}


def _position(spec, v) -> float:
    """Where ``v`` sits on the slider (its exponent for a log slider, its index for a selection)."""
    import math

    if spec.kind == "selection":
        return float(spec.options.index(v))
    return math.log(float(v), spec.base) if spec.kind == "log" else float(v)


def changed_bytes(first: list[dict], later: list[dict]) -> int:
    """JSON bytes of the traces and top-level layout entries of ``later`` that differ from ``first``."""
    total = 0
    for a, b in zip(first, later):
        for ta, tb in zip(a.get("data", []), b.get("data", [])):
            sb = json.dumps(tb, sort_keys=True, default=str)
            if json.dumps(ta, sort_keys=True, default=str) != sb:
                total += len(sb)
        la, lb = a.get("layout", {}), b.get("layout", {})
        for key in set(lb) - {"template"}:
            sb = json.dumps(lb.get(key), sort_keys=True, default=str)
            if json.dumps(la.get(key), sort_keys=True, default=str) != sb:
                total += len(sb)
    return max(total, 1)


# ---------------------------------------------------------------------------------------------- other widgets
def static_html(w) -> str:
    """A static HTML copy of a widget tree: its texts, and its inputs drawn disabled."""
    import ipywidgets as widgets

    from symsgd_jupyter.answer_box import AnswerBox

    if isinstance(w, widgets.HTMLMath) and "symsgd-worked" in w._dom_classes:  # a Check-yourself worked solution
        shown = " open" if w.layout.display != "none" else ""  # open in the instructor edition (--solutions)
        return (f'<details class="edition-worked"{shown}><summary>Show worked solution</summary>'
                f'<div class="edition-widget-html">{w.value}</div></details>')
    if isinstance(w, widgets.ToggleButton) and "symsgd-reveal" in w._dom_classes:
        return ""  # the static page reveals the solution with <details> instead
    if "symsgd-cover-prompt" in getattr(w, "_dom_classes", ()):
        return ""  # "predict first, or show the result" (symsgd_core/lesson/reveal.py): no kernel checks answers here
    if isinstance(w, (widgets.HTML, widgets.HTMLMath)):
        return f'<div class="edition-widget-html">{w.value}</div>'
    if isinstance(w, widgets.Label):
        return f'<span class="edition-widget-label">{html.escape(str(w.value))}</span>'
    if isinstance(w, widgets.ToggleButtons):
        names = [o[0] if isinstance(o, tuple) else str(o) for o in w.options]
        return ('<div class="edition-widget-choices">'
                + "".join(f"<button disabled>{html.escape(n)}</button>" for n in names) + "</div>")
    if isinstance(w, (widgets.Text, widgets.Textarea, AnswerBox)):
        field = (f'<input type="text" disabled value="{html.escape(str(w.value), quote=True)}" '
                 f'placeholder="{html.escape(w.placeholder or "", quote=True)}">')
        return field + ("<button disabled>Check</button>" if isinstance(w, AnswerBox) else "")
    if isinstance(w, widgets.Button):
        return f"<button disabled>{html.escape(w.description or '')}</button>"
    if isinstance(w, widgets.Box):
        box = "row" if isinstance(w, widgets.HBox) else "column"
        classes = " ".join(html.escape(c) for c in getattr(w, "_dom_classes", ()))
        inner = "".join(static_html(c) for c in w.children)
        return f'<div class="edition-widget-box edition-{box} {classes}">{inner}</div>'
    if hasattr(w, "value") and hasattr(w, "description"):
        return (f'<span class="edition-widget-value">{html.escape(w.description or "")} '
                f"{html.escape(label(_plain(w.value)))}</span>")
    return ""

"""Every figure's data at its defaults and at both ends of every slider, to show a refactoring changed nothing.

``python -m tools.figure_data capture OUT.json`` builds every controller of every notebook with its defaults and
records its controls (type, description, range, step, width) and, per figure, every trace and the layout as plotly
sends them to the page (JSON numbers), the figure's title and the status line; then it moves each slider to each end
of its range (the other sliders at their defaults, Run pressed where the figure waits for it) and records the same.
``python -m tools.figure_data compare BEFORE.json AFTER.json`` lists every difference and exits 1 if there is one.

A setting is matched by controller class and by the slider's position among the controller's sliders (not its
name), so renaming a slider (``lam`` → ``weight_decay``) is no difference; ``--renamed Old=New`` matches a renamed
class.
"""

from __future__ import annotations

import argparse
import inspect
import json
import pathlib
import sys
import time

from plotly.utils import PlotlyJSONEncoder


def controller_classes() -> list[type]:
    """Every public controller class of every notebook's figure module, in a stable order."""
    from symsgd_core.ui import balance, base, lifting, rank_jumps, sde_noise, start, stationary

    found = []
    for module in (start, balance, lifting, stationary, rank_jumps, sde_noise):
        for name, cls in vars(module).items():
            if (inspect.isclass(cls) and issubclass(cls, base.Controller) and cls.__module__ == module.__name__
                    and not name.startswith("_")):
                found.append(cls)
    return found


def snapshot(controller) -> dict:
    """The figures' traces and layouts (as JSON; no trace ``uid``, which is random, and no theme template), their
    titles and the status line of ``controller`` now."""
    from symsgd_core.ui.base import status_text

    traces = [[{k: v for k, v in t.to_plotly_json().items() if k != "uid"} for t in fig.data]
              for fig in controller.figures]
    layouts = [{k: v for k, v in fig.layout.to_plotly_json().items() if k != "template"} for fig in controller.figures]
    figures = json.loads(json.dumps({"traces": traces, "layouts": layouts}, cls=PlotlyJSONEncoder))
    titles = [fig.layout.title.text for fig in controller.figures]
    return {"figures": figures, "titles": titles, "status": status_text(controller)}


#: The state of a control a reader sees or uses (its value excepted, which the settings compare).
CONTROL_KEYS = ("description", "min", "max", "step", "base", "options", "readout_format", "continuous_update",
                "orientation", "tooltip")


def controls_state(controller) -> list:
    """Each control, in order: its widget type, what it shows (:data:`CONTROL_KEYS`), its width and label width."""
    out = []
    for widget in controller.controls.values():
        state = {key: getattr(widget, key) for key in CONTROL_KEYS if hasattr(widget, key)}
        if "options" in state:
            state["options"] = [list(o) if isinstance(o, tuple) else o for o in state["options"]]
        state.update(type=type(widget).__name__, width=widget.layout.width,
                     label_width=getattr(getattr(widget, "style", None), "description_width", None))
        out.append(state)
    return json.loads(json.dumps(out, cls=PlotlyJSONEncoder))


def _press_run_if_waiting(controller) -> None:
    if controller.live and getattr(controller, "run_button", None) is not None:
        controller.run_button.click()


def capture_class(cls) -> dict:
    """``{"defaults": snapshot, "controls": controls_state, "sliders": [{"position", "end", "name", "value",
    "snapshot"}, …]}`` of one controller class: built with its defaults, then each slider (not a dropdown or toggle)
    moved to each end of its range, one at a time, and back."""
    from symsgd_jupyter.figure_checks import slider_extremes, slider_names

    controller = cls()
    _press_run_if_waiting(controller)
    out = {"defaults": snapshot(controller), "controls": controls_state(controller), "sliders": []}
    for k, name in enumerate(slider_names(controller)):
        widget = controller.controls[name]
        original = widget.value
        for end, value in zip(("low", "high"), slider_extremes(widget)):
            controller.set(**{name: value})
            _press_run_if_waiting(controller)
            out["sliders"].append({"position": k, "end": end, "name": name, "value": value,
                                   "snapshot": snapshot(controller)})
        controller.set(**{name: original})
    return out


def capture(path: pathlib.Path, only: list[str] | None = None) -> None:
    data = {}
    for cls in controller_classes():
        if only and cls.__name__ not in only:
            continue
        t0 = time.perf_counter()
        data[cls.__name__] = capture_class(cls)
        print(f"{cls.__name__}: {len(data[cls.__name__]['sliders'])} slider ends, "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
    path.write_text(json.dumps(data, cls=PlotlyJSONEncoder))


def differences(before: dict, after: dict, renamed: dict[str, str] | None = None) -> list[str]:
    """Every difference between two captures, in words (empty: nothing changed)."""
    renamed = renamed or {}
    found = []
    for old_name, old in before.items():
        name = renamed.get(old_name, old_name)
        if name not in after:
            found.append(f"{old_name}: missing after")
            continue
        new = after[name]
        pairs = [("defaults", old["defaults"], new["defaults"])]
        new_ends = {(s["position"], s["end"]): s for s in new["sliders"]}
        for s in old["sliders"]:
            match = new_ends.get((s["position"], s["end"]))
            if match is None:
                found.append(f"{old_name}: slider {s['name']} ({s['end']} end) missing after")
                continue
            if match["value"] != s["value"]:
                found.append(f"{old_name}: slider {s['name']}'s {s['end']} end {s['value']} → {match['value']}")
            pairs.append((f"{s['name']} at its {s['end']} end", s["snapshot"], match["snapshot"]))
        if "controls" in old and "controls" in new and old["controls"] != new["controls"]:
            found.append(f"{old_name}: controls differ ({_first_difference(old['controls'], new['controls'])})")
        if len(new["sliders"]) != len(old["sliders"]):
            found.append(f"{old_name}: {len(old['sliders'])} slider ends before, {len(new['sliders'])} after")
        for where, a, b in pairs:
            for key in ("titles", "status"):
                if a[key] != b[key]:
                    found.append(f"{old_name}, {where}: {key} differs:\n  before {a[key]!r}\n  after  {b[key]!r}")
            if a["figures"] != b["figures"]:
                first = _first_difference(a["figures"], b["figures"])
                found.append(f"{old_name}, {where}: figure data differs ({first})")
    for name in after:
        if name not in set(renamed.get(n, n) for n in before):
            found.append(f"{name}: new (not in the capture before)")
    return found


def _first_difference(a, b, path="") -> str:
    if type(a) is not type(b):
        return f"{path or 'figures'}: {type(a).__name__} → {type(b).__name__}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key, "<absent>") != b.get(key, "<absent>"):
                if key in a and key in b:
                    return _first_difference(a[key], b[key], f"{path}.{key}")
                return f"{path}.{key}: {'absent before' if key not in a else 'absent after'}"
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items → {len(b)}"
        for k, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{path}[{k}]")
    return f"{path}: {str(a)[:80]} → {str(b)[:80]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    cap = sub.add_parser("capture", help="record every figure's data")
    cap.add_argument("out", type=pathlib.Path)
    cap.add_argument("--only", nargs="*", help="controller class names (default: all)")
    cmp_ = sub.add_parser("compare", help="list the differences between two captures")
    cmp_.add_argument("before", type=pathlib.Path)
    cmp_.add_argument("after", type=pathlib.Path)
    cmp_.add_argument("--renamed", nargs="*", default=[], help="Old=New controller class names")
    args = parser.parse_args(argv)
    if args.command == "capture":
        capture(args.out, args.only)
        return 0
    renamed = dict(pair.split("=", 1) for pair in args.renamed)
    found = differences(json.loads(args.before.read_text()), json.loads(args.after.read_text()), renamed)
    for line in found:
        print(line)
    before = json.loads(args.before.read_text())
    settings = sum(1 + len(c["sliders"]) for c in before.values())
    print(f"{len(before)} controllers, {settings} settings compared: "
          + ("identical" if not found else f"{len(found)} difference(s)"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

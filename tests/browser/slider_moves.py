"""Moving sliders as a reader does and timing the figure's answer: :func:`exercise_controller` moves a slider of a
controller with the keyboard (pressing Run for re-simulating controllers) and measures the latency (the rows of the
latency report); every wait is on the kernel's handled-input count."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from figure_inspection import describe_controllers
from notebook_run import NotebookRun

#: Latency targets (median, browser, slider → figure), milliseconds.
TARGET_MS = {"analytic": 300.0, "on release": 800.0, "re-simulating": 1500.0}



#: Moves per controller: analytic sliders are cheap, re-simulations cost a Run each.
MOVES = {"analytic": 4, "on release": 4, "re-simulating": 4}



#: Longest wait for one move to change a figure, seconds.
MOVE_TIMEOUT_S = {"analytic": 8.0, "on release": 20.0, "re-simulating": 20.0}



#: After this many controllers failed to respond, the notebook's remaining ones are not exercised
#: (the cause is shared, e.g. frozen figures; this bounds the time a broken notebook costs).
MAX_FAILED_CONTROLLERS = 2



def exercise_all_controllers(page, run: NotebookRun, kernel_idle, moves: int | None = None,
                             throttle: float = 1.0) -> list[ControllerLatency]:
    """Exercise every controller of the page (one non-fatal step each; ``moves`` and ``throttle`` as in
    :func:`exercise_controller`); stop after :data:`MAX_FAILED_CONTROLLERS` failures and say how many were left out."""
    rows: list[ControllerLatency] = []
    ctrls = describe_controllers(page)
    failed = 0
    for c in ctrls:
        if failed >= MAX_FAILED_CONTROLLERS:
            left = len(ctrls) - c["index"]
            with run.step(f"move sliders of the remaining {left} controllers", fatal=False):
                raise AssertionError(f"not tried: {failed} controllers already failed to respond")
            break
        before = len(run.failures)
        with run.step(f"move a slider of controller #{c['index']} and see its figure change", fatal=False):
            rows += exercise_controller(page, c["index"], run, kernel_idle=kernel_idle, moves=moves, throttle=throttle)
        failed += len(run.failures) > before
    return rows



@dataclass
class MoveResult:
    latency_ms: float | None
    changed: list[int]
    busy_seen: bool
    statuses: list[str]
    timeout: bool



@dataclass
class ControllerLatency:
    """Slider → figure latency of one controller in one notebook and mode."""

    mode: str
    notebook: str
    controller: int
    kind: str  # "analytic", "on release" (re-simulates when the slider is released) or "re-simulating"
    slider: str
    moves: int
    latencies_ms: list[float]
    median_ms: float | None
    p95_ms: float | None
    target_ms: float
    met: bool | None
    busy_indicator: bool | None
    reversible: bool | None
    note: str = ""
    throttle: float = 1.0  # the page's CPU slowdown (the slow-laptop mode runs at 6×)
    #: status texts the page showed while the controller worked (e.g. "Computing…", "First look (…)")
    statuses: list[str] = field(default_factory=list)



def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of ``values`` by linear interpolation (numpy's default)."""
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0]
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)



#: After the kernel has handled an input, a controller's figures and status must stay unchanged this long (ms,
#: at 1× CPU) before the next input: plotly draws asynchronously once the messages have arrived.
QUIET_MS = 200



def _handled(page, ci: int) -> int:
    n = page.evaluate("ci => window.__symsgd.handledOf(ci)", ci)
    if n is None:
        raise AssertionError(f"controller #{ci} has no symsgd-handled-<n> class (symsgd_jupyter/handled_inputs.py): "
                             "the page cannot tell when the kernel has handled an input")
    return n



def _wait_handled(page, ci: int, after: int, run: NotebookRun, timeout_s: float, what: str,
                  throttle: float = 1.0) -> None:
    """Wait until the kernel has handled the input (controller ``ci`` counts more than ``after`` handled
    inputs), then until the controller's figures and status are quiet (:data:`QUIET_MS`, scaled by ``throttle``)."""
    try:
        page.wait_for_function("([ci, n]) => (window.__symsgd.handledOf(ci) ?? -1) > n", arg=[ci, after],
                               timeout=run.ms(timeout_s), polling=50)
    except Exception as exc:  # noqa: BLE001 - re-raised with what was waited for
        raise AssertionError(f"controller #{ci}: the kernel did not finish handling {what} within {timeout_s:.0f} s "
                             f"(handled inputs still {page.evaluate('ci => window.__symsgd.handledOf(ci)', ci)})"
                             ) from exc
    quiet_ms = QUIET_MS * max(1.0, throttle)
    res = page.evaluate("([ci, q, m]) => window.__symsgd.quiet(ci, q, m)", [ci, quiet_ms, min(run.ms(30), 30000)])
    if not res["quiet"]:
        raise AssertionError(f"controller #{ci} kept changing for {res['waited']:.0f} ms after the kernel had "
                             f"handled {what}")



def _watch_and_act(page, ci: int, act, timeout_s: float, what: str, run: NotebookRun,
                   throttle: float = 1.0) -> MoveResult:
    """Watch controller ``ci``'s figures, perform ``act`` (a key press, a click), wait until the kernel has handled
    it and the figures are quiet, and report whether (and how soon after the input) a figure changed."""
    before = _handled(page, ci)
    page.evaluate("([ci, t]) => window.__symsgd.arm(ci, t)", [ci, timeout_s * 1000.0])
    act()
    try:
        _wait_handled(page, ci, before, run, timeout_s, what, throttle)
    finally:
        page.evaluate("() => window.__symsgd.stopWatch()")
    rec = page.evaluate("() => window.__symsgd.pending")
    if rec["early"]:
        raise AssertionError(f"controller #{ci}: a figure changed before the input event reached the page "
                             "(it was still updating from an earlier input)")
    latency = None if not rec["changed"] or rec["t0"] is None else rec["t1"] - rec["t0"]
    statuses = [s for _, s in rec["statuses"]]
    busy = any(re.search(r"comput|running|working|busy|…|\.\.\.", s, re.IGNORECASE) for s in statuses)
    return MoveResult(latency, rec["changed"], busy, statuses, bool(rec["timeout"]))



def _settle(page, ci: int, run: NotebookRun, kernel_idle=None) -> None:
    """Before the first input: wait until controller ``ci`` is done with the notebook's own run (figures and
    status unchanged for 300 ms, the kernel idle if ``kernel_idle`` is given, and quiet again)."""
    for i in range(2 if kernel_idle is not None else 1):
        res = page.evaluate("([ci, q, m]) => window.__symsgd.quiet(ci, q, m)", [ci, 300, min(run.ms(30), 30000)])
        if not res["quiet"]:
            raise AssertionError(f"controller #{ci} kept changing for {res['waited']:.0f} ms without input")
        if i == 0 and kernel_idle is not None:
            kernel_idle()



def _first_difference(before: list[str], after: list[str]) -> str:
    """Where two lists of figure-data JSON first differ (for a failure message)."""
    if len(before) != len(after):
        return f"{len(before)} figures before, {len(after)} after"
    for i, (a, b) in enumerate(zip(before, after)):
        if a != b:
            at = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            return f"figure {i} at character {at}: …{a[max(0, at - 80):at + 80]}… became …{b[max(0, at - 80):at + 80]}…"
    return "no difference"



def _slider_state(page, ci: int, si: int) -> dict:
    return page.evaluate("([ci, si]) => window.__symsgd.sliderOf(ci, si)", [ci, si])



#: Longest wait (s) for what the page does alone, without the kernel (a key press moving a slider, a click, a
#: scroll), at 1× CPU; a page slowed by ``throttle`` gets ``throttle`` times as long.
PAGE_ACTION_TIMEOUT_S = 10.0



def _wait_slider_moved(page, ci: int, si: int, before: dict, key: str, run: NotebookRun,
                       timeout_s: float = PAGE_ACTION_TIMEOUT_S) -> None:
    """Wait (at most ``timeout_s``) until the key press has moved slider ``si`` of controller ``ci`` in the page
    (its value or readout differs from ``before``)."""
    try:
        page.wait_for_function("([ci, si, b]) => { const s = window.__symsgd.sliderOf(ci, si);"
                               " return s.value !== b.value || s.readout !== b.readout; }",
                               arg=[ci, si, before], timeout=run.ms(timeout_s))
    except Exception as exc:  # noqa: BLE001 - re-raised with the slider's state
        raise AssertionError(f"controller #{ci}: {key} on slider '{before['label']}' did not move it "
                             f"(before {before}, after {_slider_state(page, ci, si)})") from exc



def _row(run: NotebookRun, ci: int, kind: str, slider: str, latencies: list[float], busy, reversible,
         note: str = "", throttle: float = 1.0) -> ControllerLatency:
    """One latency row; the targets apply at 1× CPU only (``met`` is None for a throttled page)."""
    med = statistics.median(latencies) if latencies else None
    return ControllerLatency(
        mode=run.mode, notebook=run.notebook, controller=ci, kind=kind, slider=slider, moves=len(latencies),
        latencies_ms=[round(x, 1) for x in latencies], median_ms=None if med is None else round(med, 1),
        p95_ms=round(percentile(latencies, 0.95), 1) if latencies else None, target_ms=TARGET_MS[kind],
        met=None if med is None or throttle > 1 else med <= TARGET_MS[kind], busy_indicator=busy,
        reversible=reversible, note=note, throttle=throttle)



#: Sliders tried per controller before concluding that none changes a figure.
MAX_SLIDERS_TRIED = 2



def exercise_controller(page, ci: int, run: NotebookRun, kernel_idle=None, moves: int | None = None,
                        throttle: float = 1.0) -> list[ControllerLatency]:
    """Move a slider of controller ``ci`` with the keyboard and time each figure update.

    * Analytic controllers (no Run button): the slider itself updates the figure; latency is
      from the key press to the change of a figure's data. A figure that re-simulates when a slider is
      released (``symsgd-auto-run``, kind "on release") is moved the same way; its latency includes the
      kernel's debounce and the Run.
    * Re-simulating controllers (Run button): the slider is moved (its value checked in the
      page), then Run is clicked; latency is from the click to the data change, and the status
      must show a busy message ("Computing…") meanwhile. If the slider also updates the figure
      live (analytic curves + simulated histograms), that latency is reported as well.

    Every wait is on a state: the slider's value in the page, the controller's count of inputs
    the kernel has handled (``symsgd-handled-<n>``, see ``symsgd_jupyter/handled_inputs.py``), then its
    figures quiet. Sliders are tried in order until one changes a figure; moves alternate
    direction so the controller ends where it started.

    Args:
        moves: moves per slider (default :data:`MOVES` of the controller's kind; the slow-laptop mode makes one).
        throttle: the page's CPU slowdown (scales the waits).

    Returns:
        One row per behaviour seen (analytic, re-simulating), for the latency report.

    Raises:
        AssertionError: no slider changes any figure, a move stopped changing the figure, a
            figure changed without input, or no busy indicator was seen while re-simulating.
    """
    info = describe_controllers(page)[ci]
    has_run = info["run_button"]
    kind = "re-simulating" if has_run else ("on release" if info.get("auto_run") else "analytic")
    if not info["sliders"]:
        return [_row(run, ci, kind, "-", [], None, None, note="no slider", throttle=throttle)]
    root = page.locator(".symsgd-controller").nth(ci)
    handles = root.locator(".widget-slider .noUi-handle, .widget-hslider .noUi-handle")
    run_button = root.locator("button").filter(has_text=re.compile(r"\brun\b", re.IGNORECASE)).first
    n_moves = MOVES[kind] if moves is None else moves
    timeout = {k: v * max(1.0, throttle) for k, v in MOVE_TIMEOUT_S.items()}
    page_action_s = PAGE_ACTION_TIMEOUT_S * max(1.0, throttle)
    tried = []
    for si, slider in enumerate(info["sliders"][:MAX_SLIDERS_TRIED]):
        label = slider["label"] or f"#{si}"
        handle = handles.nth(si)
        handle.scroll_into_view_if_needed(timeout=run.ms(page_action_s))
        at_max = slider["value"] is not None and slider["max"] is not None and slider["value"] >= slider["max"]
        first, second = ("ArrowLeft", "ArrowRight") if at_max else ("ArrowRight", "ArrowLeft")
        _settle(page, ci, run, kernel_idle)  # nothing still drawing from the notebook's own run
        back = None  # the figures after the first there-and-back: later returns to that value must match them
        live: bool | None = None if has_run else True  # does the slider itself change a figure?
        live_ms, run_ms, busy_flags, reversible, run_statuses = [], [], [], None, []
        for k in range(n_moves):
            key = first if k % 2 == 0 else second
            before = _slider_state(page, ci, si)

            def press(key=key, handle=handle, before=before, si=si):
                handle.press(key)
                _wait_slider_moved(page, ci, si, before, key, run, page_action_s)

            res = _watch_and_act(page, ci, press, timeout["re-simulating" if has_run else kind],
                                 f"the {key} press on slider '{label}'", run, throttle)
            if res.latency_ms is not None:
                if live is False:
                    raise AssertionError(f"controller #{ci}, slider '{label}': move {k + 1} ({key}) changed a figure "
                                         "although earlier moves of this slider did not (only Run did)")
                live = True
                live_ms.append(res.latency_ms)
            elif live is None:
                live = False  # the slider waits for Run
            elif k == 0 and not has_run:
                break  # this slider does not drive a figure: try the next one
            elif live:
                raise AssertionError(
                    f"controller #{ci}, slider '{label}': move {k + 1} ({key}) did not change any figure "
                    f"(earlier moves did); status texts seen: {res.statuses}")
            if has_run:
                res = _watch_and_act(page, ci, lambda: run_button.click(timeout=run.ms(page_action_s)),
                                     timeout["re-simulating"], f"Run after move {k + 1} of slider '{label}'", run,
                                     throttle)
                if res.latency_ms is None:
                    if k == 0 and not live_ms:
                        break  # neither the slider nor Run changed a figure: try the next slider
                    raise AssertionError(
                        f"controller #{ci}, slider '{label}': Run after move {k + 1} ({key}) did not change any "
                        f"figure; status texts seen: {res.statuses}")
                run_ms.append(res.latency_ms)
                busy_flags.append(res.busy_seen)
                run_statuses += [t for t in res.statuses if t not in run_statuses]
            if k % 2 == 1:  # back at the starting value: same seed, same settings, so the same figure
                now = page.evaluate("ci => window.__symsgd.dataJsonOf(ci)", ci)
                if back is None:
                    back = now
                    continue
                reversible = (reversible is not False) and now == back
                if not reversible:
                    raise AssertionError(f"controller #{ci}, slider '{label}': back at the same value after move "
                                         f"{k + 1}, the figure's data differs from the last time there: "
                                         + _first_difference(back, now))
        if not live_ms and not run_ms:
            tried.append(label)
            continue
        rows = []
        if live_ms:
            rows.append(_row(run, ci, "analytic" if has_run else kind, label, live_ms, None, reversible,
                             note="slider updates live; Run re-simulates" if has_run else "", throttle=throttle))
        if run_ms:
            busy = all(busy_flags)
            if not busy:
                raise AssertionError(
                    f"controller #{ci}, slider '{label}': no busy indicator (status saying Computing…) seen while "
                    f"it re-simulated; per run: {busy_flags}")
            row = _row(run, ci, "re-simulating", label, run_ms, busy, reversible, throttle=throttle)
            row.statuses = run_statuses
            rows.append(row)
        return rows
    raise AssertionError(f"controller #{ci} ({kind}): no slider changed any figure (tried {tried}"
                         f"{', then Run' if has_run else ''}); a reader moving them sees nothing happen")

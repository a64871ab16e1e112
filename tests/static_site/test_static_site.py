"""The static edition (``make site``) in a real browser, served by a plain static file server, offline.

For every page: every outside request is blocked and recorded (a page of the edition may ask only its own
server); every figure draws and holds data; no raw ``$…$`` is left (MathJax from the site's own assets typeset
it); each precomputed slider is dragged **with the mouse** to another value (the one step that tells a wired-up
slider from a mis-wired one: tests/static_site/slider_steps.py), the figure's data must change, and the figure must
equal — numerically, trace by trace — what the live controller draws at that value in a kernel that ran the
notebook (tests/static_site/live_kernel.py; not the builder's capture, so a wrong frame fails).
The page weights (bytes per page and in all, frames per slider) go to
``test-artifacts/static-site/report.txt``. One more test opens pages from ``file://``.
"""

from __future__ import annotations

import base64
import html
import json
import re
import time
from pathlib import Path

import lesson_kernels
import numpy as np
import pytest
from browser_setup import VIEWPORT, discover_notebooks, notebook_has_math, notebook_params
from figure_inspection import OFF_MACHINE_CONTROLS_JS, PROBE_JS
from js_files import script as _script
from site_support import ARTIFACTS, PAGE_RECORDS, SITE_DIR
from slider_steps import telling_step

pytestmark = pytest.mark.browser

NOTEBOOKS = discover_notebooks()
#: Longest wait for a page's figures and formulas, and for one slider move, seconds.
PAGE_TIMEOUT_S, MOVE_TIMEOUT_S = 90.0, 20.0
#: Relative tolerance of the page-vs-kernel comparison: the page ships the kernel's float64 arrays bit for bit
#: (plotly's base64 arrays), so only the JSON round trip of plain lists (17 significant digits) separates them.
RTOL = 1e-12

_READY_JS = """() => window.symsgdEdition && document.body.dataset.editionStarted === 'yes'
  && symsgdEdition.drawn + symsgdEdition.failed >= document.querySelectorAll('.edition-plot').length
  && document.body.dataset.mathTypeset === 'done'"""

def _js(name: str) -> str:
    """This suite's ``js/<name>.js`` (see tests/browser/js_files.py)."""
    return _script(name, Path(__file__).resolve().with_name("js"))


#: A plot's state as JSON (typed arrays as lists): its data, title and annotation texts, the active slider step.
_STATE_JS = _js("plot_state")

#: Points of the plot's line, marker and bar traces that lie outside the range of an axis plotly autoranges: after a
#: slider move every curve stays in view (a frame that kept the first frame's range left them outside).
_OUT_OF_VIEW_JS = _js("out_of_view")


# ---------------------------------------------------------------------------------------------- comparing figures
def decode(value):
    """A plotly value with base64 arrays (``{"dtype", "bdata", "shape"}``) decoded to numpy arrays, recursively."""
    if isinstance(value, dict):
        if "bdata" in value and "dtype" in value:
            arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
            shape = value.get("shape")
            if shape:
                dims = [int(s) for s in (shape.split(",") if isinstance(shape, str) else shape)]
                arr = arr.reshape(dims)
            return arr
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def _numeric(value):
    """``value`` as a float array when it is numeric data (None → NaN), else None."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiub":
        return value.astype(float)
    if isinstance(value, list) and value and all(isinstance(v, (int, float, type(None), list, np.ndarray))
                                                 and not isinstance(v, bool) for v in value):
        try:
            return np.array([np.nan if v is None else v for v in value], dtype=float)
        except (TypeError, ValueError):
            return None
    return None


def differences(expected, shown, path: str = "", strict: bool = False) -> list[str]:
    """Where ``shown`` (the page) differs from ``expected`` (the kernel): every key of ``expected`` is compared;
    with ``strict`` (a trace's own keys) a key set in the page but not in the kernel is a difference too (a value
    left over from another frame). Deeper down plotly.js writes some defaults back (e.g. a colorbar's ``y``)."""
    num_e, num_s = _numeric(expected), _numeric(shown)
    if num_e is not None:
        if num_s is None or num_s.shape != num_e.shape:
            return [f"{path}: kernel has {num_e.shape} numbers, page {None if num_s is None else num_s.shape}"]
        if not np.allclose(num_s, num_e, rtol=RTOL, atol=0.0, equal_nan=True):
            bad = int(np.sum(~np.isclose(num_s, num_e, rtol=RTOL, atol=0.0, equal_nan=True)))
            return [f"{path}: {bad} of {num_e.size} numbers differ (e.g. kernel {num_e.ravel()[:3]}, "
                    f"page {num_s.ravel()[:3]})"]
        return []
    if isinstance(expected, dict):
        if not isinstance(shown, dict):
            return [f"{path}: kernel has an object, page {type(shown).__name__}"]
        out = [d for k, v in expected.items() if k != "uid" for d in differences(v, shown.get(k), f"{path}.{k}")]
        if strict:
            out += [f"{path}.{k}: the page has {str(v)[:60]!r}, the live figure has nothing"
                    for k, v in shown.items() if k not in expected and k != "uid" and v is not None]
        return out
    if isinstance(expected, list):
        if not isinstance(shown, list) or len(shown) != len(expected):
            got = len(shown) if isinstance(shown, list) else shown
            return [f"{path}: kernel has {len(expected)} items, page {got}"]
        return [d for i, (e, s) in enumerate(zip(expected, shown)) for d in differences(e, s, f"{path}[{i}]")]
    if isinstance(expected, float) and isinstance(shown, (int, float)):
        return [] if np.isclose(shown, expected, rtol=RTOL, atol=0.0, equal_nan=True) else [
            f"{path}: kernel {expected!r}, page {shown!r}"]
    return [] if expected == shown else [f"{path}: kernel {expected!r}, page {shown!r}"]


def figure_differences(kernel_fig: dict, page_state: dict) -> list[str]:
    """Trace-by-trace differences, then the title and annotation texts."""
    kernel = decode(kernel_fig)
    page = decode(page_state)
    traces, shown = kernel.get("data", []), page["data"]
    if len(traces) != len(shown):
        return [f"data: kernel has {len(traces)} traces, page {len(shown)}"]
    out = [d for i, (t, p) in enumerate(zip(traces, shown)) for d in differences(t, p, f"data[{i}]", strict=True)]
    layout = kernel.get("layout", {})
    title = (layout.get("title") or {}).get("text")
    if title is not None and title != page["title"]:
        out.append(f"title: kernel {title!r}, page {page['title']!r}")
    anchored = {v.get("scaleanchor") for v in layout.values() if isinstance(v, dict)} - {None}
    for axis, spec in layout.items():  # an axis range the live figure fixes must be the page's range too
        if (re.match(r"^[xy]axis\d*$", axis) and isinstance(spec, dict) and spec.get("range") is not None
                and not spec.get("scaleanchor") and not spec.get("matches")
                and axis.replace("axis", "") not in anchored):  # plotly.js adjusts ranges tied by an aspect
            shown = page["ranges"].get(axis)
            if shown is None or not np.allclose(np.asarray(shown, float), np.asarray(spec["range"], float),
                                                rtol=1e-9, atol=1e-12):
                out.append(f"{axis}.range: kernel {spec['range']}, page {shown}")
    texts = [a.get("text") for a in layout.get("annotations", []) if a.get("visible", True) is not False]
    if texts and texts != page["annotations"]:
        out.append(f"annotations: kernel {texts}, page {page['annotations']}")
    return out


# ---------------------------------------------------------------------------------------------- the page
class Offline:
    """Every request of a page: those to anything but ``allowed`` are aborted and recorded."""

    def __init__(self, page, allowed):
        self.outside: list[str] = []
        self.failed: list[str] = []
        self.fetched: dict[str, int] = {}

        def route(r):
            if allowed(r.request.url):
                r.continue_()
            else:
                self.outside.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.on("requestfailed", lambda r: allowed(r.url) and self.failed.append(f"{r.url}: {r.failure}"))
        page.on("response", lambda resp: self._record(resp) if allowed(resp.url) else None)

    def _record(self, resp):
        if resp.status >= 400:
            self.failed.append(f"{resp.status} {resp.url}")
        self.fetched[resp.url.split("?", 1)[0]] = resp.status


def open_page(browser, url: str, allowed):
    page = browser.new_page(viewport=VIEWPORT)
    page.add_init_script(PROBE_JS)
    offline = Offline(page, allowed)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url, timeout=PAGE_TIMEOUT_S * 1000)
    page.wait_for_function(_READY_JS, timeout=PAGE_TIMEOUT_S * 1000, polling=200)
    return page, offline, errors


def check_drawn_and_typeset(page, has_math: bool = False) -> dict:
    """Every figure drew and holds data; no raw TeX is left (and, for a page with formulas, MathJax typeset some).
    Returns counts."""
    state = page.evaluate("""() => ({failed: symsgdEdition.failed,
      plots: Array.from(document.querySelectorAll('.edition-plot')).map((p, i) => ({
        i, drawn: p.dataset.edition, data: window.__symsgd.hasData(p)})),
      math: window.__symsgd.mathCount(), raw: window.__symsgd.rawMath(),
      markup: window.__symsgd.rawMarkup(document.body)})""")
    assert state["failed"] == 0, f"{state['failed']} figures failed to draw: {state['plots']}"
    empty = [p for p in state["plots"] if p["drawn"] != "drawn" or not p["data"]]
    assert not empty, f"figures without data: {empty}"
    assert not state["raw"], f"raw TeX left in the page: {state['raw'][:5]}"
    assert not state["markup"], f"raw markup shown as text: {state['markup'][:5]}"
    assert state["math"] > 0 or not has_math, "the notebook has formulas but the page shows no typeset math"
    missing = page.evaluate(_js("figures_without_alt"))
    assert not missing, f"figures without a text alternative: {missing[:5]}"
    shown_live = page.evaluate("""() => Array.from(document.querySelectorAll('.symsgd-live'))
      .filter((s) => s.getClientRects().length).map((s) => s.textContent.trim().slice(0, 80))""")
    assert not shown_live, f"instructions for the live notebook shown (no Run button or answer box here): {shown_live}"
    return state


def drag_slider(page, plot, target: int) -> None:
    """Drag the plotly slider of ``plot`` with the mouse from its grip to step ``target``."""
    plot.scroll_into_view_if_needed()
    grip = plot.locator("rect.slider-grip-rect").bounding_box()
    tick = plot.locator("rect.slider-tick-rect").nth(target).bounding_box()
    assert grip and tick, "the figure has no plotly slider grip or ticks"
    y = grip["y"] + grip["height"] / 2
    page.mouse.move(grip["x"] + grip["width"] / 2, y)
    page.mouse.down()
    page.mouse.move(tick["x"] + tick["width"] / 2, y, steps=12)
    page.mouse.up()


def frame_keys(plot) -> list[str]:
    """What each slider step of ``plot`` shows (its frame's data, as shipped in the page), to tell steps apart."""
    spec = json.loads(plot.evaluate("p => p.parentElement.querySelector('script.edition-figure-data').textContent"))
    return [json.dumps(f["data"], sort_keys=True) for f in spec["frames"]]


def plot_state(plot) -> dict:
    return json.loads(plot.evaluate(_STATE_JS))


def wait_moved(plot, target: int) -> None:
    """Wait until the plot's slider is on step ``target``, every figure of its controller shows that step, and the
    plot's data have not changed for a quarter second (the animation is over)."""
    plot.evaluate(_js("wait_moved"), {"target": target, "ms": MOVE_TIMEOUT_S * 1000})


def _target(active: int, n: int) -> int:
    """The step to drag to: the farthest from the active one (an end of the slider)."""
    return 0 if active >= n / 2 else n - 1


def move_and_compare(page, plot, block, meta, target, n_frames, live, page_name, i, expect_change: bool = True) -> dict:
    """Drag the slider of ``plot`` to step ``target`` with the mouse; the data must change (``expect_change``; else stay
    as they were), and this figure and the controller's other animated figures must equal what the live controller
    draws at that step's value."""
    figure_index = int(plot.evaluate("p => p.parentElement.dataset.figure"))
    before = plot_state(plot)
    t0 = time.perf_counter()
    drag_slider(page, plot, target)
    wait_moved(plot, target)
    ms = (time.perf_counter() - t0) * 1000
    after = plot_state(plot)
    k = after["active"]
    assert k == target, f"figure {i}: dragged to step {target}, the slider is on step {k}"
    out_of_view = plot.evaluate(_OUT_OF_VIEW_JS)
    assert not out_of_view, f"figure {i}, step {target}: curves left the plot: {out_of_view[:5]}"
    alt = plot.evaluate("p => (document.getElementById(p.getAttribute('aria-describedby')) || {}).textContent")
    assert alt == meta["descriptions"][figure_index][k], (
        f"figure {i}, step {k}: its text alternative is not the one of that slider value: {alt!r:.120}")
    if expect_change:
        assert after["data"] != before["data"], f"figure {i}: moving the slider did not change the data"
    else:
        assert after["data"] == before["data"], f"figure {i}: step {target} ships the start's frame, the page differs"
    value = meta["values"][k]
    drawn = live.draw_at(meta["cell"], meta["output"], meta["slider"], value, meta["class"])
    assert drawn["class"] == meta["class"], f"figure {i}: the kernel's controller is {drawn['class']}"
    where = f"{page_name} figure {i} ({meta['class']}, {meta['slider']} = {value})"
    diffs = figure_differences(drawn["figures"][figure_index], after)
    assert not diffs, f"{where}: the page differs from the live controller:\n  " + "\n  ".join(diffs[:12])
    siblings = block.locator(".edition-plot")
    for j in range(siblings.count()):  # the controller's other animated figures followed the slider
        sib = siblings.nth(j)
        fj = int(sib.evaluate("p => p.parentElement.dataset.figure"))
        if fj != figure_index and int(sib.evaluate("p => p.parentElement.dataset.frames")):
            d = figure_differences(drawn["figures"][fj], plot_state(sib))
            assert not d, f"{where}: its figure {fj} did not follow the slider:\n  " + "\n  ".join(d[:8])
    status = block.locator(".edition-status").inner_text().strip()
    if "$" not in drawn["status"]:  # plain status lines compare as text (TeX ones are typeset)
        expected = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", drawn["status"])).strip()
        assert re.sub(r"\s+", " ", status) == html.unescape(expected), f"{where}: status line differs"
    settings = block.locator(".edition-settings")
    if meta.get("settings") and settings.count():  # "Computed at …" names the value the figure now shows
        shown = re.sub(r"\s+", " ", settings.inner_text()).strip()
        assert shown == html.unescape(meta["settings"][k]), f"{where}: the settings line did not follow: {shown!r}"
    return {"figure": i, "controller": meta["class"], "slider": meta["slider"], "frames": n_frames, "value": value,
            "ms": round(ms), "max_rel": _max_rel(drawn["figures"][figure_index], after)}


# ---------------------------------------------------------------------------------------------- the tests
@pytest.fixture
def weights_report():
    """Where a page test leaves its page's weights: one JSON file per page under test-artifacts/static-site/pages/
    (the test runs in two pytest-xdist workers), gathered into report.{txt,json} at the end (conftest.py)."""
    PAGE_RECORDS.mkdir(parents=True, exist_ok=True)

    def record(row: dict) -> None:
        (PAGE_RECORDS / f"{Path(row['page']).stem}.json").write_text(json.dumps(row), encoding="utf-8")

    return record


def _max_rel(kernel_fig: dict, page_state: dict) -> float:
    worst = 0.0
    for kt, pt in zip(decode(kernel_fig).get("data", []), decode(page_state)["data"]):
        for key in ("x", "y", "z"):
            a, b = _numeric(kt.get(key)), _numeric(pt.get(key))
            if a is not None and b is not None and a.shape == b.shape and a.size:
                ok = np.isfinite(a) & np.isfinite(b)
                if ok.any():
                    worst = max(worst, float(np.max(np.abs(a[ok] - b[ok]) / np.maximum(np.abs(a[ok]), 1e-300))))
    return worst


@pytest.mark.parametrize("notebook", notebook_params(NOTEBOOKS, marks=lambda nb: lesson_kernels.group(nb.stem)))
def test_page_matches_the_live_notebook(notebook, site_dir, edition_report, static_server, chromium, weights_report):
    """(The oracle: the kernel the notebook's JupyterLab pass left running, when this session ran it; else a
    kernel of this test's own: tests/static_site/live_kernel.py.)"""
    from live_kernel import LessonKernel, LiveNotebook

    row = next((r for r in edition_report["pages"] if r["page"] == f"{notebook.stem}.html"), None)
    kept = lesson_kernels.take(notebook.stem)
    if row is None or row["bytes"] > edition_report["budget_bytes_per_page"]:
        if kept is not None:
            kept.shutdown()
        assert row is not None, f"the edition has no page for {notebook.name} (rebuild it: make site)"
        raise AssertionError(f"{row['page']} is over the page budget")
    live = (LessonKernel(kept, notebook) if kept is not None else LiveNotebook(notebook)).start()
    page = None
    try:
        t_open = time.perf_counter()
        page, offline, errors = open_page(chromium, f"{static_server}/{row['page']}",
                                          lambda url: url.startswith(static_server) or url.startswith("data:"))
        t_ready = time.perf_counter() - t_open
        state = check_drawn_and_typeset(page, notebook_has_math(notebook))
        plots = page.locator(".edition-plot")
        assert plots.count() == len(row["figures"]), (f"{plots.count()} figures in the page, "
                                                      f"{len(row['figures'])} in the edition's report")
        moved = []
        for i in range(plots.count()):
            plot = plots.nth(i)
            n_frames = int(plot.evaluate("p => p.parentElement.dataset.frames"))
            if not n_frames:
                continue
            block = plot.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '), ' edition-controller ')][1]")
            meta = json.loads(block.locator("script.edition-controller-data").text_content())
            start = plot_state(plot)["active"]
            shows = frame_keys(plot)  # what each step shows: the one drag goes where a mis-wired page would show
            target = telling_step(start, shows)  # another frame (slider_steps.py)
            # a step whose shipped frame is the start's own (a figure the slider leaves as it is, e.g. the maps of
            # M = u wᵀ along the λ orbit) must stay put; any other must change
            moved.append(move_and_compare(page, plot, block, meta, target, n_frames, live, row["page"], i,
                                          expect_change=shows[target] != shows[start]))
        state_after = check_drawn_and_typeset(page, notebook_has_math(notebook))  # status lines typeset too
        assert state_after["plots"] == state["plots"]
        assert page.evaluate("() => document.querySelectorAll('.modebar').length") > 0, "no mode bar: nothing checked"
        offers = page.evaluate(OFF_MACHINE_CONTROLS_JS)
        assert not offers, f"controls that would reach the internet: {offers[:10]}"
        assert not offline.outside, f"requests that left the page's origin: {sorted(set(offline.outside))}"
        assert not offline.failed, f"failed requests: {offline.failed}"
        assert not errors, f"errors in the page: {errors[:5]}"
        sliders = sum(1 for f in row["figures"] if f["frames"])
        assert len({(m["figure"]) for m in moved}) == sliders, f"moved {len(moved)} sliders, the edition has {sliders}"
        fetched = sum((site_dir / u[len(static_server) + 1:]).stat().st_size for u in offline.fetched
                      if u.startswith(static_server + "/") and (site_dir / u[len(static_server) + 1:]).is_file())
        weights_report({"page": row["page"], "oracle": type(live).__name__, "bytes": row["bytes"],
                        "fetched_bytes": fetched, "figures": len(state["plots"]), "ready_s": round(t_ready, 1),
                        "moved": moved})
        page.screenshot(path=str(ARTIFACTS / f"{notebook.stem}.png"), full_page=False)
    finally:
        if page is not None:
            page.close()
        live.stop()


def test_pages_work_from_file_urls(site_dir, chromium):
    """Opened from the file system (a downloaded copy of site/): index and a page with 3-D and heatmap figures draw,
    formulas typeset, a slider moves with the mouse, its address reopens the same view (a link with state), and
    nothing outside the folder is requested."""
    from test_links_with_state import check_a_link_reopens_the_view

    root = site_dir.resolve().as_uri()

    def allowed(url: str) -> bool:
        return url.startswith(root + "/") or url.startswith("data:")

    for name in ("index.html", "02_rank1_lifting.html"):
        if not (site_dir / name).is_file():
            pytest.fail(f"{name} is missing from the edition at {site_dir}")
        page, offline, errors = open_page(chromium, f"{root}/{name}", allowed)
        try:
            check_drawn_and_typeset(page)
            plots = page.locator(".edition-plot")
            for i in range(plots.count()):
                plot = plots.nth(i)
                n = int(plot.evaluate("p => p.parentElement.dataset.frames"))
                if n:
                    before = plot_state(plot)
                    target = _target(before["active"], n)
                    drag_slider(page, plot, target)
                    wait_moved(plot, target)
                    assert plot_state(plot)["data"] != before["data"], "moving the slider did not change the data"
                    check_a_link_reopens_the_view(chromium, page, allowed)
                    break
            assert not offline.outside, f"requests outside the edition's folder: {sorted(set(offline.outside))}"
            assert not offline.failed, f"failed requests: {offline.failed}"
            assert not errors, f"errors in the page: {errors[:5]}"
        finally:
            page.close()


def test_site_dir_is_the_one_built(site_dir):
    """The test runs on the edition ``make site`` wrote (or SYMSGD_SITE_DIR)."""
    assert Path(site_dir) == SITE_DIR and (site_dir / "index.html").is_file()

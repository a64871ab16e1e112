"""How a page draws its figures: how many the notebook's kernel made, how many the page drew, how soon, and the JS heap.

Used by every browser test (1×) and by the slow-laptop tests, which slow Chromium's page processes (slow_cpu.py:
they run a sixth of the time; the kernel, a separate process, is not slowed), to check that plotly's widget code
loads once per page (``symsgd_jupyter/plotly_loading.py``) and every figure draws on an old laptop too.

* The number of figures **expected** is asked of the notebook's kernel itself (every plotly ``FigureWidget`` it
  holds), through a silent request on its own connection file: nothing is shown in the notebook, and the count does
  not depend on the page, which is what is under test.
* **Drawn** counts the page's plotly figures that hold data; the probe (``PROBE_JS``) logs every change of that
  count, so the time of the last one is known without polling from here.
"""

from __future__ import annotations

import contextlib
import glob
import os
import time
from dataclasses import dataclass
from pathlib import Path

from slow_cpu import SlowRenderers

#: CPU slowdown of the slow-laptop mode (6× ≈ an older student laptop, as measured on one).
SLOW_CPU_RATE = 6.0
#: Notebooks the slow-laptop mode runs by default: the two with the most figures (03: 11, 04: 8 FigureWidgets).
#: ``SYMSGD_SLOW_NOTEBOOKS=all`` runs it for every notebook, ``=01,02`` for the notebooks whose names start so.
DEFAULT_SLOW_NOTEBOOKS = ("03_", "04_")
#: Longest wait for every figure to draw, seconds (1× takes 5–15 s; 6× up to ~60 s).
DRAW_TIMEOUT_S = {1.0: 90.0, SLOW_CPU_RATE: 240.0}

#: Python expression evaluated in the notebook's kernel: how many plotly FigureWidgets it holds.
#: Python expression evaluated in the notebook's kernel: how many plotly FigureWidgets the page shows, i.e. inside
#: the displayed controllers (the roots ``Controller.view()`` builds carry the class ``symsgd-controller``; a
#: controller a cell builds only to check a claim is never shown). Exactly this many figures must draw: a figure
#: shown outside a controller would make the page draw more, and the check says so.
_FIGURE_COUNT_EXPR = """(lambda widgets, figure: (lambda roots: sum(
    1 for root in roots for w in (lambda walk: walk(walk, root))(
        lambda walk, node: [node] + [x for child in getattr(node, 'children', ()) for x in walk(walk, child)])
    if isinstance(w, figure)))(
    [w for w in list(widgets._instances.values()) if 'symsgd-controller' in getattr(w, '_dom_classes', ())]))(
    __import__('ipywidgets.widgets.widget', fromlist=['_instances']),
    __import__('plotly.basewidget', fromlist=['BaseFigureWidget']).BaseFigureWidget)"""


def slow_notebooks(notebooks: list[Path]) -> list[Path]:
    """The notebooks the slow-laptop mode runs (see :data:`DEFAULT_SLOW_NOTEBOOKS`)."""
    wanted = os.environ.get("SYMSGD_SLOW_NOTEBOOKS", "").strip()
    if wanted.lower() == "all":
        return list(notebooks)
    prefixes = tuple(p.strip() for p in wanted.split(",") if p.strip()) or DEFAULT_SLOW_NOTEBOOKS
    return [nb for nb in notebooks if nb.name.startswith(prefixes)]


@dataclass
class FigureLoad:
    """How one page drew its figures."""

    throttle: float
    expected: int  # FigureWidgets of the displayed controllers, counted in the kernel
    drawn: int  # plotly figures with data in the page
    seconds: float | None  # from Run All (JupyterLab) / page open (Voilà) until the last one was drawn
    heap_mb: float | None  # JS heap used once they were drawn (CDP Performance.getMetrics)
    bundle_requests: int  # requests for plotly's widget bundle (1: loaded once per page)
    states: dict | None = None  # the loader's figure states in the page (loading / drawn / failed), by count
    without_data: list | None = None  # figures (page index, traces) that hold no data

    def summary(self) -> str:
        t = "–" if self.seconds is None else f"{self.seconds:.1f} s"
        heap = "–" if self.heap_mb is None else f"{self.heap_mb:.0f} MB"
        text = (f"{self.drawn}/{self.expected} figures drawn in {t} at {self.throttle:g}× CPU, JS heap {heap}, "
                f"plotly bundle requested {self.bundle_requests}×")
        if self.drawn != self.expected:
            text += f"; figure states in the page: {self.states}; without data (index, traces): {self.without_data}"
        return text


class PageMetrics:
    """A page's CPU slowdown (:class:`slow_cpu.SlowRenderers`, until :meth:`unthrottle` or the page closes), its JS
    heap (a CDP session), and the requests for plotly's bundle."""

    def __init__(self, page, throttle: float = 1.0):
        self.page, self.throttle = page, float(throttle)
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Performance.enable")
        self.slowed = SlowRenderers(self.throttle).start()
        page.on("close", lambda _page: self.slowed.stop())
        self.bundle_urls: list[str] = []
        page.on("request", lambda r: self.bundle_urls.append(r.url) if _is_plotly_bundle(r.url) else None)

    def heap_mb(self) -> float | None:
        metrics = {m["name"]: m["value"] for m in self.cdp.send("Performance.getMetrics")["metrics"]}
        used = metrics.get("JSHeapUsedSize")
        return None if used is None else used / 1e6

    def unthrottle(self) -> None:
        self.slowed.stop()


def _is_plotly_bundle(url: str) -> bool:
    name = url.split("?", 1)[0].rsplit("/", 1)[-1]
    return name.startswith("plotly-widget-") and name.endswith(".js")


def start_figure_clock(page) -> float:
    """Page time (ms since the page opened) from which :func:`wait_every_figure_drawn` counts (now)."""
    return page.evaluate("() => performance.now()")


def wait_every_figure_drawn(page, metrics: PageMetrics, expected: int, t0_ms: float, run) -> FigureLoad:
    """Wait (on the page's state) until ``expected`` figures hold data, then measure; never raises on a shortfall.

    Args:
        page: the Playwright page.
        metrics: its :class:`PageMetrics`.
        expected: FigureWidgets in the kernel (:func:`kernel_figure_count`).
        t0_ms: page time of Run All / page open (:func:`start_figure_clock`, or 0 for the page's own start).
        run: the test's ``NotebookRun`` (its deadline bounds the wait).
    """
    cap = DRAW_TIMEOUT_S.get(metrics.throttle, DRAW_TIMEOUT_S[SLOW_CPU_RATE])
    try:
        page.wait_for_function("(n) => window.__symsgd.drawnCount() >= n", arg=expected, timeout=run.ms(cap),
                               polling=250)
    except Exception:  # noqa: BLE001 - the shortfall is in the result; the caller's check names it
        pass
    drawn = page.evaluate("() => window.__symsgd.drawnCount()")
    at = page.evaluate("(n) => window.__symsgd.drawnAt(n)", min(drawn, expected)) if drawn else None
    seconds = None if at is None or drawn < expected else max(0.0, (at - t0_ms) / 1000.0)
    states = page.evaluate("() => { const n = {}; for (const e of document.querySelectorAll('.symsgd-figure-slot')) {"
                           " const s = e.dataset.symsgdFigure || '?'; n[s] = (n[s] || 0) + 1; } return n; }")
    without = [(f["index"], f["traces"]) for f in page.evaluate("() => window.__symsgd.figureReport()")
               if not f["has_data"]]
    return FigureLoad(metrics.throttle, expected, drawn, None if seconds is None else round(seconds, 1),
                      _round(metrics.heap_mb()), len(metrics.bundle_urls), states, without)


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def kernel_connection_file(server, kernel_id: str, timeout_s: float = 30.0) -> Path:
    """The connection file of ``kernel_id`` among the files the test server writes (its runtime and temp dirs)."""
    roots = [server.env.get(v) for v in ("JUPYTER_RUNTIME_DIR", "TMPDIR") if server.env.get(v)]
    deadline = time.monotonic() + timeout_s
    while True:
        for root in roots:
            hits = glob.glob(os.path.join(root, "**", f"kernel-{kernel_id}.json"), recursive=True)
            if hits:
                return Path(hits[0])
        if time.monotonic() > deadline:
            raise FileNotFoundError(f"no connection file kernel-{kernel_id}.json under {roots}")
        time.sleep(0.2)  # polling interval while the server writes the file


@contextlib.contextmanager
def _kernel_client(connection_file: Path):
    """A started ``BlockingKernelClient`` on the kernel of ``connection_file`` (channels stopped on exit)."""
    from jupyter_client import BlockingKernelClient

    client = BlockingKernelClient(connection_file=str(connection_file))
    client.load_connection_file()
    client.start_channels()
    try:
        yield client
    finally:
        client.stop_channels()


def _reply_to(msg_id: str, get, timeout_s: float) -> dict:
    """The reply to request ``msg_id`` read with ``get`` (``client.get_shell_msg`` / ``get_control_msg``), other
    replies skipped; TimeoutError after ``timeout_s``."""
    from queue import Empty

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            reply = get(timeout=max(0.1, deadline - time.monotonic()))
        except Empty:
            raise TimeoutError(f"the kernel did not answer within {timeout_s} s") from None
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply


def kernel_subshells(connection_file: Path, timeout_s: float = 30.0) -> list[str] | None:
    """The kernel's subshells (ids), from a ``list_subshell_request`` on its control channel; ``None`` if the kernel
    has no subshells at all (ipykernel < 7 replies with an error or not at all)."""
    with _kernel_client(connection_file) as client:
        info = _reply_to(client.kernel_info(), client.get_shell_msg, timeout_s)["content"]
        if "kernel subshells" not in info.get("supported_features", []):
            return None
        request = client.session.msg("list_subshell_request", {})
        client.control_channel.send(request)
        content = _reply_to(request["header"]["msg_id"], client.get_control_msg, timeout_s)["content"]
        if "subshell_id" not in content:
            raise RuntimeError(f"list_subshell_request failed: {content}")
        return list(content["subshell_id"])


def kernel_figure_count(connection_file: Path, timeout_s: float = 60.0) -> int:
    """How many plotly FigureWidgets the kernel holds (a silent request: no output, no execution count)."""
    with _kernel_client(connection_file) as client:
        msg_id = client.execute("", silent=True, store_history=False, user_expressions={"n": _FIGURE_COUNT_EXPR})
        result = _reply_to(msg_id, client.get_shell_msg, timeout_s)["content"]["user_expressions"]["n"]
        if result.get("status") != "ok":
            raise RuntimeError(f"the kernel could not count its figures: {result}")
        return int(result["data"]["text/plain"])

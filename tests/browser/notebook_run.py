"""A notebook's pass through the browser, as a record: :class:`NotebookRun` (named steps with a per-notebook deadline,
so a failure names the notebook, the step and the reason; a watchdog past the deadline), what the page said
(:class:`ConsoleLog`, :class:`RequestLog`) and the full-page screenshot."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from browser_report import ARTIFACTS
from browser_setup import NOTEBOOK_TIMEOUT_S, VIEWPORT, is_local_url
from servers import Server, kill_page_renderers

#: Seconds past a run's budget after which its watchdog kills the page (see :func:`kill_page_renderers`).
WATCHDOG_GRACE_S = 300.0



#: Watchdogs of the runs of the current test; the suite's autouse fixture cancels them when the test ends.
WATCHDOGS: list[threading.Timer] = []



class NotebookRun:
    """Named steps of one notebook in one mode, under one deadline.

    ``with run.step("run all cells"): ...`` turns any exception (a Playwright timeout, a
    failed assertion) into a test failure that names the mode, the notebook, the step and
    the time spent, and saves a screenshot of the page as it was.
    """

    def __init__(self, mode: str, notebook: str, page=None, timeout_s: float = NOTEBOOK_TIMEOUT_S,
                 server: Server | None = None):
        self.mode, self.notebook, self.page = mode, notebook, page
        self.t0 = time.monotonic()
        self.timeout_s = timeout_s
        self.current = "start"
        #: extra state shown with a failure of the current step (set by the test)
        self.detail = ""
        self.failures: list[str] = []
        #: (step name, seconds) of every step run, in order (for the report)
        self.step_seconds: list[tuple[str, float]] = []
        #: axe-core findings by audit ("page", "dark theme"), for the report (see accessibility.py)
        self.accessibility: dict[str, list[dict]] = {}
        #: the :class:`Server` the page talks to: a failure shows the end of its log (the server's and its kernels'
        #: output), so a kernel that died or a server error is named in the failure itself
        self.server = server
        #: kills the page if the run outlives its budget by WATCHDOG_GRACE_S (a call with no timeout of its own,
        #: ``page.evaluate``, would otherwise wait for a stuck page for ever): the step then fails and says so
        self.watchdog = threading.Timer(timeout_s + WATCHDOG_GRACE_S, self._watchdog_fired)
        self.watchdog.daemon = True
        self.watchdog.start()
        WATCHDOGS.append(self.watchdog)

    def _watchdog_fired(self) -> None:
        killed = kill_page_renderers()
        self.detail += (f" [watchdog: the page was still busy {self.timeout_s + WATCHDOG_GRACE_S:.0f} s after the "
                        f"start, {WATCHDOG_GRACE_S:.0f} s past its budget; killed its renderer(s) {killed}]")

    def remaining_s(self) -> float:
        return self.timeout_s - (time.monotonic() - self.t0)

    def ms(self, cap_s: float | None = None) -> float:
        """Milliseconds left for the next wait (at least 1), optionally capped at ``cap_s`` seconds."""
        left = self.remaining_s()
        if left <= 0:
            raise TimeoutError(f"notebook budget of {self.timeout_s:.0f} s used up (SYMSGD_BROWSER_TIMEOUT)")
        if cap_s is not None:
            left = min(left, cap_s)
        return max(1.0, left * 1000.0)

    def screenshot_path(self, suffix: str = "") -> Path:
        stem = Path(self.notebook).stem
        return ARTIFACTS / f"{self.mode}-{stem}{suffix}.png"

    @contextlib.contextmanager
    def step(self, name: str, fatal: bool = True):
        """Run a named step. A fatal step stops the test at its first failure; a non-fatal one
        records the failure and lets the later steps run (all are reported by :meth:`finish`)."""
        self.current = name
        self.detail = ""
        t = time.monotonic()
        message = None
        if self.remaining_s() <= 0:  # the step cannot even start: stop here
            self.failures.append(f"[{self.mode}] {self.notebook}: step '{name}' not started: the notebook budget of "
                                 f"{self.timeout_s:.0f} s is used up (SYMSGD_BROWSER_TIMEOUT)")
            self._fail()
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - converted into a clear test failure below
            shot = ""
            if self.page is not None:
                with contextlib.suppress(Exception):
                    path = self.screenshot_path("-FAILED")
                    self.page.screenshot(path=str(path), full_page=True, timeout=10_000)
                    shot = f"\n  screenshot: {path}"
            text = str(exc).strip()
            if len(text) > 3000:
                text = text[:3000] + " …"
            message = (f"[{self.mode}] {self.notebook}: step '{name}' failed after {time.monotonic() - t:.1f} s "
                       f"(notebook total {time.monotonic() - self.t0:.1f} s):\n  {type(exc).__name__}: {text}"
                       + (f"\n  state: {self.detail}" if self.detail else "") + shot)
        self.step_seconds.append((name, round(time.monotonic() - t, 2)))
        if message is not None:
            if not fatal:
                self.failures.append(message)
                return
            self.failures.append(message)
            self._fail()

    def _fail(self) -> None:
        text = "\n\n".join(self.failures)
        if self.server is not None:
            text += f"\n\n--- {self.server.name} server's log ({self.server.log_path}), last lines:\n"
            text += self.server.log_tail(30)
        try:
            pytest.fail(text, pytrace=False)
        except pytest.fail.Exception as failure:
            raise failure from None

    def finish(self) -> None:
        """Fail the test if a non-fatal step failed."""
        if self.failures:
            self._fail()



def full_screenshot(page, path: Path, scroller: str, run: NotebookRun, max_height: int = 16000) -> None:
    """Screenshot the whole document although it scrolls inside ``scroller`` (JupyterLab's notebook
    panel, Voilà's ``#rendered_cells``): grow the viewport by the hidden height, scroll to the top,
    wait for the figures to be laid out, shoot, restore the viewport."""
    hidden = page.evaluate("(sel) => { const n = document.querySelector(sel);"
                           " return n ? n.scrollHeight - n.clientHeight : 0; }", scroller)
    page.set_viewport_size({"width": VIEWPORT["width"],
                            "height": int(min(VIEWPORT["height"] + max(hidden, 0) + 40, max_height))})
    page.evaluate("(sel) => { const n = document.querySelector(sel); if (n) n.scrollTop = 0; }", scroller)
    page.wait_for_function("() => window.__symsgd.figures().every(d => d.getBoundingClientRect().height > 0)",
                           timeout=run.ms(20))
    page.screenshot(path=str(path), timeout=run.ms(30))
    page.set_viewport_size(VIEWPORT)



@dataclass
class ConsoleLog:
    """Browser console errors and uncaught page errors of one page."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def attach(self, page) -> ConsoleLog:
        def on_console(msg):
            if msg.type == "error":
                loc = msg.location or {}
                self.errors.append(f"console.error: {msg.text} (at {loc.get('url', '?')}:{loc.get('lineNumber', '?')})")
            elif msg.type == "warning":
                self.warnings.append(msg.text)

        page.on("console", on_console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))
        return self

    def summary(self, limit: int = 1500) -> str:
        """The errors joined by "; " (the first ``limit`` characters), or "none": for a failure's details."""
        return "; ".join(self.errors)[:limit] or "none"

    def widget_errors(self, ignore: tuple[str, ...] = ()) -> list[str]:
        """Errors, minus those matching one of the ``ignore`` regexes (documented where passed)."""
        return [e for e in self.errors if not any(re.search(p, e) for p in ignore)]



#: A widget model missed anywidget's 2 s start (a slow or busy page misses it, e.g. while plotly's ~5 MB widget code
#: compiles): anywidget rejects the model's start, which the page reports as an uncaught error, and drops every
#: update sent to the model. The page recovers from it, so these errors are not counted as widget failures: the
#: figures' loader (symsgd_jupyter/plotly_loading.py) routes their messages to ipywidgets and asks the kernel for
#: their state again (test_voila's test_a_figure_that_missed_anywidgets_start_still_draws_and_updates fails
#: without it), and the accessible-names helper sends its whole state when it opens, never an update
#: (tests/ui/test_ui_style.py). What a lost update would do to a reader, a figure that does not draw or does not follow
#: its slider, or a widget left without its class, is asserted by the same notebook test. Seen at 6× CPU with
#: four slow-laptop pages side by side on two cores, a few per notebook in some runs and none in others.
RECOVERED_START_MISSES = (r"\[anywidget\] Failed to initialize model",)



def explain(errors: list[str]) -> str:
    """The console errors, one line each (cut at 500 characters)."""
    return "\n".join("  - " + e[:500] for e in errors)



# ------------------------------------------------------------------------------------------------
# The steps both modes share, once the notebook has run (JupyterLab: Run All; Voilà: page load)
# ------------------------------------------------------------------------------------------------
class RequestLog:
    """Every request of a page: those leaving 127.0.0.1 are aborted (as in a classroom without network)
    and recorded; local responses with an HTTP error are recorded too."""

    def __init__(self):
        self.external: list[str] = []
        self.local_failures: list[str] = []

    def attach(self, page) -> RequestLog:
        def route(r):
            if is_local_url(r.request.url):
                r.continue_()
            else:
                self.external.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.on("response", lambda resp: resp.status >= 400 and is_local_url(resp.url)
                and self.local_failures.append(f"{resp.status} {resp.url}"))
        return self

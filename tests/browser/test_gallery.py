"""The platform, tested on one page: the gallery notebook (tests/gallery/gallery.ipynb) in every mode a reader opens a
page in.

What depends on the mode and not on a notebook's content is tested here, once per mode: JupyterLab at
``/``, and under a base URL (``/user/symsgd-test/``, as JupyterHub and Binder serve it) in its dark theme; the Voilà
classroom page (started as `make classroom` starts it) opened at 127.0.0.1, and at localhost with Chromium's CPU
slowed 6× (an older student laptop). Voilà at 6× and JupyterLab at ``/`` start cold: their kernels compile every
engine the gallery runs into an empty cache. In each mode: every cell ran without an error; every figure the kernel
made is drawn, plotly's widget code fetched once for the page; every widget view rendered; formulas typeset; the
fine print closed, tagged and opened from the keyboard (its class kept by JupyterLab's sanitizer); a keyboard slider
move reaches the kernel and changes its figure (before and after the long cell), Run shows the busy
indicator and re-simulates; the Check-yourself panel answers a wrong, then the right answer; no request leaves the
machine; the accessibility audit passes; a screenshot goes to test-artifacts/browser/gallery-<mode>.png. JupyterLab
also checks the news pop-up and that widget messages stay on the kernel's main thread, the dark theme its contrast;
the classroom page its compact claim and printed lines and its icon font."""

from __future__ import annotations

import pytest
from browser_report import write_record
from browser_setup import VIEWPORT
from exercise_answers import answer_exercises
from figure_inspection import PROBE_JS, check_no_raw_markup
from gallery_support import (
    DARK_SETTINGS,
    GALLERY,
    GalleryRun,
    Mode,
    check_after_interaction,
    check_console,
    check_every_cell_ran,
    check_every_figure_drawn,
    check_fine_print,
    check_math_typeset,
    check_no_off_machine_controls,
    move_sliders_and_run,
    open_and_run_all_in_lab,
    open_in_voila,
    voila_kernel_id,
    voila_page_url,
)
from notebook_run import ConsoleLog, RequestLog, full_screenshot
from page_load import SLOW_CPU_RATE, PageMetrics, kernel_connection_file
from page_waits import check_widgets_rendered
from reader_checks import audit_step, check_claim_cells, check_printed_text_is_compact
from servers import (
    LAB_BASE_PATH,
    check_kernel_on_unix_sockets,
    check_kernels_compiled_cold,
    cold_kernel_cache,
    start_lab,
    start_voila,
)
from test_jupyterlab import (
    LAB_CONSOLE_NOISE,
    _full_notebook_screenshot,
    _kernel_connection,
    check_dark_theme,
    check_no_news_popup,
    check_widgets_on_the_main_thread,
)
from test_jupyterlab import _wait_kernel_idle as wait_lab_kernel_idle
from test_voila import _ICONS_JS, VOILA_ERROR_TEXTS, _shutdown_page_kernel, check_no_code_shown
from test_voila import _wait_kernel_idle as wait_voila_kernel_idle

pytestmark = pytest.mark.browser

#: The modes, the slow one first (it takes longest, and pytest-xdist hands the tests out in this order). A cold start
#: (the page's kernel compiling every engine it runs into an empty cache, which once lost a classroom page its last
#: widgets) is checked once per front end, where it is hardest: Voilà at 6× slowed CPU, and
#: JupyterLab. The lessons' own JupyterLab pass runs on the cache the set-up warmed, as `make lab` leaves it.
MODES = [
    Mode("voila-localhost-6x", "gallery_voila_cold", voila=True, host="localhost", throttle=SLOW_CPU_RATE, cold=True),
    Mode("lab", "gallery_lab_cold", cold=True),
    Mode("lab-base-url-dark", "gallery_lab_dark_with_base_url", dark=True),
    Mode("voila", "gallery_voila", voila=True),
]


@pytest.fixture(scope="module")
def gallery_lab_cold(browser, tmp_path_factory):
    """JupyterLab at the root URL, serving the gallery, its kernels on an empty compiled-kernel cache."""
    server = start_lab(tmp_path_factory, source=GALLERY, name="gallery-lab", env=cold_kernel_cache())
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gallery_lab_dark_with_base_url(browser, tmp_path_factory):
    """JupyterLab under the base URL JupyterHub would give it (``LAB_BASE_PATH``), whose user settings choose the
    dark theme, serving the gallery: two ways a reader's JupyterLab differs from the plain one, in one run (each
    is independent of the other: the base URL changes every address, the theme only the page's styles)."""
    server = start_lab(tmp_path_factory, LAB_BASE_PATH, source=GALLERY, name="gallery-lab-base-url-dark",
                       settings=DARK_SETTINGS)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gallery_voila(browser, classroom, tmp_path_factory):
    """Classroom mode (Voilà as `make classroom` starts it, after the set-up's warm-up), serving the gallery."""
    server = start_voila(classroom, tmp_path_factory, "127.0.0.1", source=GALLERY, name="gallery-voila")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gallery_voila_cold(browser, classroom, tmp_path_factory):
    """Classroom mode serving the gallery, its kernels on an empty compiled-kernel cache: a cold start."""
    server = start_voila(classroom, tmp_path_factory, "127.0.0.1", source=GALLERY, name="gallery-voila-cold",
                         env=cold_kernel_cache())
    yield server
    server.stop()


@pytest.mark.parametrize("mode", [pytest.param(m, id=m.name) for m in MODES])
def test_gallery(mode: Mode, request, browser, classroom):
    """Open the gallery in ``mode``, check what a reader sees and does; record it (report: mode, ``gallery``)."""
    server = request.getfixturevalue(mode.server)
    context = browser.new_context(viewport=VIEWPORT)  # one per mode: no cookie or cached plotly code shared
    context.add_init_script(PROBE_JS)
    page = context.new_page()
    metrics = PageMetrics(page, mode.throttle)
    run = GalleryRun(mode, page, server)  # a failure shows the end of the server's log
    console = ConsoleLog().attach(page)
    requests = RequestLog().attach(page)  # offline: requests leaving 127.0.0.1/localhost are aborted and recorded
    noise = () if mode.voila else LAB_CONSOLE_NOISE
    errors = VOILA_ERROR_TEXTS if mode.voila else ()
    latencies, answered, load = [], [], None
    try:
        if mode.voila:
            expected_views = open_in_voila(page, voila_page_url(server, classroom, mode.host), run, mode)
            t0 = 0.0
            with run.step("find the page's kernel"):
                connection = kernel_connection_file(server, voila_kernel_id(page))
            with run.step("the page's kernel talks over Unix sockets, not a TCP port"):
                check_kernel_on_unix_sockets(connection)

            def kernel_idle():
                wait_voila_kernel_idle(page, run, 60 * mode.throttle)
        else:
            expected_views = 0
            t0 = open_and_run_all_in_lab(page, server, run, mode)
            with run.step("find the page's kernel"):
                connection = _kernel_connection(server, GALLERY.name)
            with run.step("the page's kernel talks over Unix sockets, not a TCP port"):
                check_kernel_on_unix_sockets(connection)

            def kernel_idle():
                wait_lab_kernel_idle(page, run, 60 * mode.throttle)

        check_every_cell_ran(page, run, mode, errors)
        load = check_every_figure_drawn(page, metrics, connection, t0, run, console)
        check_widgets_rendered(page, run, console, expected_views)
        check_math_typeset(page, run, mode)
        check_fine_print(page, run, mode)
        check_no_off_machine_controls(page, run)
        check_claim_cells(page, run, GALLERY, classroom=mode.voila, scope=mode.scope)
        check_no_raw_markup(page, run, mode.scope)
        if mode.cold:
            with run.step("the page started cold: its kernel compiled the engines into an empty cache"):
                check_kernels_compiled_cold(server)
        if mode.voila:
            check_no_code_shown(page, run)
            check_printed_text_is_compact(page, run, GALLERY)
            with run.step("icons drawn with a local font", fatal=False):
                bad = page.evaluate(_ICONS_JS)
                assert not bad, f"icons without their font: {bad[:10]}"
        else:
            check_no_news_popup(page, server, run)
        check_console(console, run, noise)

        seen_errors = len(console.errors)
        latencies = move_sliders_and_run(page, run, kernel_idle, mode.throttle)
        with run.step("the Check-yourself panel: wrong answers, then the right ones, through the page", fatal=False):
            answered = answer_exercises(page, run)
        check_after_interaction(page, run, mode, console, seen_errors, noise, errors)
        if not mode.voila:
            check_widgets_on_the_main_thread(server, GALLERY.name, run)

        with run.step("screenshot"):
            metrics.unthrottle()  # (the audits and the screenshot check the page, not its speed)
            if mode.voila:
                full_screenshot(page, run.screenshot_path(), "#rendered_cells", run)
            else:
                _full_notebook_screenshot(page, run)
        audit_step(page, run, "" if mode.voila else mode.scope)
        if mode.dark:
            check_dark_theme(page, run)
        with run.step("no request left 127.0.0.1/localhost", fatal=False):
            assert not requests.external, f"requests leaving the machine: {sorted(set(requests.external))}"
    finally:
        write_record(mode.name, GALLERY.name, {
            "mode": mode.name, "notebook": GALLERY.name, "address": server.base_url.replace("127.0.0.1", mode.host, 1),
            "load": None if load is None else vars(load), "controllers": latencies, "exercises": answered,
            "accessibility": run.accessibility, "external_requests": sorted(set(requests.external)),
            "local_failures": sorted(set(requests.local_failures)), "failures": run.failures,
            "steps": run.step_seconds, "seconds": round(run.timeout_s - run.remaining_s(), 1)})
        if mode.voila:
            _shutdown_page_kernel(page)
        else:
            server.shutdown_kernels()
        context.close()
    run.finish()

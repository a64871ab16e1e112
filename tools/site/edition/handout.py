"""``make handout``: a printable PDF of every notebook page of the static edition (and one for the whole course),
printed by headless Chromium (Playwright's ``page.pdf``, Chromium's print-to-PDF).

Each page is opened from the built edition (``site/``, from ``file://``, offline), and printed only once every
figure is drawn (``window.symsgdEdition``) and MathJax has typeset the formulas; a figure that failed to draw fails
the handout. Each figure is then photographed (a Chromium screenshot of the drawn plot, 2-D and 3-D alike, at two
device pixels per CSS pixel) at the notebook's own value, its slider taken away, and for a precomputed slider at a
few of its values (the notebook's among them), reached as the page's slider reaches them; ``static/handout.js``
puts the photographs in place of the plot, the small multiples labelled with their values;
``static/handout.css`` hides what only works on screen: sliders, mode bars, buttons, answer boxes, and the
sentences the notebooks mark as instructions for the live reader (class ``symsgd-live``, see edition.css). Code is
left out unless ``--code``, and with it the sentences that point at a code cell (render.py ``mark_code_pointers``);
the exercises' worked solutions unless ``--solutions``. The notebooks' fine print (``<details
class="symsgd-fine-print">``, closed on screen) prints open: the page is served to Chromium with ``open`` on each
(render.py ``open_fine_print``), before MathJax typesets it. Formulas print at the text's weight, and every figure's
tick labels at 7 pt at least, small multiples included (``MIN_PRINTED_PT`` in handout.js), and no text of a small
multiple over another text or over another panel: crowded ticks thinned, an axis title with no room left out and named
in the multiples' caption, and a figure that still does not fit at half the width printed one multiple to a row
(``overlaps`` in handout.js measures it).

Usage: ``python -m tools.site.handout [--site site] [--out handout] [--only 01,03] [--code] [--solutions]``
Writes ``handout/NN_name.pdf`` per notebook, ``handout/course.pdf`` (all of them, in notebook order, one bookmark
per notebook) and ``handout/handout-report.json`` (per notebook: PDF pages, figures, images, slider values shown, the
printed size of each figure's smallest tick label, what of each picture runs into what (``overlaps``: a text over
another, an axis title or tick label over another panel), the axis titles left out of its small multiples for room
(``titles_left_out``, said in their caption), and any number printed with too many digits).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys
import time
from pathlib import Path

from .render import open_fine_print

REPO = Path(__file__).resolve().parents[3]
STATIC = Path(__file__).resolve().parent / "static"
#: Debian's chromium (override with SYMSGD_CHROMIUM), launched with the browser suite's flags
#: (tests/browser/browser_setup.py).
CHROMIUM_PATH = os.environ.get("SYMSGD_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage"]
#: Longest wait for a page's figures and formulas, seconds (a page is ready in a few seconds).
PAGE_TIMEOUT_S = 180.0
#: Small multiples per precomputed slider (at most; fewer when the slider has fewer values).
MULTIPLES = 4
REPORT = "handout-report.json"
#: Wording for the live notebook that a printed page must not carry (the notebooks mark such sentences with
#: <span class="symsgd-live">, which the print stylesheet hides); checked in the PDFs and in the notebooks' text.
LIVE_WORDING = [r"(?i)\bdrag", r"(?i)\bmov(e|ing) (the|a) sliders?\b", r"(?i)\bat the current sliders?\b",
                r"(?i)\bpress(ing)? (run|check|show the result)\b", r"\band Run\b",
                r"(?i)\btype the answer\b", r"\bMove [^ ]{1,3} (to|up|down)\b"]
COURSE = "course.pdf"
#: The most significant digits a printed number may show: more is an unformatted float ("3.7641746976096255e-16",
#: Python's repr), reported per page in handout-report.json (``long_floats``).
MAX_PRINTED_DIGITS = 6
#: A decimal number of printed text.
_DECIMAL = re.compile(r"(?<![\w.])[-−]?(\d+)(?:\.(\d+))?([eE][-+−]?\d+)?(?![\w.]*\d)")
#: An arXiv identifier ("arXiv:2402.07193", "arXiv 2305.16038", the two parts on two lines): not a number.
_ARXIV = re.compile(r"(?i)arXiv[:\s]\s*\d{4}\.\d{4,5}")

READY_JS = """() => window.symsgdEdition && document.body.dataset.editionStarted === 'yes'
  && symsgdEdition.drawn + symsgdEdition.failed >= document.querySelectorAll('.edition-plot').length
  && document.body.dataset.mathTypeset === 'done'"""
FAILED_JS = """() => Array.from(document.querySelectorAll('.edition-plot'))
  .map((p, i) => p.dataset.edition === 'drawn' ? null : `figure ${i + 1}: ${p.textContent.trim() || 'not drawn'}`)
  .filter((x) => x)"""
FOOTER = ('<div style="font: 8px sans-serif; color: #4b5563; width: 100%; padding: 0 12mm; display: flex; '
          'justify-content: space-between"><span class="title"></span>'
          '<span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>')


class HandoutError(RuntimeError):
    """A page could not be printed as it should be (a figure failed, a page error, nothing to print)."""


def pdf_page_count(path: Path) -> int:
    """The number of pages of a PDF (pypdf)."""
    from pypdf import PdfReader

    return len(PdfReader(str(path)).pages)


def print_page(browser, html: Path, pdf: Path, code: bool = False, solutions: bool = False,
               multiples: int = MULTIPLES) -> dict:
    """Print one edition page to ``pdf``; return what it drew (figures, images, slider values shown)."""
    # two device pixels per CSS pixel: the figures' photographs print at about 200 dpi
    page = browser.new_page(viewport={"width": 1200, "height": 1000}, device_scale_factor=2)
    errors: list[str] = []
    outside: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

    page_url = html.resolve().as_uri()
    page_html = open_fine_print(html.read_text(encoding="utf-8"))

    def route(r):  # the edition works offline: anything but its own files is refused
        if r.request.url == page_url:  # the page itself, its fine print open (render.open_fine_print)
            r.fulfill(body=page_html, content_type="text/html; charset=utf-8")
        elif r.request.url.startswith(("file://", "data:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    try:
        page.goto(page_url, timeout=PAGE_TIMEOUT_S * 1000)
        page.wait_for_function(READY_JS, timeout=PAGE_TIMEOUT_S * 1000, polling=200)
        failed = page.evaluate(FAILED_JS)
        if failed:
            raise HandoutError(f"{html.name}: {len(failed)} figures were not drawn: " + "; ".join(failed[:5]))
        if errors or outside:
            raise HandoutError(f"{html.name}: errors in the page: {errors[:5]}; requests refused: {outside[:5]}")
        page.add_style_tag(path=str(STATIC / "handout.css"))
        page.add_script_tag(path=str(STATIC / "handout.js"))
        figures = page.evaluate("n => symsgdHandout.plan(n)", multiples)
        plots = page.locator(".edition-controller .edition-plot")
        for i, fig in enumerate(figures):
            plot = plots.nth(i)
            main_pt = page.evaluate("i => symsgdHandout.main(i)", i)
            main = _data_url(plot.screenshot(animations="disabled"))
            # what runs into what in each picture: texts over texts, axis texts over another panel (handout.js)
            fig["overlaps"] = {"main": page.evaluate("i => symsgdHandout.overlaps(i)", i), "small": []}
            small, small_pt = [], []
            for k in fig["steps"]:
                small_pt.append(page.evaluate("([i, k, s]) => symsgdHandout.step(i, k, s)", [i, k, fig["steps"]]))
                small.append([k, _data_url(plot.screenshot(animations="disabled"))])
                fig["overlaps"]["small"].append(page.evaluate("i => symsgdHandout.overlaps(i)", i))
            # the printed size of the figure's smallest tick label, pt (None: no tick labels)
            fig["tick_pt"] = {"main": main_pt, "small": min((p for p in small_pt if p is not None), default=None)}
            fig["multiples_per_row"] = page.evaluate("i => symsgdHandout.perRow(i)", i) if small else None
            # the axis titles left out of the small multiples for room, said in their caption instead
            fig["titles_left_out"] = page.evaluate("i => symsgdHandout.titlesLeftOut(i)", i)
            # pairs of overlapping texts in a small multiple before and after its fonts were raised
            fig["text_collisions"] = page.evaluate("i => symsgdHandout.collisions(i)", i)
            page.evaluate("([i, main, small]) => symsgdHandout.place(i, main, small)", [i, main, small])
        images = page.evaluate("opts => symsgdHandout.finish(opts)", {"code": code, "solutions": solutions})
        if errors:
            raise HandoutError(f"{html.name}: errors while preparing the handout: {errors[:5]}")
        pdf.parent.mkdir(parents=True, exist_ok=True)
        page.pdf(path=str(pdf), format="A4", print_background=True, prefer_css_page_size=True,
                 display_header_footer=True, header_template="<span></span>", footer_template=FOOTER,
                 outline=True, tagged=True)
    finally:
        page.close()
    return {"figures": figures, "images": images}


def significant_digits(number: str) -> int:
    """The significant digits a decimal number is written with ("0.00420" → 3, "3.7641746976096255e-16" → 17,
    "1200" → 2: an integer's trailing zeros are not counted)."""
    m = _DECIMAL.fullmatch(number.strip())
    if not m:
        raise ValueError(f"not a decimal number: {number!r}")
    whole, frac = m.group(1), m.group(2) or ""
    digits = (whole + frac).lstrip("0")
    return len(digits if frac else digits.rstrip("0"))


def long_floats(text: str, limit: int = MAX_PRINTED_DIGITS) -> list[str]:
    """The numbers of ``text`` written with a point or an exponent and more than ``limit`` significant digits (an
    arXiv identifier is not a number), in order."""
    text = _ARXIV.sub("arXiv", text)
    return [m.group(0) for m in _DECIMAL.finditer(text)
            if (m.group(2) or m.group(3)) and significant_digits(m.group(0)) > limit]


def pdf_text(path: Path) -> str:
    """The text of a PDF, pages in order (pypdf)."""
    from pypdf import PdfReader

    return "\n".join(page.extract_text() or "" for page in PdfReader(str(path)).pages)


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def merge(pdfs: list[tuple[str, Path]], out: Path) -> None:
    """One PDF of ``pdfs`` in order, with a bookmark at the start of each (``(title, path)`` pairs)."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    for title, path in pdfs:
        start = len(writer.pages)
        writer.append(str(path), import_outline=False)
        writer.add_outline_item(title, start)
    with open(out, "wb") as fh:
        writer.write(fh)


def _print_row(browser, site: Path, out: Path, row: dict, code: bool, solutions: bool, log) -> dict:
    """Print one page of the edition report's ``row``; return its line of the handout report."""
    t = time.perf_counter()
    pdf = out / (Path(row["page"]).stem + ".pdf")
    drawn = print_page(browser, site / row["page"], pdf, code=code, solutions=solutions)
    if len(drawn["figures"]) != len(row["figures"]):
        raise HandoutError(f"{row['page']}: {len(drawn['figures'])} figures printed, the edition has "
                           f"{len(row['figures'])}")
    n = pdf_page_count(pdf)
    ticks = [pt for f in drawn["figures"] for pt in f["tick_pt"].values() if pt is not None]
    floats = long_floats(pdf_text(pdf))
    log(f"  {pdf.name}: {n} pages, {len(drawn['figures'])} figures, {drawn['images']} images, "
        f"{pdf.stat().st_size / 1e6:.1f} MB, smallest tick label {min(ticks, default=0):.1f} pt "
        f"({time.perf_counter() - t:.0f} s)")
    if floats:
        log(f"  {pdf.name}: numbers printed with more than {MAX_PRINTED_DIGITS} significant digits "
            f"(format them where they are printed): {', '.join(floats[:5])}")
    return {"page": row["page"], "title": row["title"], "pdf": pdf.name, "pdf_pages": n,
            "bytes": pdf.stat().st_size, "images": drawn["images"], "figures": drawn["figures"],
            "long_floats": floats, "seconds": round(time.perf_counter() - t, 1)}


def build(site: Path, out: Path, only: tuple[str, ...] = (), code: bool = False, solutions: bool = False,
          course: bool = True, log=print, browser=None) -> dict:
    """Print every page of the edition in ``site`` to ``out``; return the report (also written to ``out``).
    ``browser``: a Playwright Chromium already running (else one is launched)."""

    report_path = site / "edition-report.json"
    if not report_path.is_file():
        raise SystemExit(f"no static edition in {site} (no edition-report.json): build it first with `make site`")
    edition = json.loads(report_path.read_text(encoding="utf-8"))
    rows = [r for r in edition["pages"] if not only or r["page"].startswith(only)]
    if not rows:
        raise SystemExit(f"no page of {site} matches {only}")
    if browser is None and not Path(CHROMIUM_PATH).is_file():
        raise SystemExit(f"the handout is printed by Chromium, not found at {CHROMIUM_PATH} (set SYMSGD_CHROMIUM)")
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if browser is None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            own = pw.chromium.launch(executable_path=CHROMIUM_PATH, headless=True, args=CHROMIUM_FLAGS)
            try:
                pages = [_print_row(own, site, out, row, code, solutions, log) for row in rows]
            finally:
                own.close()
    else:
        pages = [_print_row(browser, site, out, row, code, solutions, log) for row in rows]
    report = {"site": str(site), "code": code, "solutions": solutions, "multiples": MULTIPLES, "pages": pages}
    if course:
        from .render import plain_title

        merge([(plain_title(p["title"]), out / p["pdf"]) for p in pages], out / COURSE)
        report["course"] = {"pdf": COURSE, "pdf_pages": pdf_page_count(out / COURSE)}
        log(f"  {COURSE}: {report['course']['pdf_pages']} pages")
    report["seconds"] = round(time.perf_counter() - t0, 1)
    (out / REPORT).write_text(json.dumps(report, indent=1), encoding="utf-8")
    log(f"handout written to {out}/ in {report['seconds']:.0f} s")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=REPO / "site", help="the built edition (default: site/)")
    parser.add_argument("--out", type=Path, default=REPO / "handout", help="output folder (default: handout/)")
    parser.add_argument("--only", default="", help="comma-separated prefixes of the notebooks to print")
    parser.add_argument("--code", action="store_true", help="print the code cells too")
    parser.add_argument("--solutions", action="store_true", help="print the exercises' worked solutions")
    parser.add_argument("--no-course", action="store_true", help="no course.pdf, only one PDF per notebook")
    args = parser.parse_args(argv)
    only = tuple(p.strip() for p in args.only.split(",") if p.strip())
    try:
        build(args.site.resolve(), args.out.resolve(), only, args.code, args.solutions, not args.no_course)
    except HandoutError as exc:
        raise SystemExit(f"handout: {exc}") from None
    return 0


if __name__ == "__main__":
    sys.exit(main())

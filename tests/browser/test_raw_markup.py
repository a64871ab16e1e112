"""The raw-markup scan itself (``window.__symsgd.rawMarkup``, probe.js), on a page made here: it
finds each kind of markup a reader must not see as text (a printed status widget's HTML, Markdown asterisks, TeX
outside typeset math) in Markdown, in printed output and in a widget, and passes code, typeset math, hidden text and
plain prose. The browser suite runs it on every page: each notebook in JupyterLab, the gallery in every mode and
every page of the static edition."""

from __future__ import annotations

import html

import pytest
from browser_setup import VIEWPORT
from figure_inspection import PROBE_JS, raw_markup

pytestmark = pytest.mark.browser

#: (where, what a cell shows, the pattern expected: None for text the scan must pass)
CASES = [
    ("printed output", '<pre>&lt;span class="symsgd-status symsgd-status-info"&gt;ok&lt;/span&gt;</pre>', "html tag"),
    ("markdown", "<p>**Status:** all claims hold</p>", "markdown bold"),
    ("markdown", "<p>*Status: the run jumped at step 1200.*</p>", "markdown emphasis"),
    ("widget", "<span>weight decay beats the fit (+|g|a^{L−1}) inside the basin</span>", "tex sub/superscript"),
    ("widget", "<span>the penalty \\frac{2}{L} grows</span>", "tex command"),
    ("markdown", "<p>the balance $\\|u\\|^2 - \\|w\\|^2$ is constant</p>", "tex"),
    ("markdown", "<p>a plain sentence, 2 * 3 = 6, W_ℓ and aᴸ⁻¹, x*y, a_b</p>", None),
    ("markdown", "<pre><code>print(f\"**{x}** $a^{b}$ &lt;span&gt;\")</code></pre>", None),
    ("markdown", "<p>inline <code>**kwargs</code> and <code>&lt;span&gt;</code></p>", None),
    ("markdown", '<p>typeset: <mjx-container>a^{L-1}</mjx-container></p>', None),
    ("markdown", '<p style="display:none">**hidden**</p>', None),
]


def _page_html(cells: list[str]) -> str:
    body = "".join(f'<div class="jp-OutputArea-output">{c}</div>' if where != "markdown" else
                   f'<div class="jp-RenderedMarkdown">{c}</div>' for where, c in cells)
    return f"<!doctype html><html><body>{body}</body></html>"


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(PROBE_JS)
    page = context.new_page()
    page.goto("about:blank")
    yield page
    context.close()


@pytest.mark.parametrize("where, shown, expected", CASES, ids=[f"{i}-{c[2] or 'clean'}" for i, c in enumerate(CASES)])
def test_the_scan_finds_each_kind_of_raw_markup_and_passes_clean_text(page, where, shown, expected):
    page.set_content(_page_html([(where, shown)]))
    hits = raw_markup(page)
    assert [h["pattern"] for h in hits][:1] == ([expected] if expected else []), (html.unescape(shown), hits)


def test_the_scan_reads_every_element_of_its_scope(page):
    page.set_content(_page_html([("markdown", "<p>clean</p>"), ("widget", "<b>**loud**</b>")]))
    assert [h["pattern"] for h in raw_markup(page, ".jp-OutputArea-output")] == ["markdown bold"]
    assert raw_markup(page, ".jp-RenderedMarkdown") == []

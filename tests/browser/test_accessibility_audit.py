"""The accessibility audit itself (accessibility.py) and the project's link style, on small pages made in Chromium
(``page.set_content``: no server, no kernel, a few seconds in all).

axe-core finds links told apart from the text by colour alone (JupyterLab's link colour, 1.86:1
against the text: the serious *link-in-text-block*) on classroom pages 01-05, and the audit had passed them. Both
modes scroll the notebook inside an element (Voilà's ``#rendered_cells``, JupyterLab's notebook panel), and axe-core
only judges colours on screen: whatever the scrolling element hides is not reported at all, so the audit judged one
screenful; in JupyterLab not even that (axe-core takes its 0 px tall body for a clipping box). These tests give the
audit such pages, with the link below the fold or inside JupyterLab's kind of body; and they check that each place the
project styles a page (the classroom template, the static edition's stylesheet, the accessible-names helper that
every controller carries into JupyterLab) underlines links in the text, in front of JupyterLab's own stylesheet.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from accessibility import audit, blocking, describe
from browser_report import REPO
from browser_setup import VIEWPORT
from js_files import script

pytestmark = pytest.mark.browser

TEMPLATE = REPO / "tools" / "voila" / "templates" / "symsgd" / "index.html.j2"
EDITION_CSS = REPO / "tools" / "site" / "edition" / "static" / "edition.css"


def _jupyterlab_css() -> str:
    """nbconvert's copy of JupyterLab's stylesheet and light theme (the rules the classroom page and the static
    edition start from: ``.jp-RenderedHTMLCommon a:link { text-decoration: none; color: #0d47a1 }``)."""
    from jupyter_core.paths import jupyter_path

    for base in jupyter_path("nbconvert", "templates"):
        static = Path(base) / "lab" / "static"
        if (static / "index.css").is_file():
            return "\n".join((static / name).read_text(encoding="utf-8") for name in ("index.css", "theme-light.css"))
    pytest.skip("nbconvert's lab template (lab/static/index.css) is not installed")


def _markdown(html: str) -> str:
    return f'<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown" data-mime-type="text/markdown">{html}</div>'


def _notebook_page(extra_head: str = "", spacer_px: int = 3000) -> str:
    """A page laid out like a classroom page: the notebook scrolls inside ``#rendered_cells``, which fills the
    window; the first cell is plain text, the last (``spacer_px`` further down) has a link in a sentence."""
    cells = (_markdown("<h1>Diffusion cancellation</h1><p>Plain text, no link.</p>")
             + f'<div style="height:{spacer_px}px"></div>'
             + _markdown('<p>The proof is in <a href="https://arxiv.org/abs/2308.06671">arXiv:2308.06671</a>, '
                         "section 3, with the constants.</p>"))
    return (f'<!doctype html><html style="height:100%"><head><style>{_jupyterlab_css()}</style>{extra_head}</head>'
            '<body class="jp-Notebook" data-jp-theme-light="true" style="margin:0;height:100%;overflow:hidden">'
            f'<div id="rendered_cells" style="position:absolute;inset:0;overflow:auto">{cells}</div></body></html>')


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    yield context.new_page()
    context.close()


def test_the_audit_sees_a_link_below_the_fold_of_a_scrolling_notebook(page):
    """The un-underlined link sits below the first screenful of ``#rendered_cells``: the audit must still fail it
    (it used to see only what was on screen), and leave the page as it found it (viewport, scroll position)."""
    page.set_content(_notebook_page())
    page.evaluate("() => { document.querySelector('#rendered_cells').scrollTop = 120; }")
    findings = audit(page)
    links = [f for f in blocking(findings) if f["id"] == "link-in-text-block"]
    assert links, "the audit passed a link told apart by colour alone (1.86:1) below the fold:\n" + describe(findings)
    assert "arXiv:2308.06671" in links[0]["targets"][0]["html"] and not links[0]["unsure"]
    assert page.viewport_size == VIEWPORT
    assert page.evaluate("() => document.querySelector('#rendered_cells').scrollTop") == 120


def test_the_audit_sees_a_link_in_a_jupyterlab_like_page(page):
    """JupyterLab's <body> is 0 px tall with overflow: hidden (its shell is positioned absolutely): axe-core took the
    whole page for clipped away and its colour rules matched nothing, not even a link at the top of the window."""
    page.set_content(f'<!doctype html><html><head><style>{_jupyterlab_css()}</style></head>'
                     '<body style="margin:0;overflow:hidden">'
                     '<div class="jp-LabShell" style="position:absolute;inset:0">'
                     '<div class="jp-WindowedPanel-outer" style="position:absolute;top:60px;bottom:0;left:0;right:0;'
                     'overflow:auto">'
                     + _markdown('<p>The proof is in <a href="https://arxiv.org/abs/2308.06671">arXiv:2308.06671</a>'
                                 ", section 3, with the constants.</p>")
                     + "</div></div></body></html>")
    assert page.evaluate("() => document.body.getBoundingClientRect().height") == 0
    findings = audit(page)
    assert [f["id"] for f in blocking(findings)] == ["link-in-text-block"], describe(findings)
    assert page.evaluate("() => document.body.style.minHeight") == ""


def test_the_audit_fails_a_link_whose_colours_axe_core_cannot_judge(page):
    """A link in a sentence on a background gradient (a card): axe-core cannot compute the contrast there and
    reports *link-in-text-block* as "needs review", which the audit counts (FAIL_WHEN_UNSURE) instead of dropping."""
    page.set_content(f"<!doctype html><html><head><style>{_jupyterlab_css()}</style></head><body>"
                     + _markdown('<p style="background-image:linear-gradient(#fff,#f4f4f4)">Some text with '
                                 '<a href="https://example.org/">a link</a> inside.</p>')
                     + "</body></html>")
    findings = audit(page)
    links = [f for f in blocking(findings) if f["id"] == "link-in-text-block"]
    assert links and links[0]["unsure"], "a link axe-core could not judge was passed:\n" + describe(findings)


def test_a_figure_is_audited_but_not_plotlys_drawing_surface(page):
    """Inside a figure the audit leaves out plotly's ``main-svg`` layers (NOT_AUDITED) and nothing else: a button
    without a name in the figure's mode bar still fails the page (the serious *button-name*); the same button
    drawn inside the SVG layer is not looked at."""
    nameless = '<button type="button" class="{cls}"><span></span></button>'
    figure = ('<div class="jp-OutputArea-output"><div class="js-plotly-plot" role="figure" aria-label="a figure">'
              '<div class="modebar-container">{bar}</div>'
              '<svg class="main-svg" width="200" height="100"><foreignObject width="200" height="100">{svg}'
              "</foreignObject></svg></div></div>")
    page.set_content("<!doctype html><html><head></head><body>"
                     + figure.format(bar=nameless.format(cls="in-bar"), svg="") + "</body></html>")
    found = [f for f in blocking(audit(page)) if f["id"] == "button-name"]
    assert found and "in-bar" in found[0]["targets"][0]["html"], "a nameless mode-bar button passed the audit"
    page.set_content("<!doctype html><html><head></head><body>"
                     + figure.format(bar="", svg=nameless.format(cls="in-svg")) + "</body></html>")
    assert not blocking(audit(page)), "the audit looked inside plotly's drawing surface"


def _template_style() -> str:
    """The ``<style>`` the classroom template adds after JupyterLab's stylesheet."""
    styles = re.findall(r"<style>.*?</style>", TEMPLATE.read_text(encoding="utf-8"), flags=re.S)
    assert styles, f"{TEMPLATE} adds no <style>"
    return "\n".join(styles)


def _edition_style() -> str:
    return f"<style>{EDITION_CSS.read_text(encoding='utf-8')}</style>"


def _helper_style(page) -> None:
    """Run the accessible-names helper (symsgd_jupyter/a11y.py) as anywidget would: import its module, render it."""
    from symsgd_jupyter.a11y import AccessibleNames

    page.evaluate(script("render_module"), AccessibleNames._esm)


@pytest.mark.parametrize("where", ["classroom template", "static edition", "JupyterLab (accessible-names helper)"])
def test_links_in_the_text_are_underlined(page, where):
    """Each of the project's page styles underlines links in the text in front of JupyterLab's stylesheet (whose
    ``a:link`` rule takes the underline away), and the audit passes the page of the first test."""
    extra = {"classroom template": _template_style, "static edition": _edition_style}.get(where, str)()
    page.set_content(_notebook_page(extra))
    if where.startswith("JupyterLab"):
        _helper_style(page)
    decoration = page.evaluate("() => [...document.querySelectorAll('.jp-RenderedMarkdown a[href]')]"
                               ".map((a) => getComputedStyle(a).textDecorationLine)")
    assert decoration == ["underline"], f"{where}: links drawn with text-decoration {json.dumps(decoration)}"
    findings = audit(page)
    assert not blocking(findings), f"{where}:\n" + describe(blocking(findings))


#: A slider as ipywidgets draws it (its visible description in a ``<label>``, the handle a ``role="slider"`` div with
#: no name of its own), added to an output of the page; resolves, just before the next paint
#: (``requestAnimationFrame``), with the handle's ``aria-label`` then; then renames the slider and resolves likewise.
_SLIDER_NAME_AT_FIRST_PAINT_JS = """async () => {
  const beforePaint = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
  const box = document.createElement('div');
  box.className = 'widget-inline-hbox widget-slider widget-hslider';
  box.innerHTML = '<label class="widget-label">step size η</label><div class="slider-container"><div class="slider">'
    + '<div class="noUi-handle" role="slider" tabindex="0"></div></div></div><div class="widget-readout">0.1</div>';
  document.querySelector('.jp-OutputArea-output').appendChild(box);
  await beforePaint();
  const handle = box.querySelector('[role=slider]');
  const first = handle.getAttribute('aria-label');
  box.querySelector('.widget-label').textContent = 'batch size S';
  await beforePaint();
  return [first, handle.getAttribute('aria-label')];
}"""


def test_a_slider_has_its_accessible_name_when_it_is_first_painted(page):
    """The accessible-names helper (symsgd_jupyter/a11y.js) names a slider handle before the browser paints it, and
    renames it before the paint that shows a new description: an axe-core audit run at any moment finds no unnamed
    slider (aria-input-field-name, serious; it did on one in three classroom 04 runs when the names came a moment
    after the sliders)."""
    page.set_content('<!doctype html><html><head></head><body><div class="jp-OutputArea-output"><p>A lesson page.</p>'
                     "</div></body></html>")
    _helper_style(page)
    assert page.evaluate(_SLIDER_NAME_AT_FIRST_PAINT_JS) == ["step size η", "batch size S"]
    assert not [f for f in blocking(audit(page)) if f["id"] == "aria-input-field-name"]

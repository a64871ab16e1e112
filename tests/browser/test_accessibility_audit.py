"""The project's link style, on small pages made in Chromium (``page.set_content``: no server, no kernel, a few
seconds in all).

Issue 26, item 9: axe-core finds links told apart from the text by colour alone (JupyterLab's link colour, 1.86:1
against the text: the serious *link-in-text-block*) on the notebooks' pages. These tests check that each place the
project styles a page (the classroom template, the static edition's stylesheet, the accessible-names helper that
every controller carries into JupyterLab) underlines links in the text, in front of JupyterLab's own stylesheet.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from accessibility import audit, blocking, describe
from browser_support import REPO, VIEWPORT

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


def _template_style() -> str:
    """The ``<style>`` the classroom template adds after JupyterLab's stylesheet."""
    styles = re.findall(r"<style>.*?</style>", TEMPLATE.read_text(encoding="utf-8"), flags=re.S)
    assert styles, f"{TEMPLATE} adds no <style>"
    return "\n".join(styles)


def _edition_style() -> str:
    return f"<style>{EDITION_CSS.read_text(encoding='utf-8')}</style>"


def _helper_style(page) -> None:
    """Run the accessible-names helper (symsgd_core/ui/a11y.py) as anywidget would: import its module, render it."""
    from symsgd_core.ui.a11y import AccessibleNames

    page.evaluate("""async (src) => {
        const url = URL.createObjectURL(new Blob([src], {type: 'text/javascript'}));
        const mod = await import(url);
        const el = document.createElement('div');
        document.body.appendChild(el);
        mod.default.render({el});
    }""", AccessibleNames._esm)


@pytest.mark.parametrize("where", ["classroom template", "static edition", "JupyterLab (accessible-names helper)"])
def test_links_in_the_text_are_underlined(page, where):
    """Each of the project's page styles underlines links in the text in front of JupyterLab's stylesheet (whose
    ``a:link`` rule takes the underline away), and the audit passes a notebook page with a link in a sentence."""
    extra = {"classroom template": _template_style, "static edition": _edition_style}.get(where, str)()
    page.set_content(_notebook_page(extra))
    if where.startswith("JupyterLab"):
        _helper_style(page)
    decoration = page.evaluate("() => [...document.querySelectorAll('.jp-RenderedMarkdown a[href]')]"
                               ".map((a) => getComputedStyle(a).textDecorationLine)")
    assert decoration == ["underline"], f"{where}: links drawn with text-decoration {json.dumps(decoration)}"
    findings = audit(page)
    assert not blocking(findings), f"{where}:\n" + describe(blocking(findings))

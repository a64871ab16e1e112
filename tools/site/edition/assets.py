"""The site's shared files, copied once into ``site/assets/``: plotly.js, MathJax, the stylesheets, edition.js.

Every file comes from an installed package (plotly, the ``mathjax`` distribution of django-static-mathjax,
nbconvert's lab stylesheet) or from this folder; nothing is fetched. Pages load them with plain relative
``<script>``/``<link>`` tags, which work from any static host and from ``file://``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import symsgd_jupyter
from symsgd_core.ui.style import PLOTLY_CONFIG

STATIC = Path(__file__).resolve().parent / "static"
#: The notebooks' fine print (``<details class="symsgd-fine-print">``): the stylesheet JupyterLab and the classroom
#: use too (symsgd_jupyter/a11y.py), one copy.
FINE_PRINT_CSS = Path(symsgd_jupyter.__file__).resolve().parent / "fine_print.css"
#: MathJax 3 with TeX input and SVG output in one file: no web fonts and no further loading (file:// safe).
MATHJAX_FILE = "tex-svg-full.js"


def plotly_js() -> Path:
    """plotly.js as shipped by the plotly package (the version its figures are made for)."""
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise FileNotFoundError(f"plotly.min.js not found at {path}; is the plotly package complete?")
    return path


def mathjax_dir() -> Path:
    """The MathJax distribution's folder (``es5/`` and ``LICENSE``) from the ``mathjax`` Python package."""
    try:
        import mathjax
    except ImportError as exc:
        raise ImportError("the static edition typesets formulas with MathJax from the 'django-static-mathjax' "
                          "package (in requirements-lock.txt): run `make .venv/.installed` again") from exc
    root = Path(mathjax.__file__).parent / "static" / "mathjax"
    if not (root / "es5" / MATHJAX_FILE).is_file():
        raise FileNotFoundError(f"MathJax's {MATHJAX_FILE} not found under {root}")
    return root


def notebook_css() -> list[Path]:
    """nbconvert's JupyterLab stylesheet and light theme (what its lab template would inline in every page)."""
    from jupyter_core.paths import jupyter_path

    for base in jupyter_path("nbconvert", "templates"):
        static = Path(base) / "lab" / "static"
        if (static / "index.css").is_file():
            return [static / "index.css", static / "theme-light.css"]
    raise FileNotFoundError("nbconvert's lab template (lab/static/index.css) is not installed")


def copy_assets(out: Path) -> dict[str, int]:
    """Copy the shared files into ``out/assets``; return their sizes in bytes, by path relative to ``out``."""
    assets = Path(out) / "assets"
    (assets / "mathjax").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(plotly_js(), assets / "plotly.min.js")
    mj = mathjax_dir()
    shutil.copyfile(mj / "es5" / MATHJAX_FILE, assets / "mathjax" / MATHJAX_FILE)
    shutil.copyfile(mj / "LICENSE", assets / "mathjax" / "LICENSE")
    (assets / "notebook.css").write_text("\n".join(p.read_text(encoding="utf-8") for p in notebook_css()),
                                         encoding="utf-8")
    for name in ("edition.js", "edition.css"):
        shutil.copyfile(STATIC / name, assets / name)
    shutil.copyfile(FINE_PRINT_CSS, assets / FINE_PRINT_CSS.name)
    return {str(p.relative_to(out)): p.stat().st_size for p in sorted(assets.rglob("*")) if p.is_file()}


def head_html(assets: str = "assets") -> str:
    """The ``<head>`` scripts of every page: MathJax (configured for $…$), the shared plotly config
    (:data:`symsgd_core.ui.style.PLOTLY_CONFIG`, as ``window.SYMSGD_PLOTLY_CONFIG``), plotly.js and edition.js,
    deferred."""
    return f"""<link rel="icon" href="data:,">
<script>
window.MathJax = {{
  tex: {{inlineMath: [['$', '$'], ['\\\\(', '\\\\)']], displayMath: [['$$', '$$'], ['\\\\[', '\\\\]']],
        processEscapes: true, processEnvironments: true, tags: 'ams'}},
  svg: {{fontCache: 'global'}},
  options: {{ignoreHtmlClass: 'tex2jax_ignore', processHtmlClass: 'tex2jax_process'}},
  startup: {{pageReady: () => MathJax.startup.defaultPageReady().then(() => {{
    document.body.dataset.mathTypeset = 'done'; }})}}
}};
</script>
<script defer src="{assets}/mathjax/{MATHJAX_FILE}"></script>
<script>window.SYMSGD_PLOTLY_CONFIG = {json.dumps(PLOTLY_CONFIG)};</script>
<script defer src="{assets}/plotly.min.js"></script>
<script defer src="{assets}/edition.js"></script>"""

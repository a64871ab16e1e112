"""``make site``: execute every notebook and write the static edition (index + one page per notebook) to ``site/``.

Usage: ``python -m tools.site.build [--out site] [--notebooks notebooks] [--jobs 2] [--only 01,03]``
"""

from __future__ import annotations

import argparse
import html
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import date
from pathlib import Path

from . import assets as site_assets
from . import report as site_report
from .config import FRAME_BUDGET_BYTES
from .execute import execute_notebook
from .render import (
    LIVE_COMMANDS,
    Page,
    count_phrase,
    export_html,
    index_heading,
    notebook_title,
    page_notebook,
    plain_title,
    render_index,
)

REPO = Path(__file__).resolve().parents[3]
#: A file that marks a folder as an edition this builder wrote (it only ever empties such a folder).
MARKER = ".symsgd-edition"
SITE_TITLE = "symsgd — how SGD's noise shapes learning (static edition)"


def _nav(pages: list[Page], i: int | None) -> str:
    links = ['<a href="index.html">All notebooks</a>']
    if i is not None and i > 0:
        links.append(f'<a rel="prev" href="{pages[i - 1].href}">← {html.escape(pages[i - 1].stem)}</a>')
    if i is not None and i + 1 < len(pages):
        links.append(f'<a rel="next" href="{pages[i + 1].href}">{html.escape(pages[i + 1].stem)} →</a>')
    return '<nav class="edition-nav">' + " · ".join(links) + "</nav>"


def live_note(source_href: str | None, version: str, built: str) -> str:
    """The note every page carries: what is static, what is live here, and how to get the live notebooks."""
    source = (f' This page\'s notebook: <a href="{source_href}">{html.escape(Path(source_href).name)}</a>.'
              if source_href else "")
    lab, test = LIVE_COMMANDS
    return (
        '<aside class="edition-note" role="note"><p><b>Static edition: read without installing.</b> Every figure '
        "was computed by the notebook's own code when this edition was built "
        f"(symsgd_core {html.escape(version)}, {html.escape(built)}); it works offline and from a file.</p>"
        "<p>A figure with a slider under it can be moved here: its values were precomputed. "
        "<b>The full set of sliders</b>, the Run buttons and the answer boxes <b>need the live notebook</b>: get the "
        "repository, then run the README's two commands, "
        f"<code>{lab}</code> (opens the notebooks in JupyterLab) and <code>{test}</code> (checks every claim)."
        f"{source}</p></aside>")


def toc_entries(pages: list[Page]) -> list[dict]:
    """The index's entries: each page's link, its heading in the one style of :func:`.render.index_heading`
    (HTML-escaped) and what it shows ("1 figure, 1 with a live slider")."""
    entries = []
    for p in pages:
        live = sum(1 for f in p.figures if f.frames)
        entries.append({"href": p.href, "title_html": html.escape(index_heading(p.stem, p.title)),
                        "summary": f"{count_phrase(len(p.figures), 'figure')}, {live} with a live slider"})
    return entries


def _execute(args) -> tuple:
    path, capture_path = args
    return execute_notebook(Path(path), Path(capture_path), FRAME_BUDGET_BYTES)


def prepare_out(out: Path) -> None:
    """Empty ``out`` if it is an edition (or does not exist); refuse to touch any other folder."""
    if out.exists():
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise SystemExit(f"{out} exists and is not a static edition (no {MARKER}); refusing to empty it")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("written by python -m tools.site.build; emptied on every build\n", encoding="utf-8")
    (out / ".nojekyll").write_text("", encoding="utf-8")  # GitHub Pages: serve the files as they are


def build(out: Path, notebooks: list[Path], jobs: int = 2, log=print) -> dict:
    """Build the edition into ``out``; return the report (see :mod:`.report`)."""
    import symsgd_core

    t0 = time.perf_counter()
    prepare_out(out)
    shared = site_assets.copy_assets(out)
    (out / "notebooks").mkdir()
    with tempfile.TemporaryDirectory(prefix="symsgd-edition-") as tmp:
        work = [(str(nb), str(Path(tmp) / f"{nb.stem}.json")) for nb in notebooks]
        log(f"executing {len(notebooks)} notebooks ({jobs} at a time) and precomputing their sliders …")
        with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
            executed = list(pool.map(_execute, work))
    version, built = symsgd_core.__version__, date.today().isoformat()
    pages = [Page(nb.stem, notebook_title(ex.nb) or nb.stem, f"{nb.stem}.html", f"notebooks/{nb.name}")
             for nb, ex in zip(notebooks, executed)]
    head = site_assets.head_html("assets")
    timings = {}
    for i, (ex, page) in enumerate(zip(executed, pages)):
        shutil.copyfile(ex.path, out / page.source_href)
        nb = page_notebook(ex, page)
        nb.metadata["title"] = plain_title(page.title)
        body = export_html(nb, {"head": head, "assets": "assets", "source": page.source_href,
                                "header": _nav(pages, i) + live_note(page.source_href, version, built),
                                "footer": _nav(pages, i)})
        (out / page.href).write_text(body, encoding="utf-8")
        timings[page.stem] = {"run": ex.run_seconds, "capture": ex.capture_seconds}
        log(f"  {page.href}: run {ex.run_seconds:.0f} s, sliders {ex.capture_seconds:.0f} s")
    toc = toc_entries(pages)
    index = render_index(SITE_TITLE, "Interactive teaching notebooks about two results on SGD — the law of "
                         "balance (Ziyin, Li, Ueda) and one-way rank jumps (Wang, Jacot) — executed, with "
                         "their figures, in notebook order.", toc,
                         {"head": head, "assets": "assets", "header": _nav(pages, None) + live_note(None, version,
                                                                                                    built),
                          "footer": ""})
    (out / "index.html").write_text(index, encoding="utf-8")
    rep = site_report.page_weights(out, pages, shared, timings)
    rep["build_seconds"] = round(time.perf_counter() - t0, 1)
    site_report.write(rep, out)
    for line in site_report.table(rep):
        log(line)
    heavy = site_report.over_budget(rep)
    if heavy:
        raise SystemExit("pages over the budget: " + "; ".join(heavy))
    log(f"edition written to {out}/ in {rep['build_seconds']:.0f} s (open {out}/index.html)")
    return rep


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "site", help="output folder (default: site/)")
    parser.add_argument("--notebooks", type=Path, default=REPO / "notebooks", help="notebook folder")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once (default 2)")
    parser.add_argument("--only", default="", help="comma-separated prefixes of the notebooks to include")
    parser.add_argument("--solutions", action="store_true",
                        help="the instructor edition: every Check-yourself worked solution shown open")
    args = parser.parse_args(argv)
    if args.solutions:  # the kernels that execute the notebooks inherit it (symsgd_jupyter.mode.solutions_open)
        from symsgd_jupyter.mode import SOLUTIONS_ENV

        os.environ[SOLUTIONS_ENV] = "open"
    notebooks = sorted(p for p in args.notebooks.glob("*.ipynb") if not p.name.startswith("."))
    prefixes = tuple(p.strip() for p in args.only.split(",") if p.strip())
    if prefixes:
        notebooks = [nb for nb in notebooks if nb.name.startswith(prefixes)]
    if not notebooks:
        raise SystemExit(f"no notebooks found in {args.notebooks}" + (f" for {args.only!r}" if prefixes else ""))
    build(args.out.resolve(), notebooks, args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

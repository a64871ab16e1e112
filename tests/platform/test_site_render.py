"""The static edition's pages (tools/site/edition/render.py, assets.py, report.py, build.py): widget outputs become
static blocks, nothing is loaded from outside the site, the page budget is enforced."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from site_helpers import Line

from tools.site.edition import assets, build, config, report
from tools.site.edition.capture import capture
from tools.site.edition.execute import WIDGET_VIEW, ExecutedNotebook, widget_outputs
from tools.site.edition.render import (
    Page,
    count_phrase,
    export_html,
    index_heading,
    link_name,
    notebook_title,
    open_fine_print,
    page_notebook,
    plain_title,
    render_index,
    script_json,
    settings_line,
)


def test_script_json_cannot_close_its_script_tag():
    text = script_json({"status": "</script><script>alert(1)</script><!--"})
    assert "</script>" not in text and "<!--" not in text
    assert json.loads(text)["status"] == "</script><script>alert(1)</script><!--"


def test_link_names_come_from_the_class_and_are_unique_on_a_page():
    """The name of a controller in a page's address (``#orbit=lam:2``): its class in kebab case without
    ``Controller``, then ``-2``, ``-3`` for more of that class; adding another class before it leaves it as it is."""
    taken: list[str] = []
    for cls in ["OrbitController", "RankOneSetController", "TrapController", "Rank1Balance", "TrapController",
                "DiscreteSGD", None, "TrapController"]:
        taken.append(link_name(cls, taken))
    assert taken == ["orbit", "rank-one-set", "trap", "rank1-balance", "trap-2", "discrete-sgd", "figure", "trap-3"]
    assert link_name("TrapController", ["orbit"]) == "trap" and link_name("Trap", ["trap"]) == "trap-2"


def test_titles():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("intro"),
                                         nbformat.v4.new_markdown_cell("# 01 · Why $\\|u\\|^2$ obeys an ODE\ntext")])
    assert notebook_title(nb) == "01 · Why $\\|u\\|^2$ obeys an ODE"
    assert plain_title(notebook_title(nb)) == "01 · Why ‖u‖² obeys an ODE"


@pytest.mark.parametrize("title, plain", [
    ("Notebook 02 — The rank-1 lifting $\\tilde\\ell(u w^\\top)$, built and checked",
     "Notebook 02 — The rank-1 lifting ℓ̃(u wᵀ), built and checked"),  # once "(u w^)": symbol, accent and ^ lost
    ("05 · Does SGD's own noise, as an SDE, jump and stay in $B_1$?",
     "05 · Does SGD's own noise, as an SDE, jump and stay in B₁?"),
    ("a $\\tilde{x}^{2/L}$ and $W_{\\ell+1}$, $\\mathrm{d}t$", "a x̃^(2/L) and W_(ℓ+1), dt"),  # no Unicode form: kept
    ("no math, 5 $ signs", "no math, 5 $ signs"),
])
def test_a_title_in_plain_text_prints_its_math_as_unicode(title, plain):
    assert plain_title(title) == plain
    assert not set(plain_title(title)) & set("\\{}")


def test_the_settings_line_gives_each_control_as_label_equals_value():
    entry = {"controls": [{"label": "λ", "shown": "1"}, {"label": "model", "shown": "linear <layer>"},
                          {"label": "T = η/S", "shown": "0.16"}]}
    assert settings_line(entry) == ("Computed at the notebook's settings: λ = 1; model = linear &lt;layer&gt;; "
                                    "T = η/S = 0.16.")
    assert settings_line({"controls": []}) == ""


@pytest.fixture
def executed(monkeypatch, tmp_path):
    """A two-cell notebook whose second cell displayed a Line controller, captured in-process."""
    monkeypatch.setitem(config.CHOICES, "Line", config.SliderChoice("a", 4))
    ctl = Line()
    mid = ctl.view().model_id
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# A title\n\nInline $a x + b$ and display $$y = a x + b$$"),
        nbformat.v4.new_code_cell("ctl = Line()\nctl", outputs=[nbformat.v4.new_output(
            "display_data", data={WIDGET_VIEW: {"model_id": mid, "version_major": 2, "version_minor": 0},
                                  "text/plain": "VBox()"})]),
    ])
    nb.cells[1].execution_count = 1
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    capture([mid], str(tmp_path / "c.json"), 10**6)
    outputs = json.loads((tmp_path / "c.json").read_text())["outputs"]
    return ExecutedNotebook(tmp_path / "demo.ipynb", nb, outputs, 0.0, 0.0)


def test_widget_outputs_become_static_blocks(executed):
    page = Page("demo", "A title", "demo.html", "notebooks/demo.ipynb")
    nb = page_notebook(executed, page)
    assert widget_outputs(nb) == [] and "widgets" not in nb.metadata
    (out,) = nb.cells[1].outputs
    block = out["data"]["text/html"]
    assert 'class="edition-controller"' in block and "Live here:" in block and "offset b" in block
    assert 'id="line" data-link="line"' in block and page.links == ["line"]  # its name in a link
    assert [(f.figure, f.slider, f.frames) for f in page.figures] == [(0, "a", 4), (1, None, 0)]
    assert page.figures[1].why_static == "does not change with slope a"
    assert "Line: offset b" in page.controls_needing_notebook
    # each figure is described as on the live page: role, name, and its text alternative, per frame too
    assert block.count('role="figure"') == 2 and 'aria-describedby="edition-alt-' in block
    alts = re.findall(r'<div class="edition-figure-alt" id="[^"]+">([^<]*)</div>', block)
    assert len(alts) == 2 and alts[0].startswith("Figure 1 of 2") and "Settings: " in alts[0]
    meta = json.loads(re.search(r'class="edition-controller-data">(.*?)</script>', block, re.S).group(1))
    assert len(meta["descriptions"]) == 2 and len(meta["descriptions"][0]) == 4
    assert len(set(meta["descriptions"][0])) == 4  # the settings differ at each of the slider's 4 values


def test_the_settings_line_follows_the_slider_frame_by_frame(executed):
    """The line "Computed at …" under a figure: one per frame in the block's data (edition.js shows the frame's
    when the slider moves), each naming that frame's slider value and the notebook's other settings; the line in the
    page itself (what a page without JavaScript shows) is the notebook's own."""
    page = Page("demo", "A title", "demo.html", "notebooks/demo.ipynb")
    block = page_notebook(executed, page).cells[1].outputs[0]["data"]["text/html"]
    meta = json.loads(re.search(r'class="edition-controller-data">(.*?)</script>', block, re.S).group(1))
    lines = meta["settings"]
    assert len(lines) == len(meta["labels"]) == 4
    for k, (line, shown) in enumerate(zip(lines, meta["labels"])):
        slope = re.search(r"slope a = ([^;]+);", line).group(1)
        assert float(slope) == float(shown) == meta["values"][k], (k, line)  # the frame's value, not 0.5
        assert line.endswith("offset b = 1.")  # the other control stays at the notebook's value
        assert line.startswith("Computed at the notebook's settings" if k == meta["current"]
                               else "Computed at the slider's value and the notebook's other settings")
    assert len(set(lines)) == 4
    in_page = re.search(r'<p class="edition-settings">(.*?)</p>', block).group(1)
    assert in_page == lines[meta["current"]] and "slope a = 0.5;" in in_page


def test_a_settings_line_at_a_frame_checks_the_frame():
    entry = {"controls": [{"name": "T", "label": "T", "shown": "0.01"}],
             "slider": {"name": "T", "labels": ["0.01", "0.09"], "current": 0,
                        "frames": [{"shown": "0.01"}, {"shown": "0.090"}]}}
    assert settings_line(entry, 1) == "Computed at the slider's value and the notebook's other settings: T = 0.090."
    assert settings_line(entry, 0) == settings_line(entry) == "Computed at the notebook's settings: T = 0.01."
    del entry["slider"]["frames"][1]["shown"]  # a capture made before frames recorded it: the slider's label
    assert settings_line(entry, 1).endswith("T = 0.09.")
    with pytest.raises(ValueError, match="outside"):
        settings_line(entry, 2)
    with pytest.raises(ValueError, match="slider"):
        settings_line({"controls": entry["controls"]}, 0)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page script")
@pytest.mark.parametrize("step", [0, 2, 3])
def test_edition_js_shows_the_frames_settings_line(executed, tmp_path, step):
    """Without a browser: edition.js runs under node on a stub page (tests/static_site/js/edition_under_node.js) with
    the block's own data; when plotly reports the slider moved to a step, the block's settings line (and status line)
    is that step's. A browser run (tests/static_site/) also drags the real slider and compares with the kernel."""
    page = Page("demo", "A title", "demo.html", "notebooks/demo.ipynb")
    block = page_notebook(executed, page).cells[1].outputs[0]["data"]["text/html"]
    meta_text = re.search(r'class="edition-controller-data">(.*?)</script>', block, re.S).group(1)
    (tmp_path / "meta.json").write_text(meta_text.replace("<\\/", "</"), encoding="utf-8")
    meta = json.loads(meta_text)
    here = Path(__file__).resolve().parents[1]
    out = subprocess.run(["node", str(here / "static_site" / "js" / "edition_under_node.js"),
                          str(here.parent / "tools" / "site" / "edition" / "static" / "edition.js"),
                          str(tmp_path / "meta.json"), str(step)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    assert shown == {"settings": meta["settings"][step], "status": meta["statuses"][step]}
    assert f"slope a = {meta['labels'][step]};" in shown["settings"]


def test_the_page_loads_nothing_from_outside_the_site(executed):
    page = Page("demo", "A title", "demo.html", "notebooks/demo.ipynb")
    nb = page_notebook(executed, page)
    html = export_html(nb, {"head": assets.head_html("assets"), "assets": "assets", "source": page.source_href,
                            "header": build.live_note(page.source_href, "0.1.0", "today"), "footer": ""})
    refs = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert refs and all(not re.match(r"^[a-z]+://|^//", r) for r in refs), [r for r in refs if "://" in r]
    assert "cdn" not in html.lower() and "require.js" not in html and "mathjax@" not in html.lower()
    code = html[html.index('<details class="edition-code">'):]
    assert "Line" in code[:code.index("</details>")]  # the code is there, collapsed
    assert "make lab" in html and "make test" in html and "need the live notebook" in html
    # the inlined figure JSON survives nbconvert intact
    data = re.search(r'<script[^>]*class="edition-figure-data"[^>]*>(.*?)</script>', html, re.S).group(1)
    fig = json.loads(data.replace("<\\/", "</"))
    assert len(fig["frames"]) == 4 and fig["layout"]["sliders"][0]["steps"][0]["label"] == "0"


def test_assets_come_from_the_installed_packages(tmp_path):
    sizes = assets.copy_assets(tmp_path)
    assert sizes["assets/plotly.min.js"] > 1_000_000 and sizes[f"assets/mathjax/{assets.MATHJAX_FILE}"] > 500_000
    assert {"assets/edition.js", "assets/edition.css", "assets/notebook.css", "assets/mathjax/LICENSE",
            "assets/fine_print.css"} <= set(sizes)
    # the fine print's stylesheet is the one JupyterLab and the classroom get (symsgd_jupyter/a11y.py)
    from symsgd_jupyter.a11y import FINE_PRINT_CSS

    assert (tmp_path / "assets" / "fine_print.css").read_text(encoding="utf-8") == FINE_PRINT_CSS
    assert "details.symsgd-fine-print > summary::after" in FINE_PRINT_CSS and "focus-visible" in FINE_PRINT_CSS
    js = (tmp_path / "assets" / "edition.js").read_text()
    assert "import(" not in js and "fetch(" not in js  # both fail on pages opened from file://
    assert "://" not in assets.head_html()


FINE_PRINT_MD = """Main path.

<details class="symsgd-fine-print"><summary>Why $T = \\eta/S$</summary>

The **proof**: $$a_{i} = b_{i}$$

</details>

<details class="edition-code"><summary>Code</summary>x</details>"""


def test_the_fine_print_is_closed_on_the_page_and_open_in_the_handout(executed):
    """nbconvert keeps a fine-print block (its Markdown rendered inside, its math for MathJax) closed in the edition's
    page; the handout's transform opens it, and nothing else."""
    executed.nb.cells.insert(1, nbformat.v4.new_markdown_cell(FINE_PRINT_MD))
    page = Page("demo", "A title", "demo.html", "notebooks/demo.ipynb")
    html = export_html(page_notebook(executed, page),
                       {"head": "", "assets": "assets", "source": page.source_href, "header": "", "footer": ""})
    tags = re.findall(r"<details\b[^>]*>", html)
    assert '<details class="symsgd-fine-print">' in tags  # closed on screen
    inside = html[html.index('<details class="symsgd-fine-print">'):]
    inside = inside[:inside.index("</details>")]
    assert "<strong>proof</strong>" in inside and "a_{i} = b_{i}" in inside
    assert "<summary>Why $T = \\eta/S$</summary>" in inside
    assert 'href="assets/fine_print.css"' in html
    opened = open_fine_print(html)
    assert '<details class="symsgd-fine-print" open>' in opened and '<details class="symsgd-fine-print">' not in opened
    # everything else is unchanged: the code's and the claims' details stay closed
    assert opened.replace('<details class="symsgd-fine-print" open>', '<details class="symsgd-fine-print">') == html
    assert open_fine_print(opened) == opened  # already open: unchanged


@pytest.mark.parametrize("tag, opened", [
    ('<details class="symsgd-fine-print">', '<details class="symsgd-fine-print" open>'),
    ("<DETAILS id='x' class='note symsgd-fine-print'>", "<DETAILS id='x' class='note symsgd-fine-print' open>"),
    ('<details class=symsgd-fine-print>', '<details class=symsgd-fine-print open>'),
    ('<details class="symsgd-fine-print" open>', '<details class="symsgd-fine-print" open>'),
    ('<details open class="symsgd-fine-print">', '<details open class="symsgd-fine-print">'),
    ('<details class="symsgd-fine-printed">', '<details class="symsgd-fine-printed">'),  # another class
    ('<details class="edition-code">', '<details class="edition-code">'),
    ('<details data-open="1">', '<details data-open="1">'),
    ('<detailsx class="symsgd-fine-print">', '<detailsx class="symsgd-fine-print">'),
])
def test_open_fine_print_opens_only_the_fine_print(tag, opened):
    rest = "<summary>s</summary>b</details>"
    assert open_fine_print(f"<p>a</p>{tag}{rest}") == f"<p>a</p>{opened}{rest}"


def test_pages_over_the_budget_are_named():
    rep = {"budget_bytes_per_page": 10, "pages": [{"page": "a.html", "bytes": 5}, {"page": "b.html", "bytes": 11}]}
    assert report.over_budget(rep) == ["b.html: 0.00 MB > 0 MB"]


def test_the_builder_only_empties_an_edition(tmp_path):
    other = tmp_path / "mine"
    other.mkdir()
    (other / "keep.txt").write_text("x")
    with pytest.raises(SystemExit, match="not a static edition"):
        build.prepare_out(other)
    assert (other / "keep.txt").is_file()
    site = tmp_path / "site"
    build.prepare_out(site)
    (site / "old.html").write_text("x")
    build.prepare_out(site)
    assert not (site / "old.html").exists() and (site / build.MARKER).is_file()


def test_every_notebook_controller_class_in_the_choices_names_a_slider():
    assert all(c.slider for c in config.CHOICES.values())
    assert config.PAGE_BUDGET_BYTES == 10_000_000 and config.FRAME_BUDGET_BYTES < config.PAGE_BUDGET_BYTES


def test_repo_paths():
    assert (build.REPO / "notebooks").is_dir() and Path(build.__file__).parent.name == "edition"


def test_every_page_carries_the_shared_plotly_config():
    """The edition's pages draw with :data:`symsgd_core.ui.style.PLOTLY_CONFIG` (no share/cloud button, no logo
    link), written into each page's head; edition.js refuses to draw without it."""
    import json as _json

    from symsgd_core.ui.style import PLOTLY_CONFIG

    head = assets.head_html()
    line = next(s for s in head.splitlines() if "SYMSGD_PLOTLY_CONFIG" in s)
    blob = line.split("=", 1)[1].rsplit(";", 1)[0]
    assert _json.loads(blob) == PLOTLY_CONFIG and PLOTLY_CONFIG["showSendToCloud"] is False
    js = (assets.STATIC / "edition.js").read_text(encoding="utf-8")
    assert "window.SYMSGD_PLOTLY_CONFIG" in js and "sendDataToCloud" not in js  # no second copy of the config


def test_the_live_note_lists_what_needs_the_live_notebook():
    """Under a figure the note says which controls need the live notebook; with the slider its only control and a
    Run button it read "Needs the live notebook: and the Run button." (notebook 03, §4)."""
    from tools.site.edition.render import _live_note

    slider = {"name": "temperature", "label": "T = η/S", "labels": ["0.05", "0.3"], "values": [0.05, 0.3]}
    entry = {"slider": slider, "has_run": True, "controls": [{"name": "temperature", "label": "T = η/S"}]}
    assert _live_note(entry, True).endswith("<b>Needs the live notebook:</b> the Run button.")
    entry["controls"].append({"name": "sigma", "label": "label noise σ"})
    entry["controls"].append({"name": "gamma", "label": "weight decay γ"})
    assert _live_note(entry, True).endswith(
        "<b>Needs the live notebook:</b> label noise σ, weight decay γ and the Run button.")
    entry["has_run"] = False
    assert _live_note(entry, True).endswith("<b>Needs the live notebook:</b> label noise σ, weight decay γ.")
    entry["controls"] = entry["controls"][:1]
    assert "Needs the live notebook" not in _live_note(entry, True)


@pytest.mark.parametrize("stem, title, heading", [
    ("00_start_here", "Start here: how SGD's noise shapes learning",
     "00 · Start here: how SGD's noise shapes learning"),
    ("01_diffusion_cancellation", "01 · Why $\\|u\\|^2-\\|w\\|^2$ obeys an ODE under SGD",
     "01 · Why $\\|u\\|^2-\\|w\\|^2$ obeys an ODE under SGD"),
    ("02_rank1_lifting", "Notebook 02 — The rank-1 lifting $\\tilde\\ell(u w^\\top)$, built and checked",
     "02 · The rank-1 lifting $\\tilde\\ell(u w^\\top)$, built and checked"),
    ("07_x", "07: A title", "07 · A title"),
    ("08_x", "2-layer nets", "08 · 2-layer nets"),  # a title's own number is not a heading number
    ("gallery", "Gallery", "Gallery"),
])
def test_the_index_gives_every_notebook_one_heading_style(stem, title, heading):
    assert index_heading(stem, title) == heading


def test_the_index_headings_of_the_notebooks_share_one_style():
    """Every notebook's index entry reads ``NN · Title`` (the notebooks' own headings mix "01 · ", "Notebook 02 — " and
    none)."""
    notebooks = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("0*.ipynb"))
    headings = [index_heading(p.stem, notebook_title(nbformat.read(p, as_version=4))) for p in notebooks]
    assert len(headings) >= 6
    for path, heading in zip(notebooks, headings):
        assert re.fullmatch(rf"{path.stem[:2]} · [A-Z]\S.*", heading), heading
        assert "Notebook" not in heading.split(" · ")[1][:9] and " — " not in heading[:12]


@pytest.mark.parametrize("n, text", [(0, "0 figures"), (1, "1 figure"), (2, "2 figures"), (21, "21 figures")])
def test_counts_are_pluralised(n, text):
    assert count_phrase(n, "figure") == text


@pytest.mark.parametrize("n", [-1, 1.0, True, "2"])
def test_a_count_must_be_a_whole_number(n):
    with pytest.raises(ValueError, match="count"):
        count_phrase(n, "figure")


def test_the_index_says_1_figure_and_one_heading_style(tmp_path):
    from tools.site.edition.render import FigureInfo

    one = Page("02_rank1_lifting", "Notebook 02 — The rank-1 <lifting>", "02.html", "notebooks/02.ipynb",
               figures=[FigureInfo(1, 0, 0, "Line", "a", 4)])
    two = Page("03_x", "03 · Two", "03.html", "notebooks/03.ipynb",
               figures=[FigureInfo(1, 0, 0, "Line"), FigureInfo(2, 0, 0, "Line")])
    toc = build.toc_entries([one, two])
    assert [t["summary"] for t in toc] == ["1 figure, 1 with a live slider", "2 figures, 0 with a live slider"]
    assert [t["title_html"] for t in toc] == ["02 · The rank-1 &lt;lifting&gt;", "03 · Two"]
    page = render_index("T", "intro", toc, {"head": "", "assets": "assets", "header": "", "footer": ""})
    assert "1 figures" not in page and "1 figure," in page and "02 · The rank-1 &lt;lifting&gt;" in page

"""The HTML of the edition: one page per executed notebook (nbconvert, template ``templates/symsgd_edition``) and
the index.

Each widget output of the executed notebook is replaced by a static block: a controller's figures (with the
frames and slider of :mod:`.frames` where its main slider was precomputed), its status line, the settings it was
computed at, and a note on what is live here; other widgets become a static copy of their text. Everything a
page draws is inlined in it as JSON (``<script type="application/json">``): a page opened from ``file://`` can
read nothing else.
"""

from __future__ import annotations

import copy
import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .execute import WIDGET_VIEW, ExecutedNotebook, widget_outputs
from .frames import animated_figure

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "symsgd_edition"
#: The README's two commands (the live notebooks, and every check).
LIVE_COMMANDS = ("make lab", "make test")


#: The class of a sentence of the notebooks' Markdown that points at a code cell ("The cell below prints …"); the
#: handout, which prints no code unless asked, leaves such sentences out (static/handout.css).
CODE_POINTER_CLASS = "symsgd-code-pointer"
#: A sentence that opens by pointing at the code cell under it: from its start (the cell's, a paragraph's, or after
#: the previous sentence's end) to its own end; a ``$…$`` formula is read whole (a full stop inside it ends nothing).
CODE_POINTER = re.compile(r"(?:\A|(?<=\n\n)|(?<=[.!?] )|(?<=[.!?]\n))"
                          r"The (?:(?:next|first|second) cells?\b(?: below\b)?|cells? below\b)")
_SENTENCE_REST = re.compile(r"(?:\$[^$]*\$|(?!\n\n)[^$.!?]|[.!?](?!\s|\Z))*(?:[.!?](?=\s|\Z)|(?=\n\n|\Z))")


#: The class of a notebook's fine print (``<details class="symsgd-fine-print"><summary>…</summary> … </details>``,
#: ARCHITECTURE.md): closed on screen, printed open (:func:`open_fine_print`).
FINE_PRINT_CLASS = "symsgd-fine-print"
_DETAILS_TAG = re.compile(r"<details\b([^>]*)>", re.IGNORECASE)
_CLASS_ATTR = re.compile(r"""\bclass\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)
_OPEN_ATTR = re.compile(r"(?:^|\s)open(?:\s*=|\s|$)", re.IGNORECASE)


def open_fine_print(html_text: str) -> str:
    """``html_text`` with every ``<details>`` of class :data:`FINE_PRINT_CLASS` given the ``open`` attribute (the
    handout prints the fine print open); other ``<details>`` (code, worked solutions, claims) and all other text
    unchanged."""

    def opened(m: re.Match) -> str:
        attrs = m.group(1)
        cls = _CLASS_ATTR.search(attrs)
        classes = (next(g for g in cls.groups() if g is not None) if cls else "").split()
        if FINE_PRINT_CLASS not in classes or _OPEN_ATTR.search(attrs):
            return m.group(0)
        return m.group(0)[:-1] + " open>"

    return _DETAILS_TAG.sub(opened, html_text)


def mark_code_pointers(markdown: str) -> str:
    """``markdown`` with every sentence that opens by pointing at a code cell ("The cell below prints …", "The next
    cell …") wrapped in ``<span class="symsgd-code-pointer">``; other text unchanged."""
    out, pos = [], 0
    for m in CODE_POINTER.finditer(markdown):
        if m.start() < pos:  # inside a sentence already wrapped
            continue
        rest = _SENTENCE_REST.match(markdown, m.end())
        end = rest.end() if rest else m.end()
        out += [markdown[pos:m.start()], f'<span class="{CODE_POINTER_CLASS}">', markdown[m.start():end], "</span>"]
        pos = end
    return "".join(out) + markdown[pos:]


@dataclass
class FigureInfo:
    """One figure of a page, for the report and the browser test."""

    cell: int
    output: int
    figure: int
    controller: str | None
    slider: str | None = None
    frames: int = 0
    why_static: str | None = None


@dataclass
class Page:
    """One notebook's page."""

    stem: str
    title: str
    href: str
    source_href: str
    figures: list[FigureInfo] = field(default_factory=list)
    controls_needing_notebook: list[str] = field(default_factory=list)
    #: the link name of each controller block, in page order (:func:`link_name`)
    links: list[str] = field(default_factory=list)


def link_name(cls: str | None, taken: list[str]) -> str:
    """The name of a controller block in the page's address (``#orbit=lam:2``; edition.js) and its element id: its
    class in kebab case without a trailing ``Controller`` (``RankOneSetController`` → ``rank-one-set``; a lone
    figure is ``figure``), then ``-2``, ``-3`` … for the second, third … of that class on the page. A name from the
    class stays the same when other controllers are added before it, which an ordinal over the page would not."""
    base = re.sub(r"Controller$", "", cls or "") or "figure"
    base = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", base).lower()
    n = sum(1 for t in taken if t == base or re.fullmatch(re.escape(base) + r"-\d+", t)) + 1
    name = base if n == 1 else f"{base}-{n}"
    if name in taken:  # cannot happen (a class name has no "-"), kept as a guard
        raise ValueError(f"two controller blocks of a page would both be #{name}")
    return name


def notebook_title(nb) -> str:
    """The text of the notebook's first ``#`` heading (its file name if it has none)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, re.MULTILINE)
            if m:
                return m.group(1).strip()
    return ""


#: The TeX commands a notebook title may hold, as the characters they print (any other command is dropped).
_TEX_SYMBOLS = {"ell": "ℓ", "lambda": "λ", "eta": "η", "gamma": "γ", "theta": "θ", "sigma": "σ", "mu": "μ",
                "alpha": "α", "beta": "β", "rho": "ρ", "tau": "τ", "epsilon": "ε", "varepsilon": "ε", "phi": "φ",
                "Delta": "Δ", "nabla": "∇", "top": "ᵀ", "cdot": "·", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
                "to": "→", "in": "∈", "infty": "∞", "|": "‖"}
#: Accents, as the combining mark put after the character they sit on.
_TEX_ACCENTS = {"tilde": "\u0303", "hat": "\u0302", "bar": "\u0304"}
_SUPERSCRIPTS = dict(zip("0123456789+-−=()nTiᵀ", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿᵀⁱᵀ"))
_SUBSCRIPTS = dict(zip("0123456789+-−=()aeoxhklmnpstijruv", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₒₓₕₖₗₘₙₚₛₜᵢⱼᵣᵤᵥ"))


#: A number a notebook's own heading starts with, in any of the styles the notebooks use ("01 · ", "Notebook 02 — ").
_NUMBERED = re.compile(r"^\s*(?:notebook\s+)?\d+(?:\s*[·—–:]|\s+-)\s+", re.I)


def index_heading(stem: str, title: str) -> str:
    """A notebook's entry in the index, in one style for all: ``NN · Title``, the number from the file name
    (``02_rank1_lifting``) and the title without the number its heading may carry in another style
    (``Notebook 02 — The rank-1 lifting …`` → ``02 · The rank-1 lifting …``; ``Start here: …`` →
    ``00 · Start here: …``). A file name without a leading number gives the title alone."""
    number = re.match(r"\d+", stem)
    rest = _NUMBERED.sub("", title, count=1).strip() or stem
    return f"{number.group(0)} · {rest}" if number else rest


def count_phrase(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: ``1 figure``, ``2 figures``, ``0 figures``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"a count must be an int >= 0, got {n!r}")
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def _plain_math(tex: str) -> str:
    """One ``$…$`` of a title as plain text: symbols and accents as Unicode, sub- and superscripts as Unicode where
    every character has one (``^{2/L}`` stays ``^(2/L)``), braces dropped."""
    def command(m: re.Match) -> str:
        return _TEX_SYMBOLS.get(m.group(1), "")

    def accent(m: re.Match) -> str:
        arg = m.group(2) if m.group(2) is not None else m.group(3)
        arg = re.sub(r"\\([A-Za-z]+|\|)", command, arg)
        return arg[:1] + _TEX_ACCENTS[m.group(1)] + arg[1:] if arg else ""

    def script(m: re.Match) -> str:
        table = _SUPERSCRIPTS if m.group(1) == "^" else _SUBSCRIPTS
        arg = m.group(2) if m.group(2) is not None else m.group(3)
        if arg and all(ch in table for ch in arg):
            return "".join(table[ch] for ch in arg)
        return f"{m.group(1)}({arg})" if len(arg) > 1 else m.group(1) + arg

    text = re.sub(r"\\(tilde|hat|bar)\s*(?:\{([^{}]*)\}|(\\[A-Za-z]+|\S))", accent, tex)
    text = re.sub(r"\\([A-Za-z]+|\|)\s?", command, text)
    text = re.sub(r"([_^])(?:\{([^{}]*)\}|(\S))", script, text)
    return text.replace("{", "").replace("}", "")


def plain_title(title: str) -> str:
    """A title as plain text, for ``<title>``, the index, the handout's footer and PDF outline: each ``$…$`` through
    :func:`_plain_math` (``$\\tilde\\ell(u w^\\top)$`` → ``ℓ̃(u wᵀ)``, ``$B_1$`` → ``B₁``)."""
    text = re.sub(r"\$([^$]*)\$", lambda m: _plain_math(m.group(1)), title)
    return re.sub(r"\s+", " ", text.replace("\\", "")).strip()


def script_json(obj) -> str:
    """JSON safe inside ``<script type="application/json">`` (no ``</``, no ``<!--``)."""
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False, allow_nan=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\u0021--")


#: How the settings line starts: at the notebook's own settings, and at a precomputed value of the slider.
SETTINGS_AT_NOTEBOOK = "Computed at the notebook's settings: "
SETTINGS_AT_SLIDER = "Computed at the slider's value and the notebook's other settings: "


def settings_line(entry: dict, frame: int | None = None) -> str:
    """The line under a controller: its controls as ``label = value`` (as the edition's slider writes its value;
    once ``λ 1; model linear layer``), HTML-escaped; empty for a controller without controls.

    ``frame``: the index of a precomputed frame of the controller's slider (``entry["slider"]``): its slider's value
    is that frame's (the value the control showed there; its label in a capture made before frames recorded it), so
    the line under a figure moved to that frame says what it shows. ``None``, or the notebook's own frame: the
    notebook's settings.
    """
    slider = entry.get("slider")
    moved, name, value = False, None, None
    if frame is not None:
        if slider is None:
            raise ValueError("a settings line at a frame needs the controller's slider (entry['slider'])")
        if not 0 <= frame < len(slider["labels"]):
            raise ValueError(f"frame {frame} outside the slider's {len(slider['labels'])} frames")
        moved, name = frame != slider["current"], slider["name"]
        value = slider["frames"][frame].get("shown", slider["labels"][frame])
    def shown(c: dict) -> str:
        return str(value if name is not None and c.get("name") == name else c["shown"])

    parts = [f"{html.escape(c['label'])} = {html.escape(shown(c))}" for c in entry["controls"]]
    start = SETTINGS_AT_SLIDER if moved else SETTINGS_AT_NOTEBOOK
    return start + "; ".join(parts) + "." if parts else ""


def _live_note(entry: dict, animated: bool) -> str:
    slider = entry.get("slider")
    others = [c["label"] for c in entry["controls"] if not slider or c["name"] != slider["name"]]
    needs = ", ".join(html.escape(o) for o in others)
    if entry.get("has_run"):  # "a, b and the Run button"; the Run button alone once (no "Needs …: and the Run button")
        needs = f"{needs} and the Run button" if needs else "the Run button"
    if slider and animated:
        first, last = slider["labels"][0], slider["labels"][-1]
        how = " (Run pressed at each)" if entry.get("has_run") else ""
        here = (f"<b>Live here:</b> the slider under the figure ({html.escape(slider['label'])}, "
                f"{len(slider['values'])} values from {html.escape(first)} to {html.escape(last)}, computed by the "
                f"notebook's own code{how} when this edition was built). ")
    else:
        why = entry.get("why_no_slider") or "nothing in it changes along its main slider"
        here = f"<b>Static here</b> ({html.escape(why)}). "
    rest = f"<b>Needs the live notebook:</b> {needs}." if needs else ""
    return here + rest


def controller_block(entry: dict, cell: int, output: int, page: Page) -> str:
    """The static block for one captured controller (or a lone figure), recording its figures in ``page``."""
    slider = entry.get("slider")
    blocks, animated_any = [], False
    for k, base in enumerate(entry["figures"]):
        info = FigureInfo(cell, output, k, entry.get("class"))
        fig = None
        if slider:
            fig = animated_figure(base, [f["figures"][k] for f in slider["frames"]], slider["labels"],
                                  slider["current"], slider["label"])
            if fig is None:
                info.why_static = f"does not change with {slider['label']}"
        else:
            info.why_static = entry.get("why_no_slider") or "no slider"
        if fig is None:
            fig = copy.deepcopy(base)
        else:
            info.slider, info.frames, animated_any = slider["name"], len(fig["frames"]), True
        page.figures.append(info)
        height = int((fig.get("layout") or {}).get("height") or 450)
        described = _figure_alt(entry, cell, output, k)
        caption = (f'<p class="edition-caption">This figure {html.escape(info.why_static)}.</p>'
                   if slider and info.why_static else "")
        blocks.append(
            f'<div class="edition-figure" data-figure="{k}" data-frames="{info.frames}">'
            f'<div class="edition-plot" style="min-height:{height}px" {described["attributes"]}></div>'
            f'{described["element"]}'
            f'<script type="application/json" class="edition-figure-data">{script_json(fig)}</script>'
            f"{caption}</div>")
    meta = {"class": entry.get("class"), "cell": cell, "output": output}
    if slider and animated_any:
        meta.update(slider=slider["name"], label=slider["label"], values=slider["values"], labels=slider["labels"],
                    current=slider["current"], statuses=[f["status"] for f in slider["frames"]],
                    settings=[settings_line(entry, k) for k in range(len(slider["frames"]))],
                    descriptions=[[f.get("descriptions", [""] * len(entry["figures"]))[k] for f in slider["frames"]]
                                  for k in range(len(entry["figures"]))])
    if entry["kind"] == "controller":
        page.controls_needing_notebook += [f"{entry['class']}: {c['label']}" for c in entry["controls"]
                                           if not (slider and animated_any and c["name"] == slider["name"])]
    status = entry.get("status") or ""
    notes = ""
    if entry["kind"] == "controller":
        notes = (f'<p class="edition-settings">{settings_line(entry)}</p>'
                 f'<p class="edition-live-note">{_live_note(entry, animated_any)}</p>')
    name = link_name(entry.get("class"), page.links)
    page.links.append(name)
    return (f'<div class="edition-controller" id="{name}" data-link="{name}" '
            f'data-class="{html.escape(entry.get("class") or "")}" data-cell="{cell}" data-output="{output}">'
            f'<script type="application/json" class="edition-controller-data">{script_json(meta)}</script>'
            + "".join(blocks)
            + f'<div class="edition-status">{status}</div>{notes}</div>')


def _figure_alt(entry: dict, cell: int, output: int, k: int) -> dict:
    """The plot's accessibility attributes and its text alternative (visually hidden), as the live page has them:
    role "figure" (its mode bar stays reachable), its title as name, the description (what is plotted, the
    settings, the finding; updated by edition.js when the slider moves) linked by ``aria-describedby``."""
    from symsgd_jupyter.describe import plain_text

    figure = entry["figures"][k]
    title = plain_text(((figure.get("layout") or {}).get("title") or {}).get("text")) or f"figure {k + 1}"
    text = (entry.get("descriptions") or [""] * len(entry["figures"]))[k]
    ident = f"edition-alt-{cell}-{output}-{k}"
    return {"attributes": f'role="figure" aria-label="{html.escape(title, quote=True)}" aria-describedby="{ident}"',
            "element": f'<div class="edition-figure-alt" id="{ident}">{html.escape(text)}</div>'}


def widgets_block(entry: dict) -> str:
    """A static copy of a widget panel (the "Check yourself" boxes), with a note that answering needs the kernel."""
    return ('<div class="edition-widgets"><p class="edition-live-note"><b>Needs the live notebook:</b> '
            "the answer boxes check an answer in the notebook's kernel. Here you can read the questions; to check "
            f"your answers, open the live notebook.</p>{entry.get('html', '')}</div>")


def page_notebook(executed: ExecutedNotebook, page: Page) -> nbformat.NotebookNode:
    """A copy of the executed notebook whose widget outputs are static HTML blocks (figures recorded in ``page``)."""
    nb = copy.deepcopy(executed.nb)
    for ci, oi, mid in widget_outputs(executed.nb):
        entry = executed.outputs.get(mid, {"kind": "missing"})
        if entry["kind"] in ("controller", "figure"):
            block = controller_block(entry, ci, oi, page)
        elif entry["kind"] == "widgets":
            block = widgets_block(entry)
        else:
            block = ('<p class="edition-failed" role="alert">This output was a widget the edition could not '
                     "capture; open the live notebook to see it.</p>")
        nb.cells[ci].outputs[oi] = nbformat.v4.new_output("display_data", data={"text/html": block})
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = mark_code_pointers(cell.source)
        for out in cell.get("outputs", []):
            out.get("data", {}).pop(WIDGET_VIEW, None)
    return nb


def export_html(nb, resources: dict) -> str:
    """nbconvert's HTML of ``nb`` with the edition's template (code collapsed, assets local)."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name=TEMPLATE, extra_template_basedirs=[str(TEMPLATES)])
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nb, resources={"edition": resources})
    return body


def render_index(title: str, intro: str, pages: list[dict], parts: dict) -> str:
    """The index page (``pages``: dicts with href, title_html, summary)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES / TEMPLATE)), autoescape=True)
    return env.get_template("site_index.html.j2").render(title=title, intro=intro, pages=pages, **parts)

"""The printed handout (``make handout``, tools/site/edition/handout.py), printed from the built edition and read back.

For each notebook's PDF: a page count inside a range derived from what it holds; every figure there as an image, as
many as the edition has figures plus the small multiples of its precomputed sliders, and none blank; every font
embedded; no sentence that asks the reader to move a slider, press Run or type in an answer box; no code. The PDF is
read with pypdf (fonts, images and text), not with poppler's pdffonts, which CI does not install.
"""

from __future__ import annotations

import json
import math
import os
import re
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from browser_setup import discover_notebooks
from site_support import REPO

from tools.site.edition import handout

pytestmark = pytest.mark.browser

#: The notebooks printed by `make test` (printing takes a minute or more each): notebook 02 has the most kinds of figure
#: (3-D, several precomputed sliders, small multiples). SYMSGD_HANDOUT_NOTEBOOKS=all (``make test-handout``) prints
#: every notebook. The live-reader wording of every notebook is checked without printing
#: (tests/notebooks/test_handout_text.py).
_ONLY = os.environ.get("SYMSGD_HANDOUT_NOTEBOOKS", "02_rank1_lifting")
NOTEBOOKS = [nb for nb in discover_notebooks() if _ONLY == "all" or nb.stem in _ONLY.split(",")]
LIVE_WORDING = handout.LIVE_WORDING
#: A full A4 page of this stylesheet holds ~3500 characters of running text; a page with less than a fifth of that
#: still counts as text (headings, short paragraphs between figures): the page range allows for it.
CHARS_PER_PAGE_MIN = 700
#: Most figures per page: a figure's photograph is ~186 mm wide and at least ~70 mm high on a 268 mm high page.
FIGURES_PER_PAGE_MAX = 4


def _images(page) -> list:
    """The image XObjects a page draws, each once per time it is drawn (forms followed)."""
    from pypdf.generic import ContentStream

    out = []

    def walk(content, resources):
        xobjects = (resources or {}).get("/XObject") or {}
        xobjects = xobjects.get_object() if hasattr(xobjects, "get_object") else xobjects
        for operands, op in ContentStream(content, page.pdf).operations:
            if op != b"Do":
                continue
            obj = xobjects[operands[0]].get_object()
            if obj.get("/Subtype") == "/Image":
                out.append(obj)
            elif obj.get("/Subtype") == "/Form":
                walk(obj, obj.get("/Resources") or resources)

    walk(page.get_contents(), page.get("/Resources").get_object())
    return out


def _blank(image) -> bool:
    """True when fewer than 1 % of an image's pixels differ from its most common colour (nothing drawn)."""
    width, height = int(image["/Width"]), int(image["/Height"])
    data = np.frombuffer(image.get_data(), dtype=np.uint8)
    channels = data.size // (width * height)
    assert channels in (1, 3, 4) and data.size == width * height * channels, (
        f"an image of {width}x{height} with {data.size} bytes: not a raw bitmap this test can read")
    pixels = data.reshape(-1, channels).astype(np.uint32)
    # one integer per colour (np.unique over rows sorts them lexicographically: ~3 s for a printed figure)
    colours = sum(pixels[:, c] << (8 * c) for c in range(channels))
    _, counts = np.unique(colours, return_counts=True)
    return counts.max() > 0.99 * len(colours)


def _fonts(page) -> dict:
    """Every font a page uses (forms followed): name → its dictionary."""
    fonts = {}

    def walk(resources):
        resources = resources.get_object() if hasattr(resources, "get_object") else resources
        for name, font in ((resources or {}).get("/Font") or {}).items():
            fonts[f"{name}:{font.get_object().get('/BaseFont')}"] = font.get_object()
        for xobj in ((resources or {}).get("/XObject") or {}).values():
            xobj = xobj.get_object()
            if xobj.get("/Subtype") == "/Form" and xobj.get("/Resources"):
                walk(xobj["/Resources"])

    walk(page.get("/Resources"))
    return fonts


def not_embedded(font) -> bool:
    """True when a font's glyphs are not in the PDF: no FontFile, FontFile2 or FontFile3 in its descriptor (a Type0
    font's descendant's); a Type3 font carries its glyphs as drawings, so it is embedded."""
    if font.get("/Subtype") == "/Type3":
        return False
    if font.get("/Subtype") == "/Type0":
        font = font["/DescendantFonts"][0].get_object()
    descriptor = (font.get("/FontDescriptor") or {})
    descriptor = descriptor.get_object() if hasattr(descriptor, "get_object") else descriptor
    return not any(key in descriptor for key in ("/FontFile", "/FontFile2", "/FontFile3"))


def code_lines(notebook: Path) -> list[str]:
    """Distinctive lines of the notebook's code cells (calls, at least 25 characters), whitespace removed."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    lines = [line.strip() for cell in nb["cells"] if cell["cell_type"] == "code"
             for line in "".join(cell["source"]).splitlines()]
    return [re.sub(r"\s+", "", ln) for ln in lines if len(ln) >= 25 and "(" in ln and not ln.startswith("#")]


#: A block of fine print in a notebook's Markdown (ARCHITECTURE.md): its summary and its body.
FINE_PRINT = re.compile(r'^<details class="symsgd-fine-print"><summary>(.*?)</summary>\n(.*?)\n</details>',
                        re.MULTILINE | re.DOTALL)

#: A sentence marked as pointing at a code cell (ARCHITECTURE.md): not printed without ``--code``.
CODE_ONLY = re.compile(r'<span class="symsgd-code-only">.*?</span>', re.DOTALL)


def fine_print_phrases(notebook: Path) -> list[str]:
    """For each block of fine print of the notebook, a phrase of its body that prints as written: the longest run
    (at most 60 characters, at least 20) of plain words (formulas, markup and links removed, and the sentences that
    point at a code cell, ``symsgd-code-only``, which the handout leaves out without ``--code``; code ends a run),
    whitespace removed."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    phrases = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for m in FINE_PRINT.finditer("".join(cell["source"])):
            # code prints as text of its own: it ends a run (formulas print as drawings: the words join)
            body = re.sub(r"```.*?```|`[^`]*`", " | ", CODE_ONLY.sub(" ", m.group(2)), flags=re.DOTALL)
            body = re.sub(r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`|\]\([^)]*\)|<[^>]+>", " ", body, flags=re.DOTALL)
            runs = re.findall(r"[A-Za-z][A-Za-z ,']{19,}", re.sub(r"\s+", " ", body))
            if runs:
                phrases.append(re.sub(r"\s+", "", max(runs, key=len))[:60])
    return phrases


def test_fine_print_phrases_reads_each_block(tmp_path):
    md = ('Main.\n\n<details class="symsgd-fine-print"><summary>Why $x$</summary>\n\nThe **proof** of $a = b$ '
          'holds for every sample here.\n\n</details>\n\n<details class="edition-code"><summary>Code</summary>'
          'Not fine print at all, never printed.</details>\n\n<details class="symsgd-fine-print"><summary>Fit'
          '</summary>\n\n<span class="symsgd-code-only">The cell below fits the exponent of every long run.</span> '
          'Short words.\n\n</details>\n\n<details class="symsgd-fine-print"><summary>Made</summary>\n\nThe file '
          '`data.npz` was made with\n\n```\npython -m make\n```\n\nand checked by the tests.\n\n</details>')
    path = tmp_path / "probe.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": [md]}]}), encoding="utf-8")
    # the code-only sentence is not printed; the code ends a run ("Thefilewasmadewith" does not print as one)
    assert fine_print_phrases(path) == ["ofholdsforeverysamplehere", "andcheckedbythetests"]


def read_pdf(path: Path) -> dict:
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    pages = list(reader.pages)
    return {"pages": len(pages), "text": "\n".join(p.extract_text() or "" for p in pages),
            "images": [img for p in pages for img in _images(p)],
            "fonts": {k: f for p in pages for k, f in _fonts(p).items()}}


def print_notebook(browser, notebook: Path, site_dir: Path, out: Path, code: bool = False) -> tuple[dict, dict]:
    report = handout.build(site_dir, out, only=(notebook.stem,), code=code, course=False, log=lambda *a: None,
                           browser=browser)
    (row,) = report["pages"]
    return row, read_pdf(out / row["pdf"])


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_handout_pdf(notebook, site_dir, edition_report, chromium, tmp_path):
    edition = next(r for r in edition_report["pages"] if r["page"] == f"{notebook.stem}.html")
    row, pdf = print_notebook(chromium, notebook, site_dir, tmp_path)
    name = row["pdf"]
    # every figure of the edition, and for each precomputed slider min(frames, MULTIPLES) small multiples
    figures = edition["figures"]
    expected = len(figures) + sum(min(f["frames"], handout.MULTIPLES) for f in figures if f["frames"])
    assert len(row["figures"]) == len(figures), f"{name}: {len(row['figures'])} figures printed of {len(figures)}"
    assert row["images"] == expected, f"{name}: {row['images']} images placed, {expected} expected"
    assert len(pdf["images"]) == expected, f"{name}: the PDF draws {len(pdf['images'])} images, {expected} expected"
    blank = [i for i, img in enumerate(pdf["images"]) if _blank(img)]
    assert not blank, f"{name}: blank figure images (drawing order) {blank}"
    # no text of a small multiple over another text or over another panel (handout.js overlaps; notebook 02's
    # orbit figure before: its right panel's y title over the heat map beside it, in all four)
    crowded = [f"figure {j + 1} at {f['values'][m]}: {found[:3]}" for j, f in enumerate(row["figures"])
               for m, found in enumerate(f["overlaps"]["small"]) if found]
    assert not crowded, f"{name}: small multiples whose texts run into each other or another panel: {crowded[:4]}"
    # pages: at least what the figures need; at most a page per figure, per row of two small multiples and per
    # CHARS_PER_PAGE_MIN characters of text, plus the title page
    multiples = expected - len(figures)
    low = max(1, math.ceil(len(figures) / FIGURES_PER_PAGE_MAX))
    high = len(figures) + math.ceil(multiples / 2) + math.ceil(len(pdf["text"]) / CHARS_PER_PAGE_MIN) + 1
    assert low <= pdf["pages"] <= high, f"{name}: {pdf['pages']} pages, expected {low}..{high}"
    assert pdf["pages"] == row["pdf_pages"]
    missing = sorted(k for k, f in pdf["fonts"].items() if not_embedded(f))
    assert pdf["fonts"] and not missing, f"{name}: fonts not embedded: {missing}"
    text = re.sub(r"\s+", " ", pdf["text"])
    live = [m.group(0) + " …" + text[m.end():m.end() + 40] for pat in LIVE_WORDING
            for m in re.finditer(pat, text)]
    assert not live, f"{name}: wording for the live notebook in the handout: {live[:5]}"
    flat = re.sub(r"\s+", "", pdf["text"])
    shown = [ln for ln in code_lines(notebook) if ln in flat]
    assert not shown, f"{name}: code in the handout without --code: {shown[:3]}"
    # the fine print, closed on screen, prints open: the body of every block is on paper
    printed = unicodedata.normalize("NFKC", flat)  # the PDF's ligatures ("ﬁ") as letters
    closed = [p for p in fine_print_phrases(notebook) if p not in printed]
    assert not closed, f"{name}: fine print not printed open (its text is missing): {closed[:3]}"


def test_handout_with_code_shows_the_code(site_dir, chromium, tmp_path):
    """``--code``: the code cells are printed (the notebook with the fewest figures, to print quickly)."""
    notebook = discover_notebooks()[0]
    row, pdf = print_notebook(chromium, notebook, site_dir, tmp_path, code=True)
    flat = re.sub(r"\s+", "", pdf["text"])
    lines = code_lines(notebook)
    shown = [ln for ln in lines if ln in flat]
    assert lines and len(shown) >= len(lines) // 2, f"{len(shown)} of {len(lines)} code lines in the PDF with --code"


def test_the_font_check_sees_an_unembedded_font():
    """The check itself: a standard-14 Helvetica (no font file, as a PDF writer leaves it unembedded) is flagged; a
    TrueType font with its FontFile2 and a Type3 font are not."""
    from pypdf.generic import DictionaryObject, NameObject

    def d(**kw):
        return DictionaryObject({NameObject("/" + k): (v if not isinstance(v, str) else NameObject(v))
                                 for k, v in kw.items()})

    assert not_embedded(d(Type="/Font", Subtype="/Type1", BaseFont="/Helvetica"))
    assert not not_embedded(d(Type="/Font", Subtype="/TrueType", FontDescriptor=d(FontFile2=d())))
    assert not not_embedded(d(Type="/Font", Subtype="/Type3"))


class _FakeImage(dict):
    def __init__(self, pixels: np.ndarray):
        super().__init__({"/Width": pixels.shape[1], "/Height": pixels.shape[0]})
        self._bytes = pixels.astype(np.uint8).tobytes()

    def get_data(self) -> bytes:
        return self._bytes


def test_the_blank_check_sees_a_blank_image_and_passes_a_drawn_one():
    """The check itself: one colour everywhere (or a speck under 1 %) is blank; a figure's lines are not; a colour
    that differs from the background in one channel only counts as different."""
    white = np.full((50, 40, 3), 255)
    assert _blank(_FakeImage(white))
    speck = white.copy()
    speck[0, :10] = 0  # 10 of 2 000 pixels
    assert _blank(_FakeImage(speck))
    drawn = white.copy()
    drawn[10:20, :, 2] = 254  # 400 pixels differ in the blue channel only
    assert not _blank(_FakeImage(drawn))
    assert not _blank(_FakeImage(np.random.default_rng(0).integers(0, 256, (30, 30, 4))))
    assert _blank(_FakeImage(np.zeros((20, 20))))  # grey


def test_a_printed_claim_line_has_no_disclosure_triangle(chromium):
    """A claim line (``<details class="symsgd-claims">``, and a deliberate failure's ``symsgd-caught``) prints without
    the "▶" that invites a click (handout.css); on screen the triangle stays."""
    css = (REPO / "tools" / "site" / "edition" / "static" / "handout.css").read_text(encoding="utf-8")
    page = chromium.new_page()
    try:
        page.set_content(f"<style>{css}</style><body class='edition-handout'>"
                         "<details class='symsgd-claims'><summary>✔ 3 claims checked</summary><table></table></details>"
                         "<details class='symsgd-caught'><summary>✔ 1 broken input caught</summary></details></body>")
        markers = "() => Array.from(document.querySelectorAll('summary'), (s) => getComputedStyle(s).listStyleType)"
        assert page.evaluate(markers) == ["disclosure-closed"] * 2  # on screen, as the static edition shows it
        page.emulate_media(media="print")
        assert page.evaluate(markers) == ["none"] * 2
    finally:
        page.close()


def _png(width: int, height: int) -> str:
    """A plain blue PNG of ``width`` × ``height`` pixels, base64 (printed as an image, not as vector drawing)."""
    import base64
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes((51, 102, 153)) * width for _ in range(height))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    return base64.b64encode(png).decode()


def test_a_figure_taller_than_the_rest_of_a_page_starts_on_it(chromium, tmp_path, site_dir):
    """An output holding a figure and its small multiples, taller than what is left of the page, breaks between its
    pictures (handout.css): its large picture prints on the page of the heading and the text above it. With
    JupyterLab's own stylesheet alone (every output kept on one page, and clipped) the whole output moved to the next
    page and left most of the first one blank (notebook 02's handout, page 3)."""
    from pypdf import PdfReader

    static = REPO / "tools" / "site" / "edition" / "static"
    small, large = (f"data:image/png;base64,{_png(400, h)}" for h in (300, 260))
    multiples = "".join(f"<figure class='handout-multiple'><img class='handout-small' src='{small}'>"
                        f"<figcaption>step {k}</figcaption></figure>" for k in range(4))
    body = ("<h2>1. A section</h2>" + "<p>Some text of the section.</p>" * 6 +
            "<div class='jp-OutputArea'><div class='jp-OutputArea-child'><div class='jp-OutputArea-output'>"
            "<div class='edition-controller'><div class='edition-figure'><div class='handout-figure'>"
            f"<img class='handout-main' src='{large}'><div class='handout-multiples'>{multiples}</div>"
            "</div></div></div></div></div></div>")

    def images_per_page(css_files) -> list[int]:
        css = "".join((site_dir / "assets" / f).read_text(encoding="utf-8") if f == "notebook.css"
                      else (static / f).read_text(encoding="utf-8") for f in css_files)
        page = chromium.new_page()
        try:
            page.set_content(f"<style>{css}</style><body class='edition-handout'>{body}</body>")
            page.pdf(path=str(tmp_path / "out.pdf"), format="A4")
        finally:
            page.close()
        return [len(_images(p)) for p in PdfReader(tmp_path / "out.pdf").pages]

    before = images_per_page(["notebook.css", "edition.css"])
    assert before[0] == 0, f"JupyterLab's stylesheet no longer moves the output whole: {before}"  # the check can fail
    after = images_per_page(["notebook.css", "edition.css", "handout.css"])
    assert after[0] >= 1, f"the figure's large picture is not on the page of its heading: images per page {after}"
    assert sum(after) == sum(before) == 5

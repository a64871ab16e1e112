"""A link that keeps the slider: in the static edition, moving a precomputed slider writes it into the
page's address (``#orbit=lam:2``, edition.js), and a fresh page opened at that address shows exactly what the
move showed — every figure of that controller, its slider, its status line and its text alternatives — from the
static server and from ``file://``. A bad address leaves every figure at the notebook's value and says so.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from browser_setup import VIEWPORT
from figure_inspection import PROBE_JS
from test_static_site import (
    _READY_JS,
    MOVE_TIMEOUT_S,
    PAGE_TIMEOUT_S,
    Offline,
    _target,
    check_drawn_and_typeset,
    drag_slider,
    wait_moved,
)

pytestmark = pytest.mark.browser

#: Several controllers with precomputed sliders, 3-D and heatmap figures, and formulas in the status lines.
PAGE = "02_rank1_lifting.html"

#: How edition.js's warnings about an address begin (Chromium's own, e.g. WebGL's, do not count).
WARNING = "symsgd edition, link:"

#: The controllers of the page that have a precomputed slider: link name, slider, labels, values, notebook step,
#: and the indices (in the block) of its animated figures.
_CONTROLLERS_JS = """() => Array.from(document.querySelectorAll('.edition-controller[data-link]')).map((b) => {
  const meta = JSON.parse(b.querySelector('script.edition-controller-data').textContent);
  const figs = Array.from(b.querySelectorAll('.edition-figure'));
  return {name: b.dataset.link, slider: meta.slider || null, labels: meta.labels, values: meta.values,
          current: meta.current, descriptions: meta.descriptions,
          animated: figs.map((f, i) => (Number(f.dataset.frames) ? i : -1)).filter((i) => i >= 0)};
}).filter((c) => c.slider)"""

#: What a controller block shows: each animated figure's data, title, annotations, axis ranges and slider step,
#: its status line and its figures' text alternatives.
_VIEW_JS = """(block) => {
  const state = (plot) => JSON.parse(JSON.stringify({
    data: plot.data, title: (plot.layout.title || {}).text || null,
    annotations: (plot.layout.annotations || []).filter(a => a.visible !== false).map(a => a.text),
    ranges: Object.fromEntries(Object.keys(plot.layout).filter(k => /^[xy]axis[0-9]*$/.test(k))
      .map(k => [k, {range: plot.layout[k].range || null, px: plot._fullLayout[k]._length}])),
    scenes: Object.keys(plot.layout).filter(k => /^scene[0-9]*$/.test(k)).map(k => plot.layout[k]),
    active: plot.layout.sliders && plot.layout.sliders.length ? plot.layout.sliders[0].active : null,
  }, (k, v) => (k === 'uid' ? undefined : (ArrayBuffer.isView(v) ? Array.from(v) : v))));
  const figs = Array.from(block.querySelectorAll('.edition-figure'));
  return {
    figures: figs.filter((f) => Number(f.dataset.frames)).map((f) => state(f.querySelector('.edition-plot'))),
    status: block.querySelector('.edition-status').innerText,
    alts: figs.map((f) => f.querySelector('.edition-figure-alt').textContent),
  };
}"""


def figure_differences(want: dict, have: dict) -> list[str]:
    """Where two states of a figure differ: data, title, annotations, 3-D scenes and slider step exactly; each axis
    range within one pixel of that axis (plotly pads an autoranged axis by marker sizes in pixels, so its range
    moves with the plot's size in pixels as the page lays out: a pixel is the picture's own resolution)."""
    out = [f"{key} differs" for key in ("data", "title", "annotations", "scenes", "active") if want[key] != have[key]]
    if set(want["ranges"]) != set(have["ranges"]):
        return out + [f"axes {sorted(want['ranges'])} != {sorted(have['ranges'])}"]
    for axis, w in want["ranges"].items():
        h = have["ranges"][axis]
        if (w["range"] is None) != (h["range"] is None):
            out.append(f"{axis}: range {w['range']} != {h['range']}")
        elif w["range"] is not None:
            pixel = abs(w["range"][1] - w["range"][0]) / max(w["px"], h["px"])
            if any(abs(a - b) > pixel for a, b in zip(w["range"], h["range"], strict=True)):
                out.append(f"{axis}: range {w['range']} != {h['range']} (one pixel is {pixel:.3g})")
    return out


def encode(label: str) -> str:
    """``encodeURIComponent(label)``."""
    return quote(str(label), safe="-_.!~*'()")


def open_at(browser, url: str, allowed):
    """A page at ``url``, its figures drawn, its formulas typeset and its address read by edition.js; with the
    outside requests, the errors of its console and edition.js's warnings."""
    page = browser.new_page(viewport=VIEWPORT)
    page.add_init_script(PROBE_JS)
    offline = Offline(page, allowed)
    errors: list[str] = []
    warnings: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else (
        warnings.append(m.text) if m.type == "warning" and m.text.startswith(WARNING) else None))
    page.goto(url, timeout=PAGE_TIMEOUT_S * 1000)
    page.wait_for_function(_READY_JS, timeout=PAGE_TIMEOUT_S * 1000, polling=200)
    page.wait_for_function("() => document.body.dataset.editionLinked === 'yes'", timeout=MOVE_TIMEOUT_S * 1000,
                           polling=100)
    return page, offline, errors, warnings


def block_of(page, name: str):
    return page.locator(f'.edition-controller[data-link="{name}"]')


def view(page, name: str) -> dict:
    return block_of(page, name).evaluate(_VIEW_JS)


def first_plot(page, ctl: dict):
    return block_of(page, ctl["name"]).locator(".edition-plot").nth(ctl["animated"][0])


def settle(page, ctl: dict, step: int) -> None:
    """Wait until every animated figure of ``ctl`` is on ``step`` and at rest."""
    for i in ctl["animated"]:
        wait_moved(block_of(page, ctl["name"]).locator(".edition-plot").nth(i), step)
    page.wait_for_function("(s) => !s.innerText.includes('$')",  # its formulas typeset (edition.js typeset)
                           arg=block_of(page, ctl["name"]).locator(".edition-status").element_handle(),
                           timeout=MOVE_TIMEOUT_S * 1000)


def in_view(page, name: str) -> bool:
    return block_of(page, name).evaluate("b => { const r = b.getBoundingClientRect();"
                                         " return r.top >= -1 && r.top < window.innerHeight; }")


def _where(kind: str, site_dir, static_server):
    if kind == "http":
        return static_server, lambda url: url.startswith(static_server) or url.startswith("data:")
    root = site_dir.resolve().as_uri()
    return root, lambda url: url.startswith(root + "/") or url.startswith("data:")


def _two_controllers(ctls: list[dict]) -> tuple[dict, dict]:
    """The controller with the most animated figures (every one must follow the link), and another one."""
    assert len(ctls) >= 2, f"{PAGE} has {len(ctls)} controllers with a precomputed slider; the test needs two"
    a = max(ctls, key=lambda c: len(c["animated"]))
    return a, next(c for c in ctls if c is not a)


def test_the_address_keeps_the_slider_and_a_bad_one_is_ignored(static_server, site_dir, chromium):
    """Move two sliders with the mouse: the address follows (no history entry, no scroll); a fresh page at that
    address shows both controllers exactly as the moves left them, and scrolls to the one moved last. Then a bad
    address (:func:`check_a_bad_address_is_ignored_with_a_note`), against the first page's figures. From the static
    server; from ``file://`` a move's address reopens the same view (:func:`check_a_link_reopens_the_view`, in
    test_static_site.py's ``file://`` test: edition.js reads and writes the address the same way for both)."""
    base, allowed = _where("http", site_dir, static_server)
    page, offline, errors, warnings = open_at(chromium, f"{base}/{PAGE}", allowed)
    try:
        ctls = page.evaluate(_CONTROLLERS_JS)
        a, b = _two_controllers(ctls)
        assert page.evaluate("() => location.hash") == ""
        history = page.evaluate("() => history.length")
        plain = {c["name"]: view(page, c["name"]) for c in ctls}  # every controller at the notebook's value
        assert not warnings
        start = {c["name"]: plain[c["name"]] for c in (a, b)}
        shown, targets, expected = {}, {}, []
        for ctl in (a, b):
            plot = first_plot(page, ctl)
            target = _target(ctl["current"], len(ctl["labels"]))
            plot.scroll_into_view_if_needed()
            scrolled = page.evaluate("() => window.scrollY")
            drag_slider(page, plot, target)
            settle(page, ctl, target)
            expected.insert(0, f"{ctl['name']}={ctl['slider']}:{encode(ctl['labels'][target])}")
            assert page.evaluate("() => location.hash") == "#" + "&".join(expected), (
                f"after moving {ctl['name']} to {ctl['labels'][target]} the address is not the value shown")
            assert page.evaluate("() => window.scrollY") == scrolled, "writing the address scrolled the page"
            shown[ctl["name"]], targets[ctl["name"]] = view(page, ctl["name"]), target
            assert shown[ctl["name"]] != start[ctl["name"]], f"moving {ctl['name']} changed nothing"
        assert page.evaluate("() => history.length") == history, "moving a slider added history entries"
        address = page.evaluate("() => location.href")
        assert not errors, f"errors in the page: {errors[:5]}"
    finally:
        page.close()

    page, offline, errors, warnings = open_at(chromium, address, allowed)
    try:
        for ctl in (a, b):
            settle(page, ctl, targets[ctl["name"]])
            got = view(page, ctl["name"])
            k = targets[ctl["name"]]
            assert [f["active"] for f in got["figures"]] == [k] * len(ctl["animated"])
            for j, (want, have) in enumerate(zip(shown[ctl["name"]]["figures"], got["figures"], strict=True)):
                diffs = figure_differences(want, have)
                assert not diffs, f"{ctl['name']} figure {ctl['animated'][j]}: the link differs from the move: {diffs}"
            assert got["status"] == shown[ctl["name"]]["status"], f"{ctl['name']}: status line differs"
            assert got["alts"] == shown[ctl["name"]]["alts"], f"{ctl['name']}: text alternatives differ"
            for j in ctl["animated"]:
                assert got["alts"][j] == ctl["descriptions"][j][k], f"{ctl['name']}: text alternative not step {k}"
        assert in_view(page, b["name"]), f"the page did not scroll to {b['name']}, the first of the address"
        assert page.locator(".edition-link-note").count() == 0
        check_drawn_and_typeset(page)
        assert not offline.outside and not offline.failed, (offline.outside, offline.failed)
        assert not errors and not warnings, f"console: {(errors + warnings)[:5]}"
    finally:
        page.close()
    check_a_bad_address_is_ignored_with_a_note(chromium, base, allowed, ctls, plain)


def check_a_link_reopens_the_view(chromium, page, allowed) -> None:
    """After a slider move on ``page``, its address names the move, and a fresh page opened at that address shows
    the moved controller as ``page`` does: every animated figure (data, titles, ranges within a pixel, step), its
    status line and its text alternatives."""
    moved = [c for c in page.evaluate(_CONTROLLERS_JS)
             if any(f["active"] != c["current"] for f in view(page, c["name"])["figures"])]
    assert len(moved) == 1, f"one controller moved, the page shows {[c['name'] for c in moved]} moved"
    ctl = moved[0]
    want = view(page, ctl["name"])
    step = want["figures"][0]["active"]
    address = page.evaluate("() => location.href")
    assert address.endswith(f"#{ctl['name']}={ctl['slider']}:{encode(ctl['labels'][step])}"), address
    fresh, offline, errors, warnings = open_at(chromium, address, allowed)
    try:
        settle(fresh, ctl, step)
        got = view(fresh, ctl["name"])
        diffs = [d for w, h in zip(want["figures"], got["figures"], strict=True) for d in figure_differences(w, h)]
        assert not diffs, f"{ctl['name']}: the link differs from the move: {diffs}"
        assert got["status"] == want["status"] and got["alts"] == want["alts"], f"{ctl['name']}: status or alts"
        assert not offline.outside and not offline.failed, (offline.outside, offline.failed)
        assert not errors and not warnings, f"console: {(errors + warnings)[:5]}"
    finally:
        fresh.close()


def check_a_bad_address_is_ignored_with_a_note(chromium, base: str, allowed, ctls: list[dict], plain: dict) -> None:
    """An unknown figure, an unknown parameter and a value outside the slider: each a visible note and a console
    warning, and every figure drawn at the notebook's value (``plain``: each controller's view without an address).
    """
    a, b = _two_controllers(ctls)
    outside = max(v for v in b["values"]) * 10 + 1
    bad = f"#no-such-figure=lam:2&{a['name']}=no_such_parameter:1&{b['name']}={b['slider']}:{outside:g}"
    page, offline, errors, warnings = open_at(chromium, f"{base}/{PAGE}{bad}", allowed)
    try:
        notes = page.locator(".edition-link-note")
        assert notes.count() == 3, f"{notes.count()} notes for three bad parts: {notes.all_inner_texts()}"
        for i in range(3):
            assert notes.nth(i).is_visible()
        texts = " ".join(notes.all_inner_texts())
        assert "no-such-figure" in texts and "no_such_parameter" in texts and f"{outside:g}" in texts
        assert block_of(page, b["name"]).locator(".edition-link-note").count() == 1
        # the note on the unknown figure stands with the first figure the address names, where the page scrolled
        assert "no-such-figure" in block_of(page, a["name"]).locator(".edition-link-note").first.inner_text()
        page.wait_for_function("""(b) => Array.from(b.querySelectorAll('.edition-link-note')).every((n) => {
          const r = n.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; })""",
                               arg=block_of(page, a["name"]).element_handle(), timeout=MOVE_TIMEOUT_S * 1000)
        assert len(warnings) == 3, warnings
        check_drawn_and_typeset(page)
        for ctl in ctls:
            shown = view(page, ctl["name"])
            diffs = [d for w, h in zip(plain[ctl["name"]]["figures"], shown["figures"], strict=True)
                     for d in figure_differences(w, h)]
            assert not diffs, f"{ctl['name']} is not at the notebook's value: {diffs}"
            assert shown["status"] == plain[ctl["name"]]["status"] and shown["alts"] == plain[ctl["name"]]["alts"]
            assert {f["active"] for f in shown["figures"]} == {ctl["current"]}
        assert in_view(page, a["name"]), "the page did not scroll to the first figure the address names"
        assert not offline.outside and not offline.failed and not errors, (offline.outside, offline.failed, errors)
    finally:
        page.close()


def test_between_steps_and_while_open(static_server, site_dir, chromium):
    """A number between two precomputed values shows the nearest (with a note); changing the address while the
    page is open (hashchange) moves the slider as a mouse move does; a plain anchor (#name) is left alone."""
    base, allowed = _where("http", site_dir, static_server)
    page, _, errors, _ = open_at(chromium, f"{base}/{PAGE}", allowed)
    try:
        a, _ = _two_controllers(page.evaluate(_CONTROLLERS_JS))
    finally:
        page.close()
    values = a["values"]
    near = 1 if a["current"] != 1 else len(values) - 2  # a step away from the notebook's
    x = values[near] + 0.3 * (values[near + 1] - values[near])  # nearer to `near` than to its neighbours
    page, _, errors, warnings = open_at(chromium, f"{base}/{PAGE}#{a['name']}={a['slider']}:{x!r}", allowed)
    try:
        settle(page, a, near)
        note = block_of(page, a["name"]).locator(".edition-link-note")
        assert note.count() == 1 and "nearest" in note.inner_text() and a["labels"][near] in note.inner_text()
        assert len(warnings) == 1
        other = _target(near, len(values))
        page.evaluate("(h) => { location.hash = h; }", f"#{a['name']}={a['slider']}:{encode(a['labels'][other])}")
        settle(page, a, other)
        assert block_of(page, a["name"]).locator(".edition-link-note").count() == 0
        assert view(page, a["name"])["alts"][a["animated"][0]] == a["descriptions"][a["animated"][0]][other]
        page.evaluate("(h) => { location.hash = h; }", f"#{a['name']}")  # an ordinary anchor: nothing moves
        assert page.evaluate("() => location.hash") == f"#{a['name']}"
        assert view(page, a["name"])["figures"][0]["active"] == other
        assert page.locator(".edition-link-note").count() == 0
        assert not errors
    finally:
        page.close()

"""Accessible names for ipywidgets controls that ipywidgets leaves unnamed.

ipywidgets draws a slider's visible description as a ``<label>`` beside the slider, but the slider handle
(``role="slider"``, the element that takes the keyboard) and the value readout get no accessible name, so a
screen reader announces "slider" without saying which one (axe-core: *aria-input-field-name*, serious), and the
same goes for a text box's input. ipywidgets offers no trait for ARIA attributes, so :class:`AccessibleNames`, a
tiny invisible widget every controller and every exercise panel carries, runs a script in the page that copies each
control's visible description onto its handle/input as ``aria-label`` — now and whenever widgets are added or a
description changes (one ``MutationObserver`` per page, however many of these widgets the page holds). Nothing
changes for readers who see the page: the visible label stays the one they read. The same script makes a Markdown
cell or output that scrolls sideways (a display formula wider than a projector's page) reachable from the keyboard
(``tabindex="0"``, a region with a name), as axe-core's *scrollable-region-focusable* asks. And it adds
:data:`LINK_CSS` to the page once: links in the notebook's text are underlined (JupyterLab's theme tells them from
the text by colour alone, at a contrast of 1.86:1, which fails WCAG 1.4.1 and axe-core's serious
*link-in-text-block*; issue 26, item 9). The classroom template (``tools/voila/templates/symsgd``) and the static
edition (``tools/site/edition/static/edition.css``) carry the same rule in their own CSS, so there the links are
underlined before any widget is drawn.
"""

from __future__ import annotations

import json

import anywidget
import ipywidgets as widgets

__all__ = ["LINK_CSS", "AccessibleNames", "accessible_names"]

#: Links in the text of rendered Markdown (and HTML outputs) are underlined: JupyterLab's ``a:link`` and
#: ``a:visited`` rules remove the underline, and its link colour is 1.86:1 against the text (``body`` wins over them
#: whatever order the stylesheets load in).
LINK_CSS = "body .jp-RenderedHTMLCommon a:link, body .jp-RenderedHTMLCommon a:visited { text-decoration: underline; }"

_ESM = r"""
const KEY = '__symsgdAccessibleNames';
const STYLE_ID = 'symsgd-a11y-style';
// Links in the text underlined (LINK_CSS in ui/a11y.py): one <style> per page.
function linkStyle() {
  if (document.getElementById(STYLE_ID)) return;
  const style = document.createElement('style');
  style.id = STYLE_ID;
  style.textContent = __LINK_CSS__;
  document.head.appendChild(style);
}
function label(root) {
  for (const box of root.querySelectorAll('.widget-inline-hbox, .widget-slider, .widget-text')) {
    const lab = box.querySelector(':scope > .widget-label');
    const text = lab ? (lab.textContent || '').trim().replace(/:$/, '') : '';
    if (!text) continue;
    for (const el of box.querySelectorAll('[role=slider], input, select, textarea')) {
      if (!el.getAttribute('aria-label') || el.dataset.symsgdLabel === '1') {
        const want = el.classList.contains('widget-readout') ? `${text} (value)` : text;
        if (el.getAttribute('aria-label') !== want) {
          el.setAttribute('aria-label', want);
          el.dataset.symsgdLabel = '1';
        }
      }
    }
    const readout = box.querySelector('.widget-readout');
    if (readout && readout.getAttribute('aria-label') !== `${text} (value)`) {
      readout.setAttribute('aria-label', `${text} (value)`);
    }
  }
}
// A text or formula wider than the page scrolls sideways: keyboard users must be able to reach it (axe-core:
// scrollable-region-focusable), so a scrolling Markdown cell or output gets tabindex 0 and a name.
function scrollables(root) {
  for (const el of root.querySelectorAll('.jp-RenderedMarkdown, .jp-OutputArea-output')) {
    const st = getComputedStyle(el);
    const scrolls = (el.scrollWidth > el.clientWidth + 1 && /auto|scroll/.test(st.overflowX))
      || (el.scrollHeight > el.clientHeight + 1 && /auto|scroll/.test(st.overflowY));
    if (scrolls && !el.hasAttribute('tabindex')) {
      el.tabIndex = 0;
      el.setAttribute('role', 'region');
      el.setAttribute('aria-label', 'wide content: scroll with the arrow keys');
      el.dataset.symsgdScroll = '1';
    }
  }
}
// Cheap on a busy page: a figure redrawing itself changes its SVG many times a second, and scrollables() reads
// layout (scrollWidth, computed style), so changes inside figures are ignored and the rest is batched: at most one
// pass per DELAY_MS, run when the page is idle (never a forced layout per animation frame while cells run).
const DELAY_MS = 400;
const inFigure = (node) => {
  const el = node && (node.nodeType === 1 ? node : node.parentElement);
  return !!(el && el.closest && el.closest('.js-plotly-plot, svg'));
};
// A figure's text alternative (symsgd_core/ui/describe.py): a controller keeps one visually hidden description
// per figure, in its figures' order; each plot gets role "figure", its short name, and aria-describedby pointing
// at its description (role "figure", unlike "img", keeps the mode bar's buttons reachable).
let altIds = 0;
function describeFigures(root) {
  for (const ctl of root.querySelectorAll('.symsgd-controller')) {
    const plots = [...ctl.querySelectorAll('.js-plotly-plot')];
    const texts = [...ctl.querySelectorAll('.symsgd-figure-alt-text')];
    plots.forEach((plot, k) => {
      const text = texts[k];
      if (!text) return;
      if (!text.id) text.id = `symsgd-figure-alt-${++altIds}`;
      const name = text.dataset.name || 'figure';
      if (plot.getAttribute('role') !== 'figure') plot.setAttribute('role', 'figure');
      if (plot.getAttribute('aria-label') !== name) plot.setAttribute('aria-label', name);
      if (plot.getAttribute('aria-describedby') !== text.id) plot.setAttribute('aria-describedby', text.id);
    });
  }
}
function install() {
  linkStyle();
  if (window[KEY]) return;
  let timer = null;
  const idle = window.requestIdleCallback || ((f) => setTimeout(f, 0));
  const run = () => { label(document.body); scrollables(document.body); describeFigures(document.body); };
  const schedule = () => {
    if (timer !== null) return;
    timer = setTimeout(() => { timer = null; idle(run, {timeout: 2000}); }, DELAY_MS);
  };
  const observer = new MutationObserver((records) => {
    if (records.every((r) => inFigure(r.target))) return;
    schedule();
  });
  observer.observe(document.body, {childList: true, subtree: true, characterData: true});
  window.addEventListener('resize', schedule);
  window[KEY] = observer;
  run();
}
export default { render({ el }) { el.style.display = 'none'; install(); } };
"""


class AccessibleNames(anywidget.AnyWidget):
    """Invisible: gives every ipywidgets slider handle, readout and text input of the page its visible
    description as ``aria-label`` (see the module docstring)."""

    _esm = _ESM.replace("__LINK_CSS__", json.dumps(LINK_CSS))


#: CSS class of the helper's (hidden) element in the page.
A11Y_CLASS = "symsgd-a11y"


def accessible_names() -> AccessibleNames:
    """A new :class:`AccessibleNames` widget (hidden; put it among a displayed widget's children).

    Its class and hidden layout are given to the constructor, so they travel in the widget's comm-open message: an
    update sent afterwards (``add_class``) goes through anywidget, which drops every update to a model whose start
    missed its 2 s limit (a slow or busy page), and the helper would then be left without its class.
    """
    return AccessibleNames(_dom_classes=(A11Y_CLASS,), layout=widgets.Layout(display="none"))

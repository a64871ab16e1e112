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
*link-in-text-block*), and :data:`FINE_PRINT_CSS`: the look of the notebooks' fine print
(``<details class="symsgd-fine-print">``, ARCHITECTURE.md). The classroom template
(``tools/voila/templates/symsgd``) and the static edition (``tools/site/edition/static/edition.css``) carry the
same link rule in their own CSS, so there the links are underlined before any widget is drawn; the edition links
``fine_print.css`` itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import anywidget
import ipywidgets as widgets

__all__ = ["FINE_PRINT_CSS", "LINK_CSS", "AccessibleNames", "accessible_names"]

#: Links in the text of rendered Markdown (and HTML outputs) are underlined: JupyterLab's ``a:link`` and
#: ``a:visited`` rules remove the underline, and its link colour is 1.86:1 against the text (``body`` wins over them
#: whatever order the stylesheets load in).
LINK_CSS = "body .jp-RenderedHTMLCommon a:link, body .jp-RenderedHTMLCommon a:visited { text-decoration: underline; }"

#: The fine print's stylesheet (``fine_print.css``, the one copy every mode uses): closed blocks with a visible
#: "fine print" tag on their summary and a keyboard focus ring.
FINE_PRINT_CSS = Path(__file__).with_name("fine_print.css").read_text(encoding="utf-8")

#: The helper's source (``a11y.js``); its ``__LINK_CSS__`` placeholder becomes :data:`LINK_CSS` and
#: :data:`FINE_PRINT_CSS`.
_ESM = Path(__file__).with_name("a11y.js").read_text(encoding="utf-8")


class AccessibleNames(anywidget.AnyWidget):
    """Invisible: gives every ipywidgets slider handle, readout and text input of the page its visible
    description as ``aria-label`` (see the module docstring)."""

    _esm = _ESM.replace("__LINK_CSS__", json.dumps(LINK_CSS + "\n" + FINE_PRINT_CSS))


#: CSS class of the helper's (hidden) element in the page.
A11Y_CLASS = "symsgd-a11y"


def accessible_names() -> AccessibleNames:
    """A new :class:`AccessibleNames` widget (hidden; put it among a displayed widget's children).

    Its class and hidden layout are given to the constructor, so they travel in the widget's comm-open message: an
    update sent afterwards (``add_class``) goes through anywidget, which drops every update to a model whose start
    missed its 2 s limit (a slow or busy page), and the helper would then be left without its class.
    """
    return AccessibleNames(_dom_classes=(A11Y_CLASS,), layout=widgets.Layout(display="none"))

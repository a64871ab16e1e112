"""How a plotly ``FigureWidget`` gets its JavaScript: once per page, from the page's own server.

plotly gives every ``FigureWidget`` its ~5 MB widget bundle as the widget's own ES module (``_esm``), so a page
parses it once per figure, and anywidget gives each widget model 2 s to start: on a slow or busy machine some
figures never draw, or draw once and never update. When the notebook server serves the bundle as one static file
(the ``symsgd_jupyter`` server extension in JupyterLab, the template's static folder in classroom mode), the
server puts its URL, relative to the server's base URL, in ``SYMSGD_PLOTLY_BUNDLE`` for the kernels it starts.
:func:`configure_from_environment` (run by :func:`symsgd_jupyter.kernel.install`, on first use) then gives every
FigureWidget the small module of :func:`loader_module` instead:

* it starts at once (so anywidget's 2 s limit is met on any machine) and shows "Loading figure…" in the
  figure's place;
* it imports the bundle from the page's own origin and base URL, read from the page's ``jupyter-config-data``
  (so ``localhost``, ``127.0.0.1``, another host name or a JupyterHub/Binder prefix all work); the browser fetches
  and compiles it once for the whole page;
* if the bundle cannot be loaded, the figure's place says so, with the reason and what to do, instead of staying
  an empty frame;
* a figure without a width of its own follows its box: drawn while its box had no width (not yet in the page, or
  hidden) plotly lays it out at its default 700 px, and in anywidget's path plotly's view never sizes it again, not
  even when the window is resized; the loader draws it again whenever its box's width changes
  (``followBoxWidth``; tests/browser/test_voila.py).

Without the variable (VS Code, a hosted notebook, a plain ``jupyter lab`` in an environment where the extension is
not enabled) plotly's own behaviour stays.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from . import PLOTLY_BUNDLE_ENV

#: CSS class the loader gives a figure's element; its ``data-symsgd-figure`` says loading, drawn or failed.
FIGURE_SLOT_CLASS = "symsgd-figure-slot"
#: Custom widget messages: the page asks for a figure's full state; the kernel says it has sent it.
STATE_REQUEST = "symsgd-send-state"
STATE_SENT = "symsgd-state-sent"

#: The loader's source (``plotly_loading.js``); its ``__NAME__`` placeholders are filled in by :func:`loader_module`.
_LOADER_JS = (Path(__file__).with_name("plotly_loading.js")).read_text(encoding="utf-8")


def loader_module(bundle_path: str) -> str:
    """The ES module given to every FigureWidget (its ``_esm``) when the server serves plotly's bundle.

    Args:
        bundle_path: the bundle's URL relative to the server's base URL, e.g.
            ``"symsgd/static/plotly-widget-7.1.0.js"`` (no scheme, no host, no leading slash).

    Returns:
        JavaScript source (~9 kB).

    Raises:
        ValueError: ``bundle_path`` is absolute (a scheme, a host or a leading ``/``): an absolute URL breaks as soon
            as the page is opened under another host name or prefix.
    """
    if not isinstance(bundle_path, str) or not bundle_path.strip():
        raise ValueError(f"bundle_path must be a non-empty relative URL, got {bundle_path!r}")
    if "://" in bundle_path or bundle_path.startswith("/"):
        raise ValueError(f"bundle_path must be relative to the server's base URL (e.g. 'symsgd/static/x.js'), "
                         f"got {bundle_path!r}")
    return (_LOADER_JS.replace("__BUNDLE__", json.dumps(bundle_path))
            .replace("__SLOT__", json.dumps(FIGURE_SLOT_CLASS))
            .replace("__STATE_REQUEST__", json.dumps(STATE_REQUEST))
            .replace("__STATE_SENT__", json.dumps(STATE_SENT)).lstrip())


def use_shared_bundle(bundle_path: str | None) -> None:
    """Give every FigureWidget created from now on the loader for ``bundle_path`` (``None``: plotly's own code)."""
    from plotly.basewidget import BaseFigureWidget

    if bundle_path is None:
        if _PLOTLY_DEFAULT_ESM is not None:
            BaseFigureWidget._esm = _PLOTLY_DEFAULT_ESM
        return
    BaseFigureWidget._esm = loader_module(bundle_path)


def sync_figure_state(fig) -> None:
    """Send the complete current state of a ``FigureWidget`` to the front end.

    plotly does this itself only when a FigureWidget is displayed on its own
    (``_repr_mimebundle_``). Inside a container (our ``VBox``) it does not, and
    restyle messages sent before the first view exists reach JupyterLab as a
    partial state (x arrays, names and labels lost; seen with plotly 7.1 and
    JupyterLab 4.6). Re-sending the full state at display time fixes that.
    """
    from copy import deepcopy

    from plotly.basewidget import BaseFigureWidget

    if isinstance(fig, BaseFigureWidget):
        fig._widget_layout = deepcopy(fig._layout_obj._props)
        fig._widget_data = deepcopy(fig._data)


def answer_state_requests(fig) -> None:
    """Let the page ask ``fig`` for its full state (the loader does, once its module runs): the kernel then sends
    ``_widget_data``, ``_widget_layout`` and ``_config`` whether or not they changed, and says so
    (:data:`STATE_SENT`). ``_config`` is in it because a config set after the model opened (as
    ``Controller.view`` sets :data:`~symsgd_core.ui.style.PLOTLY_CONFIG`) is one of the updates anywidget drops
    when a model's start takes over 2 s; plotly reads the config only when it draws. Idempotent."""
    if getattr(fig, "_symsgd_answers_state_requests", False):
        return

    def on_msg(widget, content, _buffers) -> None:
        if isinstance(content, dict) and content.get("type") == STATE_REQUEST:
            sync_figure_state(widget)
            widget.send_state(["_widget_data", "_widget_layout", "_config"])
            widget.send({"type": STATE_SENT})

    fig.on_msg(on_msg)
    fig._symsgd_answers_state_requests = True


def configure_from_environment(environ: dict | None = None) -> str | None:
    """Use the shared bundle if the server announced one in ``SYMSGD_PLOTLY_BUNDLE``; return its path (or None)."""
    value = (os.environ if environ is None else environ).get(PLOTLY_BUNDLE_ENV, "").strip() or None
    use_shared_bundle(value)
    return value


def _plotly_default_esm():
    try:
        from plotly.basewidget import BaseFigureWidget
    except ImportError:  # pragma: no cover - plotly is a declared dependency
        return None
    return BaseFigureWidget.__dict__.get("_esm")


#: plotly's own ``_esm`` (a path to its bundle), kept so :func:`use_shared_bundle` can restore it.
_PLOTLY_DEFAULT_ESM = _plotly_default_esm()

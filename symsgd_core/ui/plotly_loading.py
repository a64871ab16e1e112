"""How a plotly ``FigureWidget`` gets its JavaScript: once per page, from the page's own server.

plotly gives every ``FigureWidget`` its ~5 MB widget bundle as the widget's own ES module (``_esm``), so a page
parses it once per figure, and anywidget gives each widget model 2 s to start: on a slow or busy machine some
figures never draw, or draw once and never update. When the notebook server serves the bundle as one static file
(the ``symsgd_jupyter`` server extension in JupyterLab, the template's static folder in classroom mode), the
server puts its URL, relative to the server's base URL, in ``SYMSGD_PLOTLY_BUNDLE`` for the kernels it starts.
:func:`configure_from_environment` (run when :mod:`symsgd_core.ui.base` is imported) then gives every
FigureWidget the small module of :func:`loader_module` instead:

* it starts at once (so anywidget's 2 s limit is met on any machine) and shows "Loading figure…" in the
  figure's place;
* it imports the bundle from the page's own origin and base URL, read from the page's ``jupyter-config-data``
  (so ``localhost``, ``127.0.0.1``, another host name or a JupyterHub/Binder prefix all work); the browser fetches
  and compiles it once for the whole page;
* if the bundle cannot be loaded, the figure's place says so, with the reason and what to do, instead of staying
  an empty frame.

Without the variable (VS Code, a hosted notebook, a plain ``jupyter lab`` in an environment where the extension is
not enabled) plotly's own behaviour stays.
"""

from __future__ import annotations

import json
import os

from symsgd_jupyter import PLOTLY_BUNDLE_ENV

#: CSS class the loader gives a figure's element; its ``data-symsgd-figure`` says loading, drawn or failed.
FIGURE_SLOT_CLASS = "symsgd-figure-slot"
#: Custom widget messages: the page asks for a figure's full state; the kernel says it has sent it.
STATE_REQUEST = "symsgd-send-state"
STATE_SENT = "symsgd-state-sent"

_LOADER_JS = r"""
// symsgd: load plotly's FigureWidget code once per page from this page's own server (see
// symsgd_core/ui/plotly_loading.py). This module itself is tiny, so anywidget's 2 s start limit is always met.
const BUNDLE = __BUNDLE__;
const SLOT = __SLOT__;
const STATE_REQUEST = __STATE_REQUEST__;
const STATE_SENT = __STATE_SENT__;
function bundleUrl() {
  let base = "/";
  const cfg = document.getElementById("jupyter-config-data");
  if (cfg) { try { base = JSON.parse(cfg.textContent).baseUrl || "/"; } catch (e) { /* keep "/" */ } }
  if (!base.endsWith("/")) base += "/";
  return new URL(base + BUNDLE, window.location.href).href;
}
function loadPlotly() {
  // one import per page: every figure waits on the same promise (the browser's module map caches it too)
  const url = bundleUrl();
  const cache = (globalThis.__symsgdPlotly ??= {});
  return (cache[url] ??= import(url).then(
    (mod) => mod,
    (err) => { delete cache[url]; throw new Error(`${err && err.message ? err.message : err} (${url})`); }));
}
const HELP = "This figure's drawing code (plotly's widget bundle) is served by the notebook server. " +
  "Start JupyterLab with <code>make lab</code> or classroom mode with <code>make classroom</code> " +
  "(in another environment: <code>python -m symsgd_jupyter --enable</code>, then restart the server), " +
  "then reload this page.";
// anywidget drops every message to a model whose start took over 2 s (it rejects the model's "ready"). Compiling
// plotly's code is one long task (~0.5 s, several seconds on a slow or busy laptop): a figure whose start straddles
// it would draw its first state and never update. So, once this module runs (anywidget's start is over by then),
// each figure routes its messages straight to ipywidgets' own handler, and asks the kernel for its full state again
// (STATE_REQUEST; symsgd_core.ui.plotly_loading.answer_state_requests replies), in case updates were dropped.
function routeMessagesDirectly(model) {
  let real = null;
  const grab = (m) => { real = m; };  // a change event hands over the model behind anywidget's proxy
  model.on("change:_symsgd_probe", grab);
  model.set("_symsgd_probe", Date.now());
  model.off("change:_symsgd_probe", grab);
  if (!real || !real.comm) return false;
  let proto = Object.getPrototypeOf(real);
  const own = proto._handle_comm_msg;
  while (proto && proto._handle_comm_msg === own) proto = Object.getPrototypeOf(proto);
  if (!proto || typeof proto._handle_comm_msg !== "function") return false;
  const handle = proto._handle_comm_msg;
  real.comm.on_msg((msg) => handle.call(real, msg));
  return true;
}
export default () => {
  let plotly = null;   // plotly's own widget definition for this model, once its code has loaded
  let ready = null;    // resolves when plotly's initialize has run for this model
  const views = new Set();  // {redraw} of every view drawn so far
  return {
    initialize({ model }) {
      if (!routeMessagesDirectly(model)) console.warn("[symsgd] could not reroute a figure's messages");
      let waiting = true, changed = false;
      const stale = () => { if (waiting) changed = true; };
      model.on("change:_widget_data", stale);
      model.on("change:_config", stale);  // the shared config (style.PLOTLY_CONFIG) is read only when drawing
      model.on("msg:custom", (msg) => {
        if (!msg || msg.type !== STATE_SENT) return;
        waiting = false;
        if (changed) for (const view of views) view.redraw();  // a view drawn from a stale state
      });
      model.send({ type: STATE_REQUEST });
      // do not wait here: anywidget gives initialize 2 s, and a slow laptop needs longer to compile 5 MB
      ready = loadPlotly().then((mod) => { plotly = mod.default(); return plotly.initialize({ model }); });
      ready.catch((err) => console.error("[symsgd] could not load plotly's widget code:", err));
    },
    async render({ model, el, experimental }) {
      // plotly draws into el itself (as without this loader); until then el says what is happening
      el.classList.add(SLOT);
      el.dataset.symsgdFigure = "loading";
      const note = document.createElement("div");
      note.style.cssText = "padding:1em;color:#555";
      note.textContent = "Loading figure…";
      el.appendChild(note);
      try {
        await ready;
      } catch (err) {
        el.dataset.symsgdFigure = "failed";
        note.setAttribute("role", "alert");
        note.style.cssText = "padding:1em;border:2px solid #b91c1c;color:#b91c1c";
        note.innerHTML = "<b>This figure could not be drawn.</b> " +
          String(err.message || err).replace(/[<>&]/g, "") + "<br>" + HELP;
        return;
      }
      note.remove();
      el.dataset.symsgdFigure = "drawn";
      let cleanup = plotly.render({ model, el, experimental });
      const view = {
        redraw() {
          if (typeof cleanup === "function") cleanup();
          el.replaceChildren();
          cleanup = plotly.render({ model, el, experimental });
        },
      };
      views.add(view);
      return () => { views.delete(view); if (typeof cleanup === "function") cleanup(); };
    },
  };
};
"""


def loader_module(bundle_path: str) -> str:
    """The ES module given to every FigureWidget (its ``_esm``) when the server serves plotly's bundle.

    Args:
        bundle_path: the bundle's URL relative to the server's base URL, e.g.
            ``"symsgd/static/plotly-widget-7.1.0.js"`` (no scheme, no host, no leading slash).

    Returns:
        JavaScript source (~3 kB).

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

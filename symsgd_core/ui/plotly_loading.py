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

_LOADER_JS = r"""
// symsgd: load plotly's FigureWidget code once per page from this page's own server (see
// symsgd_core/ui/plotly_loading.py). This module itself is tiny, so anywidget's 2 s start limit is always met.
const BUNDLE = __BUNDLE__;
const SLOT = __SLOT__;
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
export default () => {
  let plotly = null;   // plotly's own widget definition for this model, once its code has loaded
  let ready = null;    // resolves when plotly's initialize has run for this model
  return {
    initialize({ model }) {
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
      return plotly.render({ model, el, experimental });
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
            .replace("__SLOT__", json.dumps(FIGURE_SLOT_CLASS)).lstrip())


def use_shared_bundle(bundle_path: str | None) -> None:
    """Give every FigureWidget created from now on the loader for ``bundle_path`` (``None``: plotly's own code)."""
    from plotly.basewidget import BaseFigureWidget

    if bundle_path is None:
        if _PLOTLY_DEFAULT_ESM is not None:
            BaseFigureWidget._esm = _PLOTLY_DEFAULT_ESM
        return
    BaseFigureWidget._esm = loader_module(bundle_path)


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

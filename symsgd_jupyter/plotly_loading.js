// symsgd: load plotly's FigureWidget code once per page from this page's own server (see
// symsgd_jupyter/plotly_loading.py). This module itself is tiny, so anywidget's 2 s start limit is always met.
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
// (STATE_REQUEST; symsgd_jupyter.plotly_loading.answer_state_requests replies), in case updates were dropped.
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
// plotly's view (FigureView) listens to the model given to plotly's initialize, not to the one anywidget gives each
// view, so anywidget cannot drop a view's listeners when the view goes, and plotly's own clean-up only purges the
// plot. A view gone from the page (its figure moved to another box, its output cleared) would go on handling every
// update: Plotly.update on its purged div throws ("Cannot read properties of undefined (reading 'length')"), the
// model's change event stops at that throw, and the figure's live view never hears of the update (its figure stays
// frozen; the page logs "Error setting state: …"). So plotly's code gets this model: the listeners a view's drawing
// adds are its own, and they are removed when the view goes (or is drawn again).
function listenersByView(model) {
  let adding = null;  // the listeners of the view being drawn now
  return {
    ...model,
    on(name, callback) {
      if (adding) adding.push([name, callback]);
      model.on(name, callback);
    },
    drawing(render) {
      const listeners = (adding = []);
      try {
        return { result: render(), listeners };
      } finally {
        adding = null;
      }
    },
    forget(listeners) {
      for (const [name, callback] of listeners.splice(0)) model.off(name, callback);
    },
  };
}
// plotly's view sizes a figure without a width of its own to its element once, when it draws it; its window-resize
// and lumino handlers are not on anywidget's path (plotly 7.1's FigureView adds them on lumino's "before-attach",
// which anywidget never sends). A figure drawn while its element is not laid out yet (not yet in the page, or hidden:
// no width; in classroom mode, a figure drawn as its cell's output arrives) gets plotly's default 700 px and keeps
// it, and no figure follows the window. So each figure watches its element: once its width has stopped changing for
// RESIZE_DELAY_MS (plotly's own Plots.resize waits as long) and differs from the drawn width by more than 1 px
// (plotly's autosize tolerance), the figure is drawn again, at its element's width (never wider than its box). Drawn
// again, not relaid out (Plots.resize, a relayout with autosize): from 700 px, a relayout leaves a legend below the
// plot over the x axis's tick labels (notebook 05's stored-grid figure), a new drawing does not. A figure with a
// width of its own (layout.width) is left alone.
const RESIZE_DELAY_MS = 100;
function followBoxWidth(el, model, redraw) {
  if (typeof ResizeObserver !== "function") return () => {};
  let timer = null;
  const ownWidth = () => Boolean((el.layout && el.layout.width) || (model.get("_widget_layout") || {}).width);
  const offBy = () => {
    const box = parseFloat(window.getComputedStyle(el).width) || 0;  // what plotly's autosize reads
    return Boolean(el._fullLayout) && box > 0 && Math.abs(el._fullLayout.width - box) > 1;
  };
  const fit = () => {
    timer = null;
    if (el.isConnected && !ownWidth() && offBy()) redraw();
  };
  const observer = new ResizeObserver(() => {
    clearTimeout(timer);
    timer = setTimeout(fit, RESIZE_DELAY_MS);
  });
  observer.observe(el);
  return () => { observer.disconnect(); clearTimeout(timer); };
}
export default () => {
  let plotly = null;   // plotly's own widget definition for this model, once its code has loaded
  let ready = null;    // resolves when plotly's initialize has run for this model
  const views = new Set();  // {redraw} of every view drawn so far
  let viewModel = null;     // the model plotly's code gets (listenersByView)
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
      viewModel = listenersByView(model);
      ready = loadPlotly().then((mod) => { plotly = mod.default(); return plotly.initialize({ model: viewModel }); });
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
      const draw = () => viewModel.drawing(() => plotly.render({ model, el, experimental }));
      let drawn = draw();
      const undraw = () => {
        viewModel.forget(drawn.listeners);  // before the purge: a purged view must never hear the model again
        if (typeof drawn.result === "function") drawn.result();
      };
      const view = {
        redraw() {
          undraw();
          el.replaceChildren();
          drawn = draw();
        },
      };
      views.add(view);
      const unfollow = followBoxWidth(el, model, () => view.redraw());
      return () => { unfollow(); views.delete(view); undraw(); };
    },
  };
};

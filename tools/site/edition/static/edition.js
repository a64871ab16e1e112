// symsgd static edition: draws every figure of the page from the JSON inlined beside it, with plotly.js loaded
// once for the whole site (assets/plotly.min.js). A classic script, not an ES module, and it requests nothing
// (no fetch, no dynamic import): those fail on pages opened from file://.
(function () {
  "use strict";
  const ANIMATE = {mode: "immediate", frame: {duration: 0, redraw: true}, transition: {duration: 0}};
  // the shared config of every figure (symsgd_core/ui/style.py PLOTLY_CONFIG, written into each page's <head>):
  // no mode-bar button or logo that reaches the internet; without it the page refuses to draw rather than offer one
  const SHARED = window.SYMSGD_PLOTLY_CONFIG;
  const CONFIG = Object.assign({responsive: true, typesetMath: false}, SHARED);
  const E = (window.symsgdEdition = {drawn: 0, failed: 0, figures: [], moves: 0});

  function typeset(el) {
    // MathJax 3 (assets/mathjax) typesets the page itself at load; a status line that changes is typeset again
    if (window.MathJax && MathJax.typesetPromise) {
      return MathJax.startup.promise.then(() => MathJax.typesetPromise([el])).catch((e) => console.error(e));
    }
    return Promise.resolve();
  }

  function fail(plot, why) {
    E.failed += 1;
    plot.dataset.edition = "failed";
    plot.setAttribute("role", "alert");
    plot.className += " edition-failed";
    plot.textContent = "This figure could not be drawn: " + why +
      ". The page needs assets/plotly.min.js beside it (publish the whole site/ folder).";
  }

  function drawController(block) {
    const meta = JSON.parse(block.querySelector("script.edition-controller-data").textContent);
    const status = block.querySelector(".edition-status");
    const plots = [];
    for (const fig of block.querySelectorAll(".edition-figure")) {
      const plot = fig.querySelector(".edition-plot");
      const spec = JSON.parse(fig.querySelector("script.edition-figure-data").textContent);
      plots.push({plot, spec});
    }
    // One slider moved: the status line shows that value's text and every other animated figure of the controller
    // follows (one pass at a time; a move that arrives meanwhile is followed next). block.dataset.editionSynced is
    // the step all figures show once idle.
    let target = null, busy = false;
    const follow = () => {
      if (busy || target === null) return;
      const {k, from} = target;
      target = null;
      busy = true;
      // every animated figure, the moved one too (its slider steps only report the move: method "skip"); then the
      // axes the live figure autoranges (plotly's animate keeps the old range: curves would leave the plot)
      const animated = plots.filter((p) => p.spec.frames);
      Promise.all(animated.map((p) => Plotly.animate(p.plot, [String(k)], ANIMATE)
        .then(() => {
          const update = p.plot === from ? {} : {"sliders[0].active": k};
          for (const axis of (p.spec.edition || {}).autoranged || []) update[axis + ".autorange"] = true;
          return Object.keys(update).length ? Plotly.relayout(p.plot, update) : null;
        })))
        .catch((err) => console.error(err))
        .finally(() => {
          busy = false;
          E.moves += 1;
          if (target === null) block.dataset.editionSynced = String(k);
          follow();
        });
    };
    const alts = [...block.querySelectorAll(".edition-figure .edition-figure-alt")];
    const show = (k, from) => {
      if (meta.statuses && status) {
        status.innerHTML = meta.statuses[k];
        typeset(status);
      }
      // each figure's text alternative follows the slider too (symsgd_core/ui/describe.py, one per frame)
      (meta.descriptions || []).forEach((texts, j) => { if (alts[j] && texts[k]) alts[j].textContent = texts[k]; });
      block.dataset.editionActive = String(k);
      target = {k, from};
      follow();
    };
    for (const {plot, spec} of plots) {
      if (typeof Plotly === "undefined") { fail(plot, "plotly.js did not load"); continue; }
      if (!SHARED) { fail(plot, "the page's plotly config (SYMSGD_PLOTLY_CONFIG) is missing"); continue; }
      const layout = spec.layout;
      Plotly.newPlot(plot, spec.data, layout, CONFIG)
        .then(() => (spec.frames ? Plotly.addFrames(plot, spec.frames) : null))
        .then(() => {
          plot.dataset.edition = "drawn";
          E.drawn += 1;
          plot.on("plotly_sliderchange", (ev) => show(Number(ev.step.args[0][0]), plot));
        })
        .catch((err) => { console.error(err); fail(plot, String(err && err.message ? err.message : err)); });
      E.figures.push(plot);
    }
  }

  function start() {
    for (const block of document.querySelectorAll(".edition-controller")) {
      try { drawController(block); } catch (err) {
        console.error(err);
        for (const plot of block.querySelectorAll(".edition-plot")) fail(plot, String(err.message || err));
      }
    }
    document.body.dataset.editionStarted = "yes";
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

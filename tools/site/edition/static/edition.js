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
  const E = (window.symsgdEdition = {drawn: 0, failed: 0, figures: [], moves: 0, linked: null});
  // link name (the block's data-link, render.py link_name) → {block, meta, ready, set(k)}
  const controllers = new Map();

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
    const settings = block.querySelector(".edition-settings");
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
      // so does the line of the settings it was computed at (render.py settings_line, one per frame)
      if (meta.settings && settings && meta.settings[k] !== undefined) settings.innerHTML = meta.settings[k];
      // each figure's text alternative follows the slider too (symsgd_jupyter/describe.py, one per frame)
      (meta.descriptions || []).forEach((texts, j) => { if (alts[j] && texts[k]) alts[j].textContent = texts[k]; });
      block.dataset.editionActive = String(k);
      target = {k, from};
      follow();
    };
    const ctl = {block, meta, name: block.dataset.link};
    ctl.set = (k) => (typeof Plotly === "undefined" ? null : show(k, null));  // a link moved it: as a mouse move
    const drawing = [];
    for (const {plot, spec} of plots) {
      if (typeof Plotly === "undefined") { fail(plot, "plotly.js did not load"); continue; }
      if (!SHARED) { fail(plot, "the page's plotly config (SYMSGD_PLOTLY_CONFIG) is missing"); continue; }
      const layout = spec.layout;
      drawing.push(Plotly.newPlot(plot, spec.data, layout, CONFIG)
        .then(() => (spec.frames ? Plotly.addFrames(plot, spec.frames) : null))
        .then(() => {
          plot.dataset.edition = "drawn";
          E.drawn += 1;
          plot.on("plotly_sliderchange", (ev) => {
            const k = Number(ev.step.args[0][0]);
            show(k, plot);
            moved(ctl, k);
          });
        })
        .catch((err) => { console.error(err); fail(plot, String(err && err.message ? err.message : err)); }));
      E.figures.push(plot);
    }
    ctl.ready = Promise.allSettled(drawing);
    if (ctl.name) controllers.set(ctl.name, ctl);
  }

  // ---------------------------------------------------------------- links that keep the slider
  // The address records the precomputed sliders moved on the page: #orbit=lam:2&trap-2=lr:0.3 — the controller
  // block's link name (render.py link_name), its slider's parameter and the value as its slider labels it; the
  // controller moved last comes first. Moving a slider rewrites it in place (history.replaceState: no history entry,
  // no scroll); opening the page at such an address, or changing it while open (hashchange), moves those sliders
  // exactly as the mouse does and scrolls to the first. A value between two precomputed ones shows the nearest (and
  // says so); an unknown figure, parameter or value is ignored with a note: the figure keeps the notebook's value.
  // A fragment without "=" is an ordinary anchor (#a-heading, #orbit) and left to the browser.
  let linked = [];  // [name, step] pairs, as in the address
  let written = null;  // the fragment this script wrote, when it had to use location.replace (no hashchange echo)

  function label(ctl, k) { return `${ctl.meta.label} = ${ctl.meta.labels[k]}`; }

  function writeAddress() {
    const parts = linked.map(([name, k]) => {
      const {meta} = controllers.get(name);
      return `${name}=${meta.slider}:${encodeURIComponent(meta.labels[k])}`;
    });
    const url = location.href.split("#")[0] + "#" + parts.join("&");
    try {
      history.replaceState(history.state, "", url);
    } catch (err) {  // a browser that refuses replaceState here: a same-page fragment, still no history entry
      written = "#" + parts.join("&");
      location.replace(url);
    }
    E.linked = linked.map(([name, k]) => [name, k]);
  }

  function moved(ctl, k) {
    if (!ctl.name || !ctl.meta.slider) return;
    for (const note of ctl.block.querySelectorAll(":scope > .edition-link-note")) note.remove();
    linked = [[ctl.name, k]].concat(linked.filter(([name]) => name !== ctl.name));
    writeAddress();
  }

  function note(ctl, text) {
    console.warn("symsgd edition, link: " + text);
    const p = document.createElement("p");
    p.className = "edition-link-note";
    p.setAttribute("role", "status");
    p.textContent = text;
    if (ctl) ctl.block.insertBefore(p, ctl.block.querySelector(".edition-figure") || ctl.block.firstChild);
    else (document.querySelector("main") || document.body).prepend(p);
    return p;
  }

  function decode(text) {
    try { return decodeURIComponent(text); } catch (err) { return text; }
  }

  // the step of ``ctl`` that ``text`` names: its label, its value, or (a number between two values) the nearest
  function stepOf(ctl, text) {
    const {labels, values} = ctl.meta;
    let k = labels.indexOf(text);
    if (k < 0) k = values.findIndex((v) => String(v) === text);
    const x = text.trim() === "" ? NaN : Number(text);
    if (k < 0 && isFinite(x)) k = values.indexOf(x);
    if (k >= 0) return {k};
    const numeric = values.every((v) => typeof v === "number");
    const lo = numeric ? Math.min(...values) : NaN, hi = numeric ? Math.max(...values) : NaN;
    if (isFinite(x) && x >= lo && x <= hi) {
      k = values.reduce((best, v, i) => (Math.abs(v - x) < Math.abs(values[best] - x) ? i : best), 0);
      return {k, nearest: true};
    }
    const range = numeric ? `from ${labels[values.indexOf(lo)]} to ${labels[values.indexOf(hi)]}`
      : labels.map((l) => `“${l}”`).join(", ");
    return {error: `not one of its precomputed values (${range})`};
  }

  function applyAddress() {
    for (const old of document.querySelectorAll(".edition-link-note")) old.remove();
    const text = location.hash.replace(/^#/, "");
    if (!text.includes("=")) return null;
    const applied = [], names = [...controllers.keys()].filter((n) => controllers.get(n).meta.slider);
    const pageNotes = [];  // notes on parts that name no figure: shown with the first figure named, if any
    let first = null;
    for (const part of text.split("&").filter(Boolean)) {
      const m = /^([^=:]+)=([^=:]*):(.*)$/.exec(part);
      const name = m ? decode(m[1]) : null, ctl = m ? controllers.get(name) : null;
      if (!m) {
        pageNotes.push(note(null, `The address part “${decode(part)}” is not of the form figure=parameter:value; ` +
                            "it is ignored."));
        continue;
      }
      if (!ctl || !ctl.meta.slider) {
        pageNotes.push(note(null, `The address names “${name}”, which is not a figure with a precomputed slider ` +
                            `on this page (those are: ${names.join(", ") || "none"}); it is ignored.`));
        continue;
      }
      first = first || ctl;
      const here = `the figure shows the notebook's value, ${label(ctl, ctl.meta.current)}`;
      const param = decode(m[2]), value = decode(m[3]);
      if (applied.some(([n]) => n === name)) {
        note(ctl, `The address sets ${name} twice; the first, ${label(ctl, applied.find(([n]) => n === name)[1])}, ` +
             "is shown.");
        continue;
      }
      if (param !== ctl.meta.slider) {
        note(ctl, `The address sets “${param}” of ${name}, whose slider is ${ctl.meta.label} ` +
             `(${ctl.meta.slider}); ${here}.`);
        continue;
      }
      const step = stepOf(ctl, value);
      if (step.error) {
        note(ctl, `The address sets ${ctl.meta.label} of ${name} to “${value}”, ${step.error}; ${here}.`);
        continue;
      }
      if (step.nearest) {
        note(ctl, `The address sets ${ctl.meta.label} of ${name} to ${value}, between its precomputed values; ` +
             `the figure shows the nearest, ${label(ctl, step.k)}.`);
      }
      ctl.set(step.k);
      applied.push([name, step.k]);
    }
    for (const p of first ? pageNotes.reverse() : []) {
      first.block.insertBefore(p, first.block.querySelector(":scope > .edition-link-note, :scope > .edition-figure"));
    }
    linked = applied;
    E.linked = applied.map(([name, k]) => [name, k]);
    return first;
  }

  function followAddress(ready) {
    const mathDone = window.MathJax && MathJax.startup && MathJax.startup.promise
      ? MathJax.startup.promise.catch(() => null) : Promise.resolve();
    const go = () => {
      const first = applyAddress();
      document.body.dataset.editionLinked = "yes";  // the address was read (the browser test waits for it)
      // scrolled to once the formulas above it are typeset (they change the page's height)
      if (first) mathDone.then(() => first.block.scrollIntoView({block: "start"}));
    };
    ready.then(go);
    window.addEventListener("hashchange", () => {
      if (written !== null && location.hash === written) { written = null; return; }
      ready.then(go);
    });
  }

  function start() {
    for (const block of document.querySelectorAll(".edition-controller")) {
      try { drawController(block); } catch (err) {
        console.error(err);
        for (const plot of block.querySelectorAll(".edition-plot")) fail(plot, String(err.message || err));
      }
    }
    followAddress(Promise.all([...controllers.values()].map((c) => c.ready)));
    document.body.dataset.editionStarted = "yes";
  }
  // The fine print (<details class="symsgd-fine-print">) is closed on screen; a page printed from the browser prints
  // it open, as the handout does, and closes again what the reader had left closed.
  let closedForPrint = [];
  window.addEventListener("beforeprint", () => {
    closedForPrint = [...document.querySelectorAll("details.symsgd-fine-print:not([open])")];
    for (const d of closedForPrint) d.open = true;
  });
  window.addEventListener("afterprint", () => { for (const d of closedForPrint) d.open = false; closedForPrint = []; });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

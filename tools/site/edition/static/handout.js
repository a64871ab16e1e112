// symsgd printed handout (tools/site/handout.py): turns an edition page whose figures are all drawn into its printed
// form. handout.py photographs every figure (a browser screenshot of the drawn plot: 2-D and 3-D alike) at the
// notebook's own value, its slider taken away, and, for a precomputed slider, at a few of its values (the notebook's
// among them), shown as small multiples labelled with the value. Each value is reached as the page's own slider
// reaches it: Plotly.animate to that frame, then the axes the live figure autoranges (edition.js).
(function () {
  "use strict";
  const ANIMATE = {mode: "immediate", frame: {duration: 0, redraw: true}, transition: {duration: 0}};

  // up to `count` slider steps out of n: spread from the first to the last, the notebook's own step among them
  function pickSteps(n, current, count) {
    if (n <= count) return [...Array(n).keys()];
    const steps = [...Array(count).keys()].map((i) => Math.round((i * (n - 1)) / (count - 1)));
    let nearest = 0;
    steps.forEach((s, i) => { if (Math.abs(s - current) < Math.abs(steps[nearest] - current)) nearest = i; });
    steps[nearest] = current;
    return [...new Set(steps)].sort((a, b) => a - b);
  }

  const plots = () => [...document.querySelectorAll(".edition-controller .edition-plot")];
  const specOf = (plot) => JSON.parse(plot.parentElement.querySelector("script.edition-figure-data").textContent);
  const metaOf = (plot) => JSON.parse(plot.closest(".edition-controller")
    .querySelector("script.edition-controller-data").textContent);

  const H = (window.symsgdHandout = {});

  // every figure: its slider steps to photograph (none without precomputed frames)
  H.plan = function (count) {
    document.body.classList.add("edition-handout");
    return plots().map((plot, i) => {
      if (plot.dataset.edition !== "drawn") throw new Error(`figure ${i + 1} was not drawn: ${plot.dataset.edition}`);
      const spec = specOf(plot), meta = metaOf(plot);
      const n = spec.frames ? spec.frames.length : 0;
      const steps = n && meta.labels ? pickSteps(n, meta.current, count) : [];
      return {cell: meta.cell, output: meta.output, figure: Number(plot.parentElement.dataset.figure),
              frames: n, steps, values: steps.map((k) => meta.labels[k]), current: meta.current ?? null};
    });
  };

  // figure i at the notebook's value, full width, without its slider and the room made for it (frames.py)
  H.main = async function (i) {
    const plot = plots()[i], spec = specOf(plot);
    const room = (spec.edition || {}).slider_room || 0;
    const update = {sliders: [], updatemenus: []};
    if (room) {
      update["margin.b"] = Math.max(0, plot.layout.margin.b - room);
      update.height = plot.layout.height - room;
    }
    await Plotly.relayout(plot, update);
    plot.style.minHeight = "0";
  };

  // figure i at slider step k, for a small multiple, without its legend (the large image has it). Drawn at 3/4 of
  // the width (and 0.93 of the height) and printed at half: its text prints at 2/3 of the large image's size. Drawn
  // at half the width, a figure of several panels had no room between them for its axis titles (notebook 02's
  // orbit figure: the right panel's y title ran into the heat map beside it).
  H.step = async function (i, k) {
    const plot = plots()[i], spec = specOf(plot);
    if (!plot.dataset.handoutSmall) {
      plot.dataset.handoutSmall = "yes";
      const width = Math.round(plot.getBoundingClientRect().width * 0.75);
      const height = Math.round(plot.layout.height * 0.93);
      plot.style.width = width + "px";
      await Plotly.relayout(plot, {width, height, showlegend: false});
    }
    await Plotly.animate(plot, [String(k)], ANIMATE);
    const update = {};
    for (const axis of (spec.edition || {}).autoranged || []) update[axis + ".autorange"] = true;
    if (Object.keys(update).length) await Plotly.relayout(plot, update);
  };

  function img(src, cls, alt) {
    const el = document.createElement("img");
    el.className = cls;
    el.src = src;
    el.alt = alt;
    return el;
  }

  // the photographs in place of figure i: the large one, then the small multiples with their labels
  H.place = async function (i, main, small) {
    const plot = plots()[i], spec = specOf(plot), meta = metaOf(plot);
    const title = plot.getAttribute("aria-label") || "figure";
    const holder = document.createElement("div");
    holder.className = "handout-figure";
    holder.appendChild(img(main, "handout-main", title));
    if (small.length) {
      const head = document.createElement("p");
      head.className = "handout-multiples-title";
      head.textContent = `The same figure at ${small.length} of the ${spec.frames.length} precomputed values ` +
        `of ${meta.label}:`;
      holder.appendChild(head);
      const grid = document.createElement("div");
      grid.className = "handout-multiples";
      for (const [k, src] of small) {
        const cell = document.createElement("figure");
        cell.className = "handout-multiple";
        const label = `${meta.label} = ${meta.labels[k]}` + (k === meta.current ? " (the notebook's value)" : "");
        cell.appendChild(img(src, "handout-small", `${title}, ${label}`));
        const cap = document.createElement("figcaption");
        cap.textContent = label;
        cell.appendChild(cap);
        grid.appendChild(cell);
      }
      holder.appendChild(grid);
    }
    plot.parentElement.insertBefore(holder, plot);
    plot.classList.add("handout-photographed");
    await Promise.all([...holder.querySelectorAll("img")].map((el) => el.decode()));
  };

  // the rest of the page as printed: code and worked solutions only when asked, the header note rewritten
  H.finish = function (opts) {
    if (opts.code) {
      document.body.classList.add("handout-code");
      for (const d of document.querySelectorAll("details.edition-code")) d.open = true;
    }
    if (opts.solutions) {
      document.body.classList.add("handout-solutions");
      for (const d of document.querySelectorAll("details.edition-worked")) d.open = true;
    }
    for (const note of document.querySelectorAll(".edition-note")) {
      note.innerHTML = "<p><b>Printed handout of the static edition.</b> Every figure is drawn at the notebook's " +
        "own settings; a figure whose slider was precomputed is also shown at a few of its values. " +
        "The live notebooks (sliders, Run buttons, answer boxes): get the repository, then <code>make lab</code>.</p>";
    }
    return document.querySelectorAll("img.handout-main, img.handout-small").length;
  };
})();

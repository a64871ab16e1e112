// symsgd printed handout (tools/site/handout.py): turns an edition page whose figures are all drawn into its printed
// form. handout.py photographs every figure (a browser screenshot of the drawn plot: 2-D and 3-D alike) at the
// notebook's own value, its slider taken away, and, for a precomputed slider, at a few of its values (the notebook's
// among them), shown as small multiples labelled with the value. Each value is reached as the page's own slider
// reaches it: Plotly.animate to that frame, then the axes the live figure autoranges (edition.js).
(function () {
  "use strict";
  const ANIMATE = {mode: "immediate", frame: {duration: 0, redraw: true}, transition: {duration: 0}};
  // The printed page (handout.css: A4, 12 mm side margins, small multiples two to a row 4 mm apart), and the
  // smallest text a printed figure may carry. A figure is photographed at its width on screen and printed at the
  // width of the page's text (a small multiple: of half of it), so its text prints smaller than drawn: its smaller
  // fonts are raised until its tick labels print at MIN_PRINTED_PT at least.
  const PRINTED_TEXT_WIDTH_MM = 210 - 2 * 12;
  const MULTIPLES_GAP_MM = 4;
  const MIN_PRINTED_PT = 7;
  const PT_PER_MM = 72 / 25.4;
  // the most ticks on an axis of a 3-D scene whose fonts were raised
  const SCENE_TICKS = 5;
  // the least gap between two tick labels of a small multiple's x axis, in label heights: closer, they read as one
  // number once printed ("2 2.5" as "22.5" at a gap of 3 px)
  const TICK_GAP = 0.5;
  const printedWidthPt = (small) =>
    (small ? (PRINTED_TEXT_WIDTH_MM - MULTIPLES_GAP_MM) / 2 : PRINTED_TEXT_WIDTH_MM) * PT_PER_MM;

  // the sizes (CSS px) of the figure's tick labels, as plotly resolved them: every shown axis of its 2-D plots and
  // 3-D scenes (drawn on a canvas, not in the SVG), and its colour bars
  function tickFontSizes(plot) {
    const full = plot._fullLayout, sizes = [];
    const axes = (holder) => Object.keys(holder).filter((k) => /^[xyz]axis\d*$/.test(k)).map((k) => holder[k])
      .filter((a) => a && a.visible !== false && a.showticklabels !== false && a.tickfont);
    for (const axis of axes(full)) sizes.push(axis.tickfont.size);
    for (const key of Object.keys(full)) if (/^scene\d*$/.test(key) && full[key]) {
      for (const axis of axes(full[key])) sizes.push(axis.tickfont.size);
    }
    for (const trace of plot._fullData) {
      const bar = trace.colorbar || (trace.marker && trace.marker.colorbar);
      if (bar && bar.tickfont && trace.showscale !== false) sizes.push(bar.tickfont.size);
    }
    return sizes.filter((px) => px > 0);
  }

  // the printed size (pt) of the smallest tick label of the figure drawn now, printed `small` or not (null: none)
  function smallestPrintedPt(plot, small) {
    const sizes = tickFontSizes(plot);
    if (!sizes.length) return null;
    const pt = (Math.min(...sizes) * printedWidthPt(small)) / plot.getBoundingClientRect().width;
    return Math.floor(pt * 100) / 100;  // rounded down: a size reported is a size reached
  }

  // every font of the figure (layout, axes, 3-D scenes, annotations, colour bars) at least `floor` CSS px (a larger
  // one is kept: multiplying every font crowded the panels' titles out of their panels), and a 3-D scene's axes at
  // SCENE_TICKS ticks at most (its labels, drawn larger, ran into each other); returns a function that undoes it
  async function raiseFonts(plot, floor) {
    const full = plot._fullLayout, update = {}, undo = {};
    const raised = (size) => Math.max(size, Math.ceil(floor * 10) / 10);  // never below the floor
    const raise = (key, font) => { undo[key] = font.size; update[key] = raised(font.size); };
    if (full.font) raise("font.size", full.font);
    if (full.title && full.title.font) raise("title.font.size", full.title.font);
    const axes = (holder, prefix, scene) => {
      for (const key of Object.keys(holder)) {
        const axis = holder[key];
        if (!/^[xyz]axis\d*$/.test(key) || !axis || !axis.tickfont) continue;
        raise(`${prefix}${key}.tickfont.size`, axis.tickfont);
        if (axis.title && axis.title.font) raise(`${prefix}${key}.title.font.size`, axis.title.font);
        if (scene) {
          undo[`${prefix}${key}.nticks`] = axis.nticks;
          update[`${prefix}${key}.nticks`] = axis.nticks ? Math.min(axis.nticks, SCENE_TICKS) : SCENE_TICKS;
        }
      }
    };
    axes(full, "", false);
    for (const key of Object.keys(full)) if (/^scene\d*$/.test(key) && full[key]) axes(full[key], `${key}.`, true);
    (full.annotations || []).forEach((a, j) => { if (a.font) raise(`annotations[${j}].font.size`, a.font); });
    await Plotly.relayout(plot, update);
    const bars = {"colorbar.tickfont.size": [], "marker.colorbar.tickfont.size": []}, traces = [];
    const barsUndo = {"colorbar.tickfont.size": [], "marker.colorbar.tickfont.size": []};
    plot._fullData.forEach((trace, j) => {
      const bar = trace.colorbar || (trace.marker && trace.marker.colorbar);
      if (!bar || !bar.tickfont || trace.showscale === false) return;
      traces.push(j);
      const [key, other] = trace.colorbar ? ["colorbar.tickfont.size", "marker.colorbar.tickfont.size"]
        : ["marker.colorbar.tickfont.size", "colorbar.tickfont.size"];
      bars[key].push(raised(bar.tickfont.size));
      barsUndo[key].push(bar.tickfont.size);
      bars[other].push(undefined);
      barsUndo[other].push(undefined);
    });
    if (traces.length) await Plotly.restyle(plot, bars, traces);
    return async () => {
      await Plotly.relayout(plot, undo);
      if (traces.length) await Plotly.restyle(plot, barsUndo, traces);
    };
  }

  // how many pairs of the figure's texts (SVG: tick labels, titles, annotations) overlap by more than a quarter of a
  // line: fonts raised in a crowded figure (many category labels, panels side by side) run into each other
  function textCollisions(plot) {
    const boxes = [...plot.querySelectorAll(".main-svg text")].filter((t) => t.textContent.trim())
      .map((t) => t.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0);
    let n = 0;
    for (let a = 0; a < boxes.length; a++) {
      for (let b = a + 1; b < boxes.length; b++) {
        const p = boxes[a], q = boxes[b];
        const across = Math.min(p.right, q.right) - Math.max(p.left, q.left);
        const down = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
        if (across > 1 && down > 0.25 * Math.min(p.height, q.height)) n++;
      }
    }
    return n;
  }

  // the figure's tick labels, and any smaller text of it, at least MIN_PRINTED_PT once printed (`small`: as a small
  // multiple, two to a row); the printed size of the smallest tick label reached. A small multiple whose text, so
  // raised, runs into itself is left as it was and marked to print one to a row (plot.dataset.handoutWide; null).
  async function legibleFonts(plot, small) {
    const pt = smallestPrintedPt(plot, small);
    if (pt === null || pt >= MIN_PRINTED_PT) return pt;
    const before = textCollisions(plot);
    const floor = (Math.min(...tickFontSizes(plot)) * MIN_PRINTED_PT) / pt;
    const undo = await raiseFonts(plot, floor);
    const after = textCollisions(plot);
    plot.dataset.handoutCollisions = `${before} ${after}`;
    if (small && after > before) {
      await undo();
      plot.dataset.handoutWide = "yes";
      return null;
    }
    plot.dataset.handoutFloor = String(floor);
    plot.handoutUndoFonts = undo;
    return smallestPrintedPt(plot, small);
  }

  // the numeric 2-D x axes of the figure whose range follows the frame (`autoranged`, edition.js), as keys
  const frameXAxes = (plot, autoranged) => autoranged.filter((key) => /^xaxis\d*$/.test(key)
    && plot._fullLayout[key] && ["linear", "log"].includes(plot._fullLayout[key].type));

  // those axes with level tick labels (a relayout update). Drawn narrow, plotly turned the crowded labels of one
  // small multiple upright while its neighbours' stayed level (notebook 02's orbit figure at λ = 2.828).
  function levelXTicks(plot, autoranged) {
    const update = {};
    for (const key of frameXAxes(plot, autoranged)) update[`${key}.tickangle`] = 0;
    return update;
  }

  // the numeric 2-D axes of the figure (x and y), as keys
  const numericAxes = (plot) => Object.keys(plot._fullLayout).filter((key) => /^[xy]axis\d*$/.test(key)
    && plot._fullLayout[key] && plot._fullLayout[key].visible !== false
    && ["linear", "log"].includes(plot._fullLayout[key].type));

  // the boxes (client px) of the drawn tick labels of 2-D axis `key` ("yaxis3": plotly's class "y3tick")
  const tickBoxes = (plot, key) => [...plot.querySelectorAll(`g.${key.replace("axis", "")}tick text`)]
    .filter((t) => t.textContent.trim()).map((t) => t.getBoundingClientRect()).filter((r) => r.width > 0);

  // whether the tick labels of 2-D axis `key` drawn now run into each other: an x axis's closer than TICK_GAP
  // label heights side by side, a y axis's overlapping one above the other (notebook 01's log axis of the spread,
  // "5×10⁻²" over "2×10⁻²", once its fonts were raised)
  function crowdedTicks(plot, key) {
    if (key.startsWith("x")) {
      const boxes = tickBoxes(plot, key).sort((p, q) => p.left - q.left);
      return boxes.some((r, j) => j > 0 && r.left < boxes[j - 1].right + TICK_GAP * r.height);
    }
    const boxes = tickBoxes(plot, key).sort((p, q) => p.top - q.top);
    return boxes.some((r, j) => j > 0 && r.top < boxes[j - 1].bottom - 1);
  }

  // each frame: the frame-following axes with plotly's own ticks again, then fewer (2 at least) on any numeric axis
  // whose labels are crowded (a crowded axis of every frame thinned alike would leave a single label on a narrow
  // range: 03's "1"). An axis whose ticks the figure spaced itself (a dtick: 01's log axis of the spread at "D2",
  // labels at 1, 2 and 5 of each decade) gets plotly's automatic ticks, fewer until they fit; listed ticks
  // (tickvals) are the figure's own and stay.
  async function uncrowdTicks(plot, autoranged) {
    for (const key of numericAxes(plot)) {
      if (autoranged.includes(key) && plot.layout[key] && plot.layout[key].nticks) {
        await Plotly.relayout(plot, {[`${key}.nticks`]: 0});
      }
      for (let n = tickBoxes(plot, key).length - 1; n >= 2 && crowdedTicks(plot, key); n--) {
        if (!["auto", "linear"].includes(plot._fullLayout[key].tickmode)) break;
        await Plotly.relayout(plot, {[`${key}.tickmode`]: "auto", [`${key}.nticks`]: n});
      }
    }
  }

  // a y axis's tick labels moved left (ticklabelstandoff) clear of the x tick labels of their own panel they run
  // into: at the corner where both ranges start, "0" of the y axis over "0" of the x axis (notebook 03's figure of
  // the fluctuations)
  async function clearCorners(plot) {
    const update = {};
    for (const p of Object.values(plot._fullLayout._plots || {})) {
      if (!p.xaxis || !p.yaxis || !p.yaxis.showticklabels) continue;
      const xs = tickBoxes(plot, p.xaxis._name), ys = tickBoxes(plot, p.yaxis._name);
      let shift = 0;
      for (const y of ys) {
        for (const x of xs) {
          const [across, down] = overlap(y, x);
          if (across > 0 && down > 0) shift = Math.max(shift, across);
        }
      }
      if (shift > 0) {
        const key = `${p.yaxis._name}.ticklabelstandoff`;
        update[key] = Math.max(update[key] || 0, (p.yaxis.ticklabelstandoff || 0) + Math.ceil(shift) + 2);
      }
    }
    if (Object.keys(update).length) await Plotly.relayout(plot, update);
  }

  // the tick settings of the figure's 2-D axes as laid out (a relayout update that puts them back)
  function tickSettings(plot) {
    const update = {};
    for (const key of Object.keys(plot.layout).filter((k) => /^[xy]axis\d*$/.test(k))) {
      for (const name of ["tickmode", "nticks", "dtick", "tick0", "ticklabelstandoff"]) {
        update[`${key}.${name}`] = plot.layout[key][name] === undefined ? null : plot.layout[key][name];
      }
    }
    return update;
  }

  // the plot areas of the figure's 2-D panels (client px), each with its x and y axes' keys
  function panelAreas(plot) {
    const svg = plot.querySelector(".main-svg");
    if (!svg || !plot._fullLayout._plots) return [];
    const at = svg.getBoundingClientRect();
    return Object.values(plot._fullLayout._plots).filter((p) => p.xaxis && p.yaxis).map((p) => ({
      axes: [p.xaxis._name, p.yaxis._name], left: at.left + p.xaxis._offset,
      right: at.left + p.xaxis._offset + p.xaxis._length, top: at.top + p.yaxis._offset,
      bottom: at.top + p.yaxis._offset + p.yaxis._length}));
  }

  // how far two boxes overlap, px across and px down (≤ 0: apart)
  const overlap = (p, q) => [Math.min(p.right, q.right) - Math.max(p.left, q.left),
    Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top)];
  const textOf = (t) => t.textContent.trim().slice(0, 40);

  // a 2-D axis's title (its text element; null: none drawn)
  const axisTitle = (plot, key) => [...plot.querySelectorAll(`text.${key.replace("axis", "")}title`)]
    .find((t) => t.textContent.trim() && t.getBoundingClientRect().width > 0) || null;

  // what of the figure drawn now runs into what, one line each: an axis title or tick label inside the plot area
  // of a panel that is not its own (notebook 02's "L and G on the orbit" over the heat map beside it), and two texts
  // overlapping by more than a pixel across and a quarter of a line down (textCollisions' rule)
  function overlaps(plot) {
    const found = [], areas = panelAreas(plot);
    const own = (key) => areas.filter((a) => a.axes.includes(key));
    for (const key of Object.keys(plot._fullLayout).filter((k) => /^[xy]axis\d*$/.test(k))) {
      const mine = own(key);
      const texts = [...plot.querySelectorAll(`g.${key.replace("axis", "")}tick text`)];
      const title = axisTitle(plot, key);
      if (title) texts.push(title);
      for (const t of texts.filter((el) => el.textContent.trim())) {
        const box = t.getBoundingClientRect();
        if (!box.width) continue;
        for (const area of areas) {
          if (mine.some((m) => Math.abs(m.left - area.left) < 1 && Math.abs(m.top - area.top) < 1
            && Math.abs(m.right - area.right) < 1 && Math.abs(m.bottom - area.bottom) < 1)) continue;
          const [across, down] = overlap(box, area);
          if (across > 1 && down > 1) {
            found.push(`${key} ${t === title ? "title" : "tick label"} "${textOf(t)}" over the panel of ` +
              `${area.axes.join("/")} (${across.toFixed(0)}×${down.toFixed(0)} px)`);
          }
        }
      }
    }
    const texts = [...plot.querySelectorAll(".main-svg text")].filter((t) => t.textContent.trim())
      .map((t) => [t, t.getBoundingClientRect()]).filter(([, r]) => r.width > 0 && r.height > 0);
    for (let a = 0; a < texts.length; a++) {
      for (let b = a + 1; b < texts.length; b++) {
        const [p, q] = [texts[a][1], texts[b][1]], [across, down] = overlap(p, q);
        if (across > 1 && down > 0.25 * Math.min(p.height, q.height)) {
          found.push(`"${textOf(texts[a][0])}" over "${textOf(texts[b][0])}"`);
        }
      }
    }
    return found;
  }

  // the 2-D axis titles drawn over a panel not their own or over another text (a tick label, a panel's title),
  // left out (their words go in the small multiples' caption, H.place); kept in plot.dataset.handoutDropped as [axis key, its layout title, panel number, panels,
  // the title as drawn] rows
  async function dropCrowdingTitles(plot) {
    const dropped = JSON.parse(plot.dataset.handoutDropped || "[]");
    const areas = panelAreas(plot);
    // panels numbered left to right, top to bottom, by their plot areas
    const order = [...new Set(areas.map((a) => `${Math.round(a.top)} ${Math.round(a.left)}`))]
      .map((s) => s.split(" ").map(Number)).sort((p, q) => (Math.abs(p[0] - q[0]) > 20 ? p[0] - q[0] : p[1] - q[1]));
    const update = {};
    const texts = [...plot.querySelectorAll(".main-svg text")].filter((t) => t.textContent.trim()
      && t.getBoundingClientRect().width > 0);
    for (const key of Object.keys(plot._fullLayout).filter((k) => /^[xy]axis\d*$/.test(k))) {
      const title = axisTitle(plot, key);
      if (!title || dropped.some((d) => d[0] === key)) continue;
      const box = title.getBoundingClientRect(), mine = areas.filter((a) => a.axes.includes(key));
      const overPanel = areas.some((area) => !mine.some((m) => Math.abs(m.left - area.left) < 1
        && Math.abs(m.top - area.top) < 1) && overlap(box, area).every((d) => d > 1));
      const overText = texts.some((t) => {
        if (t === title) return false;
        const r = t.getBoundingClientRect(), [across, down] = overlap(box, r);
        return across > 1 && down > 0.25 * Math.min(box.height, r.height);
      });
      if (!(overPanel || overText) || !mine.length) continue;
      const panel = 1 + order.findIndex(([top, left]) => Math.abs(top - mine[0].top) < 1.5
        && Math.abs(left - mine[0].left) < 1.5);
      dropped.push([key, plot._fullLayout[key].title.text, panel, order.length, title.textContent.trim()]);
      update[`${key}.title.text`] = "";
    }
    if (Object.keys(update).length) await Plotly.relayout(plot, update);
    plot.dataset.handoutDropped = JSON.stringify(dropped);
  }

  // the titles left out, left out again (a frame that carries its own axis titles brings them back)
  async function keepDropped(plot) {
    const update = {};
    for (const [key] of JSON.parse(plot.dataset.handoutDropped || "[]")) {
      if (plot._fullLayout[key] && plot._fullLayout[key].title.text) update[`${key}.title.text`] = "";
    }
    if (Object.keys(update).length) await Plotly.relayout(plot, update);
  }

  // the titles left out, back (before the figure is drawn wide)
  async function restoreDropped(plot) {
    const update = {};
    for (const [key, text] of JSON.parse(plot.dataset.handoutDropped || "[]")) update[`${key}.title.text`] = text;
    delete plot.dataset.handoutDropped;
    if (Object.keys(update).length) await Plotly.relayout(plot, update);
  }

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

  // figure i at the notebook's value, full width, without its slider and the room made for it (frames.py), its
  // tick labels at least MIN_PRINTED_PT once printed and not over each other (uncrowdTicks, clearCorners); returns
  // the printed size of the smallest, pt
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
    const pt = await legibleFonts(plot, false);
    await uncrowdTicks(plot, (spec.edition || {}).autoranged || []);
    await clearCorners(plot);
    return pt;
  };

  // figure i drawn at slider step k as a small multiple is drawn (after H.step set it up): the frame, the axes the
  // live figure autoranges, the fonts raised again (a frame that carries its own title or annotations brings their
  // own sizes back), the titles left out kept out, crowded ticks thinned, corners cleared, and a title the frame's
  // own range pushed over a neighbour left out
  async function drawStep(plot, k, autoranged) {
    await Plotly.animate(plot, [String(k)], ANIMATE);
    const update = {};
    for (const axis of autoranged) update[axis + ".autorange"] = true;
    if (Object.keys(update).length) await Plotly.relayout(plot, update);
    if (plot.dataset.handoutFloor) await raiseFonts(plot, Number(plot.dataset.handoutFloor));
    await keepDropped(plot);
    await uncrowdTicks(plot, autoranged);
    await clearCorners(plot);
    await dropCrowdingTitles(plot);
  }

  // figure i at slider step k, for a small multiple, without its legend (the large image has it); `steps`: every
  // step its small multiples show (default: k alone). Drawn at 3/4 of the width (and 0.93 of the height) and
  // printed at half, its fonts raised so that its tick labels still print at MIN_PRINTED_PT (legibleFonts), its
  // crowded ticks thinned (uncrowdTicks) and corners cleared (clearCorners). Raised fonts take room the panels'
  // margins and the gaps between them (fixed domains) do not have: an axis title drawn over a panel not its own is
  // left out and said once in the caption (notebook 02's orbit figure: the right panel's y title ran into the heat
  // map beside it). A figure whose texts, at any of `steps`, still run into each other or into another panel (or,
  // raised, into themselves: most of notebook 04's) is drawn as wide as the large image and printed one to a row,
  // its titles and ticks back, and the same done there. Returns the printed size of its smallest tick label, pt.
  H.step = async function (i, k, steps) {
    const plot = plots()[i], spec = specOf(plot);
    const autoranged = (spec.edition || {}).autoranged || [];
    if (!plot.dataset.handoutSmall) {
      plot.dataset.handoutSmall = "yes";
      const full = Math.round(plot.getBoundingClientRect().width);
      const width = Math.round(full * 0.75);
      const height = Math.round(plot.layout.height * 0.93);
      const ticks = tickSettings(plot);
      plot.style.width = width + "px";
      await Plotly.relayout(plot, {width, height, showlegend: false, ...levelXTicks(plot, autoranged)});
      let pt = await legibleFonts(plot, true);
      if (!plot.dataset.handoutWide) {
        const found = [];
        for (const s of steps || [k]) {
          await drawStep(plot, s, autoranged);
          found.push(...overlaps(plot));
        }
        if (found.length) {
          plot.dataset.handoutHalfOverlaps = String(found.length);
          if (plot.handoutUndoFonts) await plot.handoutUndoFonts();
          await restoreDropped(plot);
          await Plotly.relayout(plot, ticks);
          delete plot.dataset.handoutFloor;
          plot.dataset.handoutWide = "yes";
        }
      }
      if (plot.dataset.handoutWide) {
        plot.style.width = full + "px";
        await Plotly.relayout(plot, {width: full});
        pt = await legibleFonts(plot, false);
      }
      plot.dataset.handoutSmallPt = String(pt);
    }
    await drawStep(plot, k, autoranged);
    return smallestPrintedPt(plot, !plot.dataset.handoutWide);
  };

  function img(src, cls, alt) {
    const el = document.createElement("img");
    el.className = cls;
    el.src = src;
    el.alt = alt;
    return el;
  }

  // how many small multiples of figure i print to a row (legibleFonts)
  H.perRow = (i) => (plots()[i].dataset.handoutWide ? 1 : 2);
  // pairs of overlapping texts of figure i before and after its fonts were raised ("0 7"; null: none raised)
  H.collisions = (i) => plots()[i].dataset.handoutCollisions || null;
  // what of figure i as drawn now runs into what (overlaps: texts over texts, axis texts over another panel)
  H.overlaps = (i) => overlaps(plots()[i]);
  // the axis titles left out of figure i's small multiples for room, as drawn
  H.titlesLeftOut = (i) => JSON.parse(plots()[i].dataset.handoutDropped || "[]").map((row) => row[4]);

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
      const dropped = JSON.parse(plot.dataset.handoutDropped || "[]");
      if (dropped.length) {
        const note = document.createElement("p");
        note.className = "handout-multiples-note";
        note.textContent = "Left out of the small multiples for room (they are in the figure above): " +
          dropped.map(([key, , panel, count, shown]) => `the ${key[0]}-axis title “${shown}”` +
            (count > 1 ? ` of panel ${panel} of ${count} (left to right, top to bottom)` : "")).join("; ") + ".";
        holder.appendChild(note);
      }
      const grid = document.createElement("div");
      grid.className = "handout-multiples" + (plot.dataset.handoutWide ? " handout-wide" : "");
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

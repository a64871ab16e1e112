// edition.js (tools/site/edition/static) under node, without a browser: a minimal DOM and plotly with one controller
// block; its slider is moved to step K as plotly reports a mouse move. Prints the block's settings and status lines.
// Usage: node edition_under_node.js EDITION_JS META_JSON_FILE K   (tests/platform/test_site_render.py)
const fs = require("fs");
const [script, metaJson, K] = [process.argv[2], fs.readFileSync(process.argv[3], "utf8"), Number(process.argv[4])];
function el(cls, extra) { return Object.assign({className: cls, dataset: {}, innerHTML: "", textContent: "",
  setAttribute() {}, getAttribute() { return null; }, querySelector() { return null; },
  querySelectorAll() { return []; }, on(ev, fn) { this.handlers = this.handlers || {}; this.handlers[ev] = fn; }}, extra); }
const settings = el("edition-settings", {innerHTML: "start"}), status = el("edition-status");
const plot = el("edition-plot");
const spec = {data: [], layout: {}, frames: [{name: "0"}]};
const figure = el("edition-figure", {querySelector: (q) => (q === ".edition-plot" ? plot
  : q === "script.edition-figure-data" ? {textContent: JSON.stringify(spec)} : null)});
const block = el("edition-controller", {dataset: {link: "line"},
  querySelector: (q) => ({"script.edition-controller-data": {textContent: metaJson}, ".edition-status": status,
                          ".edition-settings": settings})[q] || null,
  querySelectorAll: (q) => (q === ".edition-figure" ? [figure] : [])});
global.window = {SYMSGD_PLOTLY_CONFIG: {}, addEventListener() {}};
global.location = {hash: "", href: "file:///x.html"};
global.history = {replaceState() {}, state: null};
global.document = {readyState: "complete", body: {dataset: {}},
  querySelectorAll: (q) => (q === ".edition-controller" ? [block] : []), querySelector: () => null};
global.Plotly = {newPlot: () => Promise.resolve(), addFrames: () => Promise.resolve(),
  animate: () => Promise.resolve(), relayout: () => Promise.resolve()};
eval(fs.readFileSync(script, "utf8"));
setTimeout(() => {
  plot.handlers.plotly_sliderchange({step: {args: [[String(K)]]}});
  setTimeout(() => { console.log(JSON.stringify({settings: settings.innerHTML, status: status.innerHTML})); }, 10);
}, 10);

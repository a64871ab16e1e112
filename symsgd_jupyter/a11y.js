const KEY = '__symsgdAccessibleNames';
const STYLE_ID = 'symsgd-a11y-style';
// Links in the text underlined (LINK_CSS in symsgd_jupyter/a11y.py) and the fine print's look (FINE_PRINT_CSS):
// one <style> per page.
function linkStyle() {
  if (document.getElementById(STYLE_ID)) return;
  const style = document.createElement('style');
  style.id = STYLE_ID;
  style.textContent = __LINK_CSS__;
  document.head.appendChild(style);
}
const BOXES = '.widget-inline-hbox, .widget-slider, .widget-text';
function label(root) {
  const boxes = [...root.querySelectorAll(BOXES)];
  if (root.matches && root.matches(BOXES)) boxes.push(root);
  for (const box of boxes) {
    const lab = box.querySelector(':scope > .widget-label');
    const text = lab ? (lab.textContent || '').trim().replace(/:$/, '') : '';
    if (!text) continue;
    for (const el of box.querySelectorAll('[role=slider], input, select, textarea')) {
      if (!el.getAttribute('aria-label') || el.dataset.symsgdLabel === '1') {
        const want = el.classList.contains('widget-readout') ? `${text} (value)` : text;
        if (el.getAttribute('aria-label') !== want) {
          el.setAttribute('aria-label', want);
          el.dataset.symsgdLabel = '1';
        }
      }
    }
    const readout = box.querySelector('.widget-readout');
    if (readout && readout.getAttribute('aria-label') !== `${text} (value)`) {
      readout.setAttribute('aria-label', `${text} (value)`);
    }
  }
}
// A text or formula wider than the page scrolls sideways: keyboard users must be able to reach it (axe-core:
// scrollable-region-focusable), so a scrolling Markdown cell or output gets tabindex 0 and a name.
function scrollables(root) {
  for (const el of root.querySelectorAll('.jp-RenderedMarkdown, .jp-OutputArea-output')) {
    const st = getComputedStyle(el);
    const scrolls = (el.scrollWidth > el.clientWidth + 1 && /auto|scroll/.test(st.overflowX))
      || (el.scrollHeight > el.clientHeight + 1 && /auto|scroll/.test(st.overflowY));
    if (scrolls && !el.hasAttribute('tabindex')) {
      el.tabIndex = 0;
      el.setAttribute('role', 'region');
      el.setAttribute('aria-label', 'wide content: scroll with the arrow keys');
      el.dataset.symsgdScroll = '1';
    }
  }
}
// Cheap on a busy page: a figure redrawing itself changes its SVG many times a second, and scrollables() reads
// layout (scrollWidth, computed style), so changes inside figures are ignored and the rest is batched: at most one
// pass per DELAY_MS, run when the page is idle (never a forced layout per animation frame while cells run).
const DELAY_MS = 400;
const inFigure = (node) => {
  const el = node && (node.nodeType === 1 ? node : node.parentElement);
  return !!(el && el.closest && el.closest('.js-plotly-plot, svg'));
};
// A figure's text alternative (symsgd_jupyter/describe.py): a controller keeps one visually hidden description
// per figure, in its figures' order; each plot gets role "figure", its short name, and aria-describedby pointing
// at its description (role "figure", unlike "img", keeps the mode bar's buttons reachable).
let altIds = 0;
function describeFigures(root) {
  for (const ctl of root.querySelectorAll('.symsgd-controller')) {
    const plots = [...ctl.querySelectorAll('.js-plotly-plot')];
    const texts = [...ctl.querySelectorAll('.symsgd-figure-alt-text')];
    plots.forEach((plot, k) => {
      const text = texts[k];
      if (!text) return;
      if (!text.id) text.id = `symsgd-figure-alt-${++altIds}`;
      const name = text.dataset.name || 'figure';
      if (plot.getAttribute('role') !== 'figure') plot.setAttribute('role', 'figure');
      if (plot.getAttribute('aria-label') !== name) plot.setAttribute('aria-label', name);
      if (plot.getAttribute('aria-describedby') !== text.id) plot.setAttribute('aria-describedby', text.id);
    });
  }
}
// The controls are named at once: a MutationObserver's callback runs before the browser next paints, so a slider
// is never drawn without its name (axe-core's aria-input-field-name would find it, if the audit ran just then);
// label() reads only text and attributes (no layout), and only where the page changed.
function labelChanged(records) {
  for (const r of records) {
    const target = r.target.nodeType === 1 ? r.target : r.target.parentElement;
    if (!target || inFigure(target)) continue;
    const box = target.closest && target.closest(BOXES);
    if (box) label(box);
    for (const node of r.addedNodes) if (node.nodeType === 1 && !inFigure(node)) label(node);
  }
}
function install() {
  linkStyle();
  if (window[KEY]) return;
  let timer = null;
  const idle = window.requestIdleCallback || ((f) => setTimeout(f, 0));
  const run = () => { label(document.body); scrollables(document.body); describeFigures(document.body); };
  const schedule = () => {
    if (timer !== null) return;
    timer = setTimeout(() => { timer = null; idle(run, {timeout: 2000}); }, DELAY_MS);
  };
  const observer = new MutationObserver((records) => {
    if (records.every((r) => inFigure(r.target))) return;
    labelChanged(records);
    schedule();
  });
  observer.observe(document.body, {childList: true, subtree: true, characterData: true});
  window.addEventListener('resize', schedule);
  window[KEY] = observer;
  run();
}
// Installed when the helper's model is made (before any view of the page's widgets is drawn, when the page loads
// its widgets in order) and again, idempotently, when its own view is drawn.
export default {
  initialize() { if (document.body) install(); },
  render({ el }) { el.style.display = 'none'; install(); },
};

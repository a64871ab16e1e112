(panelSel) => {
  const parse = (c) => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null;
    const p = m[1].split(',').map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = ({r, g, b}) => {
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const background = (el) => { for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor); if (c && c.a > 0.5) return c; }
    return {r: 255, g: 255, b: 255, a: 1}; };
  const panel = document.querySelector(panelSel) || document.body;
  const bad = [];
  for (const el of panel.querySelectorAll('.jp-RenderedMarkdown *, .jp-OutputArea-output *')) {
    if (el.closest('svg, .js-plotly-plot, mjx-container')) continue;  // figures: white cards, checked apart
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const st = getComputedStyle(el);
    if (st.visibility === 'hidden' || parseFloat(st.opacity) === 0) continue;
    const fg = parse(st.color), bg = background(el);
    if (!fg) continue;
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(st.fontSize), bold = parseInt(st.fontWeight, 10) >= 700;
    const need = (size >= 24 || (bold && size >= 18.66)) ? 3 : 4.5;
    if (ratio < need) bad.push(`${ratio.toFixed(2)} < ${need}: ${st.color} on rgb(${bg.r},${bg.g},${bg.b}): `
                              + `${(el.textContent || '').trim().slice(0, 60)}`);
  }
  return bad;
}

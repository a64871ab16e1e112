// Every plotly figure of the page: the width plotly laid it out at (_fullLayout.width), its box (the element plotly
// draws into: clientWidth, and the width plotly's autosize reads, its computed width), its container's clientWidth,
// a width of its own (layout.width, else null) and its height; figures not laid out (no box) are skipped.
() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((d, index) => {
  const full = d._fullLayout || {};
  const title = (full.title && full.title.text) || '';
  return {
    index, title: title.startsWith('Click to enter') ? '' : title.slice(0, 50),
    drawn: full.width === undefined ? null : full.width, drawn_height: full.height === undefined ? null : full.height,
    box: d.clientWidth, read: parseFloat(getComputedStyle(d).width) || 0,
    container: d.parentElement ? d.parentElement.clientWidth : null,
    own: (d.layout && d.layout.width) || null,
  };
}).filter((f) => f.box > 0)

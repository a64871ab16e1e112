// How plotly drew figure `index` of the page: its plot area (_fullLayout._size), where its legend sits relative to
// the figure, and how many x tick labels it shows; two figures of the same data and layout drawn at the same width
// give the same answer however they came to that width.
(index) => {
  const d = document.querySelectorAll('.js-plotly-plot')[index];
  const at = d.getBoundingClientRect();
  const legend = d.querySelector('.legend');
  const box = legend ? legend.getBoundingClientRect() : null;
  const s = d._fullLayout._size;
  return {
    plot_area: [s.l, s.t, s.w, s.h].map(Math.round),
    legend: box ? [box.left - at.left, box.top - at.top, box.width, box.height].map(Math.round) : null,
    x_tick_labels: d.querySelectorAll('.xtick text').length,
  };
}

() => [...document.querySelectorAll('.symsgd-controller .js-plotly-plot')].map((plot, i) => {
  const id = plot.getAttribute('aria-describedby');
  const text = id && document.getElementById(id);
  const words = text ? (text.textContent || '').trim() : '';
  if (plot.getAttribute('role') === 'figure' && plot.getAttribute('aria-label') && words.length > 20) return null;
  const role = plot.getAttribute('role');
  return `figure ${i}: role=${role}, describedby=${id}, text=${JSON.stringify(words.slice(0, 60))}`;
}).filter((x) => x)

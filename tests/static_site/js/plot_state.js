(plot) => JSON.stringify({
  data: plot.data, title: (plot.layout.title || {}).text || null,
  annotations: (plot.layout.annotations || []).filter(a => a.visible !== false).map(a => a.text),
  ranges: Object.fromEntries(Object.keys(plot.layout).filter(k => /^[xy]axis[0-9]*$/.test(k))
    .map(k => [k, plot.layout[k].range || null])),
  active: plot.layout.sliders && plot.layout.sliders.length ? plot.layout.sliders[0].active : null,
}, (k, v) => (k === 'uid' ? undefined : (ArrayBuffer.isView(v) ? Array.from(v) : v)))

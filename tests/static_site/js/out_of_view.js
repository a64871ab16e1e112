(plot) => {
  const full = plot._fullLayout, out = [];
  const axis = (ref, letter) => full[letter + 'axis' + (ref && ref.length > 1 ? ref.slice(1) : '')];
  (plot._fullData || []).forEach((tr, i) => {
    if (tr.visible !== true || !['scatter', 'scattergl', 'bar'].includes(tr.type)) return;
    for (const [letter, ref] of [['x', tr.xaxis], ['y', tr.yaxis]]) {
      const ax = axis(ref, letter);
      if (!ax || ax.autorange !== true || !Array.isArray(ax.range)) continue;
      const log = ax.type === 'log', lo = Math.min(...ax.range), hi = Math.max(...ax.range);
      const values = Array.from(tr[letter] || []);
      let bad = 0;
      for (const v of values) {
        if (typeof v !== 'number' || !isFinite(v) || (log && v <= 0)) continue;
        const u = log ? Math.log10(v) : v;
        if (u < lo - 1e-9 * (hi - lo) || u > hi + 1e-9 * (hi - lo)) bad += 1;
      }
      if (bad) out.push(`trace ${i} (${tr.name || ''}): ${bad} of ${values.length} ${letter} values outside the`
                        + ` autoranged ${ax._name} [${lo.toPrecision(4)}, ${hi.toPrecision(4)}]`);
    }
  });
  return out;
}

(plot, args) => new Promise((resolve, reject) => {
  const t0 = performance.now();
  let last = null, since = t0;
  const tick = () => {
    const now = performance.now(), fp = window.__symsgd.fp(plot);
    const block = plot.closest('.edition-controller');
    const k = plot.layout.sliders[0].active;
    if (fp !== last) { last = fp; since = now; }
    if (k === args.target && block.dataset.editionSynced === String(k) && now - since > 250) return resolve(true);
    if (now - t0 > args.ms) return reject(new Error('the figure did not settle on step ' + args.target +
        ' within ' + args.ms + ' ms (slider at step ' + k + ', figures at ' + block.dataset.editionSynced + ')'));
    requestAnimationFrame(tick);
  };
  tick();
})

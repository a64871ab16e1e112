(panelSel) => {
  const panel = document.querySelector(panelSel);
  if (!panel) return null;
  const cells = Array.from(panel.querySelectorAll('.jp-Notebook .jp-CodeCell'));
  let total = 0, done = 0, running = 0;
  for (const c of cells) {
    const src = (c.querySelector('.jp-InputArea-editor') || {}).textContent || '';  // textContent: no layout
    if (!src.trim()) continue;
    total++;
    const p = ((c.querySelector('.jp-InputArea-prompt') || {}).textContent || '').trim();
    if (/^\[\*\]/.test(p)) running++;
    else if (/^\[\d+\]/.test(p)) done++;
  }
  const ind = panel.querySelector('.jp-Notebook-ExecutionIndicator');
  const kernel = ind ? ind.getAttribute('data-status') : null;
  return {total, done, running, kernel};
}

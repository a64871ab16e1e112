(sel) => {
  const cells = Array.from(document.querySelectorAll(`${sel} .jp-RenderedMarkdown`));
  const typeset = cells.reduce((n, c) => n + c.querySelectorAll('mjx-container').length, 0);
  const raw = [];
  for (const cell of cells) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    let n;
    while ((n = walker.nextNode())) {
      if (!n.parentElement || n.parentElement.closest('pre, code, script, style, mjx-container')) continue;
      const m = (n.textContent || '').match(/\$\$[^$]+\$\$|\$[^$\n]+\$/);
      if (m) raw.push(m[0].slice(0, 80));
    }
  }
  return [typeset, raw];
}

// The fine print of the page (<details class="symsgd-fine-print">, ARCHITECTURE.md) inside `sel`: for each block, its
// summary's text, whether it is open, whether its content shows, its formulas typeset, and the "fine print" tag of
// its summary (fine_print.css, a ::after pseudo-element).
(sel) => Array.from(document.querySelectorAll(`${sel} details.symsgd-fine-print`)).map((d) => {
  const summary = d.querySelector(':scope > summary');
  // closed, a <details> is as tall as its summary and its own padding (Chromium keeps the rest laid out, hidden)
  const shown = !!summary && d.getBoundingClientRect().height > summary.getBoundingClientRect().height + 12;
  return {
    summary: summary ? summary.textContent.trim().slice(0, 80) : null,
    open: d.open,
    shown,
    formulas: d.querySelectorAll('mjx-container').length,
    tag: summary ? getComputedStyle(summary, '::after').content : null,
    focusable: summary ? summary.tabIndex >= 0 : false,
  };
})

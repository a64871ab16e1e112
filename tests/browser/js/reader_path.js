// A reader's path through a notebook in JupyterLab, measured after Run All on the notebook panel `sel`:
// how far a reader scrolls before the first figure, and how much of the page is test output (claim lines and
// tables, printed [PASS]/[FAIL] lines and check reports) and how much is code, that a student scrolls past. Lengths in screens: the
// notebook panel's visible height (the window a reader scrolls).
(sel) => {
  const panel = document.querySelector(sel);
  if (!panel) return null;
  const scroller = panel.querySelector('.jp-WindowedPanel-outer') || panel;
  const screen = scroller.clientHeight;
  // offsets from the top of the scrolled content, whatever the scroll position Run All left
  const top = scroller.getBoundingClientRect().top - scroller.scrollTop;
  const figure = panel.querySelector('.js-plotly-plot');
  const CHECK = /\[PASS\]|\[FAIL\]|\bclaims? checked\b|\bmeasured\b.*\btolerance\b|\bcheck(s|ed)? (pass|hold)/i;
  let checkPx = 0, checkOutputs = 0, outputPx = 0;
  for (const out of panel.querySelectorAll('.jp-OutputArea-child')) {
    const h = out.getBoundingClientRect().height;
    outputPx += h;
    if (out.querySelector('.js-plotly-plot, .jupyter-widgets.symsgd-controller')) continue;  // a figure
    if (out.querySelector('details.symsgd-claims') || CHECK.test(out.innerText || '')) {
      checkPx += h;
      checkOutputs += 1;
    }
  }
  let codePx = 0;
  for (const input of panel.querySelectorAll('.jp-CodeCell .jp-Cell-inputWrapper')) {
    codePx += input.getBoundingClientRect().height;
  }
  const height = scroller.scrollHeight;
  const r = (px) => Math.round((px / screen) * 100) / 100;
  return {
    screen_px: screen,
    screens_total: r(height),
    screens_to_first_figure: figure ? r(figure.getBoundingClientRect().top - top) : null,
    check_outputs: checkOutputs,
    check_screens: r(checkPx),
    output_screens: r(outputPx),
    code_cells: panel.querySelectorAll('.jp-CodeCell').length,
    code_screens: r(codePx),
  };
}

() => Array.from(document.querySelectorAll('.edition-controller .edition-plot'))
  .map((p, i) => {
    const alt = document.getElementById(p.getAttribute('aria-describedby') || '');
    const text = alt ? alt.textContent.trim() : '';
    return p.getAttribute('role') === 'figure' && p.getAttribute('aria-label') && text.length > 20 ? null
      : `figure ${i}: role=${p.getAttribute('role')}, text=${JSON.stringify(text.slice(0, 40))}`;
  }).filter((x) => x)

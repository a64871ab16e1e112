() => [...document.querySelectorAll('.modebar-btn, .modebar a')]
  .map((b) => [b.getAttribute('data-title') || '', b.getAttribute('data-attr') || '', b.getAttribute('href') || '']
    .join(' ').trim())
  .filter((t) => /cloud|share|chart studio|plotly\.com|https?:/i.test(t))

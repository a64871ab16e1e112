() => {
  const i = document.querySelector('__PANEL__ .jp-Notebook-ExecutionIndicator');
  if (!i || i.getAttribute('data-status') !== 'idle') return false;
  return Array.from(document.querySelectorAll('.jp-StatusBar-TextItem'))
    .some(e => /^(?!\s*No Kernel).*\|\s*Idle\s*$/.test(e.textContent || ''));
}

() => {
  const body = document.body, st = getComputedStyle(body);
  if (st.overflowX === 'visible' && st.overflowY === 'visible') return false;
  if (body.getBoundingClientRect().height >= window.innerHeight - 1) return false;
  body.dataset.symsgdAuditMinHeight = body.style.minHeight;
  body.style.minHeight = '100vh';
  return true;
}

() => {
  for (const el of document.querySelectorAll('[data-symsgd-audit-scroll]')) {
    el.scrollTop = Number(el.dataset.symsgdAuditScroll);
    delete el.dataset.symsgdAuditScroll;
  }
  const body = document.body;
  if (body.dataset.symsgdAuditMinHeight !== undefined) {
    body.style.minHeight = body.dataset.symsgdAuditMinHeight;
    delete body.dataset.symsgdAuditMinHeight;
  }
}

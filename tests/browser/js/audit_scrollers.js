(sels) => {
  const audited = sels.flatMap((s) => [...document.querySelectorAll(s)]);
  const out = [];
  for (const el of document.querySelectorAll('*')) {
    const st = getComputedStyle(el);
    if (!/auto|scroll|overlay/.test(st.overflowY) || el.scrollHeight <= el.clientHeight + 1) continue;
    if (!audited.some((a) => el.contains(a))) continue;
    if (el.dataset.symsgdAuditScroll === undefined) el.dataset.symsgdAuditScroll = String(el.scrollTop);
    el.scrollTop = 0;
    out.push({hidden: el.scrollHeight - el.clientHeight,
              name: el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
                    [...el.classList].slice(0, 2).map((c) => '.' + c).join('')});
  }
  return out;
}

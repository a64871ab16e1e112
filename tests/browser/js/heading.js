(heading) => {
  const h = Array.from(document.querySelectorAll('h1')).find((e) => e.textContent.includes(heading));
  if (!h) return {shown: false, why: 'not in the page'};
  const r = h.getBoundingClientRect();
  const style = getComputedStyle(h);
  if (!h.offsetParent || r.width === 0 || r.height === 0 || style.visibility === 'hidden')
    return {shown: false, why: 'in the page, hidden'};
  const top = document.elementFromPoint(r.left + Math.min(20, r.width / 2), r.top + r.height / 2);
  const spinner = document.getElementById('loading');
  return {shown: !!top && (h === top || h.contains(top)),
          why: top ? `covered by <${top.tagName.toLowerCase()} id="${top.id}" class="${top.className}">` : 'off screen',
          spinner: !!spinner && spinner.offsetParent !== null};
}

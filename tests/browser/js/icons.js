async () => {
  const bad = [];
  for (const el of document.querySelectorAll('i.fa, .fa, [class*=" fa-"]')) {
    const st = getComputedStyle(el, '::before');
    if (!st.content || st.content === 'none' || st.content === 'normal') continue;
    const ch = st.content.replace(/^["']|["']$/g, '');
    const spec = `${st.fontWeight} 16px ${st.fontFamily}`;
    let faces = [];
    try { faces = await document.fonts.load(spec, ch); } catch (e) { bad.push(`${el.className}: ${e}`); continue; }
    if (!faces.length || faces.some(f => f.status !== 'loaded')) {
      bad.push(`${el.className}: no loaded font for ${spec}`);
    }
    else if (!/awesome/i.test(st.fontFamily)) bad.push(`${el.className}: drawn with ${st.fontFamily}`);
  }
  return bad;
}

async (src) => {
  const url = URL.createObjectURL(new Blob([src], {type: 'text/javascript'}));
  const mod = await import(url);
  const el = document.createElement('div');
  document.body.appendChild(el);
  mod.default.render({el});
}

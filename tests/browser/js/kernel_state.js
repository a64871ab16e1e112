async () => {
  const cfg = JSON.parse(document.getElementById('jupyter-config-data').textContent);
  const r = await fetch(`${cfg.baseUrl || '/'}api/kernels/${cfg.kernelId}`);
  return r.ok ? (await r.json()).execution_state : `HTTP ${r.status}`;
}

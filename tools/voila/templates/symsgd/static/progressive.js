// symsgd classroom page: outputs arrive cell by cell (tools/classroom.py starts Voilà with progressive rendering).
//
// Voilà 0.5 sends the page (the prose, every formula, an empty place per code cell) before any cell runs, then
// runs the cells and sends each cell's outputs over its "execution" websocket as the cell finishes. Its page code
// shows a widget output only once the page knows the widget's model; when a cell's outputs arrive before that
// (a busy laptop, a cell that displays two figures), it keeps the first such output for later and drops every
// output after it in the same cell (voila 0.5.13, packages/voila/src/plugins/outputs/tools.ts). Handing it each
// output as a message of its own makes it keep every one of them.
//
// The page's progress, for the browser tests: window.__symsgdClassroom (cells run, widget views received) and
// <body data-symsgd-cells="done"> once every cell's outputs are in the page ("error" if Voilà could not run them).
(() => {
  const NativeWebSocket = window.WebSocket;
  const onmessage = Object.getOwnPropertyDescriptor(NativeWebSocket.prototype, "onmessage");
  if (!NativeWebSocket || !onmessage || !onmessage.set) return;
  const WIDGET_VIEW = "application/vnd.jupyter.widget-view+json";
  const progress = (window.__symsgdClassroom = { cellsRun: 0, cellCount: null, widgetViews: 0, done: false });
  const mark = (state) => { if (document.body) document.body.dataset.symsgdCells = state; };

  // the messages Voilà's handler should see for one message of the server
  function split(data) {
    let msg;
    try { msg = JSON.parse(data); } catch (e) { return [data]; }
    if (msg && msg.action === "execution_error") { mark("error"); return [data]; }
    const p = msg && msg.action === "execution_result" ? msg.payload : null;
    if (!p || !p.output_cell) return [data];
    const outputs = Array.isArray(p.output_cell.outputs) ? p.output_cell.outputs : [];
    progress.cellsRun = p.cell_index + 1;
    progress.cellCount = p.total_cell;
    progress.widgetViews += outputs.filter((o) => o && o.data && o.data[WIDGET_VIEW]).length;
    if (outputs.length <= 1) return [data];
    return outputs.map((o) => JSON.stringify({ ...msg, payload: { ...p, output_cell: { ...p.output_cell, outputs: [o] } } }));
  }

  function deliverSplit(ws, handler) {
    return (event) => {
      let last;
      for (const data of split(event.data)) last = handler.call(ws, new MessageEvent("message", { data }));
      if (progress.cellCount !== null && progress.cellsRun >= progress.cellCount && !progress.done) {
        progress.done = true;
        mark("done");
      }
      return last;
    };
  }

  // only the execution socket is changed; every other socket (the kernel's) is a plain WebSocket
  window.WebSocket = new Proxy(NativeWebSocket, {
    construct(target, args, newTarget) {
      const ws = Reflect.construct(target, args, newTarget === window.WebSocket ? target : newTarget);
      if (String(args[0]).includes("/voila/execution/")) {
        Object.defineProperty(ws, "onmessage", {
          configurable: true,
          get() { return onmessage.get.call(ws); },
          set(handler) { onmessage.set.call(ws, typeof handler === "function" ? deliverSplit(ws, handler) : handler); },
        });
      }
      return ws;
    },
  });
})();

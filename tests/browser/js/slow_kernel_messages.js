(() => {
  const Native = window.WebSocket;
  const onmessage = Object.getOwnPropertyDescriptor(Native.prototype, 'onmessage');
  window.WebSocket = new Proxy(Native, {
    construct(target, args) {
      const ws = Reflect.construct(target, args);
      if (/\/api\/kernels\/[^/]+\/channels/.test(String(args[0]))) {
        Object.defineProperty(ws, 'onmessage', {
          configurable: true,
          get() { return onmessage.get.call(ws); },
          set(h) { onmessage.set.call(ws, (e) => setTimeout(() => h.call(ws, e), 2000)); },
        });
      }
      return ws;
    },
  });
})();

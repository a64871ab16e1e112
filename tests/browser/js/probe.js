(() => {
  if (window.__symsgd) return;
  const S = {};
  // Fingerprint of a plotly div's data (trace uids ignored): FNV-1a over the JSON.
  // plotly keeps an array either as numbers, a typed array, or (as first sent by Python) {dtype, bdata[, shape]}
  // in base64; the fingerprint reads all of them as one flat list of numbers, so equal data gives equal prints.
  const TYPED = {f8: Float64Array, f4: Float32Array, i1: Int8Array, u1: Uint8Array, i2: Int16Array,
                 u2: Uint16Array, i4: Int32Array, u4: Uint32Array};
  S.decode = (v) => {
    const T = TYPED[v.dtype];
    if (!T) return v;
    const bytes = Uint8Array.from(atob(v.bdata), (c) => c.charCodeAt(0));
    return Array.from(new T(bytes.buffer));
  };
  S.dataJson = (div) => JSON.stringify((div && div.data) || [], (k, v) => {
    if (k === 'uid' || k.startsWith('_')) return undefined;  // plotly's own bookkeeping, e.g. _doNotReportToPy
    if (ArrayBuffer.isView(v)) return Array.from(v);
    if (v && typeof v === 'object' && typeof v.bdata === 'string' && v.dtype) return S.decode(v);
    if (Array.isArray(v) && v.some((x) => Array.isArray(x) || ArrayBuffer.isView(x)))
      return v.map((x) => ArrayBuffer.isView(x) ? Array.from(x) : x).flat(Infinity);
    return v;
  }) || '';
  S.dataJsonOf = (ci) => S.figsOf(S.controllers()[ci]).map(S.dataJson);
  S.fp = (div) => {
    const json = S.dataJson(div);
    let h = 0x811c9dc5;
    for (let i = 0; i < json.length; i++) { h ^= json.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; }
    return h.toString(16) + ':' + json.length;
  };
  // True when some trace has a non-empty array (x, y, z, values, …).
  S.hasData = (div) => {
    const data = (div && div.data) || [];
    for (const t of data) {
      for (const [k, v] of Object.entries(t)) {
        if (k === 'uid') continue;
        if ((Array.isArray(v) || ArrayBuffer.isView(v)) && v.length > 0) return true;
        if (v && typeof v === 'object' && v.bdata) return true;
      }
    }
    return false;
  };
  S.figures = () => Array.from(document.querySelectorAll('.js-plotly-plot'));
  S.controllers = () => Array.from(document.querySelectorAll('.symsgd-controller'));
  S.figsOf = (root) => Array.from(root.querySelectorAll('.js-plotly-plot'));
  // The status line: the HTML widget holding the controller's .symsgd-status text (symsgd_core/ui/base.py ``say``);
  // before the first message, the first HTML widget after the figures.
  S.statusOf = (root) => {
    const said = root.querySelector('.symsgd-status');
    if (said) return said.closest('.widget-html');
    const kids = Array.from(root.children).filter(e => e.classList.contains('widget-html'));
    return kids.length ? kids[0] : null;
  };
  S.runButtonOf = (root) => Array.from(root.querySelectorAll('button'))
      .find(b => /\brun\b/i.test(b.textContent || '') || /\brun\b/i.test(b.title || '')) || null;
  S.label = (el) => {
    const box = el.closest('.widget-slider, .widget-hslider, .widget-inline-hbox');
    const lab = box && box.querySelector('.widget-label');
    return lab ? (lab.textContent || '').trim() : '';
  };
  S.handlesOf = (root) => Array.from(
      root.querySelectorAll('.widget-slider .noUi-handle, .widget-hslider .noUi-handle'));
  // A slider's state from its noUiSlider (aria-valuenow is rounded to the readout precision).
  S.sliderState = (h) => {
    const target = h.closest('.noUi-target');
    const api = target && target.noUiSlider;
    const box = h.closest('.widget-slider, .widget-hslider');
    const readout = box && box.querySelector('.widget-readout');
    let value = null, min = null, max = null;
    if (api) {
      const v = api.get(); value = Number(Array.isArray(v) ? v[0] : v);
      min = Number(api.options.range.min); max = Number(api.options.range.max);
    }
    return {label: S.label(h), value, min, max, text: h.getAttribute('aria-valuetext'),
            readout: readout ? (readout.textContent || readout.value || '').trim() : null};
  };
  S.sliderOf = (ci, si) => S.sliderState(S.handlesOf(S.controllers()[ci])[si]);
  S.describe = () => S.controllers().map((root, i) => {
    const status = S.statusOf(root);
    return {
      index: i,
      sliders: S.handlesOf(root).map(S.sliderState),
      run_button: !!S.runButtonOf(root),
      auto_run: root.classList.contains('symsgd-auto-run'),
      figures: S.figsOf(root).length,
      figures_with_data: S.figsOf(root).filter(S.hasData).length,
      status: status ? (status.innerText || '').trim() : null,
    };
  });
  S.figureReport = () => S.figures().map((d, i) => ({
    index: i, traces: (d.data || []).length, has_data: S.hasData(d),
    in_controller: !!d.closest('.symsgd-controller'),
    width: d.getBoundingClientRect().width, height: d.getBoundingClientRect().height,
  }));
  S.fingerprints = (ci) => S.figsOf(S.controllers()[ci]).map(S.fp);

  // Arm a watcher on controller ci: t0 = the next keydown/click inside it, t1 = the first
  // animation frame at which one of its figures' data differs from now. Status texts seen
  // meanwhile are recorded (to see the busy indicator, e.g. "Computing…").
  S.arm = (ci, timeoutMs) => {
    const root = S.controllers()[ci];
    const figs = S.figsOf(root);
    const base = figs.map(S.fp);
    const rec = {t0: null, t1: null, input: null, changed: [], statuses: [], timeout: false, early: false};
    const onInput = (ev) => {
      if (rec.t0 === null && root.contains(ev.target)) { rec.t0 = performance.now(); rec.input = ev.type; }
    };
    document.addEventListener('keydown', onInput, true);
    document.addEventListener('click', onInput, true);
    const status = S.statusOf(root);
    let obs = null;
    if (status) {
      obs = new MutationObserver((muts) => {
        for (const m of muts) {
          for (const n of m.addedNodes) rec.statuses.push([performance.now(), (n.textContent || '').trim()]);
          if (m.type === 'characterData') rec.statuses.push([performance.now(), (m.target.textContent || '').trim()]);
        }
      });
      obs.observe(status, {childList: true, subtree: true, characterData: true});
    }
    const started = performance.now();
    S.pending = new Promise((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        document.removeEventListener('keydown', onInput, true);
        document.removeEventListener('click', onInput, true);
        resolve(rec);
      };
      const tick = () => {
        const now = performance.now();
        const fps = figs.map(S.fp);
        const changed = fps.map((f, i) => f !== base[i] ? i : -1).filter(i => i >= 0);
        if (changed.length) {
          rec.t1 = now; rec.changed = changed;
          if (rec.t0 === null) rec.early = true;
          return finish();
        }
        if (now - started > timeoutMs) { rec.timeout = true; return finish(); }
        if (!done) requestAnimationFrame(tick);
      };
      // stop watching now (the kernel handled the input and nothing changed): resolves with changed = []
      // (the status texts keep being recorded after the first figure change, until the caller stops watching
      // once the kernel has handled the input: a long Run's first look, then its full Run)
      S.stopWatch = () => { if (obs) obs.disconnect(); finish(); };
      requestAnimationFrame(tick);
    });
    return true;
  };

  // Resolve once controller ci's figures and status have not changed for quietMs (or after maxMs).
  S.quiet = (ci, quietMs, maxMs) => new Promise((resolve) => {
    const root = S.controllers()[ci];
    const status = S.statusOf(root);
    const snap = () => S.fingerprints(ci).join('|') + '#' + (status ? status.innerHTML : '');
    let last = snap(), since = performance.now();
    const t0 = performance.now();
    const tick = () => {
      const now = performance.now(), cur = snap();
      if (cur !== last) { last = cur; since = now; }
      if (now - since >= quietMs) return resolve({quiet: true, waited: now - t0});
      if (now - t0 > maxMs) return resolve({quiet: false, waited: now - t0});
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });

  // Visible text that still holds raw TeX ($…$ or $$…$$) outside code.
  S.rawMath = () => {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const hits = [];
    let n;
    while ((n = walker.nextNode())) {
      const p = n.parentElement;
      if (!p || p.closest('pre, code, script, style, .cm-editor, .jp-InputPrompt, mjx-container, .MathJax')) continue;
      const t = n.textContent || '';
      const m = t.match(/\$\$[^$]+\$\$|\$[^$\n]+\$/);
      if (m) hits.push(m[0].slice(0, 80));
    }
    return hits;
  };
  // Visible text that shows markup instead of what it means: an HTML tag printed as text
  // (`<span class="…">`), Markdown emphasis left as asterisks, TeX sub/superscripts or commands outside typeset
  // math, and raw $…$ TeX. Printed output (<pre> in an output area) is read too; code is not: the editors, the
  // prompts, and code blocks and inline code in the Markdown. Returns [{pattern, text}] (text: 80 characters).
  S.RAW_MARKUP = [
    ['html tag', /<\/?(?:span|div|p|b|i|em|strong|sub|sup|table|tr|td|th|br|a|font|ul|ol|li|h[1-6])\b[^<>]*>/i],
    ['markdown bold', /\*\*[^*\n]+\*\*/],
    ['markdown emphasis', /(?:^|[\s(])\*[^*\s][^*\n]*[^*\s]\*(?=$|[\s.,;:!?)])/],
    ['tex sub/superscript', /[_^]\{[^}\n]*\}/],
    ['tex command', /\\(?:frac|mathrm|mathbf|mathbb|mathcal|operatorname|text|ell|gamma|eta|lambda|sigma|sqrt|cdot|top|left|right|tfrac|dfrac)\b/],
    ['tex', /\$\$[^$]+\$\$|\$[^$\n]+\$/],
  ];
  S.rawMarkup = (root) => {
    const walker = document.createTreeWalker(root || document.body, NodeFilter.SHOW_TEXT);
    const hits = [];
    let n;
    while ((n = walker.nextNode())) {
      const p = n.parentElement;
      if (!p || p.closest('script, style, .cm-editor, .jp-InputArea, .jp-InputPrompt, .jp-OutputPrompt, ' +
                          'mjx-container, .MathJax, mjx-assistive-mml, .jp-RenderedMarkdown pre, ' +
                          '.jp-RenderedMarkdown code, .edition-code, .edition-markdown pre, ' +
                          '.edition-markdown code, svg')) continue;
      if (!p.getClientRects().length) continue;  // not shown (a closed panel, a hidden template)
      const t = n.textContent || '';
      for (const [name, re] of S.RAW_MARKUP) {
        const m = t.match(re);
        if (m) hits.push({pattern: name, text: t.slice(Math.max(0, m.index - 30), m.index + 50)});
      }
    }
    return hits;
  };
  // Widget rendering: root views drawn in output areas, and outputs still waiting for theirs.
  S.renderedViews = () => Array.from(document.querySelectorAll('.jp-OutputArea-output'))
      .filter(o => Array.from(o.children).some(c => c.classList.contains('jupyter-widgets')
                                                  || c.classList.contains('js-plotly-plot'))).length;
  // Widget outputs not drawn yet, each with where it is and what it holds (pendingViews counts them).
  S.pendingDetails = () => {
    const out = [];
    const cells = Array.from(document.querySelectorAll('.jp-Cell'));
    const cellOf = (el) => cells.indexOf(el.closest('.jp-Cell'));
    const text = (el) => (el.textContent || '').trim().slice(0, 80);
    for (const o of document.querySelectorAll('.jp-OutputArea-output')) {
      const kids = Array.from(o.children);
      if (!kids.length && !text(o)) out.push({cell: cellOf(o), what: 'empty output'});  // a widget output not drawn yet
      else if (kids.some(c => (c.className || '').trim() === 'lm-Widget' && !c.children.length))
        out.push({cell: cellOf(o), what: 'empty widget', text: text(o), html: o.innerHTML.slice(0, 200)});
    }
    // figure slots of controllers (plotly anywidget views) not plotted yet
    S.controllers().forEach((root, i) => {
      const kids = Array.from(root.children);
      kids.forEach((c, k) => {
        if (c.classList.contains('symsgd-a11y')) return;  // the invisible accessible-names helper (symsgd_jupyter/a11y.py)
        if (!c.classList.contains('jupyter-widgets') && !c.classList.contains('js-plotly-plot'))
          out.push({cell: cellOf(root), controller: i, child: `${k + 1} of ${kids.length}`,
                    what: String(c.className).slice(0, 80), text: text(c)});
      });
    });
    return out;
  };
  S.pendingViews = () => S.pendingDetails().length;
  // Outputs (inside scopeSel) that show an error: a traceback, or "XxxError: …" in an error/stderr output.
  S.outputErrors = (scopeSel) => {
    const scope = document.querySelector(scopeSel) || document.body;
    const cells = Array.from(scope.querySelectorAll('.jp-Cell'));
    const errs = [];
    for (const o of scope.querySelectorAll('.jp-OutputArea-output')) {
      const mime = o.getAttribute('data-mime-type') || '';
      const t = o.innerText || '';
      if (/Traceback \(most recent call last\)/.test(t)
          || ((mime.includes('stderr') || mime.includes('error')) && /^\s*\w*(Error|Exception|Interrupt)\b/m.test(t))) {
        errs.push({cell: cells.indexOf(o.closest('.jp-Cell')), text: t.slice(0, 1500)});
      }
    }
    return errs;
  };
  S.failureTexts = (texts) => { const t = document.body.innerText; return texts.filter(x => t.includes(x)); };
  S.mathCount = () => document.querySelectorAll('mjx-container, .MathJax, .katex').length;
  // Figures drawn (plotly figures with data), logged at every change since the page opened: [[ms, count], …].
  S.drawnCount = () => S.figures().filter(S.hasData).length;
  S.drawnLog = [];
  S._logDrawn = () => {
    const n = document.body ? S.drawnCount() : 0;
    const last = S.drawnLog.length ? S.drawnLog[S.drawnLog.length - 1][1] : -1;
    if (n !== last) S.drawnLog.push([performance.now(), n]);
  };
  setInterval(S._logDrawn, 100);
  // Page time at which at least n figures were drawn (the last time the count rose to ≥ n).
  S.drawnAt = (n) => {
    S._logDrawn();
    let at = null;
    for (let i = 0; i < S.drawnLog.length; i++) {
      const [t, k] = S.drawnLog[i];
      const prev = i ? S.drawnLog[i - 1][1] : -1;
      if (k >= n && prev < n) at = t;
    }
    return at;
  };
  // Inputs of controller ci the kernel has handled so far (its root's symsgd-handled-<n> class; handled_inputs.py).
  S.handledOf = (ci) => {
    const root = S.controllers()[ci];
    for (const c of (root ? root.classList : [])) {
      const m = /^symsgd-handled-(\d+)$/.exec(c);
      if (m) return Number(m[1]);
    }
    return null;
  };
  // Sliders painted without an accessible name (axe-core's serious aria-input-field-name): looked for just before
  // every paint (requestAnimationFrame), from the page's start, so a slider named only some time after it was first
  // drawn (while the page builds, or when a figure is revealed) is caught, whenever the audit itself runs.
  S.unnamedSliders = {frames: 0, most: 0, first: []};
  const UNNAMED = '[role=slider]:not([aria-label]):not([aria-labelledby]), [role=slider][aria-label=""]';
  const watchNames = () => {
    const seen = document.body ? [...document.querySelectorAll(UNNAMED)].filter((el) => el.getClientRects().length
        && !el.getAttribute('title')) : [];
    if (seen.length) {
      const u = S.unnamedSliders;
      u.frames += 1;
      u.most = Math.max(u.most, seen.length);
      if (u.first.length < 5) {
        u.first.push({ms: Math.round(performance.now()), count: seen.length, label: S.label(seen[0])});
      }
    }
    requestAnimationFrame(watchNames);
  };
  requestAnimationFrame(watchNames);
  window.__symsgd = S;
})();

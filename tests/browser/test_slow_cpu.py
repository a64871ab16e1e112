"""The slow-laptop emulation (slow_cpu.py) in a real Chromium: the page's work takes about ``rate`` times longer,
an idle slowed page costs the machine no CPU (Chromium's own CDP throttling spins a core), and nothing is left
stopped afterwards."""

from __future__ import annotations

import time

import psutil
import pytest
from slow_cpu import PERIOD_S, SlowRenderers, renderer_pids

pytestmark = pytest.mark.browser

#: A fixed amount of JavaScript work, about 0.2 s at full speed here; returns its wall time in ms.
_WORK_JS = """() => { const t = performance.now(); let x = 0;
  for (let i = 0; i < 1e8; i++) { x += Math.sqrt(i); } window.__sink = x; return performance.now() - t; }"""


def _renderer_cpu_s(pids) -> float:
    total = 0.0
    for pid in pids:
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system
    return total


def test_a_slowed_page_works_slower_and_an_idle_one_costs_no_cpu(browser):
    page = browser.new_page()
    slowed = None
    try:
        page.set_content("<p>a page</p>")
        full = min(page.evaluate(_WORK_JS) for _ in range(2))
        pids = renderer_pids()
        assert pids, "no Chromium renderer under this process: the emulation would slow nothing"
        slowed = SlowRenderers(6).start()
        slow = page.evaluate(_WORK_JS)
        # rate 6 gives the page a sixth of the wall time; a busy machine can only have slowed the full-speed run
        # too, so the ratio is at least 6 × (full-speed share) — 3 is far from both 1 (not slowed) and the 6 aimed at
        assert slow / full > 3, f"the same work took {full:.0f} ms, then {slow:.0f} ms slowed 6×"
        time.sleep(0.5)  # the page settles
        cpu0 = _renderer_cpu_s(pids)
        time.sleep(2.0)
        idle_cpu = _renderer_cpu_s(pids) - cpu0
        # an idle page has nothing to run; a throttle that spins (CDP's: 1.89 CPU-s here) costs (1 - 1/6) of a core,
        # 1.7 CPU-s in 2 s: half a core (1 CPU-s) lies between the two
        assert idle_cpu < 1.0, f"an idle page slowed 6× used {idle_cpu:.2f} CPU-s in 2 s: the slowdown spins"
    finally:
        if slowed is not None:
            slowed.stop()
        time.sleep(2 * PERIOD_S)
        stopped = [p for p in renderer_pids() if psutil.Process(p).status() == psutil.STATUS_STOPPED]
        page.close()
    assert not stopped, f"renderers left stopped after stop(): {stopped}"
    assert SlowRenderers(1).start()._thread is None  # rate 1: nothing slowed, no thread

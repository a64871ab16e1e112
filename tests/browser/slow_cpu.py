"""A slow laptop's browser, emulated without burning a core: Chromium's page processes run 1/rate of the time.

Why not Chromium's own ``Emulation.setCPUThrottlingRate``: on this machine a page throttled 6× through CDP keeps
its renderer busy the whole time, idle or not (an empty page: 9.95 CPU-s in 10 s, against 0.44 s unthrottled),
so on a two-core machine the "slow laptop" took a core away from the kernel and from the other test worker; the
gallery's 6× mode spent 108 of its 133 CPU-seconds spinning there. A real slow laptop does not spin.

How: a thread stops every Chromium renderer process under this test process (SIGSTOP) and lets it run again
(SIGCONT) for 1/rate of each :data:`PERIOD_S` (stopped rate − 1 times as long as it actually ran), so the page
gets a sixth of the wall time at rate 6 (measured: the same JavaScript 5.7× slower, CDP's 5.4×; an idle page
0.02 CPU-s in 2 s, CDP's 1.9) and the machine's other processes get the rest. It rescans the renderers every
:data:`RESCAN_S` (a navigation may start a new one) and lets every one run again when it stops, whatever happens
(:meth:`SlowRenderers.stop` also runs when the page closes).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

#: One stop-and-run cycle, seconds: short against a human's reaction (and a frame is 16 ms), long against the
#: cost of two signals.
PERIOD_S = 0.06
#: How often the renderer processes are looked up again, seconds.
RESCAN_S = 0.5


def renderer_pids(root_pid: int | None = None) -> list[int]:
    """The Chromium renderer processes (``--type=renderer``) under ``root_pid`` (default: this process, so the
    browser this test worker launched through Playwright's driver)."""
    import psutil

    found = []
    for proc in psutil.Process(root_pid or os.getpid()).children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "--type=renderer" in proc.cmdline():
                found.append(proc.pid)
    return found


def _signal_all(pids, sig) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


class SlowRenderers:
    """Run this test process's Chromium renderers ``rate`` times slower until :meth:`stop` (``rate`` ≤ 1: no-op)."""

    def __init__(self, rate: float):
        self.rate = float(rate)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pids: list[int] = []

    def start(self) -> SlowRenderers:
        if self.rate > 1 and self._thread is None:
            self._thread = threading.Thread(target=self._cycle, name="slow-renderers", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Let every renderer run at full speed again (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        _signal_all(self._pids, signal.SIGCONT)

    def _cycle(self) -> None:
        run_s = PERIOD_S / self.rate
        scanned = 0.0
        try:
            while not self._stop.is_set():
                if time.monotonic() - scanned > RESCAN_S:
                    _signal_all(self._pids, signal.SIGCONT)  # a process that left the list must not stay stopped
                    self._pids, scanned = renderer_pids(), time.monotonic()
                _signal_all(self._pids, signal.SIGCONT)
                ran_from = time.monotonic()
                if self._stop.wait(run_s):
                    break
                _signal_all(self._pids, signal.SIGSTOP)
                # stopped (rate - 1) times as long as it actually ran (a wake-up can come late)
                self._stop.wait((time.monotonic() - ran_from) * (self.rate - 1))
        finally:
            _signal_all(self._pids, signal.SIGCONT)

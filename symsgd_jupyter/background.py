"""A long Run off the kernel's main thread: the page's widgets stay live while a figure's full Run computes.

A figure whose Run takes longer than half a second (:class:`~symsgd_core.ui.base.RunController` with a Run button)
draws a first look at once when the reader presses Run in the page, and computes the full Run here, in a worker
thread (:func:`compute_in_background`). Everything that touches a widget happens on the kernel's main thread: the
worker only computes, and hands its progress and its result to the kernel's event loop
(``loop.call_soon_threadsafe``), which draws. A newer Run supersedes an older one: the older worker stops at its
next progress report (:class:`Superseded`) and its result, if it still arrives, is dropped.

Threads. The engines' compiled kernels release the GIL (``nogil``), so the kernel keeps handling the page's
messages while the worker computes. The worker runs its kernels on one numba thread (``numba.set_num_threads`` is
per thread): it never launches numba's thread pool, which the main thread (a first look, a cell) may use at the
same time, and numba's portable ``workqueue`` layer does not allow two launches at once. The numbers do not depend
on the thread count (the engines' module docstrings), so a Run gives the same figure in the worker and in a cell.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future

import ipywidgets as widgets

__all__ = ["RunButton", "Superseded", "changed_by_page", "compute_in_background", "running_loop"]


class Superseded(Exception):
    """Raised in a worker at its next progress report once a newer Run has started: the older Run stops."""


class RunButton(widgets.Button):
    """The Run button. ``from_page`` is True while its handlers run for a click made in the page (a message from
    the front end), False for ``click()`` called by code (a cell, a test, the static edition)."""

    from_page = False

    def _handle_button_msg(self, _, content, buffers):  # ipywidgets' handler of the page's click message
        if content.get("event", "") == "click":
            self.from_page = True
            try:
                self.click()
            finally:
                self.from_page = False


def changed_by_page(widget, name: str = "value") -> bool:
    """Whether ``widget.<name>`` is being set by a message from the page, not by code in the kernel: ipywidgets
    holds the property in ``_property_lock`` while it applies the page's state (``Widget.set_state``); a cell,
    a test or the static edition assigning the value directly leaves it empty."""
    return name in (getattr(widget, "_property_lock", None) or {})


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread (the kernel's, while it handles a message), or None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def compute_in_background(loop: asyncio.AbstractEventLoop, compute: Callable, still_wanted: Callable[[], bool],
                          show_progress: Callable[[float], None], finish: Callable[[object], None],
                          name: str = "symsgd-run") -> Future:
    """Start ``compute(progress)`` in a worker thread; hand its progress and its outcome to ``loop``.

    Args:
        loop: the kernel's running event loop (the main thread's).
        compute: ``compute(progress) -> result``; it calls ``progress(fraction)`` now and then.
        still_wanted: ``() -> bool``, False once a newer Run has started (then ``progress`` raises
            :class:`Superseded` in the worker and nothing is handed back).
        show_progress: called on the main thread with each fraction.
        finish: called on the main thread with the result, or with the exception ``compute`` raised.
        name: the worker thread's name.

    Returns:
        A future that is done once ``finish`` has run (its result: True), or cancelled when the Run was superseded.
    """
    done: Future = Future()

    def progress(fraction: float) -> None:
        if not still_wanted():
            raise Superseded
        loop.call_soon_threadsafe(show_progress, fraction)

    def on_main_thread(outcome) -> None:
        if not still_wanted():
            done.cancel()
            return
        try:
            finish(outcome)
        finally:
            if not done.cancelled():
                done.set_result(True)

    def work() -> None:
        try:
            import numba

            numba.set_num_threads(1)  # this thread never launches numba's pool (see the module docstring)
            outcome = compute(progress)
        except Superseded:
            done.cancel()
            return
        except Exception as exc:  # noqa: BLE001 - handed to the main thread, which shows it
            outcome = exc
        try:
            loop.call_soon_threadsafe(on_main_thread, outcome)
        except RuntimeError:  # the loop was closed meanwhile (the kernel is shutting down): nothing to draw
            done.cancel()

    threading.Thread(target=work, name=name, daemon=True).start()
    return done

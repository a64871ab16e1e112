"""Classroom pages a projector can show: in classroom mode a cell's printed text becomes one compact line.

In JupyterLab the notebooks print what they check (status echoes, measured numbers) in full. On a classroom page
(Voilà, :func:`symsgd_jupyter.mode.classroom_mode`) nobody sees the code that printed it, and a wall of monospace
text pushes the figures off the screen, so :func:`install` (run by :func:`symsgd_jupyter.kernel.install` on first use)
makes the kernel collect what each cell prints and show it as one line — the first printed line, shortened —
with the full text behind a click (``<details>``). A single short line stays as it is. The claim checks themselves are
compacted by :func:`symsgd_core.lesson.claims_cell.assert_claims` ("✔ 6 claims checked").

Nothing changes in JupyterLab, in the static edition or in a plain Python process (no IPython, or not classroom
mode). Errors and tracebacks are not printed text: they are shown as before.
"""

from __future__ import annotations

import html
import io
import sys

from .mode import classroom_mode

__all__ = ["SHORT", "compact_html", "install", "show"]

#: Printed text of one line up to this many characters is shown as it is.
SHORT = 100


def compact_html(text: str) -> str:
    """``text`` (what a cell printed) as one compact line with the full text behind a click."""
    lines = text.rstrip("\n").splitlines()
    first = lines[0].strip() if lines else ""
    if len(lines) == 1 and len(first) <= SHORT:
        return f'<pre class="symsgd-printed">{html.escape(first)}</pre>'
    head = first if len(first) <= SHORT else first[:SHORT - 1].rstrip() + "…"
    more = f" (+{len(lines) - 1} more line{'s' if len(lines) > 2 else ''})" if len(lines) > 1 else ""
    return (f'<details class="symsgd-printed"><summary style="cursor:pointer">{html.escape(head)}{more}</summary>'
            f"<pre>{html.escape(text.rstrip())}</pre></details>")


def show(html_text: str, plain: str) -> None:
    """Display ``html_text`` in a notebook (``plain`` for text-only front ends); print ``plain`` outside IPython."""
    from IPython import get_ipython

    if get_ipython() is None:
        print(plain)
    else:
        from IPython.display import display

        display({"text/html": html_text, "text/plain": plain}, raw=True)


class _Collector:
    """Swaps ``sys.stdout`` for a buffer from the start of a cell to its end, then shows the buffer compactly."""

    def __init__(self) -> None:
        self.buffer: io.StringIO | None = None
        self.stdout = None

    def start(self, *_args) -> None:
        if self.buffer is None:
            self.stdout, self.buffer = sys.stdout, io.StringIO()
            sys.stdout = self.buffer

    def finish(self, *_args) -> None:
        if self.buffer is None:
            return
        text, self.buffer = self.buffer.getvalue(), None
        sys.stdout = self.stdout
        if text.strip():
            from IPython.display import HTML, display

            display(HTML(compact_html(text)))


def install(shell=None, environ: dict | None = None) -> bool:
    """In classroom mode, make every cell's printed text compact (see the module docstring); idempotent.

    Args:
        shell: the IPython shell (default: the running one, if any).
        environ: the environment to decide the mode from (default ``os.environ``).

    Returns:
        True when the hooks are (now or already) installed.
    """
    if not classroom_mode(environ):
        return False
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None or not hasattr(shell, "events"):
        return False
    if getattr(shell, "_symsgd_compact_output", None) is not None:
        return True
    collector = _Collector()
    shell.events.register("pre_run_cell", collector.start)
    shell.events.register("post_run_cell", collector.finish)
    shell._symsgd_compact_output = collector
    collector.start()  # the cell that installs it (its first figure or claims) is collected too
    return True

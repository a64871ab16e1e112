"""Classroom mode: serve the notebooks as code-free dashboards with Voilà, offline, on 127.0.0.1.

Usage (from the repository root, with the project's virtual environment)::

    .venv/bin/python tools/classroom.py                 # notebooks/ at http://127.0.0.1:8866/
    .venv/bin/python tools/classroom.py --port 9000 --no-browser
    .venv/bin/python tools/classroom.py notebooks/01_some_notebook.ipynb
    .venv/bin/python tools/classroom.py --solutions     # the instructor variant (make instructor)

Each notebook runs top to bottom in its own kernel when its page is opened; the page shows
the narrative, formulas, sliders and figures, but no code. The text and formulas are shown at once, each cell's
outputs as soon as that cell has run (Voilà's progressive rendering, :func:`voila_argv`).
The server listens on 127.0.0.1 only. Everything the page needs comes from this machine: Voilà's own "lab"
template asks a CDN for Font Awesome CSS, so we serve the notebooks with the ``symsgd`` template
(``tools/voila/templates/symsgd``), which drops those links (the icons are bundled with
Voilà). ``tests/browser/test_voila.py`` opens every notebook this way in Chromium and fails
if any request leaves 127.0.0.1.

A kernel holds a few hundred MB: the kernel of a page nobody has open is shut down (:data:`CULL_IDLE_TIMEOUT_S`), and
stopping this command (Ctrl+C, ``kill``, closing the terminal) stops Voilà and every kernel it started
(:func:`run_voila`). ``tests/browser/test_classroom_kernels.py`` opens and closes pages and stops the command.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from symsgd_jupyter import PLOTLY_BUNDLE_ENV, plotly_bundle

#: Tells the kernels they serve a classroom page (read by ``symsgd_jupyter.mode.classroom_mode``: one compact line per
#: claim cell); the same names as in ``symsgd_jupyter/mode.py`` (not imported: the launcher stays light).
MODE_ENV, CLASSROOM = "SYMSGD_MODE", "classroom"
#: The instructor variant: every worked solution of the Check-yourself panels shown open (``solutions_open``).
SOLUTIONS_ENV, SOLUTIONS_OPEN = "SYMSGD_SOLUTIONS", "open"

REPO = Path(__file__).resolve().parents[1]
#: A Jupyter data directory holding ``voila/templates/symsgd``.
TEMPLATE_ROOT = Path(__file__).resolve().parent
TEMPLATE = "symsgd"
DEFAULT_PORT = 8866
#: URL folder, relative to Voilà's base URL, where Voilà serves the template's static files (plotly's bundle too).
STATIC_URL_FOLDER = "voila/static"


#: Folder of ``prepare_template_root``'s directory holding ``voila.json`` (put on ``JUPYTER_CONFIG_PATH``).
CONFIG_FOLDER = "config"


def voila_config() -> dict:
    """Voilà's settings that cannot go on its command line: its tornado settings (a dict whose values must keep their
    type; see :data:`WS_PING_TIMEOUT_MS`). Written as ``voila.json`` by :func:`prepare_template_root`."""
    return {"Voila": {"tornado_settings": {"ws_ping_timeout": WS_PING_TIMEOUT_MS}}}


def prepare_template_root(dest: Path | str) -> Path:
    """Build a Jupyter data directory with the ``symsgd`` template plus plotly's widget module, and a config folder
    (:data:`CONFIG_FOLDER`) with Voilà's ``voila.json`` (:func:`voila_config`), which :func:`voila_env` puts on
    ``JUPYTER_CONFIG_PATH``.

    Every plotly ``FigureWidget`` normally carries its ~5 MB of JavaScript in its own widget
    state, and the page compiles it once per figure. anywidget gives each widget model 2 s to
    load that code; on a dashboard that creates all its figures at once (Voilà) the later ones
    miss the limit on a busy machine and stay frozen. Served as one static file, the module is
    fetched and compiled once per page (and cached by the browser). The kernels learn where it is,
    relative to the page's base URL, from ``SYMSGD_PLOTLY_BUNDLE`` (:func:`voila_env`; read by
    ``symsgd_jupyter/plotly_loading.py``), so the page works under any host name, port or prefix.

    Args:
        dest: an empty or new directory (e.g. a temporary one).

    Returns:
        ``dest``, to be put first on ``JUPYTER_PATH``.
    """
    dest = Path(dest)
    target = dest / "voila" / "templates" / TEMPLATE
    shutil.copytree(TEMPLATE_ROOT / "voila" / "templates" / TEMPLATE, target, dirs_exist_ok=True)
    src, name = plotly_bundle()
    if src.is_file():
        (target / "static").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target / "static" / name)
    (dest / CONFIG_FOLDER).mkdir(exist_ok=True)
    (dest / CONFIG_FOLDER / "voila.json").write_text(json.dumps(voila_config(), indent=1), encoding="utf-8")
    return dest


def voila_env(template_root: Path | str = TEMPLATE_ROOT, base: dict | None = None, solutions: bool = False) -> dict:
    """Environment for Voilà and its kernels.

    Args:
        template_root: Jupyter data directory holding ``voila/templates/symsgd`` (prepended to
            ``JUPYTER_PATH``); from :func:`prepare_template_root` to also serve plotly's module.
        base: environment to extend (default: ``os.environ``); not modified.
        solutions: the instructor variant (every worked solution shown open).

    Returns:
        A new dict. ``SYMSGD_PLOTLY_BUNDLE`` (the module's URL relative to the base URL) is set when
        ``template_root`` serves plotly's module, and removed otherwise; ``SYMSGD_MODE=classroom`` always;
        ``SYMSGD_SOLUTIONS=open`` with ``solutions`` (removed otherwise, so a lecturer's shell cannot leak it).
        ``JUPYTER_CONFIG_PATH`` starts with the root's config folder when it has one (its ``voila.json``; a
        ``voila.json`` in the working directory or the user's Jupyter config directory still comes first).
    """
    env = dict(os.environ if base is None else base)
    env[MODE_ENV] = CLASSROOM
    if solutions:
        env[SOLUTIONS_ENV] = SOLUTIONS_OPEN
    else:
        env.pop(SOLUTIONS_ENV, None)
    root = Path(template_root)
    paths = [str(root)] + [p for p in env.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    env["JUPYTER_PATH"] = os.pathsep.join(paths)
    if (root / CONFIG_FOLDER / "voila.json").is_file():
        configs = [str(root / CONFIG_FOLDER)] + [p for p in env.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p]
        env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(configs)
    _, name = plotly_bundle()
    if (root / "voila" / "templates" / TEMPLATE / "static" / name).is_file():
        env[PLOTLY_BUNDLE_ENV] = f"{STATIC_URL_FOLDER}/{name}"
    else:
        env.pop(PLOTLY_BUNDLE_ENV, None)
    return env


#: Milliseconds a page's websocket may go without answering the server's keep-alive ping (jupyter_server's default
#: is 90 000: too short for a page that is still reading a backlog of figures on a starved CPU).
WS_PING_TIMEOUT_MS = 600_000

#: Seconds Voilà waits for a cell's outputs after the cell finished (nbclient's default is 4 s; a late figure
#: display would otherwise be dropped from the page without a word: "Timeout waiting for IOPub output").
IOPUB_TIMEOUT_S = 120

# Kernels of closed pages. Each page gets its own kernel (~380 MB with the notebooks' imports). Voilà 0.5's page asks
# for its kernel's shutdown when it unloads, but Voilà refuses that request (403, "'_xsrf' argument missing") unless
# the browser already holds an _xsrf cookie for this host, which the notebook page never sets (the folder listing
# and JupyterLab do): a page opened from its printed address keeps its kernel; nor does a crashed, killed or
# sleeping browser send the request. Nothing else frees the kernel. jupyter_server's idle culler, which runs
# in Voilà's kernel manager, is the backstop: every CULL_INTERVAL_S it shuts down each kernel that has been idle
# (no message from the kernel) for more than CULL_IDLE_TIMEOUT_S *and* has no page connected (cull_connected=False):
# the kernel of a closed tab goes within CULL_IDLE_TIMEOUT_S + CULL_INTERVAL_S of its last activity, often sooner;
# an open page keeps its kernel however long it stays untouched (culling it would freeze its figures mid-lecture),
# and a kernel still running its notebook is never culled (cull_busy=False).
#: Seconds a kernel with no page connected may stay idle. Between Voilà sending the page and the page connecting to
#: its kernel (the browser still loading the page's scripts and widget code; the page then asks Voilà to run the
#: notebook) the kernel is idle and unconnected although its page is opening: the timeout must stay well above that
#: gap, even on a slow laptop.
CULL_IDLE_TIMEOUT_S = 120
#: Seconds between two passes of the culler (jupyter_server's default is 300).
CULL_INTERVAL_S = 30


def culling_argv(cull_after_s: int = CULL_IDLE_TIMEOUT_S, cull_interval_s: int = CULL_INTERVAL_S) -> list[str]:
    """Voilà options that shut down the kernel of a closed page after ``cull_after_s`` idle seconds, checked
    every ``cull_interval_s`` (``cull_after_s=0``: never); open pages and running notebooks keep their kernels.

    Raises:
        ValueError: ``cull_after_s`` is not an int ≥ 0, or ``cull_interval_s`` not an int ≥ 1.
    """
    if not isinstance(cull_after_s, int) or cull_after_s < 0:
        raise ValueError(f"cull_after_s must be an int >= 0 (0: never cull), got {cull_after_s!r}")
    if not isinstance(cull_interval_s, int) or cull_interval_s < 1:
        raise ValueError(f"cull_interval_s must be an int >= 1, got {cull_interval_s!r}")
    # MappingKernelManager: the class of Voilà's kernel manager (AsyncMappingKernelManager) that holds these settings
    return [f"--MappingKernelManager.cull_idle_timeout={cull_after_s}",
            f"--MappingKernelManager.cull_interval={cull_interval_s}",
            "--MappingKernelManager.cull_connected=False",
            "--MappingKernelManager.cull_busy=False"]


def voila_argv(target: Path | str, port: int = DEFAULT_PORT, open_browser: bool = False,
               python: str = sys.executable, cull_after_s: int = CULL_IDLE_TIMEOUT_S,
               cull_interval_s: int = CULL_INTERVAL_S) -> list[str]:
    """Command line that serves ``target`` (a notebook or a folder of notebooks) with Voilà.

    Args:
        target: notebook file or directory.
        port: TCP port on 127.0.0.1 (must be free: no silent move to another port).
        open_browser: open the system browser on the page once the server is up.
        python: interpreter that has Voilà installed (the kernels use it too).
        cull_after_s, cull_interval_s: see :func:`culling_argv`.

    Returns:
        The argument list for :func:`run_voila`.

    Raises:
        ValueError: ``port`` is not in 1..65535, or a culling setting is out of range.
    """
    if not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(f"port must be an int in 1..65535, got {port!r}")
    argv = [python, "-m", "voila", str(target),
            "--Voila.ip=127.0.0.1", f"--Voila.port={port}", "--Voila.port_retries=0",
            f"--VoilaConfiguration.template={TEMPLATE}",
            # a teacher at the projector needs to see what went wrong, not a generic message
            "--VoilaConfiguration.show_tracebacks=True",
            # Voilà executes each cell, then waits IOPUB_TIMEOUT_S for the cell's outputs; nbclient's default (4 s)
            # silently drops a figure whose display arrives later, as it does on a busy or slow machine
            f"--VoilaExecutor.iopub_timeout={IOPUB_TIMEOUT_S}",
            # the page (text, formulas, a place per code cell) comes at once and each cell's outputs when the cell
            # has run, instead of a spinner until every cell has (16-43 s; the template's static/progressive.js
            # keeps every widget output of a cell). Voilà refuses it with preheat_kernel, which we do not use.
            "--VoilaConfiguration.progressive_rendering=True",
            # a page on a starved machine (an old laptop running the class's kernels) reads its execution socket
            # slowly; jupyter_server's keep-alive closed it after 90 s without a pong, queued behind the backlog, and
            # the page stopped after its first figure. Pages and server share one machine: a dead page's socket is
            # closed by the OS, so a long pong timeout loses nothing
            # (set in the voila.json of the template root, voila_config(): not on this command line, where traitlets 5
            # reads a dict's key=value items as strings, and a string timeout breaks the ping, while the dict form
            # --Voila.tornado_settings={...} prints a DeprecationWarning)
            *culling_argv(cull_after_s, cull_interval_s)]
    if not open_browser:
        argv.append("--no-browser")
    return argv


def page_path(target: Path | str, notebook: str) -> str:
    """URL path of ``notebook``'s dashboard when Voilà serves ``target`` (a folder: one page per notebook
    under ``/voila/render/``; a single notebook: the root page)."""
    return f"/voila/render/{notebook}" if Path(target).is_dir() else "/"


def page_urls(target: Path | str, port: int = DEFAULT_PORT) -> dict[str, str]:
    """Notebook file name → the address of its dashboard, for every notebook Voilà serves from ``target``."""
    target = Path(target)
    names = sorted(p.name for p in target.glob("*.ipynb")) if target.is_dir() else [target.name]
    return {name: f"http://127.0.0.1:{port}{page_path(target, name)}" for name in names}


def check_template() -> None:
    """Raise FileNotFoundError if the offline template is missing."""
    conf = TEMPLATE_ROOT / "voila" / "templates" / TEMPLATE / "conf.json"
    if not conf.is_file():
        raise FileNotFoundError(f"the offline Voilà template is missing: {conf} (restore tools/voila/ from git)")


#: Signals that stop the classroom server: Ctrl+C (SIGINT), ``kill`` (SIGTERM), the terminal window closed (SIGHUP).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
#: Seconds Voilà gets, after a stop signal, to shut its kernels down (jupyter_client waits up to 5 s for each, all at
#: once) before it and every process it started are killed. A second Ctrl+C kills them at once.
STOP_GRACE_S = 15.0
#: Seconds between two looks at Voilà while it runs (how late a stop signal or Voilà's own exit is noticed).
POLL_S = 0.25


def _process_tree(pid: int) -> list:
    """The process ``pid`` and every process under it, as ``psutil.Process`` objects (which know a reused pid from
    the process they were made for); [] if ``pid`` is gone."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _stop_processes(procs: list, sig: int, wait_s: float) -> list:
    """Send ``sig`` to each process of ``procs`` still running; return those still running after ``wait_s``."""
    if not procs:
        return []
    alive = []
    for p in procs:
        with contextlib.suppress(psutil.Error):  # gone (psutil checks the pid was not reused)
            if p.status() != psutil.STATUS_ZOMBIE:  # a zombie has exited already: only its reaper is late
                p.send_signal(sig)
                alive.append(p)
    return psutil.wait_procs(alive, timeout=wait_s)[1]


def run_voila(argv: list[str], env: dict, grace_s: float = STOP_GRACE_S) -> int:
    """Run the Voilà command ``argv`` until it exits or this process gets a stop signal (:data:`STOP_SIGNALS`), and
    return with nothing it started still running.

    Voilà runs in a session (process group) of its own, so a stop signal reaches it through here only: it gets
    SIGTERM, on which it shuts its kernels down and exits. The kernels run in sessions of their own, so the processes
    under Voilà are looked up while it stops; whichever of them (Voilà, a kernel, a kernel's worker) is still running
    after ``grace_s`` (at once after a second signal), or after Voilà has exited, is killed.

    Returns:
        Voilà's exit code if it exited by itself (e.g. its port was taken), 0 if it was stopped by a signal.
    """
    stops: list[int] = []  # the stop signals received so far

    def on_stop(signum, frame):  # noqa: ARG001 - the signal module's signature
        stops.append(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():  # signal handlers can only be set there
        previous = {sig: signal.signal(sig, on_stop) for sig in STOP_SIGNALS}  # before Voilà starts: no gap
    started: dict[int, object] = {}  # pid -> psutil.Process: every process seen under Voilà
    proc = None
    try:
        proc = subprocess.Popen(argv, env=env, start_new_session=True)
        while proc.poll() is None and not stops:
            time.sleep(POLL_S)  # waiting for Voilà to exit or for a stop signal, whichever comes first
        if proc.returncode is not None:  # Voilà stopped by itself; its kernels see their parent gone and exit
            return proc.returncode
        print("Stopping the classroom server and its kernels...", file=sys.stderr, flush=True)
        started.update((p.pid, p) for p in _process_tree(proc.pid))
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)  # Voilà's own stop: it shuts every kernel down, then exits
        deadline = time.monotonic() + grace_s
        while proc.poll() is None and time.monotonic() < deadline and len(stops) < 2:
            started.update((p.pid, p) for p in _process_tree(proc.pid))  # a kernel started meanwhile
            time.sleep(POLL_S)
        return 0
    finally:
        if proc is not None:
            if proc.poll() is None:  # past the grace period, a second signal, or an error here: kill
                started.update((p.pid, p) for p in _process_tree(proc.pid))
                if hasattr(os, "killpg"):
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)  # Voilà's group (its kernels have sessions of their own)
                else:
                    proc.kill()
                proc.wait()
            leftovers = [p for pid, p in started.items() if pid != proc.pid]
            _stop_processes(_stop_processes(leftovers, signal.SIGTERM, 3.0), signal.SIGKILL, 3.0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the symsgd notebooks as code-free, offline Voilà dashboards "
                                                 "on 127.0.0.1.")
    parser.add_argument("target", nargs="?", default=str(REPO / "notebooks"),
                        help="notebook or folder of notebooks (default: notebooks/)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port on 127.0.0.1 (default {DEFAULT_PORT})")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser window")
    parser.add_argument("--solutions", action="store_true",
                        help="instructor variant: every Check-yourself worked solution shown open (make instructor)")
    parser.add_argument("--cull-after", type=int, default=CULL_IDLE_TIMEOUT_S, metavar="SECONDS",
                        help="shut down the kernel of a page nobody has open once it has been idle that long "
                             f"(default {CULL_IDLE_TIMEOUT_S}; 0: never); an open page keeps its kernel")
    parser.add_argument("--cull-interval", type=int, default=CULL_INTERVAL_S, metavar="SECONDS",
                        help=f"how often to look for such kernels (default {CULL_INTERVAL_S})")
    args = parser.parse_args(argv)
    target = Path(args.target)
    if not target.exists():
        parser.error(f"{target} does not exist")
    try:
        voila_cmd = voila_argv(target, args.port, open_browser=not args.no_browser, cull_after_s=args.cull_after,
                               cull_interval_s=args.cull_interval)
    except ValueError as exc:
        parser.error(str(exc))
    check_template()
    variant = " — instructor variant, every worked solution open" if args.solutions else ""
    print(f"Classroom mode{variant}: {target} at http://127.0.0.1:{args.port}/ (offline; Ctrl+C stops it)")
    if target.is_dir():
        print("Double-click a notebook in that list (it opens in a new tab), or open its page directly:")
    for name, url in page_urls(target, args.port).items():
        print(f"  {Path(name).stem:32} {url}")
    print("A page runs its notebook when it is opened: open a heavy one (03, 04) a minute before you need it.",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="symsgd-classroom-") as tmp:
        root = prepare_template_root(tmp)
        return run_voila(voila_cmd, env=voila_env(root, solutions=args.solutions))


if __name__ == "__main__":
    sys.exit(main())

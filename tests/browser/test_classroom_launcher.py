"""tools/classroom.py without a browser: the command line, the environment, the template copy.

(The launcher itself is exercised end to end in test_voila.py, which starts Voilà with its command line, and in
test_classroom_kernels.py, which runs it, opens and closes pages and stops it.)
"""

from __future__ import annotations

import os
import signal
import sys

import pytest


def test_voila_argv_binds_localhost_with_the_offline_template(classroom, tmp_path):
    argv = classroom.voila_argv(tmp_path, 9123)
    assert "--Voila.ip=127.0.0.1" in argv
    assert "--Voila.port=9123" in argv and "--Voila.port_retries=0" in argv
    assert f"--VoilaConfiguration.template={classroom.TEMPLATE}" in argv
    assert "--no-browser" in argv
    assert "--no-browser" not in classroom.voila_argv(tmp_path, 9123, open_browser=True)


def test_voila_waits_for_late_outputs_instead_of_dropping_them(classroom, tmp_path):
    # nbclient's default iopub_timeout (4 s) dropped a figure's display on a busy machine: 10 of 11 figures shown
    argv = classroom.voila_argv(tmp_path, 9123)
    assert f"--VoilaExecutor.iopub_timeout={classroom.IOPUB_TIMEOUT_S}" in argv
    assert classroom.IOPUB_TIMEOUT_S >= 60


def test_voila_argv_culls_the_kernels_of_closed_pages_but_never_of_open_ones(classroom, tmp_path):
    # 16 page loads left 16 idle kernels (6.1 GB): a kernel nobody's page is connected to is shut down once idle
    argv = classroom.voila_argv(tmp_path, 9123)
    assert f"--MappingKernelManager.cull_idle_timeout={classroom.CULL_IDLE_TIMEOUT_S}" in argv
    assert f"--MappingKernelManager.cull_interval={classroom.CULL_INTERVAL_S}" in argv
    assert "--MappingKernelManager.cull_connected=False" in argv  # an open page keeps its kernel (its figures live)
    assert "--MappingKernelManager.cull_busy=False" in argv  # and so does a notebook still running
    # well above the time an opening page takes to connect to its kernel once the notebook has run; a few minutes
    assert 60 <= classroom.CULL_IDLE_TIMEOUT_S <= 600
    assert 1 <= classroom.CULL_INTERVAL_S <= classroom.CULL_IDLE_TIMEOUT_S
    argv = classroom.voila_argv(tmp_path, 9123, cull_after_s=0, cull_interval_s=5)
    assert "--MappingKernelManager.cull_idle_timeout=0" in argv and "--MappingKernelManager.cull_interval=5" in argv


def test_voila_argv_shows_the_page_before_the_cells_have_run(classroom, tmp_path):
    # the class saw a spinner for 16-43 s while every cell ran: the prose now comes at once, each cell's outputs when
    # the cell has run (test_classroom_progressive.py opens such a page)
    argv = classroom.voila_argv(tmp_path, 9123)
    assert "--VoilaConfiguration.progressive_rendering=True" in argv
    assert not [a for a in argv if "preheat_kernel" in a]  # Voilà refuses progressive rendering with it
    template = classroom.prepare_template_root(tmp_path / "t") / "voila" / "templates" / classroom.TEMPLATE
    # the page's script that keeps every widget output of a cell (Voilà drops the ones after a widget it waits for)
    assert (template / "static" / "progressive.js").is_file()
    assert 'include_js("static/progressive.js")' in (template / "index.html.j2").read_text(encoding="utf-8")


@pytest.mark.parametrize("settings", [{"cull_after_s": -1}, {"cull_after_s": 2.5}, {"cull_interval_s": 0},
                                      {"cull_interval_s": "30"}])
def test_voila_argv_rejects_bad_culling_settings(classroom, tmp_path, settings):
    with pytest.raises(ValueError, match="cull"):
        classroom.voila_argv(tmp_path, 9123, **settings)


@pytest.mark.parametrize("port", [0, 70000, "8866", 1.5])
def test_voila_argv_rejects_bad_ports(classroom, tmp_path, port):
    with pytest.raises(ValueError, match="port"):
        classroom.voila_argv(tmp_path, port)


def test_template_root_serves_plotly_module_and_env_points_at_it(classroom, tmp_path):
    root = classroom.prepare_template_root(tmp_path / "t")
    template = root / "voila" / "templates" / classroom.TEMPLATE
    assert (template / "conf.json").is_file() and (template / "index.html.j2").is_file()
    src, name = classroom.plotly_bundle()
    assert (template / "static" / name).read_bytes() == src.read_bytes()

    env = classroom.voila_env(root, base={"JUPYTER_PATH": "/elsewhere", "HOME": "/h"})
    assert env["JUPYTER_PATH"].split(os.pathsep) == [str(root), "/elsewhere"]
    # relative to the page's base URL: no host or port baked in (a page opened at localhost, another host name or
    # behind a prefix imports it from its own origin)
    assert env[classroom.PLOTLY_BUNDLE_ENV] == f"voila/static/{name}"
    assert "://" not in env[classroom.PLOTLY_BUNDLE_ENV] and not env[classroom.PLOTLY_BUNDLE_ENV].startswith("/")
    assert env["HOME"] == "/h"


def test_env_without_the_module_sets_no_url(classroom):
    env = classroom.voila_env(classroom.TEMPLATE_ROOT, base={classroom.PLOTLY_BUNDLE_ENV: "stale"})
    assert classroom.PLOTLY_BUNDLE_ENV not in env  # the repo template dir has no copy of plotly's module


def test_main_refuses_a_missing_target(classroom, tmp_path):
    with pytest.raises(SystemExit):
        classroom.main([str(tmp_path / "missing"), "--no-browser"])


@pytest.mark.parametrize("args", [["--cull-after", "-5"], ["--cull-interval", "0"]])
def test_main_refuses_bad_culling_settings(classroom, tmp_path, args, capsys):
    with pytest.raises(SystemExit):
        classroom.main([str(tmp_path), "--no-browser", *args])
    assert "cull" in capsys.readouterr().err


def test_main_passes_the_culling_settings_to_voila(classroom, monkeypatch, tmp_path):
    seen = {}
    monkeypatch.setattr(classroom, "run_voila", lambda cmd, env: seen.update(cmd=cmd) or 0)
    assert classroom.main([str(tmp_path), "--no-browser"]) == 0
    assert seen["cmd"] == classroom.voila_argv(tmp_path, classroom.DEFAULT_PORT)  # the defaults
    assert classroom.main([str(tmp_path), "--no-browser", "--cull-after", "7", "--cull-interval", "2"]) == 0
    assert seen["cmd"] == classroom.voila_argv(tmp_path, classroom.DEFAULT_PORT, cull_after_s=7, cull_interval_s=2)


@pytest.mark.slow
def test_run_voila_returns_the_exit_code_of_a_server_that_stops_by_itself(classroom):
    # e.g. the port is taken: make sees the failure; the stop signals' handlers are put back
    before = {sig: signal.getsignal(sig) for sig in classroom.STOP_SIGNALS}
    assert classroom.run_voila([sys.executable, "-c", "raise SystemExit(3)"], dict(os.environ)) == 3
    assert {sig: signal.getsignal(sig) for sig in classroom.STOP_SIGNALS} == before


def test_page_urls_name_every_notebook_of_a_folder(classroom, tmp_path):
    for name in ("b.ipynb", "a.ipynb"):
        (tmp_path / name).write_text("{}", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("", encoding="utf-8")
    assert classroom.page_urls(tmp_path, 9123) == {"a.ipynb": "http://127.0.0.1:9123/voila/render/a.ipynb",
                                                   "b.ipynb": "http://127.0.0.1:9123/voila/render/b.ipynb"}


def test_page_url_of_a_single_notebook_is_the_root(classroom, tmp_path):
    nb = tmp_path / "a.ipynb"
    nb.write_text("{}", encoding="utf-8")
    assert classroom.page_urls(nb, 9123) == {"a.ipynb": "http://127.0.0.1:9123/"}
    assert classroom.page_path(nb, "a.ipynb") == "/"


def test_classroom_kernels_know_their_mode_and_the_instructor_variant_opens_solutions(classroom, tmp_path):
    from symsgd_jupyter import mode

    assert (classroom.MODE_ENV, classroom.SOLUTIONS_ENV) == (mode.MODE_ENV, mode.SOLUTIONS_ENV)  # one name each
    env = classroom.voila_env(tmp_path, base={"SYMSGD_SOLUTIONS": "open"})  # a stray variable in the shell
    assert mode.classroom_mode(env) and not mode.solutions_open(env)
    env = classroom.voila_env(tmp_path, base={}, solutions=True)
    assert mode.classroom_mode(env) and mode.solutions_open(env)
    assert not mode.classroom_mode({}) and not mode.classroom_mode({"SYMSGD_MODE": "lab", "VOILA_BASE_URL": "/"})
    assert mode.classroom_mode({"VOILA_BASE_URL": "/"}) and mode.classroom_mode({"SERVER_SOFTWARE": "voila/0.5"})


@pytest.mark.parametrize("argv, solutions", [([], False), (["--solutions"], True)])
def test_make_instructor_is_classroom_mode_with_every_solution_open(classroom, monkeypatch, tmp_path, argv, solutions):
    seen = {}

    def fake_run_voila(cmd, env):
        seen.update(cmd=cmd, env=env)
        return 0

    monkeypatch.setattr(classroom, "run_voila", fake_run_voila)
    assert classroom.main([str(tmp_path), "--no-browser", *argv]) == 0
    assert (seen["env"].get("SYMSGD_SOLUTIONS") == "open") is solutions
    assert seen["env"]["SYMSGD_MODE"] == "classroom"
    makefile = (classroom.REPO / "Makefile").read_text()
    assert "instructor: $(STAMP)\n\t$(PY) tools/classroom.py --no-browser --solutions\n" in makefile
    assert "make instructor" in (classroom.REPO / "README.md").read_text()


def test_voila_keeps_a_slow_page_connected(classroom, tmp_path):
    # a 6x slowed page on a loaded machine lost its execution socket after jupyter_server's 90 s pong timeout and
    # stopped after its first figure; Voilà must take the longer timeout from its tornado settings
    argv = classroom.voila_argv(tmp_path, 9123)
    assert classroom.WS_PING_TIMEOUT_MS >= 300_000
    from traitlets.config.loader import KVArgParseConfigLoader
    from voila.app import Voila

    config = KVArgParseConfigLoader([a for a in argv if a.startswith("--Voila.tornado")],
                                    classes=[Voila]).load_config()
    # an int: jupyter_server compares it with the milliseconds since the last pong
    assert config.Voila.tornado_settings == {"ws_ping_timeout": classroom.WS_PING_TIMEOUT_MS}
    assert isinstance(Voila(config=config).tornado_settings["ws_ping_timeout"], int)

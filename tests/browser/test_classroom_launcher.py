"""tools/classroom.py without a browser: the command line, the environment, the template copy.

(The launcher itself is exercised end to end in test_voila.py, which starts Voilà with its command line, and in
test_classroom_kernels.py, which runs it, opens and closes pages and stops it.)
"""

from __future__ import annotations

import json
import os
import re
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


def test_voila_keeps_a_slow_page_connected(classroom, tmp_path, monkeypatch):
    # a 6x slowed page on a loaded machine lost its execution socket after jupyter_server's 90 s pong timeout and
    # stopped after its first figure; Voilà must take the longer timeout from its tornado settings, as an int
    # (jupyter_server compares it with the milliseconds since the last pong), found where Voilà looks for its config
    assert classroom.WS_PING_TIMEOUT_MS >= 300_000
    from voila.app import Voila

    root = classroom.prepare_template_root(tmp_path / "t")
    env = classroom.voila_env(root, base={"JUPYTER_CONFIG_PATH": "/elsewhere"})
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep) == [str(root / classroom.CONFIG_FOLDER), "/elsewhere"]
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", env["JUPYTER_CONFIG_PATH"])
    monkeypatch.chdir(tmp_path)  # no voila.json in the working directory
    app = Voila()
    assert str(root / classroom.CONFIG_FOLDER) in app.config_file_paths
    app.load_config_file("voila", path=app.config_file_paths)
    assert app.tornado_settings["ws_ping_timeout"] == classroom.WS_PING_TIMEOUT_MS
    assert isinstance(app.tornado_settings["ws_ping_timeout"], int)


def test_voila_reads_its_command_line_without_a_deprecation_warning(classroom, tmp_path):
    # `make classroom` printed traitlets' "--tornado_settings={...} for dict-traits is deprecated in traitlets 5.0"
    import warnings

    from voila.app import Voila

    argv = classroom.voila_argv(tmp_path, 9123)
    assert not [a for a in argv if "tornado_settings" in a]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Voila().parse_command_line(argv[3:])  # after "python -m voila": what Voilà's own parser reads
    # the template root of an older launcher copy has no config folder: the environment then names none
    assert "JUPYTER_CONFIG_PATH" not in classroom.voila_env(classroom.TEMPLATE_ROOT, base={})


# ------------------------------------------------------------------ prose about the code the classroom hides
REPO = __import__("pathlib").Path(__file__).resolve().parents[2]
#: Words that point at a code cell ("The cell below prints …", "the next cells", "answered in its code cell").
CELL_POINTER = re.compile(r"(?i)\bcells?\s+(?:below|above)\b|\b(?:next|following)\s+cells?\b"
                          r"|\bthe cell\s+(?:checks|asserts|prints|shows|computes|runs|fits)\b"
                          r"|\bits code\s+cell\b|\bin the cell\b")
#: A sentence in classroom mode's hidden class (tools/voila/templates/symsgd/index.html.j2).
CODE_ONLY = re.compile(r'<span class="[^"]*\bsymsgd-code-only\b[^"]*">.*?</span>', re.S)
#: The notebooks checked here; 05 is edited by the lead (its sentences are listed in the teachmodes report).
MARKED_NOTEBOOKS = sorted(p for p in (REPO / "notebooks").glob("0[0-5]_*.ipynb"))


def unmarked_cell_pointers(markdown: str) -> list[str]:
    """The sentences of ``markdown`` outside a ``symsgd-code-only`` span that point at a code cell, except those that
    say they are about JupyterLab ("In JupyterLab you can also use the code cells below the panel")."""
    shown = CODE_ONLY.sub("", markdown)
    found = []
    for m in CELL_POINTER.finditer(shown):
        before = shown[:m.start()]
        head = before[max(before.rfind(". "), before.rfind(".\n"), before.rfind(".</span>"), before.rfind("\n\n"), 0):]
        if "JupyterLab" not in head:
            found.append((head + shown[m.start():m.end() + 40]).strip())
    return found


def test_the_cell_pointer_check_sees_an_unmarked_sentence():
    assert unmarked_cell_pointers("A figure. The cell below prints what it shows.")
    assert unmarked_cell_pointers("It is answered in its code cell.")
    assert unmarked_cell_pointers("Not about norms — the next cells separate the two.")
    assert not unmarked_cell_pointers('A figure. <span class="symsgd-code-only">The cell below prints it.</span>')
    assert not unmarked_cell_pointers('<span class="symsgd-live symsgd-code-only">: the cell below fits it</span>')
    assert not unmarked_cell_pointers("In JupyterLab you can also use the code cells below the panel.")
    assert unmarked_cell_pointers('<span class="symsgd-live">In JupyterLab, run it.</span> It is in its code cell.')


@pytest.mark.parametrize("path", MARKED_NOTEBOOKS, ids=[p.stem[:2] for p in MARKED_NOTEBOOKS])
def test_every_sentence_pointing_at_a_code_cell_is_marked_code_only(path):
    """Classroom mode shows no code: a sentence like "The cell below prints …" would point at nothing. Each such
    sentence of the Markdown is wrapped in <span class="symsgd-code-only">, which the classroom's CSS hides."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = [(i, s) for i, c in enumerate(cells) if c["cell_type"] == "markdown"
             for s in unmarked_cell_pointers("".join(c["source"]))]
    assert not found, f"{path.name}: sentences pointing at a code cell, not marked symsgd-code-only: {found}"
    assert len(MARKED_NOTEBOOKS) == 6


def test_the_classroom_hides_the_code_only_sentences(classroom, tmp_path):
    template = classroom.prepare_template_root(tmp_path / "t") / "voila" / "templates" / classroom.TEMPLATE
    page = (template / "index.html.j2").read_text(encoding="utf-8")
    styles = "".join(re.findall(r"<style>(.*?)</style>", page, re.S))
    assert re.search(r"\.symsgd-code-only\s*\{\s*display:\s*none;?\s*\}", styles), "classroom shows code-only text"
    # the span keeps the Markdown inside it: the notebooks' sentences are inline (a paragraph never starts with a
    # lone tag line, which would make CommonMark read it as raw HTML)
    for path in MARKED_NOTEBOOKS:
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if c["cell_type"] == "markdown":
                assert not re.search(r'(?m)^<span class="[^"]*symsgd-code-only[^"]*">\s*$', "".join(c["source"]))

"""The browser suite's latency report: per-notebook records → a table in the terminal summary.

Each browser test writes one JSON record per notebook and mode to
``test-artifacts/browser/latency/``; this module turns them into
``test-artifacts/browser/latency_report.{json,txt}`` and prints the table at the end of
the pytest run.

The hooks live here (stdlib only) and are imported by tests/browser/conftest.py. Under
pytest-xdist the terminal summary is printed by the controller, which loads that conftest
because ``make test-browser`` (and so ``make test``) names ``tests/browser`` on its command
line; a flag on ``config`` makes the hooks act once.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Screenshots, server logs and the latency report (git-ignored).
ARTIFACTS = REPO / "test-artifacts" / "browser"
LATENCY_DIR = ARTIFACTS / "latency"


def write_record(mode: str, notebook: str, payload: dict) -> Path:
    """Save one notebook's browser results (latencies, requests) for the report.

    Args:
        mode: ``lab`` or ``voila``.
        notebook: notebook file name.
        payload: JSON-serialisable dict (dataclasses are converted with ``vars``).

    Returns:
        The path written.
    """
    LATENCY_DIR.mkdir(parents=True, exist_ok=True)
    path = LATENCY_DIR / f"{mode}-{Path(notebook).stem}.json"
    path.write_text(json.dumps(payload, indent=2, default=vars, ensure_ascii=False), encoding="utf-8")
    return path


def read_records(since: float | None = None) -> list[dict]:
    """All records (written at or after the ``since`` timestamp, if given), by file name."""
    if not LATENCY_DIR.is_dir():
        return []
    paths = sorted(LATENCY_DIR.glob("*.json"))
    if since is not None:
        paths = [p for p in paths if p.stat().st_mtime >= since - 1.0]
    return [json.loads(p.read_text(encoding="utf-8")) for p in paths]


def latency_table(records: list[dict]) -> list[str]:
    """Text table: one line per controller (mode, notebook, kind, slider, latency, targets)."""
    head = (f"{'mode':10} {'notebook':28} {'ctl':>3} {'kind':13} {'slider':16} {'n':>2} {'median ms':>9} "
            f"{'p95 ms':>8} {'target':>7} {'met':4} {'busy':4} {'same':4} note")
    lines = [head, "-" * len(head)]

    def yn(v):
        return "-" if v is None else ("yes" if v else "NO")

    for rec in records:
        for c in rec.get("controllers", []):
            med = "-" if c["median_ms"] is None else f"{c['median_ms']:.0f}"
            p95 = "-" if c["p95_ms"] is None else f"{c['p95_ms']:.0f}"
            lines.append(f"{c['mode']:10} {Path(c['notebook']).stem[:28]:28} {c['controller']:>3} {c['kind']:13} "
                         f"{c['slider'][:16]:16} {c['moves']:>2} {med:>9} {p95:>8} {c['target_ms']:>7.0f} "
                         f"{yn(c['met']):4} {yn(c['busy_indicator']):4} {yn(c['reversible']):4} {c.get('note', '')}")
        for failure in rec.get("failures", []):
            lines.append(f"{rec['mode']:10} {Path(rec['notebook']).stem[:28]:28} FAILED: "
                         + failure.split(chr(10))[0].split(": step ", 1)[-1][:150])
        if rec.get("exercises"):
            lines.append(f"{rec['mode']:10} {Path(rec['notebook']).stem[:28]:28} Check yourself, answered in the "
                         f"page: {'; '.join(rec['exercises'])}")
        if rec.get("external_requests"):
            lines.append(f"{rec['mode']:10} {Path(rec['notebook']).stem[:28]:28} requests leaving 127.0.0.1: "
                         f"{rec['external_requests']}")
    lines.append("met: median ≤ target (analytic 300 ms, on release 800 ms, re-simulating 1500 ms; at 1× CPU only); "
                 "busy: 'Computing…' shown while re-simulating; same: the same slider value gave the same figure data "
                 "again")
    return lines


def load_table(records: list[dict]) -> list[str]:
    """Text table: how each page drew its figures (notebook × mode × CPU throttle)."""
    head = (f"{'mode':10} {'notebook':28} {'address':34} {'CPU':>4} {'drawn':>7} {'seconds':>8} {'JS heap':>8} "
            f"{'bundle':>6}")
    lines = [head, "-" * len(head)]
    for rec in sorted(records, key=lambda r: (r["notebook"], r["mode"])):
        load = rec.get("load")
        if not load:
            continue
        secs = "-" if load["seconds"] is None else f"{load['seconds']:.1f}"
        heap = "-" if load["heap_mb"] is None else f"{load['heap_mb']:.0f} MB"
        lines.append(f"{rec['mode']:10} {Path(rec['notebook']).stem[:28]:28} {rec.get('address', '')[:34]:34} "
                     f"{load['throttle']:>3g}× {load['drawn']:>3}/{load['expected']:<3} {secs:>8} {heap:>8} "
                     f"{load['bundle_requests']:>5}×")
    lines.append("drawn: plotly figures with data / FigureWidgets in the notebook's kernel; seconds: from Run All "
                 "(JupyterLab) or page open (Voilà) until the last one drew; bundle: requests for plotly's widget code")
    return lines


def reader_path_table(records: list[dict]) -> list[str]:
    """Text table: each notebook's reader's path in JupyterLab after Run All, in screens (the notebook
    panel's visible height): to the first figure, test output (claim lines, printed checks), all outputs, code
    (the code cells' inputs), the whole notebook."""
    rows = [r for r in records if r.get("reader_path")]
    if not rows:
        return []
    head = (f"{'mode':10} {'notebook':28} {'screen px':>9} {'to 1st figure':>13} {'test output':>11} "
            f"{'(outputs)':>9} {'all outputs':>11} {'code':>6} {'(cells)':>7} {'whole':>6}")
    lines = [head, "-" * len(head)]
    for rec in sorted(rows, key=lambda r: (r["notebook"], r["mode"])):
        p = rec["reader_path"]
        first = "-" if p["screens_to_first_figure"] is None else f"{p['screens_to_first_figure']:.2f}"
        lines.append(f"{rec['mode']:10} {Path(rec['notebook']).stem[:28]:28} {p['screen_px']:>9} {first:>13} "
                     f"{p['check_screens']:>11.2f} {p['check_outputs']:>9} {p['output_screens']:>11.2f} "
                     f"{p['code_screens']:>6.2f} {p['code_cells']:>7} {p['screens_total']:>6.1f}")
    lines.append("screens: multiples of the notebook panel's visible height; test output: claim lines and tables, "
                 "printed [PASS]/[FAIL] and check lines, as laid out after Run All (tables closed)")
    return lines


def write_reports(since: float | None = None) -> list[str]:
    """Write latency_report.json and latency_report.txt from the records; return the table lines."""
    records = read_records(since)
    path = reader_path_table(records)
    lines = load_table(records) + [""] + latency_table(records) + ([""] + path if path else [])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "latency_report.json").write_text(json.dumps(records, indent=2, ensure_ascii=False),
                                                   encoding="utf-8")
    (ARTIFACTS / "latency_report.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


# --------------------------------------------------------------------------- pytest hooks


def pytest_configure(config):
    """Remember when the run started (records older than that are not reported); when the browser suite is what
    runs (``-m browser``, as ``make test-browser`` runs it), clear the records and screenshots of earlier runs once,
    in the controlling process, before any worker writes new ones."""
    if not hasattr(config, "_symsgd_browser_t0"):
        config._symsgd_browser_t0 = time.time()
    if not hasattr(config, "workerinput") and (config.getoption("markexpr", "") or "").strip() == "browser":
        for path in [*LATENCY_DIR.glob("*.json"), *ARTIFACTS.glob("*.png")]:
            path.unlink(missing_ok=True)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Print the latency table (xdist controller or plain run only) and write the report files."""
    if hasattr(config, "workerinput") or getattr(config, "_symsgd_browser_summary_done", False):
        return
    config._symsgd_browser_summary_done = True
    if not read_records(getattr(config, "_symsgd_browser_t0", None)):
        return
    lines = write_reports(getattr(config, "_symsgd_browser_t0", None))
    terminalreporter.write_sep("=", "browser suite: figures drawn, slider → figure latency")
    for line in lines:
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"(report, screenshots, server logs: {ARTIFACTS.relative_to(REPO)}/)")

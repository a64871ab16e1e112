"""Page weights and frames per slider: printed by ``make site`` and written to ``site/edition-report.json``."""

from __future__ import annotations

import json
from pathlib import Path

from .config import PAGE_BUDGET_BYTES


def page_weights(out: Path, pages: list, assets: dict[str, int], timings: dict) -> dict:
    """The report: every page's own bytes, its figures (slider, frames), the shared assets, build times."""
    rows = []
    for p in pages:
        size = (Path(out) / p.href).stat().st_size
        rows.append({"page": p.href, "title": p.title, "bytes": size, "source": p.source_href,
                     "figures": [vars(f) for f in p.figures], "needs_notebook": p.controls_needing_notebook,
                     "seconds": timings.get(p.stem, {})})
    index = (Path(out) / "index.html").stat().st_size
    shared = sum(assets.values())
    return {"budget_bytes_per_page": PAGE_BUDGET_BYTES, "pages": rows, "index_bytes": index,
            "assets": assets, "assets_bytes": shared,
            "total_bytes": shared + index + sum(r["bytes"] for r in rows)}


def over_budget(report: dict) -> list[str]:
    """Pages heavier than the budget (empty when every page fits)."""
    return [f"{r['page']}: {r['bytes'] / 1e6:.2f} MB > {report['budget_bytes_per_page'] / 1e6:.0f} MB"
            for r in report["pages"] if r["bytes"] > report["budget_bytes_per_page"]]


def table(report: dict) -> list[str]:
    """The report as text lines (one per page, then the totals)."""
    lines = [f"{'page':38} {'MB':>6}  figures  live sliders (frames)", "-" * 100]
    for r in report["pages"]:
        live = [f"{f['controller']}.{f['slider']} ({f['frames']})" for f in r["figures"] if f["frames"]]
        lines.append(f"{r['page']:38} {r['bytes'] / 1e6:6.2f}  {len(r['figures']):>7}  "
                     + (", ".join(live) or "-"))
    lines.append(f"{'index.html':38} {report['index_bytes'] / 1e6:6.2f}")
    lines.append(f"{'assets/ (shared by every page, once)':38} {report['assets_bytes'] / 1e6:6.2f}  "
                 + ", ".join(f"{k.split('/')[-1]} {v / 1e6:.2f}" for k, v in report["assets"].items()
                             if v > 50_000))
    lines.append(f"{'total':38} {report['total_bytes'] / 1e6:6.2f}  (budget per page "
                 f"{report['budget_bytes_per_page'] / 1e6:.0f} MB)")
    return lines


def write(report: dict, out: Path) -> Path:
    path = Path(out) / "edition-report.json"
    path.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    return path

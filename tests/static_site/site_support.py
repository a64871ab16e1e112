"""Where the static-edition test finds the edition and writes its report (shared by conftest.py and the test)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: The edition under test (``make site`` writes it; override with SYMSGD_SITE_DIR).
SITE_DIR = Path(os.environ.get("SYMSGD_SITE_DIR", REPO / "site"))
#: Page weights and screenshots (git-ignored).
ARTIFACTS = REPO / "test-artifacts" / "static-site"
#: One JSON record per page tested in this run (written by the page test, gathered by conftest.py).
PAGE_RECORDS = ARTIFACTS / "pages"

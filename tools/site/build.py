"""``make site``: the static edition of every notebook (see tools/site/edition/__init__.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from edition.build import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

"""``make handout``: a printable PDF of every notebook of the static edition (see tools/site/edition/handout.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from edition.handout import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

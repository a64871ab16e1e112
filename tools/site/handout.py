"""``make handout`` (``python -m tools.site.handout`` from the repository root): a printable PDF of every notebook of
the static edition (see tools/site/edition/handout.py)."""

import sys

from .edition.handout import main

if __name__ == "__main__":
    sys.exit(main())

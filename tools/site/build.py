"""``make site`` (``python -m tools.site.build`` from the repository root): the static edition of every notebook (see
tools/site/edition/__init__.py)."""

import sys

from .edition.build import main

if __name__ == "__main__":
    sys.exit(main())

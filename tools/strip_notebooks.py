"""Strip notebooks before committing: no outputs, no execution counts, no saved widget state,
the ``python3`` kernelspec (so JupyterLab opens them without a kernel-picker dialog), and of ``language_info``
only the language's name.

Usage, from the repository root: ``python -m tools.strip_notebooks notebooks/*.ipynb`` (``make strip`` does exactly
this).
``--check`` reports notebooks that would change and exits 1 instead of writing.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

# The one stripping function, shared with the server's save hook (symsgd_jupyter/saving.py): a notebook of this
# repository that a reader runs and saves is stripped the same way. (Run from the repository root, it imports the
# repository's own symsgd_jupyter, so the command also works where the package is not installed.)
from symsgd_jupyter.saving import KERNELSPEC, dumps, strip  # noqa: F401 - KERNELSPEC, strip: this tool's API


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", nargs="+", type=pathlib.Path)
    parser.add_argument("--check", action="store_true", help="only report; exit 1 if any would change")
    args = parser.parse_args(argv)
    changed = []
    for path in args.paths:
        text = path.read_text(encoding="utf-8")
        new = dumps(strip(json.loads(text)))
        if new != text:
            changed.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in changed:
        print(("would strip " if args.check else "stripped ") + str(path))
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m symsgd_jupyter --enable``: enable the server extension in this environment (see the package docs)."""

from __future__ import annotations

import argparse
import sys

from . import config_file, enable, lab_overrides_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m symsgd_jupyter",
                                     description="Enable the symsgd Jupyter server extension (serves plotly's widget "
                                                 "code once per page) for every Jupyter server of this environment.")
    parser.add_argument("--enable", action="store_true",
                        help=f"write {config_file()} and JupyterLab's settings overrides {lab_overrides_file()} "
                             "(no 'Jupyter news' pop-up)")
    args = parser.parse_args(argv)
    if not args.enable:
        parser.print_help()
        return 2
    print(f"symsgd_jupyter: enabled in {enable()}; JupyterLab news pop-up off in {lab_overrides_file()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

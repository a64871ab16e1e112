"""Which page a kernel serves (JupyterLab or classroom mode): moved to :mod:`symsgd_jupyter.mode`, re-exported here
for existing imports (``tools/site``)."""

from symsgd_jupyter.mode import MODE_ENV, SOLUTIONS_ENV, classroom_mode, solutions_open

__all__ = ["MODE_ENV", "SOLUTIONS_ENV", "classroom_mode", "solutions_open"]

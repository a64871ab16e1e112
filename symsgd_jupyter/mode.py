"""Which page a notebook's kernel serves: JupyterLab (code and full text) or classroom mode (Voilà, a projector).

* :func:`classroom_mode` — True in a kernel started by classroom mode (``tools/classroom.py`` sets
  :data:`MODE_ENV` to ``"classroom"`` for its kernels) or by any Voilà server (Voilà gives its kernels
  ``VOILA_*`` variables and ``SERVER_SOFTWARE=voila/…``); ``SYMSGD_MODE=lab`` forces JupyterLab's behaviour.
* :func:`solutions_open` — True in the instructor variant (``make instructor``,
  ``tools/classroom.py --solutions``, ``python -m tools.site.build --solutions``): every worked solution is shown open.

Both read the environment on every call (cheap), so a test can set the variables with ``monkeypatch``.
"""

from __future__ import annotations

import os

__all__ = ["MODE_ENV", "SOLUTIONS_ENV", "classroom_mode", "solutions_open"]

#: ``"classroom"`` or ``"lab"``; set by the classroom launcher for its kernels (see ``tools/classroom.py``).
MODE_ENV = "SYMSGD_MODE"
#: ``"open"``: the instructor variant, every worked solution shown open.
SOLUTIONS_ENV = "SYMSGD_SOLUTIONS"

#: Variables Voilà puts into the environment of every kernel it starts (voila/handler.py, voila_kernel_manager.py).
_VOILA_VARIABLES = ("VOILA_BASE_URL", "VOILA_SERVER_URL", "VOILA_REQUEST_URL", "VOILA_APP_PORT")


def classroom_mode(environ: dict | None = None) -> bool:
    """True when this kernel serves a classroom (Voilà) page; see the module docstring for the rule."""
    env = os.environ if environ is None else environ
    explicit = env.get(MODE_ENV, "").strip().lower()
    if explicit in ("classroom", "voila"):
        return True
    if explicit in ("lab", "jupyterlab"):
        return False
    return (any(v in env for v in _VOILA_VARIABLES)
            or env.get("SERVER_SOFTWARE", "").lower().startswith("voila"))


def solutions_open(environ: dict | None = None) -> bool:
    """True in the instructor variant (:data:`SOLUTIONS_ENV` is ``open``, ``1``, ``true`` or ``yes``)."""
    env = os.environ if environ is None else environ
    return env.get(SOLUTIONS_ENV, "").strip().lower() in ("open", "1", "true", "yes")

"""The project's commands that are not part of the installed package, run from the repository root:

* ``python tools/classroom.py`` (``make classroom``): the notebooks as Voilà dashboards, offline;
* ``python -m tools.site.build`` (``make site``) and ``python -m tools.site.handout`` (``make handout``): the static
  edition and its printed handout (:mod:`tools.site.edition`);
* ``python -m tools.strip_notebooks`` (``make strip``): notebooks without outputs or widget state;
* ``python tools/bench_cold_start.py`` (``make bench-cold``): first Run All with an empty compiled-kernel cache.

Tests import them as ``tools.<module>`` (pytest puts the repository root on the path: ``pythonpath`` in
pyproject.toml); nothing here changes ``sys.path``.
"""

"""The static edition (``python -m tools.site.build``) and its printed handout (``python -m tools.site.handout``);
the code is :mod:`tools.site.edition`."""

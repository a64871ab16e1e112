"""The static edition of the notebooks: every notebook executed, as HTML pages that need no kernel.

``make site`` (``python -m tools.site.build``) runs each notebook with the package, then drives every displayed
controller (:class:`symsgd_core.ui.base.Controller`) over a grid of values of its main slider, reading its
figures after each setting. Those figures become plotly frames under a plotly slider, so the slider still moves
in a page with no kernel. Modules:

* :mod:`.config` — which slider each controller offers in the edition, how many frames, the page budget;
* :mod:`.grid` — the slider values to precompute (values the slider itself can take);
* :mod:`.capture` — runs *inside the notebook's kernel*: finds the displayed controllers, moves their slider as
  a reader would (and presses Run), records every figure and status line;
* :mod:`.frames` — turns those records into one plotly figure with frames and a slider;
* :mod:`.execute` — executes a notebook in a kernel (nbclient) and runs the capture there;
* :mod:`.render` — the HTML pages (nbconvert with the template in ``templates/``) and the index;
* :mod:`.assets` — plotly.js, MathJax and the stylesheet, copied once into ``site/assets/``;
* :mod:`.report` — page weights and frames per slider;
* :mod:`.build` — the command line behind ``make site``;
* :mod:`.handout` — ``make handout``: the pages printed to PDF by Chromium (figures as photographs).

Only :mod:`.capture` and :mod:`.grid` are imported by the kernel; they need nothing beyond the package's own
dependencies.
"""

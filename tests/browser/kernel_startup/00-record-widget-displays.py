"""IPython start-up file of the lessons' JupyterLab test server (tests/browser/lesson_kernels.py): every widget a
cell displays is recorded with the source of that cell, so that the static-edition test can find, in the kernel
JupyterLab ran, the controller a page shows (``_symsgd_widget_displays``: a list of ``(cell source, model id)``).

It wraps ``ipywidgets.Widget._repr_mimebundle_``, through which both ways of showing a widget go (``display(w)``
and a widget as a cell's last expression); the mime bundle itself is returned unchanged."""


def _symsgd_record_widget_displays():
    import ipywidgets
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return
    displays = shell.user_ns.setdefault("_symsgd_widget_displays", [])
    shown = ipywidgets.Widget._repr_mimebundle_

    def _repr_mimebundle_(self, **kwargs):
        bundle = shown(self, **kwargs)
        raw = shell.history_manager.input_hist_raw
        displays.append((raw[-1] if raw else "", self.model_id))
        return bundle

    ipywidgets.Widget._repr_mimebundle_ = _repr_mimebundle_


_symsgd_record_widget_displays()
del _symsgd_record_widget_displays

"""What ``import symsgd_core`` adjusts in its process before anything heavy loads: a kernel start without a 4–6 s
detour through an IRI grammar (the reader's import cell), and compiled threads that wait without spinning.

plotly imports nbformat at import time (to check its version for notebook rendering), nbformat imports jsonschema,
and jsonschema's format checker imports ``rfc3987_syntax`` when it is installed. It is, through jupyter-events'
``jsonschema[format-nongpl]`` (the Jupyter server's dependency, not the kernel's), and it builds an Earley parser
for RFC 3987 at import: 4–6 s of every kernel's first ``import symsgd_core``, and of every page a classroom opens.

:func:`import_jsonschema_without_iri_grammar` imports jsonschema's format checker once with ``rfc3987_syntax``
hidden, as if it were not installed: jsonschema then registers no "iri"/"iri-reference" format checks, which no
notebook uses (nbformat's schemas have no such format). Nothing else changes: ``import rfc3987_syntax`` still works
afterwards, and a process that imported jsonschema before symsgd_core (a Jupyter server) is left as it is.
"""

from __future__ import annotations

import os
import sys

#: The module whose import builds the grammar.
IRI_GRAMMAR_MODULE = "rfc3987_syntax"


def import_jsonschema_without_iri_grammar() -> bool:
    """Import ``jsonschema._format`` with :data:`IRI_GRAMMAR_MODULE` hidden; True if it was imported here (False:
    already imported, or jsonschema is not installed)."""
    if "jsonschema._format" in sys.modules or IRI_GRAMMAR_MODULE in sys.modules:
        return False
    sys.modules[IRI_GRAMMAR_MODULE] = None  # `import rfc3987_syntax` raises ImportError, which jsonschema expects
    try:
        import jsonschema._format  # noqa: F401
    except ImportError:
        return False
    finally:
        del sys.modules[IRI_GRAMMAR_MODULE]
    return True


#: How the OpenMP threads of numba's parallel kernels wait between parallel regions (numba's ``omp`` threading layer,
#: libgomp). libgomp's default spins a core for a while after each region; on a two-core laptop that core is the
#: browser's, or the other kernel's, or the other test worker's. Measured on this project's 2-core machine (two
#: processes, each 2 × (``trap`` 32 runs × 60 000 steps + an SDE ensemble), two pairs of runs each): 2.98–3.36 s
#: spinning, 2.39–2.71 s passive; one process alone 1.86–2.21 s spinning, 1.99–2.46 s passive (four runs each,
#: interleaved: medians 2.07 and 2.13 s, within the machine's run-to-run spread).
OMP_WAIT_POLICY = "PASSIVE"


def wait_passively_in_parallel_regions() -> bool:
    """Set ``OMP_WAIT_POLICY`` to :data:`OMP_WAIT_POLICY` unless the environment already sets it (a reader's choice
    is kept); True if set here. libgomp reads it when it loads, which numba does at the first parallel call, after
    this import."""
    if "OMP_WAIT_POLICY" in os.environ:
        return False
    os.environ["OMP_WAIT_POLICY"] = OMP_WAIT_POLICY
    return True

"""A kernel start without a 4–6 s detour through an IRI grammar (the reader's import cell).

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

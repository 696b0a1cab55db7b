"""The columns of a cells CSV, and the formula escape both ways.

Values a spreadsheet would run as formulas (``=cmd()``, ``+1``, ``-x``, ``@f``) are
neutralised on export with a leading apostrophe; :func:`unescape` removes it on import only
where protocoder put it (see :mod:`protocoder.exchange`).
"""

from __future__ import annotations

import re

from ..errors import visible_text

CELL_COLUMNS = ("protocol", "field", "reviewer", "code", "source", "basis", "cites", "status")
"""Columns of ``export --view cells``; import reads them too and ignores ``status`` (derived, not data)."""
REQUIRED_COLUMNS = ("protocol", "field", "reviewer", "code")
EXPORT_COLUMNS = (*CELL_COLUMNS, "quotes", "assisted")
"""Export adds each cell's quotes (in JSON a list of objects, in CSV that list as JSON text) and
``assisted`` (``yes`` when candidate passages were shown before the code was chosen, else empty)."""
EARLIER_EXPORT_COLUMNS = ((*CELL_COLUMNS, "quotes"),)
"""Headers earlier versions' exports have: their formula escapes are protocoder's too."""
IGNORED_COLUMNS = ("status",)
"""Columns import accepts and ignores: read-only information an export may carry."""
IMPORT_COLUMNS = (*CELL_COLUMNS, "quotes", "assisted")
"""What import reads: the cell columns and ``quotes`` (a JSON array of quote records, as export
writes it; each quote that is not already the cell's is checked against its snapshot) and
``assisted`` (``yes``/empty; ``true``/``false``, ``no`` and ``1``/``0`` are read too)."""
ASSISTED_VALUES = {"yes": True, "true": True, "1": True, "": False, "no": False, "false": False, "0": False}
TEXT_COLUMNS = ("source", "basis", "cites")
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_NEUTRALISED = re.compile("'*[=+\\-@\t\r]")
_NEUTRALISED_BY_US = re.compile("'+[=+\\-@\t\r]")


def neutralise(value: str) -> str:
    """Prefix an apostrophe to a value a spreadsheet would execute as a formula.

    Values that start with apostrophes before a formula character get one more, so that
    :func:`unneutralise` can tell them apart: ``unneutralise(neutralise(v)) == v`` always.
    """
    return "'" + value if _NEUTRALISED.match(value) else value


def unneutralise(value: str) -> str:
    """Undo :func:`neutralise`: drop one apostrophe before apostrophes and a formula character."""
    return value[1:] if _NEUTRALISED_BY_US.match(value) else value


def unescape(value: str, stored: str | None, exported: bool) -> str:
    """A CSV value as the cell should hold it: without protocoder's formula escape only when
    protocoder wrote that escape (see the module's docstring)."""
    if not _NEUTRALISED_BY_US.match(value):
        return value
    plain = value[1:]
    if stored is not None:  # export shows control characters as [U+XXXX]: that too is the stored value
        return plain if plain in (stored, visible_text(stored)) else value
    return plain if exported else value

"""Cells out: one row per reviewer cell, as CSV or JSON text (``export``).

Every text value is shown as text: a formula-looking value gets the spreadsheet's apostrophe
(:func:`~.columns.neutralise`) and a control character becomes ``[U+XXXX]``
(:func:`~protocoder.errors.visible_text`), so no spreadsheet runs it and no terminal does.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from ..errors import visible_text
from ..model import Cell
from ..storage.workspace import Review
from .columns import neutralise


def cell_rows(review: Review) -> list[dict[str, Any]]:
    """One row per reviewer cell (drafts have an empty code), in table order, with its status:
    ``complete``, ``incomplete`` (coded without what the rubric requires) or ``draft`` (no code),
    its quotes, and ``assisted`` (``yes`` or empty)."""
    from ..evidence.quotes import quote_record

    rubric = review.require_valid()

    def status(cell: Cell) -> str:
        return "draft" if cell.code is None else "complete" if cell.is_complete(rubric) else "incomplete"

    return [{"protocol": c.protocol, "field": c.field, "reviewer": c.reviewer, "code": c.code or "",
             "source": c.source, "basis": c.basis, "cites": list(c.cites), "status": status(c),
             "quotes": [quote_record(q) for q in c.quotes], "assisted": "yes" if c.assisted else ""}
            for c in review.all_cells()]


def to_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """CSV text with formula-looking cells neutralised and list values joined by ``;``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # With "\n" line ends the writer quotes fields holding "\n" but not a bare "\r", which
    # then splits the row on reading: rows holding one are written fully quoted.
    quoting_all = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(columns)
    for row in rows:
        values = []
        for column in columns:
            value = row.get(column)
            if isinstance(value, list | tuple) and any(isinstance(v, dict) for v in value):
                value = json.dumps(_visible(list(value)), ensure_ascii=False)  # quotes: one JSON array per cell
            elif isinstance(value, list | tuple):
                value = ";".join(str(v) for v in value)
            values.append(neutralise(visible_text("" if value is None else str(value))))
        (quoting_all if any("\r" in value for value in values) else writer).writerow(values)
    return buffer.getvalue()


def to_json(rows: Sequence[dict[str, Any]]) -> str:
    """JSON text of rows (UTF-8, no NaN), control characters in values shown as ``[U+XXXX]``."""
    return json.dumps(_visible(list(rows)), ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def _visible(value: Any) -> Any:
    """``value`` with :func:`visible_text` applied to every string in it (keys and values)."""
    if isinstance(value, str):
        return visible_text(value)
    if isinstance(value, dict):
        return {_visible(key): _visible(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_visible(item) for item in value]
    return value

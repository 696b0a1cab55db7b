"""What the summary, matrix and ledger templates print: rows, counts, marks, legends and column widths.

Everything is computed once here, in Python, so that the templates only lay it out; widths
come from :mod:`.layout` and cell colours from :mod:`.palette`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..lifecycle.view import View
from ..model import MAX_SHORT_LABEL
from .agreement_table import agreement_context, assisted_lines, methods_lines
from .escape import inline_plain
from .layout import (
    COLUMN_GAP_EM,
    MIN_LABEL_EM,
    ROTATED_EM,
    TEXT_EM,
    choose_matrix_layout,
    columns_em,
    id_em,
    longest_word_em,
    text_em,
)
from .palette import code_colors, xcolor_name

STATUS_MARKS = {"unresolved": "?", "incomplete": "!", "not coded": "–"}
"""What a LaTeX or HTML matrix cell without a code prints (Markdown prints the status itself)."""
STATUS_LEGEND = {
    "unresolved": "reviewers disagree and no adjudication has settled the cell",
    "incomplete": "a reviewer coded the cell without what the rubric requires",
    "not coded": "no reviewer has coded the cell yet",
}
CELL_MARKS = {
    "corrected": ("c", "corrected after the release (see the corrections table)"),
    "adjudicated": ("a", "adjudicated: reviewers disagreed and a recorded decision settled the code"),
    "single-coded": ("s", "coded by one reviewer only"),
}
"""Superscript marks of the ledger's Code column, and what the legend says they mean."""
BASIS_CHUNK = 360
"""A basis longer than this (characters) is set over several table rows, split at sentence
ends, so that a page can break inside a long cell instead of being left nearly empty."""


def display_code(cell: dict[str, Any]) -> str:
    """What a table shows for a final cell: its code, ``unresolved`` or ``not coded``."""
    return cell["code"] if cell["code"] is not None else cell["status"]


def _field_head(fld: dict[str, Any]) -> str:
    """What a column header prints for a field: its short label, else its label when short enough, else nothing
    (the id, printed beside it, then stands alone and the legend gives the label)."""
    if fld.get("short"):
        return fld["short"]
    return fld["label"] if len(fld["label"]) <= MAX_SHORT_LABEL else ""


def _cell_mark(cell: dict[str, Any], n_reviewers: int) -> str:
    if cell.get("corrected"):
        return "corrected"
    if cell["status"] == "adjudicated":
        return "adjudicated"
    if cell["status"] == "single-coded" and n_reviewers > 1:
        return "single-coded"
    return ""


def decision_note(adjudication: dict[str, Any]) -> str:
    """What the ledger says of an adjudicated cell: who decided, why, and whose evidence the decision keeps."""
    reason = " ".join(str(adjudication.get("reason", "")).split())
    note = f"Adjudicated by {adjudication.get('by', '')}: {reason}"
    note += "" if note.endswith((".", "!", "?")) else "."
    evidence = adjudication.get("evidence", "")
    if evidence == "the adjudicator's own":
        note += " The basis is the adjudicator's own."
    elif evidence:
        note += f" The evidence is {evidence}."
    return note


def _basis_chunks(text: str, limit: int = BASIS_CHUNK) -> list[str]:
    """Split basis text at sentence ends into pieces of about ``limit`` characters, never inside markup."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit * 1.25:
        ends = [m.end() for m in _SENTENCE_END.finditer(rest) if limit * 0.3 <= m.end() <= len(rest) - limit * 0.25]
        # The last sentence end within the limit, else the first one after it.
        ends = sorted(ends, key=lambda end: (end > limit, abs(limit - end)))
        for end in ends:
            head, tail = rest[:end].strip(), rest[end:].strip()
            # Only where the markup is balanced: the two halves show the same text as the whole.
            if _plain_words(head) + _plain_words(tail) == _plain_words(rest):
                pieces.append(head)
                rest = tail
                break
        else:
            break
    pieces.append(rest)
    return pieces


def _plain_words(text: str) -> list[str]:
    return inline_plain(text).split()


_SENTENCE_END = re.compile(r"(?<=[.;:!?])[)\]\"'’”]*\s+(?=\S)")


def table_context(view: View, *, matrix_layout: str = "auto", quotes: bool = False) -> dict[str, Any]:
    """Everything the table templates print, computed once (``quotes``: each ledger row's quoted passages)."""
    fields = [{**fld, "head": _field_head(fld), "short": fld.get("short") or ""} for fld in view.rubric["fields"]]
    for fld in fields:
        fld["abbreviated"] = fld["head"] != fld["label"]
    colors = code_colors(view.rubric["codes"], view.rubric.get("order"))
    codes = [{**code, "short": code.get("short") or "", "role": code.get("role") or "",
              "fill": colors[code["id"]]["fill"], "ink": colors[code["id"]]["text"],
              "color_source": colors[code["id"]]["source"], "xcolor": xcolor_name(index),
              "fill_hex": colors[code["id"]]["fill"].lstrip("#"), "ink_white": colors[code["id"]]["text"] != "#000000"}
             for index, code in enumerate(view.rubric["codes"])]
    code_by_id = {code["id"]: code for code in codes}
    by_key = {(c["protocol"], c["field"]): c for c in view.cells}
    numbers = {ref["key"]: ref["number"] for ref in view.references}
    n_protocols = len(view.protocols)
    n_reviewers = len(view.reviewers)
    empty = {"status": "not coded", "code": None, "source": "", "basis": "", "cites": [], "codes": {}}

    summary = []
    for fld in fields:
        cells = [by_key[(p["id"], fld["id"])] for p in view.protocols if (p["id"], fld["id"]) in by_key]
        counts = []
        for code in codes:
            allowed = code["id"] in fld["codes"]
            counts.append({"code": code["id"], "allowed": allowed,
                           "count": sum(1 for c in cells if c["code"] == code["id"])})
        unresolved = sum(1 for c in cells if c["status"] == "unresolved")
        incomplete = sum(1 for c in cells if c["status"] == "incomplete")
        coded = sum(item["count"] for item in counts)
        summary.append({
            "id": fld["id"], "label": fld["label"], "counts": counts, "unresolved": unresolved,
            "incomplete": incomplete,
            # Every protocol stays in the denominator: what is neither coded, unresolved nor
            # incomplete is counted as not coded, never dropped and never read as NR.
            "not_coded": n_protocols - coded - unresolved - incomplete, "total": n_protocols,
        })

    def matrix_cell(protocol: dict[str, Any], fld: dict[str, Any]) -> dict[str, Any]:
        cell = by_key.get((protocol["id"], fld["id"]), empty)
        code = code_by_id.get(cell["code"]) if cell["code"] is not None else None
        flag = _cell_mark(cell, n_reviewers)
        # Adjudicated, corrected and single-coded cells carry the ledger's superscript mark.
        return {"text": display_code(cell), "status": cell["status"], "code": code,
                "mark": cell["code"] if cell["code"] is not None else STATUS_MARKS.get(cell["status"], cell["status"]),
                "flag": CELL_MARKS[flag][0] if flag else "", "flag_name": flag}

    matrix = [{"name": p["name"], "cells": [matrix_cell(p, fld) for fld in fields]} for p in view.protocols]
    ledger = []
    marks_used: set[str] = set()
    for protocol in view.protocols:
        for index, fld in enumerate(fields):
            cell = by_key.get((protocol["id"], fld["id"]), empty)
            disagreement = ""
            if cell["status"] == "unresolved":
                disagreement = "Reviewers disagree: " + "; ".join(
                    f"{reviewer} {code}" for reviewer, code in sorted(cell["codes"].items())) + "."
            elif cell["status"] == "incomplete":
                disagreement = "Incomplete: " + "; ".join(
                    f"{reviewer}'s {code} lacks {' and '.join(cell.get('missing', {}).get(reviewer, ())) or 'evidence'}"
                    for reviewer, code in sorted(cell["codes"].items())
                    if reviewer in cell.get("missing", {})) + "."
            elif cell["status"] == "adjudicated" and cell.get("adjudication") and not cell.get("corrected"):
                disagreement = decision_note(cell["adjudication"])
            if cell.get("comments"):
                # Only with render --comments: the discussion of the cell, after what decided it.
                said = "Discussion: " + "; ".join(f"{m['by']}: {' '.join(m['text'].split())}" for m in cell["comments"])
                disagreement += (" " if disagreement else "") + said + ("" if said.endswith((".", "!", "?")) else ".")
            mark = _cell_mark(cell, n_reviewers)
            if mark:
                marks_used.add(mark)
            ledger.append({
                "protocol": protocol["name"], "first": index == 0, "field": fld["label"], "field_head": fld["head"],
                "field_id": fld["id"], "code": display_code(cell), "status": cell["status"], "source": cell["source"],
                "basis": cell["basis"], "basis_chunks": _basis_chunks(cell["basis"]), "cites": cell["cites"],
                "note": disagreement, "corrected": bool(cell.get("corrected")),
                "mark": CELL_MARKS[mark][0] if mark else "",
                "quotes": list(cell.get("quotes", ())) if quotes else [],
                # What the reviewer behind the cell read of the sources (an NR rests on it): with the quotes.
                "reading": cell.get("reading", "") if quotes else "",
            })

    statuses = sorted({c["status"] for c in view.cells} | ({"not coded"} if len(view.cells) < n_protocols * len(fields)
                                                            else set()))
    cited = sorted({key for c in view.cells for key in c["cites"] if key in numbers}, key=lambda k: numbers[k])
    adjudicated = sum(1 for c in view.cells if c["status"] == "adjudicated" and not c.get("corrected"))
    return {
        "view": view, "title": view.title, "fields": fields, "codes": codes, "summary": summary,
        "summary_layout": summary_layout(fields, codes, n_protocols, incomplete="incomplete" in statuses),
        "matrix": matrix, "matrix_view": matrix_context(view, fields, matrix, codes, matrix_layout),
        "ledger": ledger, "ledger_layout": ledger_layout(fields, codes, {row["status"] for row in ledger}),
        "numbers": numbers, "references": view.references,
        "cited_references": [ref for ref in view.references if ref["key"] in set(cited)],
        "ledger_marks": [{"mark": CELL_MARKS[name][0], "text": CELL_MARKS[name][1]}
                         for name in CELL_MARKS if name in marks_used],
        "n_protocols": n_protocols, "n_fields": len(fields), "reviewers": view.reviewers,
        "n_reviewers": n_reviewers, "rubric": view.rubric, "cutoff": view.cutoff,
        "statuses": statuses, "status_legend": [{"status": s, "mark": STATUS_MARKS.get(s, s), "text": STATUS_LEGEND[s]}
                                                for s in STATUS_LEGEND if s in statuses],
        "corrections": view.corrections, "release": view.release,
        "corrections_layout": corrections_layout(view.corrections),
        "n_adjudicated": adjudicated, "n_corrected": sum(1 for c in view.cells if c.get("corrected")),
        # The incomplete column appears only when some cell is incomplete, so that tables of
        # reviews without half-done cells (and their golden files) stay as they were.
        "show_incomplete": "incomplete" in statuses,
        "quotes": quotes and any(row["quotes"] or row["reading"] for row in ledger),
        "agreement": agreement_context(view.agreement) if view.agreement else None,
        # Without agreement (one reviewer) the paragraph still says how many cells were assisted.
        "methods": methods_lines(view.agreement) if view.agreement else assisted_lines(view.assisted),
        "field_list_limit": METHODS_FIELD_LIST,
    }


METHODS_FIELD_LIST = 8
"""The methods paragraph names the fields up to this many; beyond, it gives their number."""


def matrix_context(view: View, fields: list[dict[str, Any]], matrix: list[dict[str, Any]],
                   codes: list[dict[str, Any]], requested: str = "auto") -> dict[str, Any]:
    """The matrix as one or more tables, laid out by :func:`layout.choose_matrix_layout`."""
    marks = [code["id"] for code in codes] + list(STATUS_MARKS.values())
    cell_em = max((text_em(mark) for mark in marks), default=1.0)
    layout = choose_matrix_layout(protocols=[p["name"] for p in view.protocols],
                                  headers=[(fld["head"], fld["id"]) for fld in fields], cell_em=cell_em,
                                  requested=requested)
    tables = []
    if layout.name == "transposed":
        columns = [{"head": p["name"], "id": "", "em": f"{width:.2f}"}
                   for p, width in zip(view.protocols, layout.column_em, strict=True)]
        rows = [{"label": fld["short"] or fld["label"], "id": fld["id"],
                 "cells": [row["cells"][index] for row in matrix]} for index, fld in enumerate(fields)]
        tables.append({"corner": "Field", "columns": columns, "rows": rows,
                       "fixed_em": f"{sum(layout.column_em) + COLUMN_GAP_EM * len(layout.column_em):.2f}"})
    else:
        for group in layout.groups:
            columns = [{"head": fields[i]["head"], "id": fields[i]["id"], "em": f"{layout.column_em[i]:.2f}"}
                       for i in group]
            rows = [{"label": row["name"], "id": "", "cells": [row["cells"][i] for i in group]} for row in matrix]
            tables.append({"corner": "Protocol", "columns": columns, "rows": rows, "fixed_em": ""})
    shown = {fld["id"] for fld in fields} if layout.name != "transposed" else set()
    return {"layout": layout.name, "rotate": layout.rotate, "row_em": f"{layout.row_em:.2f}", "tables": tables,
            "transposed": layout.name == "transposed",
            # Full labels of the fields whose header is abbreviated (or the id alone).
            "legend": [fld for fld in fields if fld["id"] in shown and fld["abbreviated"]],
            "code_legend": [code for code in codes],
            "status_legend": [{"status": status, "mark": mark, "text": STATUS_LEGEND[status]}
                              for status, mark in STATUS_MARKS.items()
                              if any(cell["status"] == status for row in matrix for cell in row["cells"])],
            "flag_legend": [{"mark": CELL_MARKS[name][0], "text": CELL_MARKS[name][1]} for name in CELL_MARKS
                            if any(cell["flag_name"] == name for row in matrix for cell in row["cells"])]}


def corrections_layout(corrections: list[dict[str, Any]]) -> dict[str, str]:
    """Width (em) of the corrections table's Protocol column: its longest word, so that a name is never
    hyphenated nor runs into the next column (the Reason column gives up the difference)."""
    protocol_em = max([text_em("Protocol"), *(longest_word_em(str(c.get("protocol", ""))) for c in corrections)])
    return {"protocol_em": f"{min(protocol_em + 0.3, 14.0):.2f}"}


def ledger_layout(fields: list[dict[str, Any]], codes: list[dict[str, Any]], statuses: Iterable[str]) -> dict[str, str]:
    """Widths (em) of the ledger's Field and Code columns, from what they print; Source and Basis share the rest."""
    field_em = max([text_em("Field"), *(max(longest_word_em(f["head"]), id_em(f["id"])) for f in fields)])
    code_em = max([text_em("Code"), *(text_em(c["id"]) + 0.6 for c in codes),
                   *(longest_word_em(status) for status in statuses if status in STATUS_MARKS)])
    field_em, code_em = min(field_em, 9.0), min(code_em, 6.0)
    return {"field_em": f"{field_em:.2f}", "code_em": f"{code_em:.2f}",
            "fixed_em": f"{field_em + code_em + 3 * COLUMN_GAP_EM:.2f}"}


def summary_layout(fields: list[dict[str, Any]], codes: list[dict[str, Any]], n_protocols: int, *,
                   incomplete: bool = False) -> dict[str, Any]:
    """Column widths (em) of the summary: count columns as narrow as their headers allow, the label column the rest."""
    digits = text_em(str(max(n_protocols, 10)))
    heads = [code["id"] for code in codes] + ["Unresolved", *(["Incomplete"] if incomplete else []), "Not coded",
                                              "Protocols"]
    # A little over the estimate: fontspec's Latin Modern is a hair wider than the Type 1 metrics.
    upright = [max(digits, longest_word_em(head)) + 0.2 for head in heads]
    rotate = columns_em([MIN_LABEL_EM, *upright]) > TEXT_EM
    widths = [max(digits, ROTATED_EM) for _ in heads] if rotate else upright
    return {"rotate": rotate, "count_em": [f"{w:.2f}" for w in widths],
            "fixed_em": f"{sum(widths) + COLUMN_GAP_EM * len(widths):.2f}"}

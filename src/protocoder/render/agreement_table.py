"""What the agreement templates print: coefficient columns, field and pooled rows, note letters,
the charts of report.html and the methods paragraph's sentences, from a stored agreement report."""

from __future__ import annotations

import re
from typing import Any

from ..model import MAX_SHORT_LABEL
from .environments import format_number
from .layout import COLUMN_GAP_EM, SMALL, TEXT_EM, id_em, longest_word_em, pack, text_em
from .palette import xcolor_name

COEFFICIENT_LABELS = {
    "percent_agreement": "Percent agreement",
    "cohen_kappa": "Cohen's κ",
    "cohen_kappa_linear": "Cohen's κ, linear weights",
    "cohen_kappa_quadratic": "Cohen's κ, quadratic weights",
    "fleiss_kappa": "Fleiss' κ",
    "krippendorff_alpha": "Krippendorff's α",
    "gwet_ac1": "Gwet's AC1",
    "brennan_prediger": "Brennan–Prediger",
}
EVIDENCE_LABELS = {
    "same_source": "Same source location",
    "same_cites": "Same citation keys",
    "same_source_and_cites": "Same source and citations",
    "quote_overlap": "Quoted passages overlap",
}

QUOTED_SOURCE_LABELS = {
    "same_source": "Same pinned source quoted (by source id)",
    "same_source_and_cites": "Same pinned source quoted and same citation keys",
}
"""A workspace's report compares the pinned sources each cell quotes, not free-text locations."""
EVIDENCE_METHODS = ("Evidence agreement was computed over the cells on which two reviewers chose the same code: "
                    "the share quoting the same pinned sources (compared by source id, not by the free-text "
                    "location){overlap}, and the share citing the same reference keys.")


COEFFICIENT_SHORT = {
    "percent_agreement": "Agreement", "cohen_kappa": "Cohen κ", "cohen_kappa_linear": "κ linear",
    "cohen_kappa_quadratic": "κ quadratic", "fleiss_kappa": "Fleiss κ", "krippendorff_alpha": "Kripp. α",
    "gwet_ac1": "AC1", "brennan_prediger": "B–P", "same_source": "Same source", "same_cites": "Same keys",
    "same_source_and_cites": "Both", "quote_overlap": "Quotes overlap",
}
"""Column headers of the agreement table; the legend below it gives the full names."""
_DROPPED = re.compile(r"^(\d+) of (\d+) bootstrap resamples dropped\b")


def _letter(index: int) -> str:
    return xcolor_name(index).removeprefix("protocoder")


DROPPED_SHARE = 0.05
"""Resamples left out of an interval (the coefficient undefined in them) are noted only from this
share of the bootstrap on: below it the interval is hardly affected, and the legend says so once."""


def interval_text(low: float, high: float) -> str:
    """An interval as every table prints it: ``[−0.13, 0.80]`` (true minus signs)."""
    return f"[{low:.2f}, {high:.2f}]".replace("-", "−")


def _estimate(coefficient: dict[str, Any] | None, notes: dict[str, list[int]], bootstrap: int = 0
              ) -> dict[str, Any]:
    """One cell of the agreement table: value, interval, resamples dropped, and letters of its notes.

    ``notes`` gathers every remark once, keyed by its text without a leading count
    ("3 units with ..." and "5 units with ..." are one note), with the counts seen. Resamples
    left out of the interval become such a note only when they are at least
    :data:`DROPPED_SHARE` of the ``bootstrap`` (never a bracketed number beside the value).
    """
    if coefficient is None:
        return {"value": "", "defined": False, "absent": True, "ci": "", "ci_dash": "", "dropped": 0, "marks": ""}
    letters = []
    dropped = 0
    for part in filter(None, (coefficient.get("note") or "").split("; ")):
        match = _DROPPED.match(part)
        if match:
            dropped = int(match.group(1))
            if dropped < DROPPED_SHARE * (bootstrap or int(match.group(2))):
                continue
            part = (f"{dropped} of {match.group(2)} bootstrap resamples are left out of the interval "
                    "(the coefficient is undefined in them)")
        counted = _LEADING_COUNT.match(part)
        key = f"\0{counted.group(2)}" if counted else part
        notes.setdefault(key, [])
        if counted:
            notes[key].append(int(counted.group(1)))
        letters.append(_letter(list(notes).index(key)))
    value = coefficient.get("value")
    low, high = coefficient.get("ci_low"), coefficient.get("ci_high")
    has_ci = value is not None and low is not None and high is not None
    return {"value": format_number(value), "defined": value is not None, "absent": False,
            # Our own text, safe in every target; brackets need no escaping here.
            "ci": interval_text(low, high) if has_ci else "",
            "ci_dash": interval_text(low, high) if has_ci else "",
            "low": low if has_ci else None, "high": high if has_ci else None, "point": value,
            "dropped": dropped, "marks": ",".join(sorted(set(letters), key=letters.index))}


_LEADING_COUNT = re.compile(r"^(\d+) (\D.*)$")


def _flag_few(coefficient: dict[str, Any] | None, least: int) -> dict[str, Any] | None:
    """A coefficient whose interval rests on fewer than ``least`` cells (0: enough), with a note saying
    so (the terminal summary withholds such an interval; a table keeps it, flagged)."""
    if not least or coefficient is None or coefficient.get("ci_low") is None:
        return coefficient
    few = (f"the interval rests on fewer than {least} cells coded by two or more reviewers: a bootstrap over so "
           "few draws too few distinct resamples for a 95% interval to mean much")
    return {**coefficient, "note": "; ".join(filter(None, [coefficient.get("note") or "", few]))}


def _note_texts(notes: dict[str, list[int]]) -> list[str]:
    """The gathered notes as sentences; a note seen with several counts gives their range."""
    texts = []
    for key, counts in notes.items():
        if not key.startswith("\0"):
            texts.append(key)
            continue
        low, high = min(counts), max(counts)
        texts.append(f"{low if low == high else f'{low} to {high}'} {key[1:]}"
                     + ("" if low == high else " (the number differs between cells)"))
    return texts


def _group_label(group: str, labels: dict[str, str]) -> tuple[str, str]:
    """(label, id) of an agreement row: a long label gives way to the id (the rubric table has it in full)."""
    if group == "all":
        return "All fields", ""
    label = labels.get(group, group)
    if label == group:
        return "", group
    return (label if len(label) <= MAX_SHORT_LABEL else ""), group


def agreement_context(agreement: dict[str, Any]) -> dict[str, Any]:
    """Rows (fields, then pooled) and columns (coefficients) for the agreement templates.

    ``agreement`` is a stored report with its field labels (``{"report", "labels"}``). Notes
    are gathered into one legend: every remark gets a letter, once however many cells share it
    (resamples left out of an interval only where they are many).
    """
    report, labels = agreement["report"], agreement.get("labels", {})
    groups = report["groups"]
    notes: dict[str, list[int]] = {}
    names = [name for name in (*COEFFICIENT_LABELS, *EVIDENCE_LABELS)
             if any(name in g["coefficients"] or name in g.get("evidence", {}) for g in groups)]
    full = {**COEFFICIENT_LABELS, **EVIDENCE_LABELS}
    if report["settings"].get("evidence_source") == "quoted source ids":
        full |= QUOTED_SOURCE_LABELS
    columns = [{"name": name, "label": full[name], "short": COEFFICIENT_SHORT[name],
                "evidence": name in EVIDENCE_LABELS} for name in names]
    rows = []
    for g in groups:
        label, gid = _group_label(g["group"], labels)
        bootstrap = report["settings"].get("bootstrap") or 0
        # Stored with the report (older reports have none, and their tables stay as they were).
        least = report["settings"].get("min_interval_units") or 0
        few = bool(bootstrap) and g["n_units_paired"] < least
        cells = [_estimate(_flag_few(g["coefficients"].get(name) if name in COEFFICIENT_LABELS
                                     else g.get("evidence", {}).get(name), least if few else 0), notes, bootstrap)
                 for name in names]
        rows.append({"label": label, "id": gid, "pooled": g["group"] == "all", "units": g["n_units"],
                     "paired": g["n_units_paired"], "raters": g["n_raters"],
                     "distribution": " · ".join(f"{code} {n}" for code, n in g["code_counts"].items()) or "–",
                     "counts": dict(g["code_counts"]), "cells": cells})
    settings = report["settings"]
    dropped_any = any(cell["dropped"] for row in rows for cell in row["cells"])
    codes = list(dict.fromkeys(code for g in groups for code in g["code_counts"]))
    raters = sorted({rater for d in report["disagreements"] for rater in d["codes"]})
    disagreements = [{"unit": d["unit"], "group": labels.get(d["group"], d["group"]),
                      "codes": [d["codes"].get(rater, "–") for rater in raters]} for d in report["disagreements"]]
    rater_em = min(max([2.0, *(text_em(r) for r in raters), *(text_em(c) for c in codes)]), 8.0)
    return {"columns": columns, "rows": rows, "codes": codes, "raters": raters, "rater_em": f"{rater_em:.2f}",
            "raters_em": f"{len(raters) * (rater_em + COLUMN_GAP_EM):.2f}",
            "groups": _agreement_groups(columns, rows),
            "letters": [{"letter": _letter(i), "text": note} for i, note in enumerate(_note_texts(notes))],
            "report_notes": [note for note in report.get("notes", []) if note],
            "dropped_text": (f"Resamples in which a coefficient is undefined are left out of its interval; a "
                             f"letter says how many where they are {DROPPED_SHARE:.0%} or more of the "
                             f"{settings.get('bootstrap')}." if dropped_any else ""),
            "disagreements": disagreements, "settings": settings,
            "na_text": _na_text(settings),
            "bootstrap_text": (f"95% percentile bootstrap intervals over units, {settings.get('bootstrap')} "
                               f"resamples, seed {settings.get('seed')}" if settings.get("bootstrap")
                               else "point estimates only (no bootstrap)")}


def _agreement_groups(columns: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Split the coefficient columns into tables that fit the text block (evidence agreement on its own)."""
    def width(index: int) -> float:
        cells = [row["cells"][index] for row in rows]
        value = max((text_em(c["value"]) + (0.4 * len(c["marks"]) if c["marks"] else 0)
                     for c in cells), default=0.0)
        interval = max((SMALL * text_em(c["ci_dash"]) for c in cells), default=0.0)
        return max(value, interval, longest_word_em(columns[index]["short"], bold=False)) + 0.2

    label_em = max([text_em("Field"), *(max(longest_word_em(r["label"]), id_em(r["id"]),
                                             SMALL * text_em(r["distribution"])) for r in rows)])
    label_em = min(max(label_em, 5.0), 12.0)
    cells_em = max([text_em("Cells"), *(text_em(f"{row['paired']}/{row['units']}") for row in rows)])
    room = TEXT_EM - label_em - cells_em - 2 * COLUMN_GAP_EM
    tables = []
    for evidence in (False, True):
        indices = [i for i, column in enumerate(columns) if column["evidence"] == evidence]
        if not indices:
            continue
        widths = [width(i) for i in indices]
        for group in pack(widths, room):
            fixed = cells_em + sum(widths[i] for i in group) + COLUMN_GAP_EM * (len(group) + 1)
            tables.append({"evidence": evidence, "columns": [indices[i] for i in group],
                           "em": [f"{widths[i]:.2f}" for i in group], "cells_em": f"{cells_em:.2f}",
                           "fixed_em": f"{fixed:.2f}"})
    return tables


def _na_text(settings: dict[str, Any]) -> str:
    codes = settings.get("na_code") or ""
    if not codes:
        return "no code is declared not applicable"
    if settings.get("na") == "category":
        return f"the not-applicable code {codes} counted as an ordinary code"
    return f"ratings with the not-applicable code {codes} excluded"


CHART_WIDTH = 220
CHART_ROW = 13
CHART_LEFT = 64


def agreement_charts(agreement: dict[str, Any]) -> list[dict[str, Any]]:
    """One small chart per agreement row: each coefficient's point estimate and interval on a shared scale.

    Coordinates are computed here so that the template only draws them (inline SVG in report.html).
    """
    columns = [(index, column) for index, column in enumerate(agreement["columns"]) if not column["evidence"]]
    lows = [cell["low"] for row in agreement["rows"] for cell in row["cells"] if cell.get("low") is not None]
    points = [cell["point"] for row in agreement["rows"] for cell in row["cells"] if cell.get("point") is not None]
    lowest = min([0.0, *lows, *points])
    start = -1.0 if lowest < -0.5 else (-0.5 if lowest < 0 else 0.0)

    def x(value: float) -> float:
        # Alpha and a bootstrap bound can fall below -1 on few units: such a point sits at the edge.
        value = min(max(value, start), 1.0)
        return round(CHART_LEFT + (value - start) / (1.0 - start) * (CHART_WIDTH - CHART_LEFT - 8), 1)

    ticks = [{"x": x(v), "label": f"{v:g}"} for v in (start, *(t for t in (0.0, 0.5) if t > start), 1.0)]
    charts = []
    for row in agreement["rows"]:
        marks = []
        for position, (index, column) in enumerate(columns):
            cell = row["cells"][index]
            y = 10 + position * CHART_ROW
            mark = {"y": y, "label": column["short"], "title": column["label"], "defined": cell["defined"]}
            if cell["defined"]:
                mark.update(cx=x(cell["point"]), value=cell["value"],
                            x1=x(cell["low"]) if cell.get("low") is not None else None,
                            x2=x(cell["high"]) if cell.get("high") is not None else None)
            marks.append(mark)
        grid_bottom = 4 + len(columns) * CHART_ROW
        charts.append({"width": CHART_WIDTH, "height": grid_bottom + 12, "ticks": ticks, "marks": marks,
                       "grid_bottom": grid_bottom, "label_y": grid_bottom + 10})
    return charts


def methods_lines(agreement: dict[str, Any]) -> list[str]:
    """Sentences for the methods paragraph stating the pooled coefficients with their intervals."""
    context = agreement_context(agreement)
    pooled = context["rows"][-1]
    lines = [f"Agreement was computed over the {pooled['paired']} cells (protocol × field) that at "
             f"least two reviewers coded, per field and pooled ({context['na_text']}; "
             f"{context['bootstrap_text']})."]
    parts = []
    for column, cell in zip(context["columns"], pooled["cells"], strict=True):
        if column["evidence"] or cell["absent"]:
            continue
        label = "percent agreement" if column["name"] == "percent_agreement" else column["label"]
        if cell["defined"]:
            interval = f", 95% CI {cell['ci_dash']}" if cell["ci_dash"] else ""
            parts.append(f"{label} {cell['value']}{interval}")
        else:
            parts.append(f"{label} undefined")
    lines.append("Pooled over all fields: " + "; ".join(parts) + ".")
    evidence = {column["name"] for column in context["columns"] if column["evidence"]}
    if agreement["report"].get("settings", {}).get("evidence_source") == "quoted source ids" and evidence:
        lines.append(EVIDENCE_METHODS.format(
            overlap=", the share whose quoted passages overlap (share characters of the same snapshot)"
            if "quote_overlap" in evidence else ""))
    lines += assisted_lines(agreement["report"].get("settings", {}))
    return lines


def assisted_lines(counts: dict[str, Any] | None) -> list[str]:
    """The methods paragraph's sentence on assisted cells (``assisted_cells`` of ``coded_cells``,
    as an agreement report's settings or a view's ``assisted`` hold them); none when none is."""
    assisted = (counts or {}).get("assisted_cells")
    if not assisted:
        return []
    coded = counts.get("coded_cells", assisted)  # type: ignore[union-attr]
    return [f"In {assisted} of the {coded} coded cells, the reviewer was shown candidate passages "
            "ranked by the tool before choosing the code."]

"""Agreement among a workspace's reviewers, per rubric field and pooled.

Units are cells (``protocol/field``), raters are reviewers, and the categories are the
rubric's codes: per field the codes that field allows; pooled, the codes of the fields
pooled (every code any of them allows). Only the reviewers' independent codes are used,
never a consensus or an adjudication.

Evidence agreement compares structured evidence only: the pinned sources each cell quotes
(by id), its citation keys, and (:mod:`evidence.overlap`) whether the quoted passages share
characters of the same snapshot; never the free-text source locations.

Independence: a reviewer's cell may be *assisted* (``assisted: true``: candidate passages
were shown before its code was chosen). ``assisted=False`` keeps the units none of whose
cells is assisted (every reviewer coded blind), ``assisted=True`` the units with at least
one assisted cell, so that agreement can be compared between the two (``agree --split
assisted``). When any cell is assisted, the report's settings count them
(``assisted_cells`` of ``coded_cells``), and the methods paragraph says so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from .agreement import AgreementReport, agreement_of_columns
from .model import Cell
from .storage.workspace import Review

if TYPE_CHECKING:
    import pandas as pd

RATING_COLUMNS = ("unit", "rater", "code", "group", "source", "cites")


def assisted_units(review: Review) -> set[str]:
    """Units (``protocol/field``) with at least one coded cell that is assisted."""
    return {f"{cell.protocol}/{cell.field}" for cell in review.all_cells() if cell.code is not None and cell.assisted}


def quoted_sources(cell: Cell) -> str:
    """The pinned sources a cell quotes, by id (sorted, ``;``-joined; empty without quotes): what
    "same source" compares. The free-text source location is never compared: two reviewers who
    write "Sec. 3" and "Section 3" read the same place."""
    return ";".join(sorted({quote.source for quote in cell.quotes}))


def review_columns(review: Review, *, assisted: bool | None = None) -> dict[str, list[Any]]:
    """The workspace's coded cells as columns (unit, rater, code, group, source, cites); ``source``
    is the ids of the pinned sources the cell quotes (:func:`quoted_sources`).

    ``assisted``: None for every unit; True for the units with an assisted cell; False for
    the others (see the module's docstring).
    """
    columns: dict[str, list[Any]] = {name: [] for name in RATING_COLUMNS}
    unit, rater, code, group, source, cites = columns.values()
    with_assisted = assisted_units(review) if assisted is not None else set()
    for cell in review.all_cells():
        if cell.code is not None and (assisted is None
                                      or (f"{cell.protocol}/{cell.field}" in with_assisted) == assisted):
            unit.append(f"{cell.protocol}/{cell.field}")
            rater.append(cell.reviewer)
            code.append(cell.code)
            group.append(cell.field)
            source.append(quoted_sources(cell))
            cites.append(";".join(cell.cites))
    return columns


def review_ratings(review: Review) -> pd.DataFrame:
    """The workspace's coded cells as a long DataFrame (unit, rater, code, group, source, cites)."""
    import pandas as pd

    return pd.DataFrame(review_columns(review), columns=list(RATING_COLUMNS))


def review_agreement(review: Review, *, field: str | None = None,
                     level: Literal["nominal", "ordinal"] = "nominal",
                     na: Literal["category", "exclude"] = "category", bootstrap: int = 1000,
                     seed: int | None = None, list_disagreements: bool = True,
                     assisted: bool | None = None) -> AgreementReport:
    """Agreement per field (with that field's allowed codes as categories) and pooled.

    The pooled row counts the codes any pooled field allows, in the rubric's order: for one
    field (``field=...``) or fields that all allow the same codes it is computed over
    exactly the fields' categories, so it equals the field row; otherwise the report's
    notes say which fields allow fewer codes, since Gwet's AC1 and Brennan-Prediger depend
    on the number of codes. ``list_disagreements=False`` leaves out the list of disagreeing
    cells (for output that does not show it). ``assisted`` keeps only the units with
    (True) or without (False) an assisted cell.
    """
    rubric = review.require_valid()
    columns = review_columns(review, assisted=assisted)
    fields = [rubric.field(field)] if field else list(rubric.fields)
    if field:
        keep = [g == field for g in columns["group"]]
        columns = {name: [v for v, k in zip(values, keep, strict=True) if k] for name, values in columns.items()}
    allowed = {code for fld in fields for code in fld.codes}
    pooled = [code for code in rubric.code_ids if code in allowed]
    pooled_order = [code for code in rubric.order or () if code in allowed] if rubric.order is not None else None
    # Each field gets its own declared categories: chance agreement (AC1, Brennan-Prediger)
    # depends on how many codes the reviewer could choose from.
    own = {fld.id: (list(fld.codes), [code for code in rubric.order or () if code in fld.codes] or None)
           for fld in fields}
    report = agreement_of_columns(
        columns, categories=pooled, order=pooled_order, level=level, na=na,
        # --na acts on the codes the rubric declares not applicable, whatever their ids.
        na_code=rubric.na_codes, bootstrap=bootstrap, groups=[f.id for f in fields], group_categories=own,
        list_disagreements=list_disagreements,
        **({"seed": seed} if seed is not None else {}))
    report.settings["categories_per_field"] = {f.id: list(f.codes) for f in fields}
    report.settings["rubric"] = f"{rubric.id} {rubric.version}"
    coded = [cell for cell in review.all_cells() if cell.code is not None and (field is None or cell.field == field)]
    n_assisted = sum(1 for cell in coded if cell.assisted)
    if n_assisted:
        # Only when some are: reports of reviews without assisted cells stay as they were.
        report.settings["assisted_cells"] = n_assisted
        report.settings["coded_cells"] = len(coded)
    if assisted is not None:
        report.settings["split"] = "assisted" if assisted else "unassisted"
    report.settings["evidence_source"] = "quoted source ids"
    # The engine's notes speak of the generic "source" column; here it holds the quoted sources.
    for group in report.groups:
        for name, old, new in (("same_source", "no source locations were given", "no cell quotes a pinned source"),
                               ("same_source_and_cites", "source locations and citation keys were not both given",
                                "quoted sources and citation keys were not both given")):
            measure = group.evidence.get(name)
            if measure is not None and old in measure.note:
                group.evidence[name] = replace(measure, note=measure.note.replace(old, new))
    from .evidence.overlap import add_quote_overlap

    add_quote_overlap(report, review, exclude_codes=rubric.na_codes if na == "exclude" else (),
                      bootstrap=bootstrap, seed=report.settings.get("seed"))
    return report

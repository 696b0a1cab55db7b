"""Agreement among a workspace's reviewers, per rubric field and pooled.

Units are cells (``protocol/field``), raters are reviewers, and the categories are the
rubric's codes: per field the codes that field allows, pooled all codes. Only the
reviewers' independent codes are used, never a consensus or an adjudication.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd

from .agreement import AgreementReport, compute_agreement
from .storage.workspace import Review


def review_ratings(review: Review) -> pd.DataFrame:
    """The workspace's coded cells as a long DataFrame (unit, rater, code, group, source, cites)."""
    rows = [{"unit": f"{c.protocol}/{c.field}", "rater": c.reviewer, "code": c.code, "group": c.field,
             "source": c.source, "cites": ";".join(c.cites)}
            for c in review.all_cells() if c.code is not None]
    return pd.DataFrame(rows, columns=["unit", "rater", "code", "group", "source", "cites"])


def review_agreement(review: Review, *, field: str | None = None,
                     level: Literal["nominal", "ordinal"] = "nominal",
                     na: Literal["category", "exclude"] = "category", bootstrap: int = 1000,
                     seed: int | None = None) -> AgreementReport:
    """Agreement per field (with that field's allowed codes as categories) and pooled."""
    rubric = review.require_valid()
    ratings = review_ratings(review)
    fields = [rubric.field(field)] if field else list(rubric.fields)
    # --na acts on the codes the rubric declares not applicable, whatever their ids.
    options = {"level": level, "na": na, "na_code": rubric.na_codes, "bootstrap": bootstrap, "order": rubric.order,
               **({"seed": seed} if seed is not None else {})}
    groups = []
    notes: list[str] = []
    for fld in fields:
        # Each field gets its own declared categories: chance agreement (AC1,
        # Brennan-Prediger) depends on how many codes the reviewer could choose from.
        order = [code for code in rubric.order or () if code in fld.codes] or None
        subset = ratings[ratings["group"] == fld.id]
        report = compute_agreement(subset, categories=list(fld.codes), **{**options, "order": order},
                                   groups=[fld.id])
        groups.append(report.group(fld.id))
        notes += [note for note in report.notes if note not in notes]
    subset = ratings[ratings["group"].isin([f.id for f in fields])]
    pooled = compute_agreement(subset, categories=list(rubric.code_ids), groups=[f.id for f in fields], **options)
    notes += [note for note in pooled.notes if note not in notes]
    settings = dict(pooled.settings)
    settings["categories_per_field"] = {f.id: list(f.codes) for f in fields}
    settings["rubric"] = f"{rubric.id} {rubric.version}"
    report = AgreementReport(groups=[*groups, pooled.group("all")], disagreements=pooled.disagreements,
                             settings=settings, notes=notes)
    from .evidence.overlap import add_quote_overlap

    add_quote_overlap(report, review, exclude_codes=rubric.na_codes if na == "exclude" else (),
                      bootstrap=bootstrap, seed=settings.get("seed"))
    return report

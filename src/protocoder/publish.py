"""The ``render`` and ``export --view final`` jobs: from a workspace to files.

This module decides *what* is rendered (the current view of the review, the agreement
tables when there are two or more reviewers); :mod:`render` decides how it looks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import Problem
from .render import FORMATS, render_view, write_outputs
from .view import View, build_view, final_cells
from .workspace import Review, load_review

FINAL_COLUMNS = ("protocol", "field", "code", "status", "source", "basis", "cites")


@dataclass
class RenderResult:
    """What a render wrote, and what it warned about."""

    written: list[Path]
    out_dir: Path
    description: str
    warnings: list[Problem] = field(default_factory=list)


def agreement_data(review: Review, *, bootstrap: int = 1000, seed: int | None = None) -> dict[str, Any] | None:
    """The agreement report stored in a view, or None with fewer than two reviewers."""
    if len(review.reviewers) < 2:
        return None
    from .coding_agreement import review_agreement

    rubric = review.require_valid()
    report = review_agreement(review, bootstrap=bootstrap, seed=seed)
    return {"report": report.to_dict(), "labels": {f.id: f.label for f in rubric.fields}}


def current_view(review: Review, *, bootstrap: int = 1000, seed: int | None = None) -> View:
    """The view the tables show now."""
    review.require_valid()
    return build_view(review, agreement=agreement_data(review, bootstrap=bootstrap, seed=seed))


def render_workspace(workspace: Path, *, formats: Sequence[str] = FORMATS, out: Path | None = None,
                     standalone: bool = False, release: str | None = None, bootstrap: int = 1000,
                     seed: int | None = None) -> RenderResult:
    """Render a workspace's tables into ``out`` (default: its ``output/``)."""
    review = load_review(workspace)
    review.require_valid()
    view = current_view(review, bootstrap=bootstrap, seed=seed)
    description = f"{len(view.protocols)} protocols × {len(view.rubric['fields'])} fields"
    files = render_view(view, formats=formats, standalone=standalone,
                        template_dirs=[review.paths.templates_dir])
    out_dir = out if out is not None else review.paths.output_dir
    return RenderResult(write_outputs(files, out_dir), out_dir, description, review.warnings)


def final_rows(review: Review) -> list[dict[str, Any]]:
    """One row per (protocol, field) after the consensus rule (``export --view final``)."""
    rows = []
    for cell in final_cells(review):
        rows.append({"protocol": cell.protocol, "field": cell.field, "code": cell.code or "",
                     "status": str(cell.status), "source": cell.source, "basis": cell.basis,
                     "cites": list(cell.cites)})
    return rows

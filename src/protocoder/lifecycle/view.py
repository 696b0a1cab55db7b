"""The final view of a review: what the tables show, as plain JSON-ready data.

A :class:`View` is built from a live workspace (:func:`build_view`) or read back from a
frozen release, and is the only input of the renderer. Keeping it plain data is what
lets a release store exactly what it rendered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..storage.bibliography import BibEntry, Bibliography
from ..storage.workspace import Review
from .consensus import Adjudication, FinalCell, decide


@dataclass
class View:
    """Everything the renderer needs, and nothing it does not."""

    title: str
    rubric: dict[str, Any]
    protocols: list[dict[str, Any]]
    reviewers: list[str]
    cells: list[dict[str, Any]]
    references: list[dict[str, Any]]
    cutoff: str = ""
    agreement: dict[str, Any] | None = None
    corrections: list[dict[str, Any]] = field(default_factory=list)
    release: dict[str, Any] | None = None
    assisted: dict[str, int] | None = None
    """``{"assisted_cells": n, "coded_cells": m}`` when any coded cell is assisted (candidate
    passages shown before its code was chosen), else None: the methods paragraph says so
    also when no agreement is computed (one reviewer)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored in releases)."""
        data = asdict(self)
        if data["assisted"] is None:
            del data["assisted"]  # releases of reviews without assisted cells stay byte for byte as they were
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> View:
        """Inverse of :meth:`to_dict`."""
        return cls(**dict(data))

    def cell(self, protocol: str, field_id: str) -> dict[str, Any]:
        """The final cell of one (protocol, field)."""
        for cell in self.cells:
            if cell["protocol"] == protocol and cell["field"] == field_id:
                return cell
        raise KeyError(f"{protocol}/{field_id}")


def final_cells(review: Review, adjudications: Mapping[tuple[str, str], Sequence[Adjudication]] | None = None
                ) -> list[FinalCell]:
    """Apply the consensus rule to every (protocol, field), in table order."""
    rubric = review.require_valid()
    if adjudications is None:
        # A command asks more than once (history checks, the view, superseded adjudications):
        # the loaded review's cells are decided once, as its other derived indexes are.
        decided = review.__dict__.get("_final_cells")
        if decided is None:
            decided = review.__dict__["_final_cells"] = tuple(final_cells(review, review.adjudications))
        return list(decided)
    return [decide(protocol.id, fld.id, review.cells(protocol.id, fld.id), adjudications.get((protocol.id, fld.id), ()),
                   rubric)
            for protocol in review.protocols for fld in rubric.fields]


def cell_record(cell: FinalCell) -> dict[str, Any]:
    """A final cell as view data."""
    record: dict[str, Any] = {
        "protocol": cell.protocol, "field": cell.field, "status": str(cell.status), "code": cell.code,
        "source": cell.source, "basis": cell.basis, "cites": list(cell.cites), "codes": dict(cell.codes),
    }
    if cell.missing:
        record["missing"] = {reviewer: list(parts) for reviewer, parts in cell.missing.items()}
    if cell.adjudication is not None:
        record["adjudication"] = {"by": cell.adjudication.by, "at": cell.adjudication.at,
                                  "reason": cell.adjudication.reason}
        if cell.adjudication.evidence_text:
            # Whose evidence the decision keeps, as the ledger says it ("bo's", "the adjudicator's own").
            record["adjudication"]["evidence"] = cell.adjudication.evidence_text
    return record


def reference_record(entry: BibEntry, number: int) -> dict[str, Any]:
    """A bibliography entry reduced to what a reference list prints."""
    authors = [f"{given} {surname}".strip() for surname, given in entry.authors]
    if authors and authors[-1].lower() == "others":
        authors = authors[:-1] + ["et al."]
    venue = (entry.text("journal") or entry.text("booktitle") or entry.text("howpublished")
             or entry.text("publisher") or entry.text("institution"))
    return {"key": entry.key, "number": number, "authors": _join_names(authors), "title": entry.text("title"),
            "venue": venue, "year": entry.text("year"), "url": entry.text("url"), "doi": entry.text("doi")}


def _join_names(names: list[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    if names[-1] == "et al.":
        return ", ".join(names[:-1]) + ", et al."
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return ", ".join(names[:-1]) + f", and {names[-1]}"


def references(bibliography: Bibliography) -> list[dict[str, Any]]:
    """All entries in citation-number order."""
    return [reference_record(entry, number) for number, entry in enumerate(bibliography.sorted_entries(), 1)]


def build_view(review: Review, *, agreement: dict[str, Any] | None = None,
               cells: Iterable[FinalCell] | None = None) -> View:
    """Build the view of a live workspace (raises InvalidInput when it has errors).

    The cells carry no quotes: the evidence sits above the lifecycle, and the layer that
    shows a view adds them (:func:`protocoder.publish.live_view`).
    """
    rubric = review.require_valid()
    cells = list(cells) if cells is not None else final_cells(review)
    accessed = [source.accessed for p in review.protocols for source in p.sources]
    return View(
        title=review.settings.title or rubric.title,
        rubric={
            "id": rubric.id, "title": rubric.title, "version": rubric.version,
            "codes": [{"id": c.id, "label": c.label, "definition": c.definition, "short": c.short,
                       "color": c.color, "role": c.role} for c in rubric.codes],
            "fields": [{"id": f.id, "label": f.label, "codes": list(f.codes), "short": f.short}
                       for f in rubric.fields],
            "order": list(rubric.order) if rubric.order else None,
        },
        protocols=[{"id": p.id, "name": p.name, "cites": list(p.cites),
                    "sources": [{"title": s.title, "url": s.url, "version": s.version,
                                 "accessed": s.accessed.isoformat()} for s in p.sources]}
                   for p in review.protocols],
        reviewers=list(review.reviewers),
        cells=[cell_record(cell) for cell in cells],
        references=references(review.bibliography),
        cutoff=max(accessed).isoformat() if accessed else "",
        agreement=agreement,
        assisted=assisted_counts(review),
    )


def assisted_counts(review: Review) -> dict[str, int] | None:
    """How many of the reviewers' coded cells are assisted, of how many coded; None when none is
    (counted as the agreement report counts them: every reviewer's cell that has a code)."""
    coded = [cell for cell in review.all_cells() if cell.code is not None]
    assisted = sum(1 for cell in coded if cell.assisted)
    return {"assisted_cells": assisted, "coded_cells": len(coded)} if assisted else None

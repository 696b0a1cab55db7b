"""The quotes behind each final code, for the view."""

from __future__ import annotations

from collections.abc import Iterable

from ...lifecycle.consensus import FinalCell, Status
from ...storage.workspace import Review
from ..snapshots import location_text
from .anchors import Anchor, anchor, pinned_source


def with_quotes(records: list[dict[str, object]], cells: Iterable[FinalCell], review: Review
                ) -> list[dict[str, object]]:
    """View cell records with the quotes behind each final code (``quotes``, only where there are some).

    The quotes are those of the reviewer whose source and basis the final cell shows: the
    one cell of a single-coded cell, the first reviewer's of an agreed one (as the consensus
    rule takes them), those of the reviewers whose evidence an adjudication keeps; none otherwise.
    """
    protocols = {protocol.id: protocol for protocol in review.protocols}
    for record, final in zip(records, cells, strict=True):
        reviewers: tuple[str, ...] = ()
        if final.status in (Status.SINGLE, Status.AGREED) and final.codes:
            reviewers = (next(iter(final.codes)),)
        elif final.status is Status.ADJUDICATED and final.adjudication is not None:
            adjudication = final.adjudication
            reviewers = adjudication.kept if adjudication.kept is not None else \
                ((adjudication.taken_from,) if adjudication.taken_from else ())
        coded = review.cells(final.protocol, final.field)
        quotes = [quote for reviewer in reviewers if (cell := coded.get(reviewer)) is not None
                  for quote in cell.quotes]
        if not quotes:
            continue
        protocol = protocols[final.protocol]
        shown = []
        for quote in quotes:
            source = pinned_source(protocol, quote.source)
            shown.append({"source": quote.source, "title": source.title if source else quote.source,
                          "version": source.version if source else "", "text": " ".join(quote.text.split()),
                          "page": quote.page, "section": quote.section,
                          "location": location_text(quote.page, quote.section),
                          "drifted": source is not None and anchor(quote, source) is Anchor.DRIFTED})
        record["quotes"] = shown
    return records

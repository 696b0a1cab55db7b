"""The quotes behind each final code, for the view."""

from __future__ import annotations

from collections.abc import Iterable

from ...lifecycle.consensus import FinalCell, Status
from ...storage.workspace import Review
from ..extract import plain_heading
from ..snapshots import location_text
from .anchors import Anchor, anchor, pinned_source


def with_quotes(records: list[dict[str, object]], cells: Iterable[FinalCell], review: Review
                ) -> list[dict[str, object]]:
    """View cell records with the quotes behind each final code (``quotes``, only where there are some).

    The quotes are those of the reviewer whose source and basis the final cell shows: the
    one cell of a single-coded cell, the first reviewer's of an agreed one (as the consensus
    rule takes them), the reviewer whose cell an adjudication took whole; none otherwise.
    """
    protocols = {protocol.id: protocol for protocol in review.protocols}
    for record, final in zip(records, cells, strict=True):
        reviewer = None
        if final.status in (Status.SINGLE, Status.AGREED) and final.codes:
            reviewer = next(iter(final.codes))
        elif final.status is Status.ADJUDICATED and final.adjudication is not None:
            reviewer = final.adjudication.taken_from or None
        cell = review.cells(final.protocol, final.field).get(reviewer) if reviewer else None
        if cell is None or not cell.quotes:
            continue
        protocol = protocols[final.protocol]
        shown = []
        for quote in cell.quotes:
            source = pinned_source(protocol, quote.source)
            # A heading as a location, without its emoji (quotes stored before headings lost them).
            section = plain_heading(quote.section) if quote.section else ""
            shown.append({"source": quote.source, "title": source.title if source else quote.source,
                          "version": source.version if source else "", "text": " ".join(quote.text.split()),
                          "page": quote.page, "section": section,
                          "location": location_text(quote.page, section),
                          "drifted": source is not None and anchor(quote, source) is Anchor.DRIFTED})
        record["quotes"] = shown
    return records

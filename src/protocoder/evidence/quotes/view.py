"""The quotes behind each final code, for the view."""

from __future__ import annotations

from collections.abc import Iterable

from ...lifecycle.consensus import FinalCell, Status
from ...model import Protocol, Sheet
from ...storage.workspace import Review
from ..extract import plain_heading
from ..snapshots import code_citation, location_text
from .anchors import Anchor, anchor, pinned_source


def with_quotes(records: list[dict[str, object]], cells: Iterable[FinalCell], review: Review
                ) -> list[dict[str, object]]:
    """View cell records with the quotes behind each final code (``quotes``, only where there are some)
    and what that reviewer read of the protocol's sources in the app (``reading``, where recorded).

    The quotes are those of the reviewer whose source and basis the final cell shows: the
    one cell of a single-coded cell, the first reviewer's of an agreed one (as the consensus
    rule takes them), those of the reviewers whose evidence an adjudication keeps; none otherwise.
    """
    protocols = {protocol.id: protocol for protocol in review.protocols}
    sheets = {(sheet.protocol, sheet.reviewer): sheet for sheet in review.sheets}
    for record, final in zip(records, cells, strict=True):
        reviewers: tuple[str, ...] = ()
        if final.status in (Status.SINGLE, Status.AGREED) and final.codes:
            reviewers = (next(iter(final.codes)),)
        elif final.status is Status.ADJUDICATED and final.adjudication is not None:
            adjudication = final.adjudication
            reviewers = adjudication.kept if adjudication.kept is not None else \
                ((adjudication.taken_from,) if adjudication.taken_from else ())
        coded = review.cells(final.protocol, final.field)
        protocol = protocols[final.protocol]
        reads = {reviewer: line for reviewer in reviewers if reviewer in coded
                 and (line := reading_line(protocol, sheets.get((final.protocol, reviewer))))}
        if reads:  # one reviewer's line as it is; several named
            record["reading"] = next(iter(reads.values())) if len(reviewers) == 1 else \
                " / ".join(f"{reviewer}: {line}" for reviewer, line in reads.items())
        quotes = [quote for reviewer in reviewers if (cell := coded.get(reviewer)) is not None
                  for quote in cell.quotes]
        if not quotes:
            continue
        shown = []
        for quote in quotes:
            source = pinned_source(protocol, quote.source)
            # A heading as a location, without its emoji (quotes stored before headings lost them).
            section = plain_heading(quote.section) if quote.section else ""
            shown.append({"source": quote.source, "title": source.title if source else quote.source,
                          "version": source.version if source else "", "text": " ".join(quote.text.split()),
                          "page": quote.page, "section": section,
                          "location": (code_citation(source, quote.lines) if source is not None and quote.lines
                                       else location_text(quote.page, section)),
                          "drifted": source is not None and anchor(quote, source) is Anchor.DRIFTED})
        record["quotes"] = shown
    return records


def reading_line(protocol: Protocol, sheet: Sheet | None) -> str:
    """What the reviewer had on screen of each pinned source of the protocol (``lm-eval 100% · paper 40%``),
    as their codes file records it; "" when it records nothing for this protocol."""
    if sheet is None or not sheet.reading:
        return ""
    pinned = [source for source in protocol.sources if source.has_snapshot]
    if not any(source.sha256 in sheet.reading for source in pinned):
        return ""
    return " · ".join(f"{source.id} {sheet.reading[source.sha256].percent if source.sha256 in sheet.reading else '0%'}"
                      for source in pinned)

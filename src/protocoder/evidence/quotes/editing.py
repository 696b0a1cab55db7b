"""The quote operations behind ``protocoder quote``: add, remove, confirm.

Each reads the reviewer's cell as it is on disk and writes it back through the store.
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import Rejected
from ...model import Cell, Quote
from ...storage.store import Store
from ...storage.workspace import Review
from ..locate import excerpt, normalise
from ..snapshots import Snapshots
from .anchors import SNAPSHOT_REF_LENGTH, Anchor, anchor, pinned_source, printable
from .locating import find_quote


def cell_for_edit(store: Store, review: Review, protocol_id: str, field_id: str, reviewer: str
                  ) -> tuple[Cell, str | None]:
    """A reviewer's cell as on disk now (a new draft when absent) and the file's fingerprint."""
    rubric = review.require_valid()
    sheet, fingerprint = store.read_sheet(protocol_id, reviewer, rubric)
    cell = sheet.cells.get(field_id) or Cell(protocol_id, field_id, reviewer, None)
    return cell, fingerprint


def same_quote(a: Quote, b: Quote) -> bool:
    """True when two quotes quote the same text of the same source."""
    return a.source == b.source and normalise(a.text) == normalise(b.text)


def add_quote(review: Review, protocol_id: str, field_id: str, reviewer: str, source_id: str, text: str,
              snapshots: Snapshots | None = None, *, accept_closest: bool = False) -> tuple[Quote, bool]:
    """Quote ``text`` of a pinned source on a reviewer's cell; return the quote and whether it was new.

    Refused (nothing written) when the text is not found in the source's snapshot, unless
    ``accept_closest``: then the closest passage is quoted instead (see :func:`find_quote`;
    the returned quote's ``text`` says which).
    """
    snapshots = snapshots or Snapshots(review.paths)
    quote = find_quote(review.protocol(protocol_id), source_id, text, snapshots, accept_closest=accept_closest,
                       where=f"{protocol_id}/{field_id} ({reviewer})")
    store = Store(review.paths)
    cell, fingerprint = cell_for_edit(store, review, protocol_id, field_id, reviewer)
    if any(same_quote(existing, quote) for existing in cell.quotes):
        return quote, False
    store.save_cell(replace(cell, quotes=(*cell.quotes, quote)), review.require_valid(), expected=fingerprint)
    return quote, True


def remove_quotes(review: Review, protocol_id: str, field_id: str, reviewer: str, *, text: str | None = None,
                  number: int | None = None, source_id: str | None = None) -> list[Quote]:
    """Remove the quotes of a cell matching ``text`` (and ``source_id``), or quote ``number`` (from 1)."""
    store = Store(review.paths)
    cell, fingerprint = cell_for_edit(store, review, protocol_id, field_id, reviewer)
    if not cell.quotes:
        raise Rejected(f"{protocol_id}/{field_id} has no quotes by {reviewer}")
    if number is not None:
        if not 1 <= number <= len(cell.quotes):
            raise Rejected(f"{protocol_id}/{field_id} has {len(cell.quotes)} quote(s) by {reviewer}; there is no "
                           f"number {number}")
        gone = [cell.quotes[number - 1]]
    else:
        wanted = normalise(text or "")
        gone = [q for q in cell.quotes if (not wanted or normalise(q.text) == wanted)
                and (source_id is None or q.source == source_id)]
        if not gone:
            listing = "; ".join(f"{n}. [{q.source}] \"{printable(excerpt(q.text, 0, len(q.text), width=60))}\""
                                for n, q in enumerate(cell.quotes, 1))
            raise Rejected(f"no quote of {protocol_id}/{field_id} by {reviewer} matches; its quotes: {listing}")
    kept = tuple(q for q in cell.quotes if all(q is not g for g in gone))
    store.save_cell(replace(cell, quotes=kept), review.require_valid(), expected=fingerprint)
    return gone


def confirm_quotes(review: Review, protocol_id: str, field_id: str, reviewer: str,
                   source_id: str | None = None) -> list[Quote]:
    """Record that the cell's drifted quotes were checked against their sources' current versions."""
    protocol = review.protocol(protocol_id)
    store = Store(review.paths)
    cell, fingerprint = cell_for_edit(store, review, protocol_id, field_id, reviewer)
    confirmed = []
    quotes = []
    for quote in cell.quotes:
        source = pinned_source(protocol, quote.source)
        if (source is not None and (source_id is None or quote.source == source_id)
                and anchor(quote, source) is Anchor.DRIFTED):
            quote = replace(quote, confirmed=source.sha256[:SNAPSHOT_REF_LENGTH])
            confirmed.append(quote)
        quotes.append(quote)
    if confirmed:
        store.save_cell(replace(cell, quotes=tuple(quotes)), review.require_valid(), expected=fingerprint)
    return confirmed

"""A quote and the version of its source it belongs to; every quote of a review."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from ...model import Cell, Protocol, Quote, Source
from ...storage.workspace import Review

SNAPSHOT_REF_LENGTH = 12
"""Hex digits of a snapshot's hash a quote records (``snapshot: 3f2a9c01d2e4``)."""

_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """``text`` on one line with no control characters, safe to print to a terminal."""
    return _UNPRINTABLE.sub(" ", text)


class Anchor(StrEnum):
    """Which version of its source a quote belongs to."""

    CURRENT = "current"
    """Taken from the current snapshot (or hand-written without a snapshot): checked against it."""
    DRIFTED = "drifted"
    """Taken from an earlier version; not found in the current one, not confirmed."""
    CONFIRMED = "confirmed"
    """Taken from an earlier version; the reviewer confirmed the code stands on the current one."""
    UNKNOWN = "unknown"
    """Names a snapshot that is no version of its source."""


def anchor(quote: Quote, source: Source) -> Anchor:
    """Which version of ``source`` the quote belongs to (see :class:`Anchor`)."""
    if not quote.snapshot or source.sha256.startswith(quote.snapshot):
        return Anchor.CURRENT
    if any(version.sha256.startswith(quote.snapshot) for version in source.previous):
        if quote.confirmed and source.sha256.startswith(quote.confirmed):
            return Anchor.CONFIRMED
        return Anchor.DRIFTED
    return Anchor.UNKNOWN


@dataclass(frozen=True)
class QuoteRef:
    """One quote of one reviewer's cell."""

    cell: Cell
    index: int
    quote: Quote
    source: Source | None

    @property
    def key(self) -> str:
        """``protocol/field``."""
        return f"{self.cell.protocol}/{self.cell.field}"


def quote_record(quote: Quote) -> dict[str, object]:
    """A quote as plain data (export, the view): every field, positions as numbers or null."""
    return {"source": quote.source, "text": quote.text, "page": quote.page, "section": quote.section,
            "start": quote.start, "end": quote.end, "snapshot": quote.snapshot, "confirmed": quote.confirmed,
            "raw_start": quote.raw_start, "raw_end": quote.raw_end, "exact": quote.exact, "prefix": quote.prefix,
            "suffix": quote.suffix}


def pinned_source(protocol: Protocol, source_id: str) -> Source | None:
    """The protocol's source with this id, or None."""
    return next((source for source in protocol.sources if source.id and source.id == source_id), None)


def all_quotes(review: Review) -> Iterator[QuoteRef]:
    """Every quote of every reviewer's cell, in table order."""
    protocols = {protocol.id: protocol for protocol in review.protocols}
    for cell in review.all_cells():
        protocol = protocols.get(cell.protocol)
        for index, quote in enumerate(cell.quotes):
            yield QuoteRef(cell, index, quote, pinned_source(protocol, quote.source) if protocol else None)

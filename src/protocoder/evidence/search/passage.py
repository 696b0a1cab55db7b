"""One passage as the index stores it and a query reads it.

Apart from :mod:`.passages` (which cuts a source's extracted text into passages) so that a query
against a cached index loads the record alone, not the cutting, the extractors and the locate
code behind it.
"""

from __future__ import annotations

from dataclasses import dataclass

HEADING_SEPARATOR = " › "
"""Joins the headings of a passage's heading path, outermost first."""


@dataclass(frozen=True, slots=True)
class Passage:
    """One passage of a source's extracted text, with the heading path above it."""

    source: str
    heading: str
    """Heading path, outermost first, joined with " › " (empty above the first heading); without
    the document's title and without emoji (the quote's own section keeps the original)."""
    start: int
    end: int
    """Character offsets in the snapshot's extracted text."""
    text: str
    raw_start: int | None = None
    raw_end: int | None = None
    """Character offsets in the raw snapshot's decoded text, where the extraction knows them."""
    kind: str = "prose"
    """One of :data:`~.kinds.PASSAGE_KINDS`."""

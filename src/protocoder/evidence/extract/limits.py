"""What one document may cost, and the error that says it cannot be read."""

from __future__ import annotations

MAX_SNAPSHOT_BYTES = 100 * 1024 * 1024
"""Largest file accepted as a snapshot (papers with figures are a few MB; a 100 MB file is
almost certainly not a document to quote from)."""

MAX_PAGES = 3000
"""Most pages read from one PDF."""

MAX_TEXT_CHARS = 30_000_000
"""Most characters of extracted text kept from one document."""

MAX_OUTLINE_ENTRIES = 5000

EXTRACTOR_VERSION = 2
"""Raised when extraction changes what text it produces; sidecars of other versions are redone."""


class ExtractionError(Exception):
    """The document cannot be read as text; the message says why, in one line."""

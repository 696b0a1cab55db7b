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

EXTRACTOR_VERSION = 3
"""Raised when extraction changes what text it produces; sidecars of other versions are redone.
3: MkDocs admonitions and snippet lines, reference links without a definition, headings without
emoji, default titles from the first meaningful heading, the text after a link mapped after its URL."""


class ExtractionError(Exception):
    """The document cannot be read as text; the message says why, in one line."""

"""What one document may cost, and the error that says it cannot be read."""

from __future__ import annotations

MAX_SNAPSHOT_BYTES = 100 * 1024 * 1024
"""Largest file accepted as a snapshot (papers with figures are a few MB; a 100 MB file is
almost certainly not a document to quote from)."""

MAX_MARKUP_BYTES = 25 * 1024 * 1024
"""Largest Markdown or HTML file accepted as a snapshot. Pinning it and building its ``find`` index
take about 15 bytes of memory per byte of Markdown (9 of HTML) above the interpreter's 60 MB: a
25 MiB source stays under about 450 MB, with a margin to the 500 MB every accepted source must stay
under (a generated README of a million lines, 25.5 MB: 437 MB; see docs/evidence.md). A page of tiny
blocks costs more than its bytes say: :data:`MAX_BLOCKS` bounds it."""

MAX_PLAIN_TEXT_BYTES = 12 * 1024 * 1024
"""Largest plain-text file accepted as a snapshot: its ``find`` index costs about 26 bytes of memory
per byte (a text without Markdown or HTML structure is cut at blank lines, and the passages not found at
their own place are looked up in the whole text, all in one pass: search/quotable.py), so 12 MiB stays under
about 450 MB (436-447 MB measured, benchmarks/bench_find_text.py)."""

SIZE_LIMITS = {"text/markdown": MAX_MARKUP_BYTES, "text/html": MAX_MARKUP_BYTES, "text/plain": MAX_PLAIN_TEXT_BYTES}
"""The limit of each kind of text source; any other kind (a PDF: its text is capped by
:data:`MAX_PAGES` and :data:`MAX_TEXT_CHARS`) has :data:`MAX_SNAPSHOT_BYTES`."""

KIND_NAMES = {"text/markdown": "a Markdown source", "text/html": "an HTML source", "text/plain": "a plain-text source",
              "application/pdf": "a PDF"}


def size_limit(media_type: str) -> int:
    """The largest snapshot of ``media_type`` protocoder pins (bytes)."""
    return SIZE_LIMITS.get(media_type, MAX_SNAPSHOT_BYTES)


def size_refusal(size: int, media_type: str) -> str | None:
    """The one-line reason a document of ``size`` bytes and ``media_type`` is refused, or None when it fits."""
    limit = size_limit(media_type)
    if size <= limit:
        return None
    return (f"file is {size:,} bytes; the limit for {KIND_NAMES.get(media_type, 'a document')} is {limit:,} bytes "
            f"({limit / 1024 / 1024:.0f} MiB, what is indexed in under 500 MB of memory); split it and pin the "
            "parts with: protocoder source add PROTOCOL FILE")


MAX_BLOCKS = 450_000
"""Most blocks (paragraphs, list items, table rows, code blocks, headings) in one document's text. What
``find`` holds per passage costs more than the bytes of a page of tiny blocks: 500,000 one-line
paragraphs (9.5 MB of Markdown) took 477 MB in a cold ``find``, a million (21 MB of HTML) 806 MB;
a README of a million lines has 428,570 blocks (437 MB)."""


def block_refusal(blocks: int) -> str | None:
    """The one-line reason a document whose text has ``blocks`` blocks is refused, or None when it fits."""
    if blocks <= MAX_BLOCKS:
        return None
    return (f"its text has {blocks:,} blocks (paragraphs, list items, table rows, code blocks, headings); the "
            f"limit is {MAX_BLOCKS:,} (what is indexed in under 500 MB of memory); split it and pin the parts "
            "with: protocoder source add PROTOCOL FILE")


MAX_PAGES = 3000
"""Most pages read from one PDF."""

MAX_TEXT_CHARS = 30_000_000
"""Most characters of extracted text kept from one document."""

MAX_OUTLINE_ENTRIES = 5000

EXTRACTOR_VERSION = 9
"""Raised when extraction changes what text it produces; sidecars of other versions are redone.
3: MkDocs admonitions and snippet lines, reference links without a definition, headings without
emoji, default titles from the first meaningful heading, the text after a link mapped after its URL.
4: no default title from a heading below the top level or a section name followed by more words.
5: a MkDocs admonition's body goes on past blank lines while it is indented (Python-Markdown's rule), not
up to two blank lines in a row.
6: no default title from a banner image's alt text unless it calls the image a logo (SWE-bench's mascot); "Set Up",
"Downloads" and "Contributions" are section names.
7: a heading names the document only when it comes before the document's prose (MiniWoB++'s README, three
paragraphs then "Installation", "Example Usage": named after its file); "Advanced Start", "As a user" and the
like are section names; a section name followed by "to" or "of" names its subject ("Contributing to AutoGenBench").
8: a text file or page that starts with a UTF-16 byte-order mark is read as UTF-16 (it was read as Windows-1252); an
HTML page without a <title> is named by a heading only when it comes before the page's prose, as Markdown is.
9: a heading made of badges only is no title (rliable); nor is a section name set as an HTML heading ("Table of
Contents", lbforaging); a banner image whose file is a logo and whose alt text is a few words names the document
(hud, lbforaging); "Logo of UpTrain - …" names "UpTrain - …"."""


class ExtractionError(Exception):
    """The document cannot be read as text; the message says why, in one line."""

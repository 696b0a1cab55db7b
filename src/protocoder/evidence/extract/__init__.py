"""Reviewed documents (PDF, HTML, Markdown, plain text) to text with page and heading positions.

The flow, one module per idea:

* :mod:`.limits` — what one document may cost (size, pages, characters) and
  :class:`ExtractionError`, the one-line reason a document cannot be read.
* :mod:`.structure` — the model every reader produces: :class:`Extracted` (text, pages,
  headings, :class:`Block` list, raw offsets) and the structure found in text without markup
  (numbered headings, paragraphs, the meaningful section of a heading path).
* :mod:`.cleaning` — decoding and cleaning the text (control characters, PDF ligatures).
* :mod:`.layout` — the builder HTML, Markdown and plain text share: it lays out the text, its
  blocks and, for every piece, where it is written in the raw file.
* :mod:`.pdf`, :mod:`.html`, :mod:`.markdown`, :mod:`.plain` — one reader per kind of document.
* :mod:`.dispatch` — :func:`extract` and :func:`raw_text`: the reader for a media type.
* :mod:`.bounded` — :func:`extract_bounded`: the same work in a child process
  (``protocoder.evidence._worker``) limited in time and memory.

Libraries, chosen:

* **PDF: pypdf.** Pure Python with no dependencies of its own (nothing to compile, no
  system library), actively maintained, and it gives exactly what a quote's position
  needs: text page by page, the document's page labels (``iv``, ``14``) and its outline
  (the bookmarks LaTeX's hyperref writes for every section), and it caps decompression
  output against zip bombs. pdfminer.six lays text out more faithfully but pulls in
  cryptography and charset-normalizer and is several times slower on long papers.
* **HTML: the standard library's html.parser.** It streams tags (no tree, so nesting
  depth costs nothing), decodes entities, and never runs scripts; keeping headings and
  block breaks takes a few lines. No dependency added.
* **Markdown: markdown-it-py**, already a dependency (basis text is inline Markdown), with
  mdit-py-plugins' footnotes (installed with Textual), so that footnotes are blocks of
  their own and their markers leave the text.

Extraction keeps structure: :attr:`Extracted.blocks` lists the headings, paragraphs, list
items (nested ones apart), table rows, code blocks, admonitions (GitHub's ``> [!NOTE]``,
its marker dropped), blockquotes, footnotes and HTML blocks, each with its heading path.
For every kind but PDF, :meth:`Extracted.raw_offset` maps an offset of the extracted text
to the raw file's decoded text (:func:`raw_text`): each piece of text is found where it is
written, so link URLs, emphasis and tags lie between pieces in the raw range of a passage.

:func:`extract_bounded` runs the extraction in a child process with limits on CPU time,
memory and output, so that a malformed or malicious file ends in a one-line error instead
of a hang or a crash; :func:`extract` is the same work in-process.

Extracted text is data: it is stored, searched and shown, never evaluated. Control
characters (escape sequences included) are removed, so nothing in a document can drive
the terminal that shows it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_names
from .cleaning import clean
from .limits import (
    EXTRACTOR_VERSION,
    MAX_MARKUP_BYTES,
    MAX_OUTLINE_ENTRIES,
    MAX_PAGES,
    MAX_PLAIN_TEXT_BYTES,
    MAX_SNAPSHOT_BYTES,
    MAX_TEXT_CHARS,
    ExtractionError,
    block_refusal,
    size_limit,
    size_refusal,
)
from .structure import (
    BLOCK_KINDS,
    Block,
    Extracted,
    document_title,
    is_generic_heading,
    is_version_heading,
    meaningful_section,
    numbered_headings,
    plain_heading,
)

if TYPE_CHECKING:
    from .bounded import EXTRACT_MEMORY, EXTRACT_SECONDS, extract_bounded
    from .dispatch import extract, raw_text

_READERS = {"EXTRACT_MEMORY": "bounded", "EXTRACT_SECONDS": "bounded", "extract_bounded": "bounded",
            "extract": "dispatch", "raw_text": "dispatch"}
"""Loaded on first use (PEP 562): the readers (markdown-it, html.parser, pypdf's wrapper) are not
needed to read a cached index or the limits and the model of an extraction."""


__getattr__ = lazy_names(__name__, globals(), _READERS)


__all__ = [
    "BLOCK_KINDS",
    "Block",
    "document_title",
    "is_generic_heading",
    "EXTRACTOR_VERSION",
    "EXTRACT_MEMORY",
    "EXTRACT_SECONDS",
    "Extracted",
    "ExtractionError",
    "MAX_OUTLINE_ENTRIES",
    "MAX_MARKUP_BYTES",
    "MAX_PAGES",
    "MAX_PLAIN_TEXT_BYTES",
    "MAX_SNAPSHOT_BYTES",
    "MAX_TEXT_CHARS",
    "clean",
    "extract",
    "extract_bounded",
    "is_version_heading",
    "meaningful_section",
    "numbered_headings",
    "plain_heading",
    "raw_text",
    "block_refusal",
    "size_limit",
    "size_refusal",
]

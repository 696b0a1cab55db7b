"""The reader for a media type: :func:`extract` in this process, and :func:`raw_text`."""

from __future__ import annotations

from collections.abc import Callable

from .cleaning import decode_text
from .limits import ExtractionError
from .structure import Extracted


def raw_text(data: bytes, media_type: str) -> str | None:
    """The raw file's decoded text, which raw offsets count in (None for a PDF: it is binary).

    Decoded exactly as the extractor decodes it, and nothing else: line ends, control
    characters and all stay as they are in the file.
    """
    if media_type == "text/html":
        from .html import decode_html

        return decode_html(data)
    if media_type in ("text/markdown", "text/plain"):
        return decode_text(data)
    return None


def _extractor(media_type: str) -> Callable[[bytes], Extracted]:
    """The reader of ``media_type`` (KeyError for none). Only the one a document needs is imported: a
    one-shot ``quote add`` of a README no longer loads the HTML parser and the PDF reader."""
    if media_type == "text/markdown":
        from .markdown import extract_markdown

        return extract_markdown
    if media_type == "text/html":
        from .html import extract_html

        return extract_html
    if media_type == "application/pdf":
        from .pdf import extract_pdf

        return extract_pdf
    if media_type == "text/plain":
        from .plain import extract_plain

        return extract_plain
    raise KeyError(media_type)


def extract(data: bytes, media_type: str) -> Extracted:
    """Extract text from a document's bytes, in this process (see :func:`extract_bounded`).

    Raises :class:`ExtractionError` with a one-line reason.
    """
    try:
        extractor = _extractor(media_type)
    except KeyError:
        raise ExtractionError(f"cannot extract text from {media_type}") from None
    return extractor(data)

"""The reader for a media type: :func:`extract` in this process, and :func:`raw_text`."""

from __future__ import annotations

from .cleaning import decode_text
from .html import decode_html, extract_html
from .limits import ExtractionError
from .markdown import extract_markdown
from .pdf import extract_pdf
from .plain import extract_plain
from .structure import Extracted


def raw_text(data: bytes, media_type: str) -> str | None:
    """The raw file's decoded text, which raw offsets count in (None for a PDF: it is binary).

    Decoded exactly as the extractor decodes it, and nothing else: line ends, control
    characters and all stay as they are in the file.
    """
    if media_type == "text/html":
        return decode_html(data)
    if media_type in ("text/markdown", "text/plain"):
        return decode_text(data)
    return None


_EXTRACTORS = {"application/pdf": extract_pdf, "text/html": extract_html, "text/markdown": extract_markdown,
               "text/plain": extract_plain}


def extract(data: bytes, media_type: str) -> Extracted:
    """Extract text from a document's bytes, in this process (see :func:`extract_bounded`).

    Raises :class:`ExtractionError` with a one-line reason.
    """
    try:
        extractor = _EXTRACTORS[media_type]
    except KeyError:
        raise ExtractionError(f"cannot extract text from {media_type}") from None
    return extractor(data)

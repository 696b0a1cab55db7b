"""Plain text: numbered headings and paragraphs, offsets one to one with the file."""

from __future__ import annotations

from .cleaning import clean, decode_text, first_line
from .layout import Layout
from .limits import ExtractionError
from .structure import Extracted, numbered_headings, paragraph_blocks, path_finder


def extract_plain(data: bytes) -> Extracted:
    """Plain text: its paragraphs as blocks, numbered headings found."""
    raw = decode_text(data)
    text = clean(raw).rstrip()
    if not text.strip():
        raise ExtractionError("the file has no text")
    out = Layout(raw)
    out.parts, out.length = [text], len(text)  # the text as it is (no limit on its length: it is the file)
    out.align(text, 0, 0, len(raw))
    headings = numbered_headings(text)
    blocks = paragraph_blocks(text, headings, 0, len(text), path_finder(headings))
    return Extracted(text, [], headings, first_line(text), blocks, out.segments)

"""Plain text: numbered headings and paragraphs, offsets one to one with the file."""

from __future__ import annotations

from .cleaning import _decode_text, _first_line, clean
from .layout import _Layout
from .limits import ExtractionError
from .structure import Extracted, _paragraph_blocks, _path_finder, numbered_headings


def _plain(data: bytes) -> Extracted:
    raw = _decode_text(data)
    text = clean(raw).rstrip()
    if not text.strip():
        raise ExtractionError("the file has no text")
    out = _Layout(raw)
    out.parts, out.length = [text], len(text)  # the text as it is (no limit on its length: it is the file)
    out.align(text, 0, 0, len(raw))
    headings = numbered_headings(text)
    blocks = _paragraph_blocks(text, headings, 0, len(text), _path_finder(headings))
    return Extracted(text, [], headings, _first_line(text), blocks, out.segments)

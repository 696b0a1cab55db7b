"""Plain text: numbered headings and paragraphs, offsets one to one with the file (but reST directive markers)."""

from __future__ import annotations

import re

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
    pieces = _without_directive_marks(text)
    text = "".join(piece for piece, _ in pieces)
    out.parts, out.length = [text], len(text)  # the text as it is (no limit on its length: it is the file)
    offset, position = 0, 0
    for piece, written in pieces:
        if written and piece:
            position = out.align(piece, offset, position, len(raw))
        offset += len(piece)
    headings = numbered_headings(text)
    blocks = paragraph_blocks(text, headings, 0, len(text), path_finder(headings))
    return Extracted(text, [], headings, first_line(text), blocks, out.segments)


_RST_DIRECTIVE = re.compile(r"^([ \t]*)\.\.[ \t]+([A-Za-z][\w-]*)::[ \t]*", re.M)
"""A reST directive's marker (``.. note::``, ``.. warning:: Title``): a reader sees its name as
the title of a box, not the marker."""


def _without_directive_marks(text: str) -> list[tuple[str, bool]]:
    """``text`` in pieces, reST directive markers replaced by their names (``.. note::`` → ``Note:``):
    (piece, True when the piece is written in the file as it is)."""
    pieces: list[tuple[str, bool]] = []
    last = 0
    for match in _RST_DIRECTIVE.finditer(text):
        pieces.append((text[last:match.start()] + match.group(1), True))
        pieces.append((match.group(2).replace("-", " ").capitalize() + ": ", False))
        last = match.end()
    pieces.append((text[last:], True))
    return pieces

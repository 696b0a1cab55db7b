"""Plain text: numbered headings and paragraphs, offsets one to one with the file."""

from __future__ import annotations

import re

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
    pieces = _without_directive_marks(text)
    text = "".join(piece for piece, _ in pieces)
    out.parts, out.length = [text], len(text)  # the text as it is (no limit on its length: it is the file)
    offset, position = 0, 0
    for piece, written in pieces:
        if written and piece:
            position = out.align(piece, offset, position, len(raw))
        offset += len(piece)
    headings = numbered_headings(text)
    blocks = _paragraph_blocks(text, headings, 0, len(text), _path_finder(headings))
    return Extracted(text, [], headings, _first_line(text), blocks, out.segments)


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

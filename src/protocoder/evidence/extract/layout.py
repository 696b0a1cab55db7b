"""The builder the HTML, Markdown and plain-text readers share.

It lays out the text and its blocks and records, for every piece, where it is written in
the raw file, so that link URLs, emphasis and tags lie between pieces in a passage's raw
range.
"""

from __future__ import annotations

import html
import re
from array import array

from .limits import ExtractionError
from .structure import Block, Extracted

_MAX_SKIP = 256
"""Most raw characters skipped to find the next character of a piece that is not in the raw
text as one run (an entity, markup between words, collapsed white space)."""


_CHUNK = 4096
"""Pieces of text gathered before they are joined into one string."""

_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")


class Layout:
    """Builds an extracted text block by block, with its headings and its map to the raw text.

    Separators between blocks (``"\n\n"``, ``"\n"``, ``"\t"`` between table cells) come
    from :meth:`gap`; the largest asked for since the last text wins. Text comes from
    :meth:`emit`, which also finds where it stands in the raw text.
    """

    _RANK = {"": 0, "\t": 1, "\n": 2, "\n\n": 3}

    def __init__(self, raw: str | None, *, limit: int | None = None) -> None:
        self.raw = raw
        self.limit = limit
        """Most characters of text (None: as many as the file makes)."""
        self.parts: list[str] = []
        self.length = 0
        self.pending = ""
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, int, str]] = []
        self.segments = array("q")
        """The raw map, flat: (offset, raw offset, length) for each run (see :attr:`Extracted.raw_segments`)."""
        self.kind = "paragraph"
        self.path: tuple[str, ...] = ()
        self.block_start: int | None = None
        self._joined = 0
        """How many of ``parts`` are joined chunks (the pieces after them are not yet)."""

    def gap(self, kind: str) -> None:
        """Ask for a separator before the next text."""
        if self._RANK[kind] > self._RANK[self.pending]:
            self.pending = kind

    def emit(self, text: str, raw_from: int | None = None, raw_limit: int | None = None) -> int | None:
        """Add ``text`` to the current block; when ``raw_from`` is given, find it in the raw text
        from there (up to ``raw_limit``) and return the raw offset after it."""
        if not text:
            return raw_from
        if self.pending and self.parts:
            self.parts.append(self.pending)
            self.length += len(self.pending)
        self.pending = ""
        if self.block_start is None:
            self.block_start = self.length
        offset = self.length
        self.parts.append(text)
        self.length += len(text)
        if len(self.parts) - self._joined >= _CHUNK:
            # Pieces joined into one string now and then: a page of a million short paragraphs
            # would otherwise hold a million small strings until the end.
            self.parts[self._joined:] = ["".join(self.parts[self._joined:])]
            self._joined = len(self.parts)
        if self.limit is not None and self.length > self.limit:
            raise ExtractionError(f"the page holds more than {self.limit:,} characters of text")
        if raw_from is None or self.raw is None:
            return raw_from
        return self.align(text, offset, raw_from, len(self.raw) if raw_limit is None else raw_limit)

    def _add(self, offset: int, raw_offset: int, length: int) -> None:
        segments = self.segments
        if segments:
            size = segments[-1]
            if segments[-3] + size == offset and segments[-2] + size == raw_offset:
                segments[-1] = size + length
                return
        segments.extend((offset, raw_offset, length))

    def align(self, piece: str, offset: int, raw_from: int, raw_limit: int) -> int:
        """Record where ``piece`` (at ``offset`` of the text) stands in the raw text."""
        raw = self.raw
        assert raw is not None
        found = raw.find(piece, raw_from, raw_limit)
        if found >= 0:
            self._add(offset, found, len(piece))
            return found + len(piece)
        if "\n" in piece and len(piece) > 1:
            # Line by line: a line break may be "\r\n" in the file, or carry a "> " prefix.
            position = raw_from
            local = 0
            lines = piece.split("\n")
            for number, line in enumerate(lines):
                if line:
                    position = self.align(line, offset + local, position, raw_limit)
                local += len(line)
                if number + 1 < len(lines):
                    newline = raw.find("\n", position, raw_limit)
                    if newline >= 0:
                        self._add(offset + local, newline, 1)
                        position = newline + 1
                    local += 1
            return position
        # Character by character: entities, escapes, collapsed white space.
        position = raw_from
        for index, char in enumerate(piece):
            probe = position
            stop = min(raw_limit, position + _MAX_SKIP)
            while probe < stop and raw[probe] != char and not (char == " " and raw[probe].isspace()):
                if raw[probe] == "&":
                    entity = _ENTITY.match(raw, probe)
                    decoded = html.unescape(entity.group()) if entity else ""
                    if decoded == char or (char == " " and decoded.isspace()):
                        break  # a character reference: the character stands for it
                probe += 1
            if probe < stop:
                entity = _ENTITY.match(raw, probe) if raw[probe] == "&" and char != "&" else None
                self._add(offset + index, probe, 1)
                position = entity.end() if entity else probe + 1
        return position

    def start_block(self, kind: str, path: tuple[str, ...]) -> None:
        """End the current block; the next text begins one of ``kind`` under ``path``."""
        self.end_block()
        self.kind, self.path = kind, path

    def end_block(self, path: tuple[str, ...] | None = None) -> None:
        """End the current block (``path`` replaces the one it was started with)."""
        if self.block_start is not None and self.length > self.block_start:
            start, end = self.block_start, self.length
            last = self.parts[-1] if self.parts else ""
            trailing = 0
            while trailing < len(last) and last[-1 - trailing].isspace():
                trailing += 1
            end = max(start, end - trailing)  # trimmed now, not copied in result()
            if end > start:
                self.blocks.append(Block(start, end, self.kind, self.path if path is None else path))
        self.block_start = None

    def result(self, pages: list[tuple[int, str]] | None = None, title: str = "") -> Extracted:
        """The text with its blocks (trimmed of white space) and raw map."""
        self.end_block()
        parts = self.parts
        while parts and not parts[-1].strip():
            parts.pop()
        if parts:
            parts[-1] = parts[-1].rstrip()  # trimmed before the join: the whole text is not copied again
        text = "".join(parts)
        self.parts, self._joined = [text], 1
        blocks = []
        for block in self.blocks:
            start, end = block.start, min(block.end, len(text))
            while start < end and text[start].isspace():
                start += 1
            while end > start and text[end - 1].isspace():
                end -= 1
            if end > start:  # the block itself when nothing was trimmed: a large page is not held twice
                same = start == block.start and end == block.end
                blocks.append(block if same else Block(start, end, block.kind, block.path))
        self.blocks = []
        segments = None
        if self.raw is not None:
            # Only the last runs can pass the end of the trimmed text: the others are kept as they are.
            segments = self.segments
            while segments and segments[-3] >= len(text):
                del segments[-3:]
            if segments and segments[-3] + segments[-1] > len(text):
                segments[-1] = len(text) - segments[-3]
            self.segments = array("q")
        return Extracted(text, pages or [], self.headings, title, blocks, segments)

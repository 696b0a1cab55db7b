"""Reviewed documents (PDF, HTML, Markdown, plain text) to text with page and heading positions.

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
* **Markdown: markdown-it-py**, already a dependency (basis text is inline Markdown).

:func:`extract_bounded` runs the extraction in a child process with limits on CPU time,
memory and output, so that a malformed or malicious file ends in a one-line error instead
of a hang or a crash; :func:`extract` is the same work in-process.

Extracted text is data: it is stored, searched and shown, never evaluated. Control
characters (escape sequences included) are removed, so nothing in a document can drive
the terminal that shows it.
"""

from __future__ import annotations

import bisect
import contextlib
import html
import io
import json
import os
import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

MAX_SNAPSHOT_BYTES = 100 * 1024 * 1024
"""Largest file accepted as a snapshot (papers with figures are a few MB; a 100 MB file is
almost certainly not a document to quote from)."""

MAX_PAGES = 3000
"""Most pages read from one PDF."""

MAX_TEXT_CHARS = 30_000_000
"""Most characters of extracted text kept from one document."""

MAX_OUTLINE_ENTRIES = 5000

EXTRACT_SECONDS = float(os.environ.get("PROTOCODER_EXTRACT_SECONDS", "120"))
"""Wall-clock limit of one extraction (a 300-page paper takes a few seconds)."""

EXTRACT_MEMORY = int(os.environ.get("PROTOCODER_EXTRACT_MEMORY", str(2 * 1024 * 1024 * 1024)))
"""Address-space limit of the extracting child process, in bytes (2 GiB unless
``PROTOCODER_EXTRACT_MEMORY`` says otherwise)."""

EXTRACTOR_VERSION = 2
"""Raised when extraction changes what text it produces; sidecars of other versions are redone."""


class ExtractionError(Exception):
    """The document cannot be read as text; the message says why, in one line."""


BLOCK_KINDS = ("heading", "paragraph", "list_item", "table_row", "code", "admonition", "blockquote", "footnote",
               "html")
"""What a :class:`Block` can be."""


@dataclass(frozen=True)
class Block:
    """One unit of a document's structure: a heading, a paragraph, one list item, one table row,
    a code block, an admonition (``> [!NOTE]``), a blockquote, a footnote or an HTML block.

    ``text[start:end]`` of the :class:`Extracted` text is the block's text (no separators
    around it); ``path`` is the heading path above it, outermost first (a heading's own path
    ends with itself).
    """

    start: int
    end: int
    kind: str
    path: tuple[str, ...] = ()

    @property
    def heading(self) -> str:
        """The heading path as one line: ``Usage › Options``."""
        return " › ".join(self.path)


@dataclass
class Extracted:
    """A document's text, where its pages, headings and blocks begin in it, and where each of its
    characters is in the raw file.

    Offsets are character offsets of ``text``. *Raw* offsets are character offsets of the
    raw file's decoded text (:func:`raw_text`): the Markdown, HTML or text source as written.
    PDFs have no raw offsets (the file is binary): :meth:`raw_offset` returns None there.
    """

    text: str
    pages: list[tuple[int, str]] = field(default_factory=list)
    """(offset where the page starts, its label), in page order; empty for documents without pages."""
    headings: list[tuple[int, int, str]] = field(default_factory=list)
    """(offset, level 1–6, heading text), in text order."""
    title: str = ""
    blocks: list[Block] = field(default_factory=list)
    """The document's blocks in text order; they do not overlap."""
    raw_segments: list[tuple[int, int, int]] | None = None
    """Runs of text that stand character for character in the raw text: (offset, raw offset,
    length), in text order. None when there is no raw text (PDF)."""

    def __post_init__(self) -> None:
        self._segment_starts = [segment[0] for segment in self.raw_segments or []]
        self._block_starts = [block.start for block in self.blocks]

    @property
    def has_raw(self) -> bool:
        """True when offsets can be mapped to the raw file (every kind of document but PDF)."""
        return self.raw_segments is not None

    def raw_offset(self, offset: int) -> int | None:
        """Where the character at ``offset`` of the text is in the raw text (None for a PDF).

        A character the extraction added (a separator between blocks) maps to where the next
        character that comes from the file is.
        """
        if self.raw_segments is None:
            return None
        index = bisect.bisect_right(self._segment_starts, offset) - 1
        if index >= 0:
            start, raw_start, length = self.raw_segments[index]
            if offset < start + length:
                return raw_start + offset - start
        if index + 1 < len(self.raw_segments):
            return self.raw_segments[index + 1][1]
        if index >= 0:
            start, raw_start, length = self.raw_segments[index]
            return raw_start + length
        return 0

    def raw_end_offset(self, end: int) -> int | None:
        """Where a passage of the text ending at ``end`` (exclusive) ends in the raw text (None for a PDF).

        An end among added characters maps to the end of the last character before it that
        comes from the file.
        """
        if self.raw_segments is None:
            return None
        index = bisect.bisect_left(self._segment_starts, end) - 1
        if index < 0:
            return self.raw_segments[0][1] if self.raw_segments else 0
        start, raw_start, length = self.raw_segments[index]
        return raw_start + min(end - start, length)

    def raw_span(self, start: int, end: int) -> tuple[int, int] | None:
        """The raw range of ``text[start:end]``, or None for a PDF."""
        raw_start, raw_end = self.raw_offset(start), self.raw_end_offset(end)
        if raw_start is None or raw_end is None:
            return None
        return raw_start, max(raw_start, raw_end)

    def block_at(self, offset: int) -> Block | None:
        """The block holding ``offset`` (or the last one before it when it falls between blocks)."""
        index = bisect.bisect_right(self._block_starts, offset) - 1
        return self.blocks[index] if index >= 0 else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the sidecar's body)."""
        raw = None if self.raw_segments is None else [value for segment in self.raw_segments for value in segment]
        return {"title": self.title, "text": self.text, "pages": [list(p) for p in self.pages],
                "headings": [list(h) for h in self.headings],
                "blocks": [[b.start, b.end, b.kind, list(b.path)] for b in self.blocks], "raw": raw}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Extracted:
        """Inverse of :meth:`to_dict`; raises ValueError for data of the wrong shape."""
        text = data.get("text")
        if not isinstance(text, str):
            raise ValueError("no text")
        pages = [(int(offset), str(label)) for offset, label in data.get("pages") or []]
        headings = [(int(offset), int(level), str(title)) for offset, level, title in data.get("headings") or []]
        blocks = [Block(int(start), int(end), str(kind), tuple(str(p) for p in path))
                  for start, end, kind, path in data.get("blocks") or []]
        flat = data.get("raw")
        segments = None
        if flat is not None:
            values = [int(v) for v in flat]
            if len(values) % 3:
                raise ValueError("raw offsets come in threes")
            segments = [(values[i], values[i + 1], values[i + 2]) for i in range(0, len(values), 3)]
        return cls(text, pages, headings, str(data.get("title") or ""), blocks, segments)


# --------------------------------------------------------------------------- cleaning

_T1_LIGATURES = {"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl"}
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def clean(text: str, *, pdf: bool = False) -> str:
    """NFC text with Unix line ends and no control characters (tab and newline aside).

    In PDF text the codes 0x1B–0x1F are ligatures of TeX's T1 fonts, so they become the
    letters; anywhere else they are controls like the rest and are dropped.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if pdf:
        for code, letters in _T1_LIGATURES.items():
            text = text.replace(code, letters)
    text = _CONTROL.sub("", text)
    return unicodedata.normalize("NFC", text)


_NUMBERED_HEADING = re.compile(r"^(?:(?:[1-9]\d?|[A-Z])(?:\.\d{1,2}){0,3}\.?)[ \t]+[A-Z][^\n]{1,80}$", re.M)
"""A line such as ``3.2 Stopping rule`` or ``A.4 Harness``: a section heading in a document
without an outline (a heuristic: it may miss headings, and says nothing it cannot place)."""


def numbered_headings(text: str) -> list[tuple[int, int, str]]:
    """Headings found as numbered lines (``2``, ``2.1``, ``A.3``), their level from the number."""
    headings = []
    for match in _NUMBERED_HEADING.finditer(text):
        line = match.group().strip()
        number = line.split()[0].rstrip(".")
        if line.endswith((".", ",", ";", ":")) or (len(number) == 1 and number.isalpha() and "." not in number):
            continue  # a sentence that starts with a number, or "A Benchmark Paper"
        headings.append((match.start(), number.count(".") + 1, line))
    return headings


# --------------------------------------------------------------------------- structure and raw offsets

_MAX_SKIP = 256
"""Most raw characters skipped to find the next character of a piece that is not in the raw
text as one run (an entity, markup between words, collapsed white space)."""


_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")


class _Layout:
    """Builds an extracted text block by block, with its headings and its map to the raw text.

    Separators between blocks (``"\n\n"``, ``"\n"``, ``"\t"`` between table cells) come
    from :meth:`gap`; the largest asked for since the last text wins. Text comes from
    :meth:`emit`, which also finds where it stands in the raw text.
    """

    _RANK = {"": 0, "\t": 1, "\n": 2, "\n\n": 3}

    def __init__(self, raw: str | None) -> None:
        self.raw = raw
        self.parts: list[str] = []
        self.length = 0
        self.pending = ""
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, int, str]] = []
        self.segments: list[tuple[int, int, int]] = []
        self.kind = "paragraph"
        self.path: tuple[str, ...] = ()
        self.block_start: int | None = None

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
        if self.length > MAX_TEXT_CHARS:
            raise ExtractionError(f"the document holds more than {MAX_TEXT_CHARS:,} characters of text")
        if raw_from is None or self.raw is None:
            return raw_from
        return self.align(text, offset, raw_from, len(self.raw) if raw_limit is None else raw_limit)

    def _add(self, offset: int, raw_offset: int, length: int) -> None:
        if self.segments:
            start, raw_start, size = self.segments[-1]
            if start + size == offset and raw_start + size == raw_offset:
                self.segments[-1] = (start, raw_start, size + length)
                return
        self.segments.append((offset, raw_offset, length))

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
                    if entity and html.unescape(entity.group()) == char:
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
            self.blocks.append(Block(start, end, self.kind, self.path if path is None else path))
        self.block_start = None

    def result(self, pages: list[tuple[int, str]] | None = None, title: str = "") -> Extracted:
        """The text with its blocks (trimmed of white space) and raw map."""
        self.end_block()
        text = "".join(self.parts).rstrip()
        blocks = []
        for block in self.blocks:
            start, end = block.start, min(block.end, len(text))
            while start < end and text[start].isspace():
                start += 1
            while end > start and text[end - 1].isspace():
                end -= 1
            if end > start:
                blocks.append(Block(start, end, block.kind, block.path))
        segments = None
        if self.raw is not None:
            segments = [(s, r, min(n, len(text) - s)) for s, r, n in self.segments if s < len(text)]
        return Extracted(text, pages or [], self.headings, title, blocks, segments)


_VERSION_HEADING = re.compile(
    r"^(?:\[?(?:v(?:ersion)?\.?\s*|release\s+|version\s+)?\d+(?:\.\d+)+(?:[-+.][0-9A-Za-z.-]+)?\]?"
    r"|\[?unreleased\]?)(?:\s*(?:[-–—:(]|\d{4}-\d{2}-\d{2}).*)?$", re.I)
"""A changelog's version line: ``v0.3.1``, ``[1.2.0] - 2024-01-01``, ``Version 2.0 (May 2024)``,
``[Unreleased]``. It says when, not what a passage is about."""


def is_version_heading(title: str) -> bool:
    """True for a changelog version line (see :data:`_VERSION_HEADING`)."""
    return bool(_VERSION_HEADING.match(title.strip()))


def meaningful_section(path: tuple[str, ...] | list[str], title: str = "") -> str:
    """The nearest heading of ``path`` that says what a passage is about: not a changelog
    version line, not the document's (or package's) own title. Empty when there is none."""
    for index in range(len(path) - 1, -1, -1):
        heading = path[index]
        if is_version_heading(heading):
            continue
        if index == 0 and len(path) >= 1 and title and " ".join(heading.split()) == " ".join(title.split()):
            continue
        return heading
    return ""


def _paragraph_blocks(text: str, headings: list[tuple[int, int, str]], start: int, end: int,
                      path_of: Any) -> list[Block]:
    """Blocks of plain text between ``start`` and ``end``: paragraphs split at blank lines,
    headings (one line each, at their offsets) on their own."""
    cuts = [start]
    for separator in re.finditer(r"\n[ \t]*\n", text[start:end]):
        cuts.extend((start + separator.start(), start + separator.end()))
    cuts.append(end)
    heading_lines = sorted((offset, text.find("\n", offset) if "\n" in text[offset:] else len(text))
                           for offset, _, _ in headings)
    heading_starts = [offset for offset, _ in heading_lines]
    blocks = []
    for index in range(0, len(cuts), 2):
        cursor, piece_end = cuts[index], cuts[index + 1]
        # Headings inside this paragraph stand on their own; the text between them is paragraphs.
        first = bisect.bisect_left(heading_starts, cursor)
        last = bisect.bisect_left(heading_starts, piece_end)
        for heading_start, heading_end in heading_lines[first:last]:
            heading_end = min(heading_end if heading_end >= 0 else piece_end, piece_end)
            if heading_start > cursor:
                blocks.append(Block(cursor, heading_start, "paragraph", path_of(cursor)))
            blocks.append(Block(heading_start, heading_end, "heading", path_of(heading_start)))
            cursor = heading_end
        if cursor < piece_end:
            blocks.append(Block(cursor, piece_end, "paragraph", path_of(cursor)))
    result = []
    for block in blocks:
        s, e = block.start, block.end
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            result.append(Block(s, e, block.kind, block.path))
    return result


def _path_finder(headings: list[tuple[int, int, str]]) -> Any:
    """A function from offset to the heading path above it (a heading's own path ends with itself)."""
    paths: list[tuple[int, tuple[str, ...]]] = []
    stack: list[tuple[int, str]] = []
    for offset, level, title in headings:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        paths.append((offset, tuple(t for _, t in stack)))
    starts = [offset for offset, _ in paths]

    def path_of(offset: int) -> tuple[str, ...]:
        index = bisect.bisect_right(starts, offset) - 1
        return paths[index][1] if index >= 0 else ()

    return path_of


def _pdf_blocks(text: str, headings: list[tuple[int, int, str]]) -> list[Block]:
    """Paragraph blocks of PDF text: a line that ends a sentence well short of the page's
    measure ends a paragraph (PDF text has no blank lines inside a page)."""
    path_of = _path_finder(headings)
    heading_at = {offset for offset, _, _ in headings}
    lines = list(re.finditer(r"[^\n]+", text))
    if not lines:
        return []
    measure = sorted(len(m.group()) for m in lines)[int(len(lines) * 0.8)] if lines else 0
    blocks = []
    start = lines[0].start()
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else None
        content = line.group().rstrip()
        if line.start() in heading_at:
            if line.start() > start:
                blocks.append(Block(start, line.start() - 1, "paragraph", path_of(start)))
            blocks.append(Block(line.start(), line.end(), "heading", path_of(line.start())))
            start = following.start() if following else line.end()
            continue
        ends = (following is None or text[line.end():following.start()].count("\n") > 1
                or following.start() in heading_at
                or (content.endswith((".", "!", "?", ":")) and len(content) < 0.8 * measure))
        if ends:
            blocks.append(Block(start, line.end(), "paragraph", path_of(start)))
            start = following.start() if following else line.end()
    return [b for b in blocks if b.end > b.start]


# --------------------------------------------------------------------------- PDF


def _pdf(data: bytes) -> Extracted:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            # Many publishers encrypt with an empty user password (only printing is
            # restricted): such a file opens. One that needs a password does not.
            try:
                opened = reader.decrypt("")
            except Exception:  # noqa: BLE001 - unsupported algorithm, missing crypto library
                opened = 0
            if not opened:
                raise ExtractionError("the PDF is encrypted with a password; save an unencrypted copy "
                                      "(print to PDF) and add that")
        count = len(reader.pages)
    except ExtractionError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError,
            OSError) as exc:
        raise ExtractionError(f"not a readable PDF ({_reason(exc)})") from None
    if count == 0:
        raise ExtractionError("the PDF has no pages")
    if count > MAX_PAGES:
        raise ExtractionError(f"the PDF has {count:,} pages; the limit is {MAX_PAGES:,}")
    try:
        labels = list(reader.page_labels)
    except Exception:  # noqa: BLE001 - a broken label tree: plain numbers serve as well
        labels = []
    if len(labels) != count:
        labels = [str(number) for number in range(1, count + 1)]
    parts: list[str] = []
    pages: list[tuple[int, str]] = []
    length = 0
    for index in range(count):
        try:
            page_text = clean(reader.pages[index].extract_text() or "", pdf=True).strip("\n")
        except Exception as exc:  # noqa: BLE001 - pypdf raises many kinds on broken content streams
            raise ExtractionError(f"page {index + 1} cannot be read ({_reason(exc)})") from None
        if parts:
            parts.append("\n\n")
            length += 2
        pages.append((length, labels[index]))
        parts.append(page_text)
        length += len(page_text)
        if length > MAX_TEXT_CHARS:
            raise ExtractionError(f"the PDF holds more than {MAX_TEXT_CHARS:,} characters of text")
    text = "".join(parts)
    if not text.strip():
        raise ExtractionError("the PDF has no text layer (a scan?); run OCR on it first")
    headings = _outline_headings(reader, text, pages) or numbered_headings(text)
    title = ""
    with contextlib.suppress(Exception):
        title = clean(str((reader.metadata or {}).get("/Title") or "")).strip()
    return Extracted(text, pages, headings, title or _first_line(text), _pdf_blocks(text, headings), None)


def _outline_headings(reader: Any, text: str, pages: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """Headings from the PDF's outline, placed at their line on their page."""
    from .locate import Haystack

    entries: list[tuple[int, str, int]] = []

    def walk(items: Any, level: int) -> None:
        # In pypdf's outline a list that follows an entry holds that entry's children.
        for item in items:
            if len(entries) >= MAX_OUTLINE_ENTRIES:
                return
            if isinstance(item, list):
                if level < 6:
                    walk(item, level + 1)
                continue
            page = reader.get_destination_page_number(item)
            title = clean(str(getattr(item, "title", "") or "")).strip()
            if title and page is not None and 0 <= page < len(pages):
                entries.append((level, title, page))

    try:
        walk(reader.outline, 1)
    except Exception:  # noqa: BLE001 - a broken outline: fall back to numbered lines
        return []
    headings = []
    for level, title, page in entries:
        start = pages[page][0]
        end = pages[page + 1][0] if page + 1 < len(pages) else len(text)
        found = Haystack(text[start:end]).find(title)
        if found is None:
            offset, line = start, title
        else:
            line_start = text.rfind("\n", start, start + found.start) + 1
            line_start = max(line_start, start)
            line_end = text.find("\n", start + found.end, end)
            line_end = end if line_end < 0 else line_end
            offset, line = line_start, text[line_start:line_end].strip()
            if len(line) > len(title) + 20:
                line = title  # the title sits inside a paragraph: keep the outline's words
        headings.append((offset, level, line))
    headings.sort(key=lambda h: h[0])
    return headings


def _reason(exc: BaseException) -> str:
    message = " ".join(str(exc).split())
    if not message:
        return type(exc).__name__
    return message[:200]


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


# --------------------------------------------------------------------------- HTML

_SKIPPED = {"script", "style", "template", "noscript", "iframe", "object", "embed", "svg", "math", "head",
            "canvas", "select", "button"}
_BLOCKS = {"address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt", "figcaption",
           "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav",
           "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "th", "thead", "tr", "ul", "caption"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track",
         "wbr"}


_PARAGRAPH_BREAK = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table", "ul", "ol", "dl",
                    "figure", "aside", "details"}
_HTML_KINDS = {"li": "list_item", "tr": "table_row", "pre": "code", "blockquote": "blockquote",
               "aside": "admonition", "h1": "heading", "h2": "heading", "h3": "heading", "h4": "heading",
               "h5": "heading", "h6": "heading"}
_ADMONITION_CLASS = re.compile(r"\b(?:admonition|callout|alert|note|warning|tip|caution|important)\b", re.I)


class _HtmlText(HTMLParser):
    """Collects visible text block by block, with headings and raw offsets; scripts and styles are skipped."""

    def __init__(self, raw: str) -> None:
        super().__init__(convert_charrefs=True)
        self.raw = raw
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", raw)]
        self.out = _Layout(raw)
        self.skip = 0
        self.pre = 0
        self.heading: tuple[int, list[str]] | None = None  # (level, text) of the open heading
        self.heading_stack: list[tuple[int, str]] = []
        self.containers: list[str] = []  # kinds of the open block elements, innermost last
        self.cells = 0
        self.title_parts: list[str] = []
        self.in_title = False

    def _raw_position(self) -> int:
        line, column = self.getpos()
        return self.line_starts[min(line, len(self.line_starts)) - 1] + column

    def _path(self) -> tuple[str, ...]:
        return tuple(title for _, title in self.heading_stack)

    def _boundary(self) -> None:
        """A block element opened or closed: the next text starts a block of the innermost kind."""
        self.out.start_block(self.containers[-1] if self.containers else "paragraph", self._path())

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "title" and not self.title_parts:
            self.in_title = True
        if tag in _SKIPPED:
            if tag not in _VOID:
                self.skip += 1
            return
        if self.skip:
            return
        if tag == "pre":
            self.pre += 1
        if tag in ("td", "th") and "table_row" in self.containers[-1:]:
            if self.cells:
                self.out.gap("\t")
            self.cells += 1
            return
        if tag in _BLOCKS:
            self.out.gap("\n\n" if tag in _PARAGRAPH_BREAK else "\n")
            if tag not in _VOID:
                classes = dict(attrs).get("class") or ""
                kind = _HTML_KINDS.get(tag, "paragraph")
                admonition = tag in ("div", "section") and _ADMONITION_CLASS.search(classes)
                if admonition or (kind == "paragraph" and "admonition" in self.containers):
                    kind = "admonition"
                self.containers.append(kind)
            if tag == "tr":
                self.cells = 0
            self._boundary()
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.heading = (int(tag[1]), [])

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIPPED:
            if self.skip:
                self.skip -= 1
            return
        if self.skip:
            return
        if tag == "pre" and self.pre:
            self.pre -= 1
        if tag in ("td", "th") and "table_row" in self.containers[-1:]:
            return
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456" and self.heading is not None:
            level, words = self.heading
            title = " ".join("".join(words).split())[:300]
            self.heading = None
            if title:
                while self.heading_stack and self.heading_stack[-1][0] >= level:
                    self.heading_stack.pop()
                self.heading_stack.append((level, title))
                start = self.out.block_start if self.out.block_start is not None else self.out.length
                self.out.headings.append((start, level, title))
                self.out.end_block(self._path())
        if tag in _BLOCKS and tag not in _VOID:
            if self.containers:
                self.containers.pop()
            self.out.gap("\n\n" if tag in _PARAGRAPH_BREAK else "\n")
            self._boundary()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
            return
        if self.skip:
            return
        raw_from = self._raw_position()
        raw_limit = min(len(self.raw), raw_from + 8 * len(data) + 64)
        if self.pre:
            self._text(clean(data), raw_from, raw_limit)
            return
        collapsed = re.sub(r"\s+", " ", clean(data))
        if not collapsed.strip():
            last = self.out.parts[-1] if self.out.parts else ""
            if collapsed and last and not last.endswith((" ", "\n", "\t")) and not self.out.pending:
                self._text(" ", raw_from, raw_limit)
            return
        if self.out.pending or not self.out.parts or self.out.parts[-1].endswith((" ", "\n", "\t")):
            collapsed = collapsed.lstrip()
        self._text(collapsed, raw_from, raw_limit)

    def _text(self, text: str, raw_from: int, raw_limit: int) -> None:
        if self.heading is not None:
            self.heading[1].append(text)
        self.out.emit(text, raw_from, raw_limit)


def _html(data: bytes) -> Extracted:
    raw = _decode_html(data)
    parser = _HtmlText(raw)
    try:
        parser.feed(raw)
        parser.close()
    except ExtractionError:
        raise
    except (AssertionError, ValueError, RecursionError) as exc:
        raise ExtractionError(f"not readable HTML ({_reason(exc)})") from None
    headings = parser.out.headings
    title = " ".join(clean("".join(parser.title_parts)).split())
    extracted = parser.out.result(title=title or (headings[0][2] if headings else ""))
    if not extracted.text.strip():
        raise ExtractionError("the page has no visible text")
    extracted.headings = [h for h in extracted.headings if h[0] < len(extracted.text)]
    if not extracted.title:
        extracted.title = _first_line(extracted.text)
    return extracted


_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


def _decode_html(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    declared = _CHARSET.search(data[:4096])
    if declared:
        with contextlib.suppress(LookupError, UnicodeDecodeError):
            return data.decode(declared.group(1).decode("ascii"))
    return data.decode("cp1252", errors="replace")


# --------------------------------------------------------------------------- Markdown and text

_MD_BREAK_AFTER = {"paragraph_close": "\n\n", "heading_close": "\n\n", "bullet_list_close": "\n\n",
                   "ordered_list_close": "\n\n", "list_item_close": "\n", "blockquote_close": "\n\n",
                   "tr_close": "\n", "table_close": "\n\n", "hr": "\n\n", "footnote_close": "\n\n"}
_MD_CONTAINERS = {"list_item_open": "list_item", "blockquote_open": "blockquote", "footnote_open": "footnote",
                  "tr_open": "table_row", "th_open": "cell", "td_open": "cell"}
_ADMONITION_MARK = re.compile(r"^\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*\n?", re.I)
"""GitHub's alert marker, the first line of a blockquote: ``> [!NOTE]``."""


def _line_starts(raw: str) -> list[int]:
    """Offsets where the lines of ``raw`` start, a line ending at ``\\r\\n``, ``\\r`` or ``\\n``
    (as markdown-it counts them: its line numbers index this list)."""
    return [0] + [m.end() for m in re.finditer("\r\n|\r|\n", raw)]


def _markdown(data: bytes) -> Extracted:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from mdit_py_plugins.footnote import footnote_plugin

    raw = _decode_text(data)
    source = clean(raw)
    tokens = MarkdownIt("commonmark").enable("table").use(footnote_plugin).parse(source)
    starts = _line_starts(raw)
    out = _Layout(raw)
    containers: list[str] = []
    heading_stack: list[tuple[int, str]] = []
    heading_lines: list[tuple[int, tuple[str, ...]]] = []  # (source line, path): footnotes are moved to the end
    heading_level = 0
    cells = 0

    def raw_range(token: Any) -> tuple[int, int]:
        if token.map is None:
            return 0, len(raw)
        first, last = token.map
        return starts[min(first, len(starts) - 1)], starts[last] if last < len(starts) else len(raw)

    def path() -> tuple[str, ...]:
        return tuple(title for _, title in heading_stack)

    def kind() -> str:
        for container in reversed(containers):
            if container in ("list_item", "footnote", "admonition", "blockquote"):
                return container
        return "paragraph"

    for token in tokens:
        token_type = token.type
        if token_type == "heading_open":
            heading_level = int(token.tag[1])
            out.start_block("heading", path())
        elif token_type in _MD_CONTAINERS:
            container = _MD_CONTAINERS[token_type]
            if container == "cell":
                if cells:
                    out.gap("\t")
                cells += 1
            elif container == "table_row":
                cells = 0
                out.start_block("table_row", path())
            containers.append(container)
        elif token_type.endswith("_close") and token_type[:-6] + "_open" in _MD_CONTAINERS:
            if containers:
                containers.pop()
            if token_type == "tr_close":
                out.end_block()
        if token_type == "inline":
            children = list(token.children or [])
            if children and children[0].type == "text" and containers[-1:] == ["blockquote"]:
                mark = _ADMONITION_MARK.match(children[0].content)
                if mark:
                    # The marker says what kind of block this is; it is no part of its text.
                    containers[-1] = "admonition"
                    rest = children[0].content[mark.end():]
                    children = children[1:]
                    if rest:
                        children.insert(0, Token("text", "", 0, content=rest))
                    elif children and children[0].type == "softbreak":
                        children = children[1:]
            title = ""
            if heading_level:
                title = " ".join(_inline_text(children).split())
                if title:
                    while heading_stack and heading_stack[-1][0] >= heading_level:
                        heading_stack.pop()
                    heading_stack.append((heading_level, title))
                    heading_lines.append((token.map[0] if token.map else 0, path()))
            elif "table_row" not in containers:
                block_path = path()
                if "footnote" in containers and token.map is not None:
                    # Footnotes are laid out at the end; their path is that of where they are written.
                    before = [p for line, p in heading_lines if line <= token.map[0]]
                    block_path = before[-1] if before else ()
                out.start_block(kind(), block_path)
            low, high = raw_range(token)
            offset = out.length + (len(out.pending) if out.parts else 0)
            _emit_inline(out, children, low, high)
            if heading_level:
                if title:
                    out.headings.append((offset, heading_level, title))
                out.end_block(path())
                heading_level = 0
            elif "table_row" not in containers:
                out.end_block()
        elif token_type in ("fence", "code_block"):
            out.start_block("code", path())
            low, high = raw_range(token)
            out.emit(token.content.rstrip("\n"), low, high)
            out.end_block()
            out.gap("\n\n")
        elif token_type == "html_block":
            out.start_block("html", path())
            low, high = raw_range(token)
            # The text between tags, run by run, so that each run is found where it is written.
            position: int | None = low
            for run in re.split(r"<[^>]*>", token.content):
                words = " ".join(html.unescape(run).split())
                if words:
                    if out.block_start is not None:
                        out.emit(" ")
                    position = out.emit(words, position, high)
            out.end_block()
            out.gap("\n\n")
        elif token_type == "paragraph_close" and token.hidden:
            out.gap("\n")  # the items of a tight list
        elif token_type in _MD_BREAK_AFTER:
            out.gap(_MD_BREAK_AFTER[token_type])
    headings = out.headings
    extracted = out.result(title=headings[0][2] if headings else "")
    if not extracted.text.strip():
        raise ExtractionError("the Markdown file has no text")
    if not extracted.title:
        extracted.title = _first_line(extracted.text)
    return extracted


def _emit_inline(out: _Layout, children: list[Any], low: int, high: int) -> int:
    """Emit an inline token's children, each found in the raw text from ``low`` on."""
    position = low
    for child in children:
        if child.type in ("text", "code_inline"):
            position = out.emit(child.content, position, high) or position
        elif child.type in ("softbreak", "hardbreak"):
            position = out.emit("\n", position, high) or position
        elif child.type == "image":
            position = _emit_inline(out, list(child.children or []), position, high)
        elif child.type == "html_inline" and re.match(r"<br\b", child.content, re.I):
            out.emit("\n")
    return position


def _inline_text(children: list[Any]) -> str:
    out = []
    for child in children:
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append("\n")
        elif child.type == "image":
            out.append(_inline_text(child.children or []))
    return "".join(out)


def _decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


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


def raw_text(data: bytes, media_type: str) -> str | None:
    """The raw file's decoded text, which raw offsets count in (None for a PDF: it is binary).

    Decoded exactly as the extractor decodes it, and nothing else: line ends, control
    characters and all stay as they are in the file.
    """
    if media_type == "text/html":
        return _decode_html(data)
    if media_type in ("text/markdown", "text/plain"):
        return _decode_text(data)
    return None


# --------------------------------------------------------------------------- entry points

_EXTRACTORS = {"application/pdf": _pdf, "text/html": _html, "text/markdown": _markdown, "text/plain": _plain}


def extract(data: bytes, media_type: str) -> Extracted:
    """Extract text from a document's bytes, in this process (see :func:`extract_bounded`).

    Raises :class:`ExtractionError` with a one-line reason.
    """
    try:
        extractor = _EXTRACTORS[media_type]
    except KeyError:
        raise ExtractionError(f"cannot extract text from {media_type}") from None
    return extractor(data)


def extract_bounded(data: bytes, media_type: str, *, seconds: float | None = None) -> Extracted:
    """:func:`extract` in a child process limited in time (``seconds``) and memory.

    A document that makes the extractor loop, recurse or allocate without end costs at
    most that long and that much, and ends in :class:`ExtractionError`.
    """
    limit = EXTRACT_SECONDS if seconds is None else seconds
    command = [sys.executable, "-m", "protocoder.evidence._worker", media_type, str(int(limit) + 1)]
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    try:
        result = subprocess.run(command, input=data, capture_output=True, timeout=limit, env=env,
                                check=False)
    except subprocess.TimeoutExpired:
        raise ExtractionError(f"text extraction took longer than {limit:g} s; the file is too large or "
                              "malformed") from None
    except OSError as exc:
        raise ExtractionError(f"cannot start text extraction ({exc.strerror or exc})") from None
    if result.returncode != 0 or not result.stdout:
        if result.returncode < 0 or b"MemoryError" in result.stderr:
            raise ExtractionError("text extraction ran out of the time or memory it may use; the file is too "
                                  "large or malformed")
        last = result.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise ExtractionError(f"text extraction failed ({last[0][:200]})")
    try:
        payload = json.loads(result.stdout)
    except ValueError:
        raise ExtractionError("text extraction returned no usable result") from None
    if "error" in payload:
        raise ExtractionError(str(payload["error"]))
    return Extracted.from_dict(payload)

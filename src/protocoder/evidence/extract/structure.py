"""The model every reader produces, and the structure found in text without markup.

:class:`Extracted` holds the text, its pages, headings and :class:`Block` list, and maps
offsets of the extracted text to the raw file's decoded text. Numbered headings and
paragraphs are found in text that has no markup (PDF, plain text).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

BLOCK_KINDS = ("heading", "paragraph", "list_item", "table_row", "code", "admonition", "blockquote", "footnote",
               "html")
"""What a :class:`Block` can be."""


@dataclass(frozen=True, slots=True)  # slots: a page of a million paragraphs holds a million of them
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


def _numbers(data: bytes, start: int, end: int) -> array | None:
    """The comma-separated digits of ``data[start:end]`` (a JSON array's items), read a slice at a
    time, or None when they are anything else."""
    numbers = array("q")
    view, position = memoryview(data), start
    while position < end:
        stop = data.find(b",", min(position + _SLICE, end), end)
        stop = end if stop < 0 else stop
        piece = bytes(view[position:stop])
        values = piece.split(b",")
        if piece.translate(None, b"0123456789,") or b"" in values:
            return None
        numbers.extend(map(int, values))
        position = stop + 1
    return numbers
_SLICE = 1 << 20
"""Bytes of a sidecar's blocks or raw map read at a time."""


def _rows(data: bytes, start: int, end: int) -> Iterator[Any]:
    """The elements of the JSON array whose items are ``data[start:end]``, a slice of about a
    megabyte at a time. A slice ends before a ``,[`` that follows a ``]``; when that is inside a
    string, the slice is not valid JSON (the string is not closed) and is extended to the next."""
    import json

    position = start
    while position < end:
        cut = min(position + _SLICE, end)
        while True:
            cut = data.find(b"],[", cut, end)
            cut = end if cut < 0 else cut + 1
            try:
                rows = json.loads(b"[" + data[position:cut] + b"]")
                break
            except ValueError:
                if cut >= end:
                    raise
                cut += 1
        yield from rows
        position = cut + 1


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
    raw_segments: array | None = None
    """Runs of text that stand character for character in the raw text: (offset, raw offset,
    length), in text order, flat (three integers a run, 24 bytes: a 25 MB README has a million
    runs). None when there is no raw text (PDF). Given as (offset, raw offset, length) triples,
    it is made flat."""

    def __post_init__(self) -> None:
        if self.raw_segments is not None and not isinstance(self.raw_segments, array):
            triples: Iterable[Any] = self.raw_segments
            self.raw_segments = array("q", [value for segment in triples for value in segment])
        self._segment_starts = self.raw_segments[0::3] if self.raw_segments is not None else array("q")
        self._block_starts = array("q", [block.start for block in self.blocks])

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
        segments = self.raw_segments
        index = bisect.bisect_right(self._segment_starts, offset) - 1
        if index >= 0:
            start, raw_start, length = segments[3 * index:3 * index + 3]
            if offset < start + length:
                return raw_start + offset - start
        if index + 1 < len(self._segment_starts):
            return segments[3 * index + 4]
        if index >= 0:
            return segments[3 * index + 1] + segments[3 * index + 2]
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
            return self.raw_segments[1] if self.raw_segments else 0
        start, raw_start, length = self.raw_segments[3 * index:3 * index + 3]
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
        return {**self._head(), "blocks": [[b.start, b.end, b.kind, list(b.path)] for b in self.blocks],
                "raw": None if self.raw_segments is None else self.raw_segments.tolist()}

    def _head(self) -> dict[str, Any]:
        """:meth:`to_dict` up to the blocks."""
        return {"title": self.title, "text": self.text, "pages": [list(p) for p in self.pages],
                "headings": [list(h) for h in self.headings]}

    def to_json(self, head: dict[str, Any]) -> str:
        """``json.dumps({**head, **self.to_dict()}, ensure_ascii=False, separators=(",", ":"))``, the
        same text, made without the lists of :meth:`to_dict`: the blocks and the raw map are
        written a slice at a time (a million runs as a list of integers cost 100 MB)."""
        import json

        def dumps(value: Any) -> str:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

        parts = [dumps({**head, **self._head(), "blocks": None})[:-len('"blocks":null}')]]
        step = 4096
        blocks = [dumps([[b.start, b.end, b.kind, list(b.path)] for b in self.blocks[i:i + step]])[1:-1]
                  for i in range(0, len(self.blocks), step)]
        parts += ['"blocks":[', ",".join(blocks), '],"raw":']
        del blocks
        if self.raw_segments is None:
            parts.append("null")
        else:
            raw = self.raw_segments
            parts += ["[", ",".join(",".join(map(str, raw[i:i + 3 * step])) for i in range(0, len(raw), 3 * step)),
                      "]"]
        parts.append("}")
        return "".join(parts)

    @staticmethod
    def load_json(data: bytes) -> Any:
        """``json.loads(data)`` of :meth:`to_json`'s text, the same value but for the blocks, an
        iterator of their rows, and the raw map, an array: both are read a slice at a time (a
        million blocks and runs as lists cost 300 MB; as :class:`Block` objects and an array, 70).
        Text written otherwise is read with ``json.loads``."""
        import json

        blocks_at, raw_at = data.rfind(b',"blocks":['), data.rfind(b'],"raw":')
        end = data.rstrip().rfind(b"}")
        if blocks_at < 0 or raw_at < blocks_at or end < raw_at:
            return json.loads(data)  # not written by to_json: read as it is
        payload = json.loads(data[:blocks_at] + b"}")
        if not isinstance(payload, dict):
            raise ValueError("not an extraction")
        payload["blocks"] = _rows(data, blocks_at + len(b',"blocks":['), raw_at)
        start = raw_at + len(b'],"raw":')
        payload["raw"] = _numbers(data, start + 1, end - 1) if data[start:start + 1] + data[end - 1:end] == b"[]" \
            else None
        if payload["raw"] is None:
            payload["raw"] = json.loads(data[start:end])
        return payload

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Extracted:
        """Inverse of :meth:`to_dict`; raises ValueError for data of the wrong shape."""
        text = data.get("text")
        if not isinstance(text, str):
            raise ValueError("no text")
        pages = [(int(offset), str(label)) for offset, label in data.get("pages") or []]
        headings = [(int(offset), int(level), str(title)) for offset, level, title in data.get("headings") or []]
        paths: dict[tuple[str, ...], tuple[str, ...]] = {}  # one tuple for the blocks of one section
        kinds = {kind: kind for kind in BLOCK_KINDS}
        blocks = []
        for start, end, kind, path in data.get("blocks") or []:
            key = tuple(str(p) for p in path)
            blocks.append(Block(int(start), int(end), kinds.get(kind) or str(kind), paths.setdefault(key, key)))
        flat = data.get("raw")
        segments = None
        if flat is not None:
            try:
                segments = flat if isinstance(flat, array) else array("q", flat)
            except (TypeError, OverflowError):
                raise ValueError("raw offsets are integers") from None
            if len(segments) % 3:
                raise ValueError("raw offsets come in threes")
        return cls(text, pages, headings, str(data.get("title") or ""), blocks, segments)


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


_PICTOGRAPH = re.compile("[\u200d\ufe0e\ufe0f\u20e3\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f]")
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\[\s*\]|\{\s*\}")
_LOOSE_ENDS = re.compile(r"^[\s=:|>•·*~-]+|[\s=:|<>•·*~-]+$")


def plain_heading(title: str) -> str:
    """A heading as a location names it: without emoji and pictographs (``📰 News`` → ``News``,
    ``EvalPlus(📖) => 📚`` → ``EvalPlus``), on one line. The document's text keeps them: a quote
    is the text as written; only the heading path of its blocks and its location drop them.
    A heading of nothing but pictographs stays as it is."""
    kept = "".join(char for char in title if unicodedata.category(char) != "So")
    kept = _EMPTY_BRACKETS.sub("", _PICTOGRAPH.sub("", kept))
    kept = _LOOSE_ENDS.sub("", " ".join(kept.split()))
    return kept or " ".join(title.split())


_GENERIC_HEADINGS = frozenset([
    "news", "latest news", "updates", "latest updates", "recent updates", "announcement", "announcements",
    "changelog", "change log", "changes", "release notes", "releases", "what's new", "whats new",
    "table of contents", "contents", "toc", "overview", "about", "introduction", "intro", "quickstart",
    "quick start", "getting started", "installation", "install", "setup", "set up", "usage", "requirements",
    "features", "download", "downloads", "contributions", "advanced start", "advanced usage", "get started",
    "as a user", "as a developer", "for users", "for developers", "for contributors",
    "documentation", "docs", "citation", "license", "acknowledgement", "acknowledgements", "contributing",
    "contact", "faq", "experiments", "evaluation", "results", "examples", "tutorial", "roadmap", "references",
    "our other projects", "related projects", "acknowledgment", "acknowledgments", "citing", "cite", "support"])
"""Section names that say nothing about which document this is: never its default title, also
when words follow (``Acknowledgement for OSWorld-Verified``, ``Installation on Windows``)."""


def is_generic_heading(title: str) -> bool:
    """True for a section name like ``News``, ``Table of Contents`` or ``Quick Start`` (see above),
    alone or followed by more words."""
    words = plain_heading(title).casefold().rstrip(" :!").split()
    return any(" ".join(words[:count]) in _GENERIC_HEADINGS for count in range(1, min(len(words), 4) + 1))


PROSE_WORDS = 5
"""Words (outside links and images) that make a block prose, whose start :func:`document_title` takes as the limit
of the headings that may name a document: a sentence says something; a label (``**Status:** Stable release``), a
badge row or a bar of links (``Setup | Leaderboard``) is front matter. Markdown and HTML count them alike."""


def document_title(headings: list[tuple[int, int, str]], *, banner: str = "", banner_image: str = "",
                   prose: int | None = None) -> str:
    """A document's default title: its first meaningful heading, not a banner or a section name.

    A heading names the document only when it comes before the document's prose (``prose``, the
    offset where its first paragraph of prose, or code, starts; None: no limit): only badges,
    images, HTML banners, link bars and tables of contents precede a title. A heading after a
    paragraph names a section of it (MiniWoB++'s README opens with badges and three paragraphs,
    then ``Installation``, ``Example Usage``: no heading names it).

    In order: the heading inside an HTML banner before the first heading (``banner``); the first
    heading of the top level present, when it is not a section name (``News``, ``Overview``,
    ``Advanced Start``) or a version line; the alt text of the banner's first image when it says the
    image is a logo (``OpenHands logo`` → ``OpenHands``: a logo is the project's name), without
    "logo"; the first heading of the top level that is not a section name. A section name followed
    by "to" or "of" names a subject (``Contributing to AutoGenBench``). Emoji are left out (see
    :func:`plain_heading`). Empty when the document has none of these (the caller then names it
    after its file): a heading further down names a part of the document (``VMware/VirtualBox``
    under ``Installation``), a section name names no document, and nor does a picture that is not
    a logo (SWE-bench's mascot, ``Kawi the SWE-Llama``; a diagram; a banner).
    """
    if banner.strip():
        return plain_heading(banner)
    if prose is not None:
        headings = [heading for heading in headings if heading[0] < prose]
    meaningful = [title for _, _, title in headings
                  if (not is_generic_heading(title) or _names_subject(title))
                  and not is_version_heading(plain_heading(title))]
    top = min((level for _, level, _ in headings), default=0)
    first_top = next((title for _, level, title in headings if level == top), "")
    if first_top and meaningful and first_top == meaningful[0]:
        return plain_heading(first_top)
    # "Logo of UpTrain - an open-source platform …" names UpTrain: the word and its "of" leave together.
    image = re.sub(r"\b(?:logo|banner|icon|image)\b(?:\s+(?:of|for)\b)?", "", banner_image, flags=re.I) \
        if re.search(r"\blogo\b", banner_image, re.I) else ""
    if image.strip(" -_:"):
        return plain_heading(image.strip(" -_:"))
    top_meaningful = [title for _, level, title in headings if level == top and title in meaningful]
    return plain_heading(top_meaningful[0]) if top_meaningful else ""


def _names_subject(title: str) -> bool:
    """True for a section name followed by "to" or "of" and what it is about (``Contributing to
    AutoGenBench``, ``Introduction to the harness``): such a heading names its subject."""
    words = plain_heading(title).casefold().rstrip(" :!").split()
    return any(" ".join(words[:count]) in _GENERIC_HEADINGS and words[count] in ("to", "of")
               for count in range(1, min(len(words) - 2, 4) + 1))


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
        if index == 0 and title and _is_title(heading, title):
            continue
        return heading
    return ""


def _is_title(heading: str, title: str) -> bool:
    """True when ``heading`` is the document's title (a page's <title> may add the site's name)."""
    heading, title = " ".join(heading.split()).casefold(), " ".join(title.split()).casefold()
    return heading == title or (len(heading) >= 4 and title.startswith(heading) and not title[len(heading)].isalnum())


def paragraph_blocks(text: str, headings: list[tuple[int, int, str]], start: int, end: int,
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


def path_finder(headings: list[tuple[int, int, str]]) -> Any:
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

"""A source's extracted text cut into passages, each with the heading path above it.

Blocks of the extraction become passages (runs of list items and table rows grouped, long
blocks cut at line or sentence ends), with their range in the extracted and the raw text.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..extract import Extracted

HEADING_SEPARATOR = " › "

MAX_PASSAGE_CHARS = 700
"""A block longer than this (a PDF page without blank lines, a long paragraph) is cut at
line or sentence ends into passages of about :data:`TARGET_PASSAGE_CHARS`."""

TARGET_PASSAGE_CHARS = 450


@dataclass(frozen=True)
class Passage:
    """One block of a source's extracted text, with the heading path above it."""

    source: str
    heading: str
    """Heading path, outermost first, joined with " › " (empty above the first heading)."""
    start: int
    end: int
    """Character offsets in the snapshot's extracted text."""
    text: str
    raw_start: int | None = None
    raw_end: int | None = None
    """Character offsets in the raw snapshot's decoded text, where the extraction knows them."""


@dataclass(frozen=True)
class Segment:
    """A passage of one extracted text, before it is tied to a source."""

    start: int
    end: int
    heading: str
    raw_start: int | None = None
    raw_end: int | None = None


_BLOCK = re.compile(r"(?:[^\n]|\n(?![ \t]*\n))+")
"""A run of text up to a blank line."""

GROUPED_KINDS = ("list_item", "table_row")
"""Block kinds whose consecutive blocks under one heading are read together: one list item or
one table row alone is often too short to rank (and to judge); its neighbours are its context."""

GROUP_PASSAGES = True
"""Whether consecutive list items and table rows are grouped into passages of about
TARGET_PASSAGE_CHARS (chosen on the dev split of benchmarks/find_recall.py)."""


def passages_of(extracted: Extracted) -> list[Segment]:
    """The passages of one extracted text, in text order, each with its heading path and raw range.

    This is the one place segmentation is decided. The extraction's blocks are the units
    (paragraphs, list items, table rows, code, admonitions, blockquotes, footnotes); a
    heading is not a passage of its own but names the passages under it. Consecutive list
    items and table rows under the same heading are grouped up to about
    :data:`TARGET_PASSAGE_CHARS`; a block longer than :data:`MAX_PASSAGE_CHARS` (a PDF
    paragraph run) is cut at line or sentence ends. A text whose extraction recorded no
    blocks is cut at blank lines instead, with the headings around it.
    """
    if not extracted.blocks:
        return _passages_by_blank_lines(extracted)
    text = extracted.text
    spans: list[tuple[int, int, str]] = []
    group: list[Any] = []

    def flush() -> None:
        if group:
            spans.append((group[0].start, group[-1].end, group[0].heading))
            group.clear()

    for block in extracted.blocks:
        if block.kind == "heading" or block.start >= block.end:
            flush()
            continue
        if GROUP_PASSAGES and block.kind in GROUPED_KINDS:
            if group and (group[0].kind != block.kind or group[0].path != block.path
                          or block.end - group[0].start > TARGET_PASSAGE_CHARS):
                flush()
            group.append(block)
            continue
        flush()
        spans.append((block.start, block.end, block.heading))
    flush()
    segments = []
    for start, end, heading in spans:
        start, end = _trimmed(text, start, end)
        if start >= end:
            continue
        for piece_start, piece_end in _pieces(text, start, end):
            raw = extracted.raw_span(piece_start, piece_end) if extracted.has_raw else None
            segments.append(Segment(piece_start, piece_end, heading, *(raw or (None, None))))
    return segments


def _passages_by_blank_lines(extracted: Extracted) -> list[Segment]:
    """Passages of a text without recorded blocks: runs of text up to a blank line, each
    with the heading path above it (a heading inside a run starts a new passage)."""
    text = extracted.text
    headings = sorted(extracted.headings)
    heading_starts = sorted({offset for offset, _, _ in headings})
    segments: list[Segment] = []
    stack: list[tuple[int, str]] = []
    next_heading = 0
    for match in _BLOCK.finditer(text):
        block_start, block_end = _trimmed(text, match.start(), match.end())
        if block_start >= block_end:
            continue
        # A heading inside a block (a PDF page has no blank lines) starts a new part of it.
        inner = heading_starts[bisect.bisect_right(heading_starts, block_start):
                               bisect.bisect_left(heading_starts, block_end)]
        for start, end in zip([block_start, *inner], [*inner, block_end], strict=True):
            while next_heading < len(headings) and headings[next_heading][0] <= start:
                _, level, title = headings[next_heading]
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, title))
                next_heading += 1
            if heading_starts and heading_starts[min(bisect.bisect_left(heading_starts, start),
                                                     len(heading_starts) - 1)] == start:
                # The heading's own line is not a passage: it names the passages under it.
                line_end = text.find("\n", start, end)
                if line_end < 0:
                    continue
                start = line_end + 1
            start, end = _trimmed(text, start, end)
            if start >= end:
                continue
            path = HEADING_SEPARATOR.join(title for _, title in stack)
            for piece_start, piece_end in _pieces(text, start, end):
                segments.append(Segment(piece_start, piece_end, path))
    return segments


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


_SENTENCE_END = re.compile(r"[.!?;:][\"')\]]?\s+")


def _pieces(text: str, start: int, end: int) -> Iterable[tuple[int, int]]:
    """``text[start:end]`` cut into passages of about TARGET_PASSAGE_CHARS at line or sentence ends."""
    if end - start <= MAX_PASSAGE_CHARS:
        yield start, end
        return
    cuts = [m.end() for m in re.finditer(r"\n", text[start:end])]
    if not cuts or max(b - a for a, b in zip([0, *cuts], [*cuts, end - start], strict=True)) > MAX_PASSAGE_CHARS:
        cuts = sorted(set(cuts) | {m.end() for m in _SENTENCE_END.finditer(text[start:end])})
    piece_start = start
    last_cut = start
    for cut in (start + c for c in cuts):
        if cut - piece_start >= TARGET_PASSAGE_CHARS and last_cut > piece_start:
            a, b = _trimmed(text, piece_start, last_cut)
            if a < b:
                yield a, b
            piece_start = last_cut
        last_cut = cut
    # What is left, cut hard where no line or sentence ended for too long.
    while end - piece_start > MAX_PASSAGE_CHARS * 2:
        hard = text.rfind(" ", piece_start, piece_start + MAX_PASSAGE_CHARS)
        hard = hard if hard > piece_start else piece_start + MAX_PASSAGE_CHARS
        a, b = _trimmed(text, piece_start, hard)
        if a < b:
            yield a, b
        piece_start = hard
    a, b = _trimmed(text, piece_start, end)
    if a < b:
        yield a, b


def source_passages(source_id: str, extracted: Extracted) -> list[Passage]:
    """The passages of one source's extracted text (:func:`passages_of`), tied to its id."""
    text = extracted.text
    return [Passage(source_id, s.heading, s.start, s.end, text[s.start:s.end], s.raw_start, s.raw_end)
            for s in passages_of(extracted)]

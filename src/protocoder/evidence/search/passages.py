"""A source's extracted text cut into passages as a reader sees them, each with its heading path.

A passage is a blank-line paragraph of the source file as its author wrote it (the blocks of the
extraction that lie in it: a paragraph, an admonition, a list with the sentence that introduces it,
table rows, a code block written into it with no blank line); a code block standing in a paragraph
of its own is cut into the units a reviewer quotes (a command with the comment line above it, one
line of code), never into windows across unrelated commands. Without the raw
text (a PDF), blocks are the passages, list items and table rows grouped by size. Each passage
has a *kind* (prose, list, table, code, comment, install, diagram, news, toc, badge) that the ranking
weighs, its range in the extracted and the raw text, and the heading path above it without
the document's own title. Every passage is one the reader can quote as it stands: its text,
made into a quote as the reader makes it, is found by the same locate code ``quote add`` uses.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..extract import Extracted, is_version_heading, meaningful_section
from ..locate import Haystack
from .kinds import (
    BLANK_LINE,
    BOILERPLATE_HEADING,
    CODE_KINDS,
    code_groups,
    code_units,
    dated,
    heading_titles,
    is_badge_row,
    is_listing,
    is_navigation,
    is_news,
    is_reference_table,
    listing_parts,
    looks_like_code,
    squash,
)
from .passage import HEADING_SEPARATOR, Passage
from .quotable import LazyHaystack, unquotable

MAX_PASSAGE_CHARS = 700
"""A block longer than this (a PDF page without blank lines, a long paragraph) is cut at
line or sentence ends into passages of about :data:`TARGET_PASSAGE_CHARS`."""

TARGET_PASSAGE_CHARS = 450


@dataclass(frozen=True, slots=True)
class Segment:
    """A passage of one extracted text, before it is tied to a source."""

    start: int
    end: int
    heading: str
    raw_start: int | None = None
    raw_end: int | None = None
    kind: str = "prose"


_BLOCK = re.compile(r"(?:[^\n]|\n(?![ \t]*\n))+")
"""A run of text up to a blank line."""

GROUPED_KINDS = ("list_item", "table_row")
"""Block kinds whose consecutive blocks under one heading are read together: one list item or
one table row alone is often too short to rank (and to judge); its neighbours are its context."""

GROUP_PASSAGES = True
"""Whether consecutive list items and table rows are grouped into passages of about
TARGET_PASSAGE_CHARS (chosen on the dev split of benchmarks/find_recall.py)."""


def passages_of(extracted: Extracted, raw: str | None = None) -> list[Segment]:
    """The passages of one extracted text, in text order, each with its heading path, raw range and kind.

    This is the one place segmentation is decided. The extraction's blocks are the units
    (paragraphs, list items, table rows, code, admonitions, blockquotes, footnotes); a
    heading is not a passage of its own but names the passages under it. Consecutive list
    items and table rows under the same heading are grouped up to about
    :data:`TARGET_PASSAGE_CHARS`; a code block is cut into its units (:func:`code_units`); a
    block longer than :data:`MAX_PASSAGE_CHARS` (a PDF paragraph run) is cut at line or
    sentence ends. A text whose extraction recorded no blocks is cut at blank lines instead,
    with the headings around it. A passage the reader could not quote as it stands is cut
    into its lines, and a line that still cannot be quoted is left out (see :func:`_quotable`).

    With ``raw``, the raw file's decoded text (what raw offsets count in), the passages that lie in one
    blank-line paragraph of the raw file under one heading are one passage (:func:`_by_raw_paragraph`):
    the paragraph as its author wrote it, a list with the sentence that introduces it, a code block
    with the sentence written right above it; a code block in a paragraph of its own stays its units.
    """
    if not extracted.blocks:
        return _quotable(extracted, _passages_by_blank_lines(extracted))
    text = extracted.text
    titles = heading_titles(extracted)
    spans: list[tuple[int, int, tuple[str, ...], str]] = []
    group: list[Any] = []

    def flush() -> None:
        if group:
            kind = "table" if group[0].kind == "table_row" else "list"
            if kind == "list" and all(squash(text[b.start:b.end]) in titles for b in group):
                kind = "toc"  # every item names a heading of this document: a table of contents
            spans.append((group[0].start, group[-1].end, group[0].path, kind))
            group.clear()

    def block_spans() -> Iterator[tuple[int, int, tuple[str, ...], str]]:
        # The spans of each block as they are made: a source of a million blocks never holds them all.
        for block in extracted.blocks:
            yield from spans
            spans.clear()
            if block.kind == "heading" or block.start >= block.end:
                flush()
                continue
            if GROUP_PASSAGES and block.kind in GROUPED_KINDS:
                if group and (group[0].kind != block.kind or group[0].path != block.path
                              or block.end - group[0].start > TARGET_PASSAGE_CHARS
                              or dated(text[block.start:block.end]) != dated(text[group[0].start:group[0].end])):
                    flush()
                group.append(block)
                continue
            flush()
            if block.kind == "code" and is_listing(text[block.start:block.end]):
                # A file listing with what each file holds: read whole, as a table is (kinds.is_listing).
                spans.extend((a, b, block.path, "listing") for a, b in listing_parts(text, block.start, block.end))
                continue
            if block.kind == "code" or (block.kind == "paragraph" and looks_like_code(text[block.start:block.end])):
                # A code block, or a run of code in a text source (a harness's .py or .yaml pinned as text).
                # Cut into commands, and the commands of one step (no blank line between them) read together.
                units = code_groups(text, code_units(text, block.start, block.end))
                spans.extend((a, b, block.path, kind) for a, b, kind in units)
                continue
            body = text[block.start:block.end]
            kind = "prose"
            if is_navigation(body, titles):
                kind = "toc"
            elif block.kind == "html" and is_badge_row(body):
                kind = "badge"
            spans.append((block.start, block.end, block.path, kind))
        flush()
        yield from spans
        spans.clear()

    segments = []
    headings: dict[tuple[str, ...], str] = {}  # one string per heading path, shared by its passages
    for start, end, path, kind in block_spans():
        start, end = _trimmed(text, start, end)
        if start >= end:
            continue
        if kind in ("prose", "list", "table") and is_news(path, text[start:end]):
            kind = "news"
        if path and BOILERPLATE_HEADING.search(path[-1]):
            kind = "boilerplate"
        heading = headings.get(path)
        if heading is None:
            heading = headings[path] = _heading_path(path, extracted.title)
        pieces = [(start, end)] if kind in CODE_KINDS else _pieces(text, start, end)
        for piece_start, piece_end in pieces:
            span = extracted.raw_span(piece_start, piece_end) if extracted.has_raw else None
            segments.append(Segment(piece_start, piece_end, heading, *(span or (None, None)), kind))
    haystack = None
    if raw is not None:
        haystack = LazyHaystack(text)
        segments = _by_raw_paragraph(extracted, segments, raw, haystack)
    return _quotable(extracted, segments, haystack)




def _by_raw_paragraph(extracted: Extracted, segments: list[Segment], raw: str, haystack: Haystack) -> list[Segment]:
    """``segments`` with consecutive passages joined when they lie in one blank-line paragraph of ``raw``
    under the same heading: the author's paragraph, which beat blocks cut by size (``find_ablation.py``).

    A code block in a paragraph of its own stays cut into commands. One the author wrote into a paragraph
    of prose (a sentence right above its fence, no blank line) is read with it, as one passage: the
    sentence says what the commands are for; cut apart, neither it nor a flag line (``--num_envs 10``)
    held enough of a field's words to rank (round 5 of ``find_real.py``). A joined passage the reader
    could not quote as it stands stays its parts (runs of prose joined, code units alone).
    """
    heading_starts = sorted(offset for offset, _, _ in extracted.headings)
    groups: list[list[Segment]] = []
    for segment in segments:
        last = groups[-1][-1] if groups else None
        if (last is not None and last.heading == segment.heading and last.raw_end is not None
                and segment.raw_start is not None and last.raw_end <= segment.raw_start
                and not BLANK_LINE.search(raw, last.raw_end, segment.raw_start)
                # a heading between them (two sections of one name, no blank line) ends the paragraph
                and bisect.bisect_left(heading_starts, last.end) == bisect.bisect_left(heading_starts, segment.start)):
            groups[-1].append(segment)
            continue
        groups.append([segment])
    text = extracted.text
    mixed = [group for group in groups if 0 < sum(s.kind in CODE_KINDS for s in group) < len(group)]
    missing = unquotable(text, haystack, ((group[0].start, group[-1].end) for group in mixed))
    joined = {id(group) for group in mixed if (group[0].start, group[-1].end) not in missing}
    missing = unquotable(text, haystack, ((run[0].start, run[-1].end) for group in groups if id(group) not in joined
                                          for run in _prose_runs(group) if len(run) > 1))
    result: list[Segment] = []
    for group in groups:
        if id(group) in joined:
            # ``install`` when all its code installs (``To install:`` + ``pip install``), else ``mixed``.
            code = [s for s in group if s.kind in CODE_KINDS]
            prose = next(s.kind for s in group if s.kind not in CODE_KINDS)
            kind = "install" if all(s.kind == "install" for s in code) else prose
            kind = "mixed" if kind in ("prose", "list") else kind
            result.append(Segment(group[0].start, group[-1].end, group[0].heading, group[0].raw_start,
                                  group[-1].raw_end, kind))
            continue
        # Code units stay apart; each run of other passages between them is joined when it can be quoted so.
        run: list[Segment] = []
        for segment in [*group, None]:
            if segment is not None and segment.kind not in CODE_KINDS:
                run.append(segment)
                continue
            if len(run) > 1 and (run[0].start, run[-1].end) not in missing:
                result.append(Segment(run[0].start, run[-1].end, run[0].heading, run[0].raw_start, run[-1].raw_end,
                                      run[0].kind))
            else:
                result.extend(run)
            run = []
            if segment is not None:
                result.append(segment)
    return result


def _prose_runs(group: list[Segment]) -> Iterator[list[Segment]]:
    """The runs of passages other than code units in ``group``, in order (what may be joined into one)."""
    run: list[Segment] = []
    for segment in group:
        if segment.kind not in CODE_KINDS:
            run.append(segment)
        elif run:
            yield run
            run = []
    if run:
        yield run


def _heading_path(path: tuple[str, ...], title: str) -> str:
    """The heading path shown with a passage: the document's own title left out, emoji dropped."""
    if path and not meaningful_section(path[:1], title) and not is_version_heading(path[0]):
        path = path[1:]
    cleaned = [_plain_heading(h) for h in path]
    return HEADING_SEPARATOR.join(h for h in cleaned if h)


def _plain_heading(heading: str) -> str:
    """A heading without emoji and pictographs (``📰 News`` → ``News``); the words stay."""
    import unicodedata

    kept = "".join(c for c in heading if unicodedata.category(c) not in ("So", "Cs", "Co")
                   and c not in "\u200d\ufe0e\ufe0f")
    return " ".join(kept.split())


def _quotable(extracted: Extracted, segments: list[Segment], haystack: Haystack | None = None) -> list[Segment]:
    """``segments`` cut so that each can be quoted as the reader quotes it.

    The reader quotes a candidate's range as :func:`~protocoder.evidence.reading.quote_text`
    makes it and looks it up with :class:`~protocoder.evidence.locate.Haystack` (what ``quote
    add`` and ``validate`` use). A passage that is not found so (a code unit whose second line
    starts like a Markdown heading or list item) is cut into its lines; a line that is still
    not found is left out rather than shown as a candidate that cannot be quoted.
    """
    text = extracted.text
    haystack = haystack if haystack is not None else LazyHaystack(text)
    missing = unquotable(text, haystack, ((s.start, s.end) for s in segments))
    lines = {(segment.start, segment.end): [_trimmed(text, segment.start + m.start(), segment.start + m.end())
                                            for m in re.finditer(r"[^\n]+", text[segment.start:segment.end])]
             for segment in segments if (segment.start, segment.end) in missing}
    missing = unquotable(text, haystack, (span for spans in lines.values() for span in spans if span[0] < span[1]))
    result = []
    for segment in segments:
        if (segment.start, segment.end) not in lines:
            result.append(segment)
            continue
        for start, end in lines[(segment.start, segment.end)]:
            if start < end and (start, end) not in missing:
                raw = extracted.raw_span(start, end) if extracted.has_raw else None
                result.append(Segment(start, end, segment.heading, *(raw or (None, None)), segment.kind))
    return result


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


def source_passages(source_id: str, extracted: Extracted, raw: str | None = None) -> list[Passage]:
    """The passages of one source's extracted text (:func:`passages_of`; ``raw``: the raw file's decoded
    text, so that a passage is its blank-line paragraph), tied to its id."""
    text = extracted.text
    return [Passage(source_id, s.heading, s.start, s.end, text[s.start:s.end], s.raw_start, s.raw_end,
                    "reference" if s.kind == "table" and is_reference_table(text[s.start:s.end]) else s.kind)
            for s in passages_of(extracted, raw)]

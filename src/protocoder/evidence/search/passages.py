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
from .passage import HEADING_SEPARATOR, Passage
from .quotable import LazyHaystack, unquotable

MAX_PASSAGE_CHARS = 700
"""A block longer than this (a PDF page without blank lines, a long paragraph) is cut at
line or sentence ends into passages of about :data:`TARGET_PASSAGE_CHARS`."""

TARGET_PASSAGE_CHARS = 450


PASSAGE_KINDS = ("prose", "list", "table", "code", "comment", "install", "diagram", "news", "toc", "badge",
                 "boilerplate", "mixed")
"""What a passage is, as far as ranking cares: running text (``prose``), a run of list items, a run
of table rows, a unit of a code block (``code``; ``comment`` when a comment line says what it
does; ``install`` when it installs, clones or moves between folders; ``diagram`` when it is a line of a
box drawing), an entry of a news list or
changelog, a table of contents, a row of badges, anything under a heading that is about the
project rather than its evaluation (citation, acknowledgements, licence, contributing, contact), and
a paragraph of prose with a code block written into it (``mixed``)."""


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
    titles = _heading_titles(extracted)
    spans: list[tuple[int, int, tuple[str, ...], str]] = []
    group: list[Any] = []

    def flush() -> None:
        if group:
            kind = "table" if group[0].kind == "table_row" else "list"
            if kind == "list" and all(_squash(text[b.start:b.end]) in titles for b in group):
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
                              or _dated(text[block.start:block.end]) != _dated(text[group[0].start:group[0].end])):
                    flush()
                group.append(block)
                continue
            flush()
            if block.kind == "code" or (block.kind == "paragraph" and looks_like_code(text[block.start:block.end])):
                # A code block, or a run of code in a text source (a harness's .py or .yaml pinned as text).
                spans.extend((a, b, block.path, kind) for a, b, kind in code_units(text, block.start, block.end))
                continue
            body = text[block.start:block.end]
            kind = "prose"
            if _is_navigation(body, titles):
                kind = "toc"
            elif block.kind == "html" and _is_badge_row(body):
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
        if kind in ("prose", "list", "table") and _is_news(path, text[start:end]):
            kind = "news"
        if path and _BOILERPLATE_HEADING.search(path[-1]):
            kind = "boilerplate"
        heading = headings.get(path)
        if heading is None:
            heading = headings[path] = _heading_path(path, extracted.title)
        pieces = [(start, end)] if kind in _CODE_KINDS else _pieces(text, start, end)
        for piece_start, piece_end in pieces:
            span = extracted.raw_span(piece_start, piece_end) if extracted.has_raw else None
            segments.append(Segment(piece_start, piece_end, heading, *(span or (None, None)), kind))
    haystack = None
    if raw is not None:
        haystack = LazyHaystack(text)
        segments = _by_raw_paragraph(extracted, segments, raw, haystack)
    return _quotable(extracted, segments, haystack)


_BLANK_LINE = re.compile(r"\n[ \t]*\n")


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
                and not _BLANK_LINE.search(raw, last.raw_end, segment.raw_start)
                # a heading between them (two sections of one name, no blank line) ends the paragraph
                and bisect.bisect_left(heading_starts, last.end) == bisect.bisect_left(heading_starts, segment.start)):
            groups[-1].append(segment)
            continue
        groups.append([segment])
    text = extracted.text
    mixed = [group for group in groups if 0 < sum(s.kind in _CODE_KINDS for s in group) < len(group)]
    missing = unquotable(text, haystack, ((group[0].start, group[-1].end) for group in mixed))
    joined = {id(group) for group in mixed if (group[0].start, group[-1].end) not in missing}
    missing = unquotable(text, haystack, ((run[0].start, run[-1].end) for group in groups if id(group) not in joined
                                          for run in _prose_runs(group) if len(run) > 1))
    result: list[Segment] = []
    for group in groups:
        if id(group) in joined:
            # ``install`` when all its code installs (``To install:`` + ``pip install``), else ``mixed``.
            code = [s for s in group if s.kind in _CODE_KINDS]
            prose = next(s.kind for s in group if s.kind not in _CODE_KINDS)
            kind = "install" if all(s.kind == "install" for s in code) else prose
            kind = "mixed" if kind in ("prose", "list") else kind
            result.append(Segment(group[0].start, group[-1].end, group[0].heading, group[0].raw_start,
                                  group[-1].raw_end, kind))
            continue
        # Code units stay apart; each run of other passages between them is joined when it can be quoted so.
        run: list[Segment] = []
        for segment in [*group, None]:
            if segment is not None and segment.kind not in _CODE_KINDS:
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
        if segment.kind not in _CODE_KINDS:
            run.append(segment)
        elif run:
            yield run
            run = []
    if run:
        yield run


_CODE_KINDS = ("code", "comment", "install", "diagram")

_COMMENT = re.compile(r"[ \t]*(?:#|//|--[ \t]|;;|<!--)")
"""A comment line in a code block (shell, Python, YAML, TOML; C-like; SQL; Lisp; HTML)."""

_INSTALL = re.compile(r"[ \t]*(?:[$>][ \t]*)?(?:sudo[ \t]+)?(?:"
                      r"(?:pip3?|python3?[ \t]+-m[ \t]+pip|uv[ \t]+pip)[ \t]+install|"
                      r"uv[ \t]+(?:add|sync|init|remove|venv)|(?:npm|pnpm)[ \t]+(?:install|i|ci)|"
                      r"yarn[ \t]+(?:add|install)|(?:conda|mamba)[ \t]+(?:create|install|activate)|git[ \t]+clone|"
                      r"apt(?:-get)?[ \t]+install|brew[ \t]+install|cd|mkdir|export|source|cp|wget|curl|tar|unzip)\b")
"""A shell line that installs, downloads, clones, sets a variable or moves between folders."""


_TRAILING_COMMENT = re.compile(r"\s(?:#|//)[ \t]+[^\W\d_]{2,}")
"""A comment after code on its line (``cp a b  # keep the old one``): words that say what the code does."""

_BOX_DRAWING = re.compile(r"[\u2500-\u257f]")
"""Box-drawing characters (``│ ─ ┌ └``): a code block made of them is a picture of an architecture."""


def _is_diagram(line: str) -> bool:
    """True for a line of a box drawing (``│  - exec()  │  /exec  │``): at least two box-drawing
    characters. Its words are labels in a picture, not a statement a reviewer quotes; on the dev
    documents such lines filled the top 10 of a short README for every field."""
    return len(_BOX_DRAWING.findall(line)) >= 2


def code_units(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """The units of the code block ``text[start:end]`` a reviewer quotes: (start, end, kind).

    A unit is one line of code with what belongs to it: the comment line right above it (the
    comment says what the command does, which is what a reviewer cites) and the lines that
    continue it (a shell line ending in a backslash). A comment line not followed by code,
    and every comment line above the last of a run, is a unit of its own. Blank lines end
    units; no unit joins two commands. Kind: ``install`` for an installing, downloading or
    folder-changing shell line; ``diagram`` for a line of a box drawing; ``comment`` when the unit
    has a comment (a line of its own or after the code); else ``code``.
    """
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", text[start:end])]
    lines = [(start + a, start + b) for a, b in lines if text[start + a:start + b].strip()]
    units: list[tuple[int, int, str]] = []
    pending: tuple[int, int] | None = None
    index = 0
    while index < len(lines):
        line_start, line_end = lines[index]
        line = text[line_start:line_end]
        if _COMMENT.match(line):
            if pending is not None:
                units.append((pending[0], pending[1], "comment"))
            # A comment followed by a blank line is about what is above or nothing: alone.
            follows = index + 1 < len(lines) and "\n\n" not in text[line_end:lines[index + 1][0]].replace(" ", "")
            pending = (line_start, line_end) if follows else None
            if not follows:
                units.append((line_start, line_end, "comment"))
            index += 1
            continue
        unit_end = line_end
        while text[line_start:unit_end].rstrip().endswith("\\") and index + 1 < len(lines):
            index += 1
            unit_end = lines[index][1]
        kind = ("install" if _INSTALL.match(line) else "diagram" if _is_diagram(line)
                else "comment" if _TRAILING_COMMENT.search(line) else "code")
        if pending is not None:
            units.append((pending[0], unit_end, "comment" if kind == "code" else kind))
            pending = None
        else:
            units.append((line_start, unit_end, kind))
        index += 1
    if pending is not None:
        units.append((pending[0], pending[1], "comment"))
    return units


_CODE_LINE = re.compile(
    r"""\s*(?:(?:def|class|import|from|return|raise|yield|async|await|with|try|except|finally|elif|else|if|for|while)\b"""
    r"""|[#@{}()\[\]]|//|--[ \t]|[\w.\[\]"'-]+[ \t]*(?::[ \t]|:$|=|\+=|\()|-[ \t]+[\w"'-]+:)"""
    r"""|.*[:;{}(\[,\\]$""")
"""A line that reads as code or configuration: a keyword, a bracket or comment first, an assignment, a
call or a YAML/TOML key, or a line ending in an opening bracket, a colon, a comma or a backslash."""


def looks_like_code(body: str) -> bool:
    """True for a paragraph of a text source that is code or configuration: at least two lines, and at
    least four in five of them read as code (:data:`_CODE_LINE`). Prose, even with a colon in a line,
    does not; a harness's code pinned as text does, so that its lines are the units a reviewer quotes."""
    lines = [line for line in body.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    return sum(1 for line in lines if _CODE_LINE.match(line)) * 5 >= len(lines) * 4


_NEWS_HEADING = re.compile(r"\b(?:news|changelog|change log|release notes|releases|what'?s new|updates|history|"
                           r"announcements?)\b", re.I)
_DATED = re.compile(r"^\W{0,3}(?:\d{4}[-/.]\d{1,2}(?:[-/.]\d{1,2})?|\d{1,2}(?:st|nd|rd|th)? "
                    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{4})", re.I)


_BOILERPLATE_HEADING = re.compile(r"\b(?:citation|cite|citing|bibtex|acknowledge?ments?|licen[cs]es?|contributing|"
                                  r"contributors?|contact|authors?|star history|sponsors?|funding)\b", re.I)
"""Headings of the parts of a README that are about the project, not about how it evaluates: what
is under them is not evidence (a BibTeX entry whose booktitle says "Processing" is not a process)."""


def _dated(body: str) -> bool:
    """True for a news entry: text that starts with a date (``[2025/12]``, ``12th March 2024:``)."""
    return bool(_DATED.match(body))


def _is_news(path: tuple[str, ...], body: str) -> bool:
    """True for an entry of a news list or changelog: under such a heading or a version heading, or dated."""
    return any(_NEWS_HEADING.search(h) or is_version_heading(h) for h in path) or _dated(body)


def _squash(text: str) -> str:
    """``text`` reduced to its lower-cased letters and digits (emoji, punctuation and spaces out)."""
    return "".join(c for c in text.casefold() if c.isalnum())


def _heading_titles(extracted: Extracted) -> frozenset[str]:
    """The document's headings, squashed (:func:`_squash`): what a table of contents lists."""
    return frozenset(_squash(title) for _, _, title in extracted.headings) - {""}


def _is_navigation(body: str, titles: frozenset[str]) -> bool:
    """True for a line of in-page navigation (``News • Quick Start • Citation``): every item a heading."""
    items = 0
    for piece in re.split(r"\s[•|·/]\s|\n", body):
        item = _squash(piece)
        if item and item not in titles:
            return False  # most paragraphs: their first line names no heading, the rest is not squashed
        items += bool(item)
    return items >= 3


def _is_badge_row(body: str) -> bool:
    """True for an HTML block of badges: a few short labels, no sentence."""
    labels = [piece for piece in re.split(r"\s{2,}|\n", body) if piece.strip()]
    return bool(labels) and len(body.split()) <= 4 * len(labels) and not re.search(r"[.!?](?:\s|$)", body)


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
    return [Passage(source_id, s.heading, s.start, s.end, text[s.start:s.end], s.raw_start, s.raw_end, s.kind)
            for s in passages_of(extracted, raw)]

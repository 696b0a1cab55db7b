"""Whether a passage can be quoted, decided for many passages at once: the same passages as before.

A cold ``find`` over a 12 MB plain-text source took 31 s, 23 of them looking for each passage not
found at its own place in the whole text, one search each (2,500 of them). The passages are now decided
together (``evidence/search/quotable.py``); the code before is kept here as the reference, and every
vendored real document (as its own kind and as plain text) and generated texts with repeated lines
and passages are cut into exactly the same passages (ranges, raw ranges, kinds, heading paths).
"""

from __future__ import annotations

import bisect
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from protocoder.evidence.extract import ExtractionError, extract, raw_text
from protocoder.evidence.locate import Haystack
from protocoder.evidence.reading import quote_text
from protocoder.evidence.search import passages, quotable
from protocoder.evidence.search.kinds import BLANK_LINE as _BLANK_LINE
from protocoder.evidence.search.kinds import CODE_KINDS, squash
from protocoder.evidence.search.passages import Segment, _trimmed, passages_of
from protocoder.evidence.search.quotable import occurring

DATA = Path(__file__).resolve().parent.parent / "data"
MEDIA = {".md": "text/markdown", ".html": "text/html", ".sh": "text/plain"}
DOCUMENTS = sorted(p for p in DATA.glob("real-docs*/**/*") if p.suffix in MEDIA and p.name != "MANIFEST.md")


# --------------------------------------------------------------------------- the code before (the reference)


def _old_found(haystack: Haystack, text: str, start: int, end: int) -> bool:
    quote = quote_text(text[start:end])
    return bool(quote) and (haystack.matches_at(quote, start, end) or haystack.find(quote) is not None)


def _old_by_raw_paragraph(extracted, segments, raw, haystack):  # noqa: ANN001, ANN202 - as it was
    heading_starts = sorted(offset for offset, _, _ in extracted.headings)
    groups: list[list[Segment]] = []
    for segment in segments:
        last = groups[-1][-1] if groups else None
        if (last is not None and last.heading == segment.heading and last.raw_end is not None
                and segment.raw_start is not None and last.raw_end <= segment.raw_start
                and not _BLANK_LINE.search(raw, last.raw_end, segment.raw_start)
                and bisect.bisect_left(heading_starts, last.end) == bisect.bisect_left(heading_starts, segment.start)):
            groups[-1].append(segment)
            continue
        groups.append([segment])
    result: list[Segment] = []
    for group in groups:
        code = [s for s in group if s.kind in CODE_KINDS]
        if code and len(code) < len(group) and _old_found(haystack, extracted.text, group[0].start, group[-1].end):
            prose = next(s.kind for s in group if s.kind not in CODE_KINDS)
            kind = "install" if all(s.kind == "install" for s in code) else prose
            kind = "mixed" if kind in ("prose", "list") else kind
            result.append(Segment(group[0].start, group[-1].end, group[0].heading, group[0].raw_start,
                                  group[-1].raw_end, kind))
            continue
        run: list[Segment] = []
        for segment in [*group, None]:
            if segment is not None and segment.kind not in CODE_KINDS:
                run.append(segment)
                continue
            if len(run) > 1 and _old_found(haystack, extracted.text, run[0].start, run[-1].end):
                result.append(Segment(run[0].start, run[-1].end, run[0].heading, run[0].raw_start, run[-1].raw_end,
                                      run[0].kind))
            else:
                result.extend(run)
            run = []
            if segment is not None:
                result.append(segment)
    return result


def _old_quotable(extracted, segments, haystack=None):  # noqa: ANN001, ANN202 - as it was
    text = extracted.text
    result = []
    for segment in segments:
        if haystack is None:
            haystack = Haystack(text)
        if _old_found(haystack, text, segment.start, segment.end):
            result.append(segment)
            continue
        for match in re.finditer(r"[^\n]+", text[segment.start:segment.end]):
            start, end = _trimmed(text, segment.start + match.start(), segment.start + match.end())
            if start < end and _old_found(haystack, text, start, end):
                raw = extracted.raw_span(start, end) if extracted.has_raw else None
                result.append(Segment(start, end, segment.heading, *(raw or (None, None)), segment.kind))
    return result


def _old_is_navigation(body: str, titles: frozenset[str]) -> bool:
    items = [squash(piece) for piece in re.split(r"\s[•|·/]\s|\n", body)]
    items = [item for item in items if item]
    return len(items) >= 3 and all(item in titles for item in items)


def reference(extracted, raw: str | None) -> list[Segment]:  # noqa: ANN001
    """The passages as the code before cut them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(passages, "_by_raw_paragraph", _old_by_raw_paragraph)
        patch.setattr(passages, "_quotable", _old_quotable)
        patch.setattr(passages, "is_navigation", _old_is_navigation)
        return passages_of(extracted, raw)


def both_ways(data: bytes, media_type: str) -> None:
    """The passages of ``data`` are the reference's, with the quotes looked for alone and in one walk."""
    extracted = extract(data, media_type)
    raw = raw_text(data, media_type)
    expected = reference(extracted, raw)
    assert passages_of(extracted, raw) == expected
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(quotable, "FEW_QUOTES", 0)  # every needle through the walk over the text's spaces
        assert passages_of(extracted, raw) == expected


# --------------------------------------------------------------------------- real documents


def test_there_are_real_documents_of_every_set() -> None:
    assert len(DOCUMENTS) >= 60
    assert {p.relative_to(DATA).parts[0] for p in DOCUMENTS} == {p.name for p in DATA.glob("real-docs*")}


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(DATA)))
def test_every_real_document_is_cut_as_before(path: Path) -> None:
    data = path.read_bytes()
    both_ways(data, MEDIA[path.suffix])
    if path.suffix != ".sh":
        both_ways(data, "text/plain")  # a README pinned as plain text: the case of the 12 MB source


# --------------------------------------------------------------------------- generated texts

LINES = ["Every task runs in a fresh container.", "| tool | reset |", "|---|---|", "| docker | yes |",
         "- the state is kept", "- the state is kept between runs", "1. install it", "```bash",
         "pip install harness", "cd harness", "# reset the box", "```", "## Setup", "Setup", "=====",
         "> [!NOTE]", "> keep the cache", "    indented code line", "Runs the agent - then", "resets it.",
         "<b>bold</b> words", "[a link](https://example.org) here", "Note: it is *kept*.", "::", "",
         "!!! note", "    The cache is kept.", "!!! note The cache is kept.",
         # the quotes of some passages above, written on one line: a passage not found at its own place is
         # then found elsewhere (the old code's whole-text search answered yes)
         "| tool | reset | |---|---| | docker | yes |", "x | tool | reset | |---|---| | docker | yes |",
         "> [!NOTE] > keep the cache", "- the state is kept - the state is kept between runs"]


@st.composite
def documents(draw: st.DrawFn) -> str:
    """Texts of a few paragraphs drawn from a small pool, so that lines and whole passages repeat."""
    pool = draw(st.lists(st.lists(st.sampled_from(LINES), min_size=1, max_size=5), min_size=1, max_size=4))
    # each paragraph also written on one line, as the reader quotes it: a passage whose quote is not found at
    # its own place is then often found elsewhere (the code before answered yes from its whole-text search)
    pool += [[" ".join(lines)] for lines in pool if len(lines) > 1]
    order = draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=14))
    return "\n\n".join("\n".join(pool[i]) for i in order) + draw(st.sampled_from(["", "\n"]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.sampled_from(["text/plain", "text/markdown"]))
def test_generated_texts_with_repeated_passages_are_cut_as_before(text: str, media_type: str) -> None:
    try:
        extract(text.encode(), media_type)
    except ExtractionError:
        assume(False)  # a file with no text (an empty fence) is refused before it has passages
    both_ways(text.encode(), media_type)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab |", max_size=60), st.lists(st.text(alphabet="ab |", min_size=1, max_size=8),
                                                       max_size=40))
def test_the_walk_finds_what_a_search_of_each_finds(norm: str, needles: list[str]) -> None:
    # A tiny alphabet: needles overlap, repeat, start or end at a space, and occur at the text's ends.
    for few in (0, 1000):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(quotable, "FEW_QUOTES", few)
            assert occurring(norm, needles) == {n for n in needles if n in norm}


# --------------------------------------------------------------------------- the cost


def test_passages_not_found_at_their_place_are_looked_for_together(monkeypatch: pytest.MonkeyPatch) -> None:
    # 400 tables pinned as plain text: the quote of each (its rows on one line) is not found at its place.
    # Before, each was looked for in the whole text (Haystack.find, once per passage: 400 searches); now
    # the whole text is walked a few times whatever the number of passages.
    text = "\n\n".join(f"| field {i} | kept |\n|---|---|\n| run {i} | reset {i} |" for i in range(400))
    extracted = extract(text.encode(), "text/plain")
    searches: list[str] = []
    real_find, real_occurring = Haystack.find, quotable.occurring
    monkeypatch.setattr(Haystack, "find", lambda self, quote: searches.append(quote) or real_find(self, quote))
    monkeypatch.setattr(quotable, "occurring", lambda norm, needles: searches.append("walk") or real_occurring(
        norm, needles))
    raw = raw_text(text.encode(), "text/plain")
    expected = reference(extracted, raw)
    assert len(searches) >= 400  # the code before: one search of the whole text for each table
    searches.clear()
    assert passages_of(extracted, raw) == expected
    assert "walk" in searches and len(searches) <= 3, searches

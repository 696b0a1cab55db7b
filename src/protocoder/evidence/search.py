"""Candidate passages: rank the passages of a protocol's pinned sources for one rubric field.

A reviewer coding a cell has to find, in every source pinned for the protocol, the
passages that answer the field. :func:`find_passages` ranks them: the field's question,
definition and guidance (plus the definitions of its codes as a weaker expansion, the
``search_terms`` a rubric may declare on the field and its codes, and whatever the
reviewer types) are the query; the passages of every pinned snapshot are the documents.

* **Passages** come from one function, :func:`passages_of`: the extraction's blocks
  (paragraphs, code, admonitions, footnotes; runs of list items and table rows grouped)
  with the heading path above each and their range in the raw file.
* **Ranking** is BM25 (the maintained ``bm25s`` library, numpy only) over each passage's
  words with its heading path, plus a second BM25 over its nearest heading alone (a
  passage under "Evaluation › Reset" answers a reset field even when its sentences don't
  say "reset"), plus a small bonus when query words stand close together in the passage.
  The weights were chosen on the development split of ``benchmarks/find_recall.py``.
* **The index** of one protocol is cached under ``.protocoder/find/`` in a folder named
  by a hash of the snapshots' SHA-256 and this module's format version, so pinning a new
  version of a source (``protocoder source update``) makes the next query rebuild it. It
  is written to a temporary folder and renamed into place, so a reader never meets half
  an index; a workspace where it cannot be written is searched without a cache.

Nothing here imports Textual or click, and nothing is written outside ``.protocoder/``.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import Rejected
from .extract import EXTRACTOR_VERSION, Extracted

if TYPE_CHECKING:
    from ..model import Field, Protocol, Rubric
    from ..storage.workspace import Review

INDEX_FORMAT = 2
"""Raised when the passages or the index change shape; cached indexes of other formats are rebuilt."""

CACHE_DIR = "find"
"""The folder under ``.protocoder/`` holding one cached index per protocol."""

HEADING_SEPARATOR = " › "

MAX_PASSAGE_CHARS = 700
"""A block longer than this (a PDF page without blank lines, a long paragraph) is cut at
line or sentence ends into passages of about :data:`TARGET_PASSAGE_CHARS`."""

TARGET_PASSAGE_CHARS = 450

# Weights of the query's parts and of the score's parts, chosen on the development split
# of benchmarks/find_recall.py (the held-out split was not looked at while choosing).
WEIGHT_FIELD = 1.0
"""The field's question, definition and guidance."""
WEIGHT_CODES = 0.3
"""The definitions and guidance of the field's codes: related words, weaker evidence."""
WEIGHT_TERMS = 3.0
"""``search_terms`` of the field and its codes: words the rubric's authors chose to find evidence."""
WEIGHT_TYPED = 6.0
"""What the reviewer types: the strongest signal of what they look for now, so that two typed words
outrank the dozens of the field's own (not tuned on the benchmark, which types nothing)."""
WEIGHT_HEADING = 1.0
"""A second BM25 over the heading path alone."""
WEIGHT_PROXIMITY = 0.4
"""Per pair of distinct query words found within :data:`PROXIMITY_WINDOW` words of each other."""
PROXIMITY_WINDOW = 6
PROXIMITY_POOL = 200
"""How many of the best-scored passages the proximity bonus looks at (it can reorder only these)."""
BM25_K1 = 1.5
BM25_B = 0.75
"""bm25s's defaults (Lucene's): term-frequency saturation and length normalisation (other
values on the dev split moved recall@10 by at most one passage)."""


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
class Candidate:
    """A passage ranked for one field: where it is, its text and its score (higher is better)."""

    source: str
    heading: str
    start: int
    end: int
    raw_start: int | None
    raw_end: int | None
    text: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``protocoder find --format json``)."""
        return {"source": self.source, "heading": self.heading, "start": self.start, "end": self.end,
                "raw_start": self.raw_start, "raw_end": self.raw_end, "score": self.score, "text": self.text}


# --------------------------------------------------------------------------- passages


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


# --------------------------------------------------------------------------- words

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)

_STOPWORD_TEXT = (
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with from has have had its which who whom whose what when where how do does did "
    "can could should would may might must shall we you your our us i me my he she him her them than so very "
    "also any each all some other more most only own same too just been being were about over under again "
    "further once here both few nor out up down off s t")
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def stem(word: str) -> str:
    """A light English stem: plural and common verb endings stripped (``tasks`` → ``task``,
    ``scoring`` / ``scored`` → ``scor``), enough for BM25 to meet the rubric's words in a README."""
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix, replacement in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            return word[: len(word) - len(suffix)] + replacement
    return word


def words(text: str) -> list[str]:
    """The stemmed, lower-cased content words of ``text`` (stop words dropped), in order."""
    out = []
    for match in _WORD.finditer(text.lower()):
        token = match.group().replace("’", "'")
        if "'" in token:
            token = token.split("'")[0]
        if token and token not in _STOPWORDS:
            out.append(stem(token))
    return out


# --------------------------------------------------------------------------- queries


@dataclass(frozen=True)
class Query:
    """A query as weighted parts: (weight, text), e.g. the field's words at 1.0 and its codes' at 0.3."""

    parts: tuple[tuple[float, str], ...]

    def weighted_words(self) -> dict[str, float]:
        """Each distinct word of the query with the largest weight of a part it is in."""
        found: dict[str, float] = {}
        for weight, text in self.parts:
            for word in words(text):
                found[word] = max(found.get(word, 0.0), weight)
        return found


def field_query(rubric: Rubric, fld: Field, typed: str = "") -> Query:
    """The query for one field: its question, definition and guidance; its codes' definitions
    (weaker); the ``search_terms`` of the field and its codes; and what the reviewer typed."""
    parts: list[tuple[float, str]] = [(WEIGHT_FIELD, " ".join((fld.label, fld.question, fld.definition,
                                                               fld.guidance)))]
    terms = list(getattr(fld, "search_terms", ()))
    for code_id in fld.codes:
        try:
            code = rubric.code(code_id)
        except KeyError:
            continue
        parts.append((WEIGHT_CODES, " ".join((code.definition, code.guidance))))
        terms.extend(getattr(code, "search_terms", ()))
    if terms:
        parts.append((WEIGHT_TERMS, " ".join(terms)))
    if typed.strip():
        parts.append((WEIGHT_TYPED, typed))
    return Query(tuple(parts))


# --------------------------------------------------------------------------- the index


@dataclass
class PassageIndex:
    """BM25 indexes over a set of passages (one protocol's), ready to answer queries."""

    passages: list[Passage]
    body: Any
    """bm25s index of each passage's words with its heading path."""
    heading: Any
    """bm25s index of each passage's heading path alone."""
    _tokens: dict[int, list[str]] = field(default_factory=dict)
    """Words of the passages the proximity bonus has looked at, by passage number."""

    @classmethod
    def build(cls, passages: list[Passage]) -> PassageIndex:
        """Index ``passages`` (may be empty)."""
        body = _bm25([words(p.heading) + words(p.text) for p in passages])
        heading = _bm25([words(p.heading.split(HEADING_SEPARATOR)[-1]) if p.heading else [] for p in passages])
        return cls(passages, body, heading)

    def tokens(self, number: int) -> list[str]:
        """The words of passage ``number`` in order (computed when first asked for)."""
        found = self._tokens.get(number)
        if found is None:
            found = self._tokens[number] = words(self.passages[number].text)
        return found

    def scores(self, query: Query, *, use_heading: bool = True, use_proximity: bool = True) -> Any:
        """One score per passage (numpy array) for ``query``."""
        import numpy as np

        weighted = query.weighted_words()
        total = np.zeros(len(self.passages), dtype="float32")
        if not self.passages or not weighted:
            return total
        total += _weighted_scores(self.body, weighted)
        if use_heading:
            total += WEIGHT_HEADING * _weighted_scores(self.heading, weighted)
        if use_proximity:
            # The bonus reorders the best passages among themselves; only they are read word by
            # word (a thousand sources hold tens of thousands of passages).
            matched = np.flatnonzero(total > 0)
            if len(matched) > PROXIMITY_POOL:
                matched = matched[np.argpartition(-total[matched], PROXIMITY_POOL)[:PROXIMITY_POOL]]
            for index in matched:
                total[index] += WEIGHT_PROXIMITY * _close_pairs(self.tokens(int(index)), weighted)
        return total

    def search(self, query: Query, limit: int = 10, **options: bool) -> list[Candidate]:
        """The ``limit`` best passages for ``query``, best first; passages with no query word are left out."""
        import numpy as np

        scores = self.scores(query, **options)
        if limit <= 0 or not len(scores):
            return []
        # Ties (equal scores) keep text order: stable sort on the negated scores.
        order = np.argsort(-scores, kind="stable")[:limit]
        found = []
        for index in order:
            score = float(scores[index])
            if score <= 0:
                break
            p = self.passages[int(index)]
            found.append(Candidate(p.source, p.heading, p.start, p.end, p.raw_start, p.raw_end, p.text,
                                   round(score, 4)))
        return found


def _bm25(corpus: list[list[str]]) -> Any:
    import bm25s

    index = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    # An empty token keeps bm25s happy for passages without words and for empty corpora.
    index.index([doc or [""] for doc in corpus] or [[""]], show_progress=False)
    return index


def _weighted_scores(index: Any, weighted: dict[str, float]) -> Any:
    """Sum over the query's words of weight × BM25 contribution (bm25s precomputes the latter)."""
    import numpy as np

    total = np.zeros(index.scores["num_docs"], dtype="float32")
    by_weight: dict[float, list[int]] = {}
    for word, weight in weighted.items():
        token_id = index.vocab_dict.get(word)
        if token_id is not None and word:
            by_weight.setdefault(weight, []).append(token_id)
    for weight, ids in by_weight.items():
        total += weight * index.get_scores_from_ids(ids)
    return total


def _close_pairs(tokens: Sequence[str], weighted: dict[str, float]) -> float:
    """How many pairs of distinct query words occur within PROXIMITY_WINDOW words of each other."""
    positions = [(i, t) for i, t in enumerate(tokens) if t in weighted]
    pairs = set()
    for a in range(len(positions)):
        i, first = positions[a]
        for b in range(a + 1, len(positions)):
            j, second = positions[b]
            if j - i > PROXIMITY_WINDOW:
                break
            if first != second:
                pairs.add((first, second) if first < second else (second, first))
    return float(len(pairs))


# --------------------------------------------------------------------------- a protocol's index


@dataclass
class ProtocolPassages:
    """The searchable passages of one protocol, and the sources that could not be read."""

    index: PassageIndex
    sources: tuple[str, ...]
    """Ids of the sources whose passages are in the index."""
    missing: tuple[str, ...] = ()
    """Ids of pinned sources whose snapshot is not present here (or cannot be read)."""


def cache_key(protocol: Protocol) -> str:
    """The name of a protocol's cached index: a hash of its pinned snapshots and the formats."""
    pinned = sorted((s.id, s.sha256, s.media_type) for s in protocol.sources if s.has_snapshot)
    payload = json.dumps([INDEX_FORMAT, EXTRACTOR_VERSION, pinned], separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def protocol_passages(review: Review, protocol_id: str) -> ProtocolPassages:
    """The index of a protocol's pinned sources, from the cache when it is current.

    Raises :class:`Rejected` for an unknown protocol, one without pinned sources, or one
    none of whose snapshots is present here.
    """
    from .snapshots import Snapshots

    try:
        protocol = review.protocol(protocol_id)
    except KeyError:
        raise Rejected(f"no protocol {protocol_id!r} in this workspace (list them with: protocoder protocol "
                       "list)") from None
    pinned = [s for s in protocol.sources if s.has_snapshot]
    if not pinned:
        raise Rejected(f"protocol {protocol_id!r} has no pinned sources to search; pin one with: protocoder "
                       f"source add {protocol_id} FILE")
    folder = review.paths.state_dir / CACHE_DIR / protocol_id
    key = cache_key(protocol)
    cached = read_index(folder / key)
    if cached is not None:
        return cached
    snapshots = Snapshots(review.paths)
    passages: list[Passage] = []
    read: list[str] = []
    missing: list[str] = []
    for item in pinned:
        state = snapshots.state(item.sha256, item.media_type)
        if not state.present or not state.intact:
            missing.append(item.id)
            continue
        try:
            extracted = snapshots.text(item.sha256, item.media_type)
        except Exception:  # noqa: BLE001 - InvalidInput from a snapshot that cannot be read: reported as missing
            missing.append(item.id)
            continue
        read.append(item.id)
        passages.extend(source_passages(item.id, extracted))
    if not read:
        names = ", ".join(missing)
        raise Rejected(f"no snapshot of protocol {protocol_id!r} is present here ({names}); copy the files "
                       f"into sources/, or pin them again with: protocoder source update {protocol_id} "
                       f"{missing[0]} FILE")
    result = ProtocolPassages(PassageIndex.build(passages), tuple(read), tuple(missing))
    if not missing:
        # An index missing sources is not cached: it would hide them once they are copied in.
        _save_cached(review, folder, key, result)
    return result


def source_passages(source_id: str, extracted: Extracted) -> list[Passage]:
    """The passages of one source's extracted text (:func:`passages_of`), tied to its id."""
    text = extracted.text
    return [Passage(source_id, s.heading, s.start, s.end, text[s.start:s.end], s.raw_start, s.raw_end)
            for s in passages_of(extracted)]


_PASSAGES_FILE = "passages.json"


def _save_cached(review: Review, folder: Path, key: str, result: ProtocolPassages) -> None:
    """Write the index to ``folder/key`` atomically (temporary folder, then rename); stale keys go.

    A cache that cannot be written (a read-only checkout, a ``.protocoder`` that is a link
    out of the workspace) is simply not written: the search works without it.
    """
    paths = review.paths
    if paths.state_dir.exists() and paths.leaves_workspace(paths.state_dir):
        return
    target = folder / key
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if paths.leaves_workspace(folder):
            return
        temporary = Path(tempfile.mkdtemp(prefix=f".{key}.", suffix=".tmp", dir=folder))
        try:
            write_index(temporary, result)
            if target.is_dir():
                # A damaged index under this key (it was rebuilt because it could not be read):
                # moved aside in one rename, so that the new one can take its place.
                stale = Path(tempfile.mkdtemp(prefix=f".{key}.", suffix=".stale", dir=folder))
                os.replace(target, stale / key)
                shutil.rmtree(stale, ignore_errors=True)
            try:
                os.rename(temporary, target)
            except OSError:
                if not target.is_dir():
                    raise
                # Another process cached the same key first: theirs is as good as ours.
        finally:
            if temporary.exists():
                shutil.rmtree(temporary, ignore_errors=True)
        for other in folder.iterdir():
            if other.name != key and not other.name.startswith("."):
                shutil.rmtree(other, ignore_errors=True)
    except OSError:
        return


def write_index(folder: Path, result: ProtocolPassages) -> None:
    """Write ``result`` into the (new, empty) ``folder``: bm25s's own files and the passages."""
    index = result.index
    index.body.save(str(folder / "body"), show_progress=False)
    index.heading.save(str(folder / "heading"), show_progress=False)
    payload = {"format": INDEX_FORMAT, "sources": list(result.sources),
               "passages": [[p.source, p.heading, p.start, p.end, p.text, p.raw_start, p.raw_end]
                            for p in index.passages]}
    (folder / _PASSAGES_FILE).write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")


def read_index(folder: Path) -> ProtocolPassages | None:
    """The index :func:`write_index` wrote in ``folder``, or None when it is missing or unreadable."""
    import bm25s

    try:
        payload = json.loads((folder / _PASSAGES_FILE).read_text(encoding="utf-8"))
        if payload.get("format") != INDEX_FORMAT:
            return None
        passages = [Passage(str(s), str(h), int(a), int(b), str(t), ra, rb)
                    for s, h, a, b, t, ra, rb in payload["passages"]]
        with contextlib.redirect_stderr(None):
            body = bm25s.BM25.load(str(folder / "body"), show_progress=False, verbosity=0)
            heading = bm25s.BM25.load(str(folder / "heading"), show_progress=False, verbosity=0)
        if body.scores["num_docs"] != max(len(passages), 1):
            return None
        return ProtocolPassages(PassageIndex(passages, body, heading), tuple(payload["sources"]))
    except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError):
        # Damaged (a truncated array, edited JSON): the caller builds the index again.
        return None


# --------------------------------------------------------------------------- the entry point


def find_passages(review: Review, protocol_id: str, field_id: str, *, query: str = "",
                  limit: int = 10) -> list[Candidate]:
    """The ``limit`` passages of the protocol's pinned sources that best answer the field, best first.

    The query is the field's words, its codes', the rubric's ``search_terms`` and ``query``
    (what the reviewer typed). Raises :class:`Rejected` (one line naming the command that
    fixes it) for an unknown protocol or field, a protocol with nothing to search, or a
    workspace whose ``protocoder.yaml`` turns candidates off (``candidates: false``).
    """
    return search_field(review, protocol_id, field_id, query=query, limit=limit).candidates


@dataclass(frozen=True)
class FieldSearch:
    """The answer to one field's query, with what was searched."""

    candidates: list[Candidate]
    sources: tuple[str, ...]
    """Ids of the sources searched."""
    missing: tuple[str, ...]
    """Ids of pinned sources whose snapshot is not present here, so not searched."""


BLIND_MESSAGE = ("candidate passages are turned off for a blind first pass (candidates: false in "
                 "protocoder.yaml); set candidates: true there to turn them on")


def search_field(review: Review, protocol_id: str, field_id: str, *, query: str = "",
                 limit: int = 10) -> FieldSearch:
    """:func:`find_passages` with the sources searched and those missing (for the command line)."""
    if not review.settings.candidates:
        raise Rejected(BLIND_MESSAGE)
    rubric = review.rubric
    if rubric is None:
        raise Rejected("the workspace has no usable rubric (see: protocoder validate)")
    try:
        fld = rubric.field(field_id)
    except KeyError:
        raise Rejected(f"no field {field_id!r} in rubric {rubric.id!r} (fields: "
                       f"{', '.join(rubric.field_ids)})") from None
    found = protocol_passages(review, protocol_id)
    return FieldSearch(found.index.search(field_query(rubric, fld, query), limit), found.sources, found.missing)

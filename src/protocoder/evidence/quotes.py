"""Quotes: checking each one against its snapshot, drift when a source changes, and editing them.

A quote names a pinned source of its protocol and gives the exact text; ``span``, ``page``
and ``section`` say where it was found, and ``snapshot`` which version of the source it
was taken from (the start of that snapshot's SHA-256).

**Verification** (``validate``): every quote taken from the source's current snapshot
must be found in that snapshot's text after normalisation (:mod:`.locate`); one that is
not is an error at its ``text`` key, with the closest passage. A snapshot whose bytes no
longer match the hash in ``protocol.yaml`` is an error; a snapshot that is not present
here (kept out of git) is a note, and its quotes are simply not checked.

**Drift**: ``source update`` pins a new version and moves every quote still found in it
to the new snapshot; the others stay anchored to the old one. A quote anchored to an
earlier version of its source is *drifted evidence* — the passage the code rests on is
gone from the source as it now stands — until it is replaced by a quote of the new
version (re-coded) or *confirmed*: ``protocoder quote confirm`` records, in the quote
itself, ``confirmed: <start of the current snapshot's hash>``, meaning "I read the new
version and the code stands on this passage of the old one". Pinning yet another version
makes a confirmed quote drift again. Drift depends on hashes only, so ``status`` counts it
without reading any snapshot.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum

from ..errors import InvalidInput, Problem, Rejected
from ..lifecycle.consensus import FinalCell, Status
from ..model import Cell, Protocol, Quote, Source
from ..storage.files import read_text
from ..storage.findings import Findings
from ..storage.store import CellUpdate, Store
from ..storage.workspace import Review
from .extract import Block, Extracted
from .locate import Closest, Haystack, excerpt, normalise, sentence_around
from .snapshots import Snapshots, location_text, position, snapshot_file

SNAPSHOT_REF_LENGTH = 12
"""Hex digits of a snapshot's hash a quote records (``snapshot: 3f2a9c01d2e4``)."""

_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """``text`` on one line with no control characters, safe to print to a terminal."""
    return _UNPRINTABLE.sub(" ", text)


class Anchor(StrEnum):
    """Which version of its source a quote belongs to."""

    CURRENT = "current"
    """Taken from the current snapshot (or hand-written without a snapshot): checked against it."""
    DRIFTED = "drifted"
    """Taken from an earlier version; not found in the current one, not confirmed."""
    CONFIRMED = "confirmed"
    """Taken from an earlier version; the reviewer confirmed the code stands on the current one."""
    UNKNOWN = "unknown"
    """Names a snapshot that is no version of its source."""


def anchor(quote: Quote, source: Source) -> Anchor:
    """Which version of ``source`` the quote belongs to (see :class:`Anchor`)."""
    if not quote.snapshot or source.sha256.startswith(quote.snapshot):
        return Anchor.CURRENT
    if any(version.sha256.startswith(quote.snapshot) for version in source.previous):
        if quote.confirmed and source.sha256.startswith(quote.confirmed):
            return Anchor.CONFIRMED
        return Anchor.DRIFTED
    return Anchor.UNKNOWN


@dataclass(frozen=True)
class QuoteRef:
    """One quote of one reviewer's cell."""

    cell: Cell
    index: int
    quote: Quote
    source: Source | None

    @property
    def key(self) -> str:
        """``protocol/field``."""
        return f"{self.cell.protocol}/{self.cell.field}"


def quote_record(quote: Quote) -> dict[str, object]:
    """A quote as plain data (export, the view): every field, positions as numbers or null."""
    return {"source": quote.source, "text": quote.text, "page": quote.page, "section": quote.section,
            "start": quote.start, "end": quote.end, "snapshot": quote.snapshot, "confirmed": quote.confirmed,
            "raw_start": quote.raw_start, "raw_end": quote.raw_end, "exact": quote.exact, "prefix": quote.prefix,
            "suffix": quote.suffix}


def pinned_source(protocol: Protocol, source_id: str) -> Source | None:
    """The protocol's source with this id, or None."""
    return next((source for source in protocol.sources if source.id and source.id == source_id), None)


def all_quotes(review: Review) -> Iterator[QuoteRef]:
    """Every quote of every reviewer's cell, in table order."""
    protocols = {protocol.id: protocol for protocol in review.protocols}
    for cell in review.all_cells():
        protocol = protocols.get(cell.protocol)
        for index, quote in enumerate(cell.quotes):
            yield QuoteRef(cell, index, quote, pinned_source(protocol, quote.source) if protocol else None)


def drifted(review: Review) -> list[QuoteRef]:
    """Every quote anchored to an earlier version of its source and not confirmed since."""
    return [ref for ref in all_quotes(review) if ref.source is not None and anchor(ref.quote, ref.source)
            is Anchor.DRIFTED]


# --------------------------------------------------------------------------- verification


@dataclass
class EvidenceCheck:
    """What :func:`check_evidence` found."""

    problems: list[Problem] = field(default_factory=list)
    """Errors (a quote not found, a snapshot changed) and warnings (drifted evidence)."""
    notes: list[Problem] = field(default_factory=list)
    """Snapshots not present here: reported, never a failure."""
    quotes: int = 0
    verified: int = 0
    """Quotes found in their snapshot."""
    unchecked: int = 0
    """Quotes whose snapshot is not present here."""
    confirmed: int = 0
    """Quotes of an earlier version whose code the reviewer confirmed against the current one."""
    drifted: list[QuoteRef] = field(default_factory=list)


class _Located:
    """Findings per file, read only when a file has something to report."""

    def __init__(self, review: Review) -> None:
        self.review = review
        self._findings: dict[str, Findings] = {}

    def add(self, path_display: str, keypath: list[str | int], message: str, severity: str = "error") -> None:
        findings = self._findings.get(path_display)
        if findings is None:
            try:
                text = read_text(self.review.paths.root / path_display, path_display)
            except InvalidInput:
                text = ""
            findings = self._findings[path_display] = Findings(path_display, text)
        findings.add(keypath, message, severity=severity)

    def problems(self) -> list[Problem]:
        return [problem for findings in self._findings.values() for problem in findings.problems()]


def check_evidence(review: Review, snapshots: Snapshots | None = None) -> EvidenceCheck:
    """Check every pinned snapshot and every quote of the workspace (see the module docstring)."""
    paths = review.paths
    snapshots = snapshots or Snapshots(paths)
    result = EvidenceCheck()
    located = _Located(review)
    usable: dict[str, bool] = {}
    absent_quotes: dict[str, int] = {}
    for protocol in review.protocols:
        protocol_file = paths.show(paths.protocol_file(protocol.id))
        for index, source in enumerate(protocol.sources):
            if not source.has_snapshot or source.sha256 in usable:
                continue
            state = snapshots.state(source.sha256, source.media_type)
            shown = paths.show(state.file)
            if not state.present:
                usable[source.sha256] = False
                absent_quotes.setdefault(source.sha256, 0)
            elif not state.intact:
                usable[source.sha256] = False
                located.add(protocol_file, ["sources", index, "sha256"],
                            f"the snapshot of source {source.id!r} ({shown}) has changed: its bytes no longer "
                            "match this SHA-256. Restore the pinned file, or pin the changed one as a new "
                            f"version with: protocoder source update {protocol.id} {source.id} FILE")
            else:
                usable[source.sha256] = True

    for ref in all_quotes(review):
        result.quotes += 1
        cell, quote = ref.cell, ref.quote
        sheet = review.sheet(cell.protocol, cell.reviewer)
        shown = paths.show(sheet.path) if sheet is not None else paths.show(
            paths.sheet_file(cell.protocol, cell.reviewer))
        keypath: list[str | int] = ["cells", cell.field, "quotes", ref.index]
        source = ref.source
        if source is None:
            protocol = review.protocol(cell.protocol)
            ids = ", ".join(s.id for s in protocol.sources if s.id and s.has_snapshot) or "none yet"
            located.add(shown, [*keypath, "source"],
                        f"quote names source {quote.source!r}, which protocol {cell.protocol!r} does not pin "
                        f"(its sources with snapshots: {ids}; add one with protocoder source add)")
            continue
        if not source.has_snapshot:
            located.add(shown, [*keypath, "source"],
                        f"source {quote.source!r} has no snapshot to check this quote against; pin one with: "
                        f"protocoder source update {cell.protocol} {source.id} FILE")
            continue
        state = anchor(quote, source)
        if state is Anchor.UNKNOWN:
            located.add(shown, [*keypath, "snapshot"],
                        f"snapshot {quote.snapshot!r} is no version of source {quote.source!r} "
                        "(neither its current sha256 nor one of its previous ones)")
            continue
        if state is Anchor.DRIFTED:
            result.drifted.append(ref)
            located.add(shown, [*keypath, "text"],
                        f"drifted evidence: source {quote.source!r} changed (now {source.version!r}) and this "
                        "passage is not in the new version; quote the new version, or confirm that the code "
                        f"stands with: protocoder quote confirm --cell {ref.key} --reviewer {cell.reviewer}",
                        "warning")
            continue
        if state is Anchor.CONFIRMED:
            result.confirmed += 1
            continue
        if not usable.get(source.sha256, False):
            if source.sha256 in absent_quotes:
                absent_quotes[source.sha256] += 1
            result.unchecked += 1
            continue
        try:
            haystack = snapshots.haystack(source.sha256, source.media_type)
        except InvalidInput as exc:
            located.add(shown, [*keypath, "text"], f"cannot check this quote: {exc.problems[0].message}")
            continue
        found = (quote.start is not None and quote.end is not None
                 and haystack.matches_at(quote.text, quote.start, quote.end)) or haystack.find(quote.text) is not None
        if not found:
            located.add(shown, [*keypath, "text"], not_found_message(quote, source, haystack, snapshots))
            continue
        if quote.exact and not _exact_present(quote, source, snapshots):
            located.add(shown, [*keypath, "exact"],
                        f"the quote's exact text is not in the snapshot of source {source.id!r} as written; delete "
                        "exact, prefix, suffix, raw_start and raw_end (validate finds the quote by its text), or "
                        "quote it again with protocoder quote add")
            continue
        result.verified += 1

    for protocol in review.protocols:
        for source in protocol.sources:
            if source.sha256 in absent_quotes:
                count = absent_quotes.pop(source.sha256)
                shown = paths.show(snapshots.state(source.sha256, source.media_type).file)
                result.notes.append(Problem(shown, 0, 0, f"snapshot of source {source.id!r} ({protocol.id}) is not "
                                            f"present here; {count} quote{'s' if count != 1 else ''} not checked "
                                            "(its hash stays recorded in protocol.yaml)", "note"))
    result.problems = located.problems()
    return result


def _exact_present(quote: Quote, source: Source, snapshots: Snapshots) -> bool:
    """True when the quote's ``exact`` is in the raw file (the extracted text for a PDF), at its
    raw offsets or anywhere."""
    raw = snapshots.raw(source.sha256, source.media_type)
    if raw is None:
        return quote.exact in snapshots.text(source.sha256, source.media_type).text
    if quote.raw_start is not None and quote.raw_end is not None and raw[quote.raw_start:quote.raw_end] == quote.exact:
        return True
    return quote.exact in raw


def closest_passage(extracted: Extracted, haystack: Haystack, text: str) -> Closest | None:
    """The passage of the text most like ``text``, aligned so that it can be quoted as it is.

    It starts and ends at whole words: a list item, table row or heading is taken whole, a
    paragraph from the start of the sentence to its end. A block the match only grazes (the
    end of the previous list item) is left out. None when nothing is alike.
    """
    closest = haystack.closest(text)
    if closest is None:
        return None
    start, end = closest.start, closest.end
    blocks = [b for b in extracted.blocks if b.start < end and b.end > start]
    if blocks:
        size = max(1, end - start)

        def overlap(block: Block) -> int:
            return min(end, block.end) - max(start, block.start)

        while len(blocks) > 1 and overlap(blocks[0]) < 0.25 * size:
            blocks.pop(0)
        while len(blocks) > 1 and overlap(blocks[-1]) < 0.25 * size:
            blocks.pop()
        low, high = blocks[0].start, blocks[-1].end
        start, end = max(start, low), min(end, high)
        if blocks[0].kind in _WHOLE_BLOCKS:
            start = low
        if blocks[-1].kind in _WHOLE_BLOCKS:
            end = high
        sentence = sentence_around(extracted.text, start, max(start + 1, end))
        start, end = max(low, min(start, sentence.start)), min(high, max(end, sentence.end))
    else:
        sentence = sentence_around(extracted.text, start, end)
        start, end = sentence.start, sentence.end
    passage = extracted.text[start:end]
    if not passage.strip():
        return None
    ratio = difflib.SequenceMatcher(None, normalise(text), normalise(passage), autojunk=False).ratio()
    return Closest(start, end, max(ratio, closest.ratio if end - start <= closest.end - closest.start else ratio))


_WHOLE_BLOCKS = frozenset({"list_item", "table_row", "heading"})
ALIKE = 0.3
"""How alike (0–1) a passage must be to be offered as the closest one."""


def closest_text(extracted: Extracted, closest: Closest) -> str:
    """A closest passage as it is shown and accepted: its text on one line, whole."""
    return printable(" ".join(extracted.text[closest.start:closest.end].split()))


def not_found_message(quote: Quote, source: Source, haystack: Haystack, snapshots: Snapshots) -> str:
    """Why a quote is refused, with the closest passage of the snapshot, whole."""
    file = snapshots.paths.show(snapshots.state(source.sha256, source.media_type).file)
    message = f"quote not found in source {source.id!r} ({file})"
    extracted = snapshots.text(source.sha256, source.media_type)
    closest = closest_passage(extracted, haystack, quote.text)
    if closest is None or closest.ratio < ALIKE:
        return message + "; no passage of it is alike"
    page, section = position(extracted, closest.start)
    where = location_text(page, section)
    return (message + f"; closest passage{f' ({where})' if where else ''}, {closest.ratio:.0%} alike: "
            f"\"{closest_text(extracted, closest)}\"")


# --------------------------------------------------------------------------- editing quotes

SELECTOR_CONTEXT = 32
"""Characters of ``prefix`` and ``suffix`` (the text just before and after a quote)."""

_EMPHASIS = "*_~`"
_LINK_TAIL = re.compile(r"\]\((?:[^()\s]|\([^()\s]*\))*(?:[ ]+\"[^\"\n]*\")?\)|\]\[[^\]\n]{0,100}\]|\]")


def raw_selector(extracted: Extracted, raw: str | None, media_type: str, text: str, start: int, end: int
                 ) -> tuple[int | None, int | None, str, str, str]:
    """(raw_start, raw_end, exact, prefix, suffix) of the passage ``text[start:end]`` quoted as ``text``.

    The raw range is where the passage is written in the raw file; when the reviewer copied
    it from there, ``exact`` is their text as the file has it. A passage copied from the
    rendered view takes in the Markdown around it that belongs to it: emphasis and code
    delimiters at its ends, and a link's ``](url)`` when it ends in the link's text. A PDF
    has no raw text: the selector is taken from the extracted text, and the offsets are None.
    """
    span = extracted.raw_span(start, end)
    if raw is None or span is None:
        body = extracted.text
        return (None, None, body[start:end], body[max(0, start - SELECTOR_CONTEXT):start],
                body[end:end + SELECTOR_CONTEXT])
    raw_start, raw_end = span
    typed = text.strip()
    low = max(0, raw_start - len(typed) - 64)
    found = raw.find(typed, low, min(len(raw), raw_end + len(typed) + 64)) if typed else -1
    while found >= 0 and found + len(typed) <= raw_start:
        found = raw.find(typed, found + 1, min(len(raw), raw_end + len(typed) + 64))
    if found >= 0 and found < max(raw_end, raw_start + 1):
        raw_start, raw_end = found, found + len(typed)  # copied from the file: the file's own text
    elif media_type == "text/markdown":
        while raw_start > 0 and raw[raw_start - 1] in _EMPHASIS:
            raw_start -= 1
        if raw_start > 0 and raw[raw_start - 1] == "[":
            raw_start -= 1
            if raw_start > 0 and raw[raw_start - 1] == "!":
                raw_start -= 1
        while raw_end < len(raw) and raw[raw_end] in _EMPHASIS:
            raw_end += 1
        piece = raw[raw_start:raw_end]
        if piece.count("[") > piece.count("]"):
            tail = _LINK_TAIL.match(raw, raw_end)
            if tail:
                raw_end = tail.end()
                while raw_end < len(raw) and raw[raw_end] in _EMPHASIS:
                    raw_end += 1
    return (raw_start, raw_end, raw[raw_start:raw_end], raw[max(0, raw_start - SELECTOR_CONTEXT):raw_start],
            raw[raw_end:raw_end + SELECTOR_CONTEXT])


def locate_quote(quote: Quote, source: Source, snapshots: Snapshots) -> Quote | None:
    """``quote`` with where it was found in ``source``'s current snapshot (None when it is not there):
    its span and position in the extracted text, and its raw range and selector."""
    haystack = snapshots.haystack(source.sha256, source.media_type)
    if quote.start is not None and quote.end is not None and haystack.matches_at(quote.text, quote.start, quote.end):
        start, end = quote.start, quote.end
    else:
        span = haystack.find(quote.text)
        if span is None:
            return None
        start, end = span.start, span.end
    extracted = snapshots.text(source.sha256, source.media_type)
    page, section = position(extracted, start)
    raw_start, raw_end, exact, prefix, suffix = raw_selector(
        extracted, snapshots.raw(source.sha256, source.media_type), source.media_type, quote.text, start, end)
    return replace(quote, page=page, section=section, start=start, end=end,
                   snapshot=source.sha256[:SNAPSHOT_REF_LENGTH], confirmed="", raw_start=raw_start,
                   raw_end=raw_end, exact=exact, prefix=prefix, suffix=suffix)


def _usable_snapshot(protocol: Protocol, source_id: str, snapshots: Snapshots) -> Source:
    source = pinned_source(protocol, source_id)
    if source is None:
        ids = ", ".join(s.id for s in protocol.sources if s.id and s.has_snapshot) or "none"
        raise Rejected(f"protocol {protocol.id!r} pins no source {source_id!r} (sources with snapshots: {ids}; "
                       f"add one with: protocoder source add {protocol.id} FILE)")
    if not source.has_snapshot:
        raise Rejected(f"source {source_id!r} of {protocol.id!r} has no snapshot to quote from")
    state = snapshots.state(source.sha256, source.media_type)
    shown = snapshots.paths.show(state.file)
    if not state.present:
        raise Rejected(f"the snapshot of source {source_id!r} ({shown}) is not present here, so the quote cannot "
                       f"be checked; copy the file there, or pin it again with: protocoder source update "
                       f"{protocol.id} {source_id} FILE")
    if not state.intact:
        raise Rejected(f"the snapshot of source {source_id!r} ({shown}) has changed since it was pinned; restore "
                       f"it, or pin the changed file with: protocoder source update {protocol.id} {source_id} FILE")
    return source


def find_quote(protocol: Protocol, source_id: str, text: str, snapshots: Snapshots, *,
               accept_closest: bool = False, where: str = "") -> Quote:
    """A new quote of ``text`` in the source's current snapshot, with its position.

    With ``accept_closest``, a text that is not found is replaced by the closest passage
    (the one the refusal would show), when one is alike. Raises :class:`Rejected` when the
    source has no usable snapshot or nothing usable is found (naming the closest passage);
    ``where`` (``P/F (reviewer)``) starts the message.
    """
    lead = f"{where}: " if where else ""
    try:
        source = _usable_snapshot(protocol, source_id, snapshots)
    except Rejected as exc:
        raise Rejected(lead + str(exc)) from None
    if not normalise(text):
        raise Rejected(lead + "the quote is empty")
    quote = locate_quote(Quote(source.id, text.strip()), source, snapshots)
    if quote is not None:
        return quote
    haystack = snapshots.haystack(source.sha256, source.media_type)
    if accept_closest:
        extracted = snapshots.text(source.sha256, source.media_type)
        closest = closest_passage(extracted, haystack, text)
        if closest is not None and closest.ratio >= ALIKE:
            passage = extracted.text[closest.start:closest.end]
            quote = locate_quote(Quote(source.id, passage, start=closest.start, end=closest.end), source, snapshots)
            if quote is not None:
                return quote
    raise Rejected(lead + not_found_message(Quote(source.id, text), source, haystack, snapshots)
                   + ("" if accept_closest else "; to quote that passage, add --accept-closest"))


def cell_for_edit(store: Store, review: Review, protocol_id: str, field_id: str, reviewer: str
                  ) -> tuple[Cell, str | None]:
    """A reviewer's cell as on disk now (a new draft when absent) and the file's fingerprint."""
    rubric = review.require_valid()
    sheet, fingerprint = store.read_sheet(protocol_id, reviewer, rubric)
    cell = sheet.cells.get(field_id) or Cell(protocol_id, field_id, reviewer, None)
    return cell, fingerprint


def same_quote(a: Quote, b: Quote) -> bool:
    """True when two quotes quote the same text of the same source."""
    return a.source == b.source and normalise(a.text) == normalise(b.text)


def add_quote(review: Review, protocol_id: str, field_id: str, reviewer: str, source_id: str, text: str,
              snapshots: Snapshots | None = None, *, accept_closest: bool = False) -> tuple[Quote, bool]:
    """Quote ``text`` of a pinned source on a reviewer's cell; return the quote and whether it was new.

    Refused (nothing written) when the text is not found in the source's snapshot, unless
    ``accept_closest``: then the closest passage is quoted instead (see :func:`find_quote`;
    the returned quote's ``text`` says which).
    """
    snapshots = snapshots or Snapshots(review.paths)
    quote = find_quote(review.protocol(protocol_id), source_id, text, snapshots, accept_closest=accept_closest,
                       where=f"{protocol_id}/{field_id} ({reviewer})")
    store = Store(review.paths)
    cell, fingerprint = cell_for_edit(store, review, protocol_id, field_id, reviewer)
    if any(same_quote(existing, quote) for existing in cell.quotes):
        return quote, False
    store.save_cell(replace(cell, quotes=(*cell.quotes, quote)), review.require_valid(), expected=fingerprint)
    return quote, True


def remove_quotes(review: Review, protocol_id: str, field_id: str, reviewer: str, *, text: str | None = None,
                  number: int | None = None, source_id: str | None = None) -> list[Quote]:
    """Remove the quotes of a cell matching ``text`` (and ``source_id``), or quote ``number`` (from 1)."""
    store = Store(review.paths)
    cell, fingerprint = cell_for_edit(store, review, protocol_id, field_id, reviewer)
    if not cell.quotes:
        raise Rejected(f"{protocol_id}/{field_id} has no quotes by {reviewer}")
    if number is not None:
        if not 1 <= number <= len(cell.quotes):
            raise Rejected(f"{protocol_id}/{field_id} has {len(cell.quotes)} quote(s) by {reviewer}; there is no "
                           f"number {number}")
        gone = [cell.quotes[number - 1]]
    else:
        wanted = normalise(text or "")
        gone = [q for q in cell.quotes if (not wanted or normalise(q.text) == wanted)
                and (source_id is None or q.source == source_id)]
        if not gone:
            listing = "; ".join(f"{n}. [{q.source}] \"{printable(excerpt(q.text, 0, len(q.text), width=60))}\""
                                for n, q in enumerate(cell.quotes, 1))
            raise Rejected(f"no quote of {protocol_id}/{field_id} by {reviewer} matches; its quotes: {listing}")
    kept = tuple(q for q in cell.quotes if all(q is not g for g in gone))
    store.save_cell(replace(cell, quotes=kept), review.require_valid(), expected=fingerprint)
    return gone


def confirm_quotes(review: Review, protocol_id: str, field_id: str, reviewer: str,
                   source_id: str | None = None) -> list[Quote]:
    """Record that the cell's drifted quotes were checked against their sources' current versions."""
    protocol = review.protocol(protocol_id)
    store = Store(review.paths)
    cell, fingerprint = cell_for_edit(store, review, protocol_id, field_id, reviewer)
    confirmed = []
    quotes = []
    for quote in cell.quotes:
        source = pinned_source(protocol, quote.source)
        if (source is not None and (source_id is None or quote.source == source_id)
                and anchor(quote, source) is Anchor.DRIFTED):
            quote = replace(quote, confirmed=source.sha256[:SNAPSHOT_REF_LENGTH])
            confirmed.append(quote)
        quotes.append(quote)
    if confirmed:
        store.save_cell(replace(cell, quotes=tuple(quotes)), review.require_valid(), expected=fingerprint)
    return confirmed


def reanchor(review: Review, protocol: Protocol, source: Source, old_hashes: Iterable[str],
             snapshots: Snapshots) -> tuple[list[QuoteRef], list[QuoteRef]]:
    """After ``source`` got a new snapshot: move every quote of it that is still found to the new
    snapshot, and anchor the others to the version they came from. Returns (moved, drifted).

    ``old_hashes`` are the versions a quote without a ``snapshot`` key belonged to (the one
    just replaced). Writes each changed reviewer file once, through the store.
    """
    rubric = review.require_valid()
    old = next(iter(old_hashes), "")
    moved: list[QuoteRef] = []
    lost: list[QuoteRef] = []
    changed: list[CellUpdate] = []
    for cell in review.all_cells():
        if cell.protocol != protocol.id or not any(q.source == source.id for q in cell.quotes):
            continue
        quotes = []
        for index, quote in enumerate(cell.quotes):
            if quote.source != source.id:
                quotes.append(quote)
                continue
            if quote.snapshot and anchor(quote, source) in (Anchor.CURRENT, Anchor.UNKNOWN):
                quotes.append(quote)  # of the new version already, or for validate to report
                continue
            found = locate_quote(replace(quote, start=None, end=None), source, snapshots)
            if found is not None:
                moved.append(QuoteRef(cell, index, found, source))
                quotes.append(found)
            else:
                if not quote.snapshot and old:
                    quote = replace(quote, snapshot=old[:SNAPSHOT_REF_LENGTH])
                lost.append(QuoteRef(cell, index, quote, source))
                quotes.append(quote)
        if tuple(quotes) != cell.quotes:
            changed.append(CellUpdate(cell.protocol, cell.field, cell.reviewer, {"quotes": tuple(quotes)}))
    if changed:
        Store(review.paths).write_cells(changed, rubric)
    return moved, lost


def status_lines(review: Review) -> list[str]:
    """What ``status`` says about evidence: quotes, snapshots, and every cell with drifted evidence.

    Reads no snapshot (hashes only), so it costs nothing on a large review.
    """
    refs = list(all_quotes(review))
    pinned = [source for protocol in review.protocols for source in protocol.sources if source.has_snapshot]
    if not refs and not pinned:
        return []
    absent = sum(1 for source in pinned if not snapshot_file(review.paths, source.sha256, source.media_type).is_file())
    cells = {(ref.key, ref.cell.reviewer) for ref in refs}
    line = (f"Evidence: {len(refs)} quote{'s' if len(refs) != 1 else ''} in {len(cells)} cell"
            f"{'s' if len(cells) != 1 else ''}; {len(pinned)} source snapshot{'s' if len(pinned) != 1 else ''}")
    if absent:
        line += f" ({absent} not present here)"
    lines = ["", line]
    lost = [ref for ref in refs if ref.source is not None and anchor(ref.quote, ref.source) is Anchor.DRIFTED]
    by_cell: dict[tuple[str, str], list[QuoteRef]] = {}
    for ref in lost:
        by_cell.setdefault((ref.key, ref.cell.reviewer), []).append(ref)
    if by_cell:
        lines.append(f"Drifted evidence ({len(by_cell)} cell{'s' if len(by_cell) != 1 else ''}, {len(lost)} "
                     f"quote{'s' if len(lost) != 1 else ''}; re-quote or: protocoder quote confirm):")
        for (key, reviewer), group in by_cell.items():
            sources = ", ".join(sorted({ref.quote.source for ref in group}))
            lines.append(f"  {key} ({reviewer}): {len(group)} quote{'s' if len(group) != 1 else ''} of {sources} "
                         "not in the current version")
    return lines



def with_quotes(records: list[dict[str, object]], cells: Iterable[FinalCell], review: Review
                ) -> list[dict[str, object]]:
    """View cell records with the quotes behind each final code (``quotes``, only where there are some).

    The quotes are those of the reviewer whose source and basis the final cell shows: the
    one cell of a single-coded cell, the first reviewer's of an agreed one (as the consensus
    rule takes them), the reviewer whose cell an adjudication took whole; none otherwise.
    """
    protocols = {protocol.id: protocol for protocol in review.protocols}
    for record, final in zip(records, cells, strict=True):
        reviewer = None
        if final.status in (Status.SINGLE, Status.AGREED) and final.codes:
            reviewer = next(iter(final.codes))
        elif final.status is Status.ADJUDICATED and final.adjudication is not None:
            reviewer = final.adjudication.taken_from or None
        cell = review.cells(final.protocol, final.field).get(reviewer) if reviewer else None
        if cell is None or not cell.quotes:
            continue
        protocol = protocols[final.protocol]
        shown = []
        for quote in cell.quotes:
            source = pinned_source(protocol, quote.source)
            shown.append({"source": quote.source, "title": source.title if source else quote.source,
                          "version": source.version if source else "", "text": " ".join(quote.text.split()),
                          "page": quote.page, "section": quote.section,
                          "location": location_text(quote.page, quote.section),
                          "drifted": source is not None and anchor(quote, source) is Anchor.DRIFTED})
        record["quotes"] = shown
    return records

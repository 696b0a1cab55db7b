"""A quote found in its source's current snapshot: span, page, section, raw range, selector."""

from __future__ import annotations

import re
from dataclasses import replace

from ...errors import Rejected
from ...model import Protocol, Quote, Source
from ..extract import Extracted
from ..locate import normalise
from ..snapshots import Snapshots, line_range, position
from .anchors import SNAPSHOT_REF_LENGTH, pinned_source
from .suggestions import ALIKE, closest_passage, not_found_message
from .verification import Verdict, Verifier, place_quote

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
    span = place_quote(snapshots.haystack(source.sha256, source.media_type), quote)
    if span is None:
        return None
    start, end = span.start, span.end
    extracted = snapshots.text(source.sha256, source.media_type)
    page, section = position(extracted, start)
    raw = snapshots.raw(source.sha256, source.media_type)
    raw_start, raw_end, exact, prefix, suffix = raw_selector(
        extracted, raw, source.media_type, quote.text, start, end)
    # Code and configuration (plain text) are cited by line, as their readers and hosts number them.
    lines = (line_range(raw, raw_start, raw_end) if source.media_type == "text/plain" and raw is not None
             and raw_start is not None and raw_end is not None else None)
    return replace(quote, page=page, section=section, start=start, end=end,
                   snapshot=source.sha256[:SNAPSHOT_REF_LENGTH], confirmed="", raw_start=raw_start,
                   raw_end=raw_end, exact=exact, prefix=prefix, suffix=suffix, lines=lines)


def usable_snapshot(protocol: Protocol, source_id: str, snapshots: Snapshots) -> Source:
    """The protocol's source ``source_id``, when its snapshot is here and intact (else :class:`Rejected`
    saying what is wrong and the command that fixes it)."""
    source = pinned_source(protocol, source_id)
    if source is None:
        ids = ", ".join(s.id for s in protocol.sources if s.id and s.has_snapshot) or "none"
        raise Rejected(f"protocol {protocol.id!r} pins no source {source_id!r} (sources with snapshots: {ids}; "
                       f"add one with: protocoder source add {protocol.id} FILE)")
    if not source.has_snapshot:
        raise Rejected(f"source {source_id!r} of {protocol.id!r} has no snapshot to quote from")
    state = snapshots.state(source.sha256, source.media_type)
    shown = snapshots.paths.show(state.file)
    if state.impostor:
        raise Rejected(f"the snapshot of source {source_id!r} ({shown}) {state.impostor}; put the pinned file "
                       f"back, or pin it again with: protocoder source update {protocol.id} {source_id} FILE")
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
        source = usable_snapshot(protocol, source_id, snapshots)
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
    message = not_found_message(Quote(source.id, text), source, haystack, snapshots)
    offered = "closest passage" in message
    raise Rejected(lead + message + ("" if accept_closest or not offered else
                                     "; to quote that passage, add --accept-closest"))


def admit_quote(quote: Quote, protocol: Protocol, snapshots: Snapshots) -> Quote:
    """A quote given whole (``import``), judged as ``validate`` judges it: refused (:class:`Rejected`
    with validate's reason) when validate would report it; else the quote, its position and
    selector recomputed when it is found in the current snapshot, kept as given when it belongs
    to an earlier version (drifted or confirmed) or its snapshot is not present here."""
    source = pinned_source(protocol, quote.source)
    check = Verifier(snapshots).check(quote, source, protocol_id=protocol.id)
    if check.refused:
        if check.state == Verdict.NO_SOURCE:
            usable_snapshot(protocol, quote.source, snapshots)  # raises, naming the sources it has
        raise Rejected(check.message)
    if check.state != Verdict.FOUND or source is None:
        return quote
    located = locate_quote(quote, source, snapshots)
    assert located is not None  # the verdict found it
    return located

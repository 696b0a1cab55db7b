"""Verification: whether a quote is found in its source, decided once for every command.

:func:`place_quote` is the one test of "this text is in this snapshot" (its recorded span
when that still holds the text, else its first occurrence after normalisation) and
:class:`Verifier` the one verdict on a quote of a review (its source pinned, its snapshot
here and intact, its text found, its ``exact`` where its raw offsets say). ``quote add``,
``validate``, ``quote list``, ``render --quotes``, ``import`` and every ``export`` (CSV,
JSON, REFI-QDA) call them, so that no two commands can disagree about a quote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...errors import InvalidInput, Problem
from ...model import Quote, Source
from ...storage.files import read_text
from ...storage.findings import Findings
from ...storage.workspace import Review
from ..locate import Haystack, Span
from ..snapshots import Snapshots
from .anchors import Anchor, QuoteRef, all_quotes, anchor
from .suggestions import not_found_message

_CUT_LINK = re.compile(r"\]\((?:[^()\s]|\([^()\s]*\))*$")
"""An ``exact`` that stops inside a link's ``](url)``."""


def place_quote(haystack: Haystack, quote: Quote) -> Span | None:
    """Where ``quote`` is in the haystack's text: its recorded span when that still holds its
    text (after normalisation), else the first place its text occurs; None when it is not there.

    The one answer to "is this quote in this snapshot": every command asks it here.
    """
    if quote.start is not None and quote.end is not None and haystack.matches_at(quote.text, quote.start, quote.end):
        return Span(quote.start, quote.end)
    return haystack.find(quote.text)


class Verdict:
    """What :meth:`Verifier.check` can say of a quote (``Check.state``)."""

    FOUND = "found"
    """Its text is in its source's current snapshot (and its ``exact`` where it says)."""
    NOT_FOUND = "not found"
    EXACT = "exact differs"
    """Found, but its ``exact`` is not the raw file's text at its raw offsets."""
    DRIFTED = "drifted"
    CONFIRMED = "confirmed"
    UNCHECKED = "unchecked"
    """Its snapshot is not present here: reported as a note, never a failure."""
    BAD_SNAPSHOT = "snapshot changed"
    """Its snapshot was changed or replaced: reported once, at the source in protocol.yaml."""
    UNKNOWN = "unknown snapshot"
    NO_SOURCE = "unknown source"
    NO_SNAPSHOT = "no snapshot"
    UNREADABLE = "unreadable"


_ERRORS = frozenset({Verdict.NOT_FOUND, Verdict.EXACT, Verdict.BAD_SNAPSHOT, Verdict.UNKNOWN, Verdict.NO_SOURCE,
                     Verdict.NO_SNAPSHOT, Verdict.UNREADABLE})


@dataclass(frozen=True)
class Check:
    """The verdict on one quote, and where it lies when it was placed."""

    state: str
    message: str = ""
    """Why it is refused (or drifted), in one line; empty when found."""
    key: str = "text"
    """The quote's key the message is about (``text``, ``source``, ``snapshot``, ``raw_start``)."""
    span: Span | None = None
    """Where it lies in the extracted text of ``sha256`` (the current snapshot, or for a drifted
    or confirmed quote the earlier one it was taken from when that is here)."""
    sha256: str = ""
    media_type: str = ""

    @property
    def refused(self) -> bool:
        """True when every command refuses this quote (``validate`` reports it as an error)."""
        return self.state in _ERRORS


class Verifier:
    """Quotes checked against the snapshots of one workspace, each snapshot read at most once."""

    def __init__(self, snapshots: Snapshots) -> None:
        self.snapshots = snapshots
        self._usable: dict[str, str] = {}

    def snapshot_problem(self, source: Source) -> str:
        """'' when the source's current snapshot is here and intact, else what is wrong with it:
        ``absent`` (not present here) or a sentence (changed, or something else in its place)."""
        return self._state(source.sha256, source.media_type)

    def _state(self, sha256: str, media_type: str) -> str:
        if sha256 not in self._usable:
            state = self.snapshots.state(sha256, media_type)
            shown = self.snapshots.paths.show(state.file)
            if state.impostor:
                self._usable[sha256] = f"the snapshot {shown} {state.impostor}"
            elif not state.present:
                self._usable[sha256] = "absent"
            elif not state.intact:
                self._usable[sha256] = f"the snapshot {shown} has changed since it was pinned"
            else:
                self._usable[sha256] = ""
        return self._usable[sha256]

    def check(self, quote: Quote, source: Source | None, *, protocol_id: str = "", cell_ref: str = "",
              reviewer: str = "", earlier: bool = False) -> Check:
        """The verdict on ``quote`` of ``source`` (None: the protocol pins no source by its name).

        ``protocol_id``, ``cell_ref`` (``P/F``) and ``reviewer`` go into the commands a message
        names. With ``earlier``, a drifted or confirmed quote is also placed in the earlier
        snapshot it was taken from, when that is here (what the REFI-QDA export ships).
        """
        if source is None:
            return Check(Verdict.NO_SOURCE, f"quote names source {quote.source!r}, which protocol {protocol_id!r} "
                         "does not pin (add it with protocoder source add)", "source")
        if not source.has_snapshot:
            return Check(Verdict.NO_SNAPSHOT, f"source {quote.source!r} has no snapshot to check this quote "
                         f"against; pin one with: protocoder source update {protocol_id} {source.id} FILE", "source")
        state = anchor(quote, source)
        if state is Anchor.UNKNOWN:
            return Check(Verdict.UNKNOWN, f"snapshot {quote.snapshot!r} is no version of source {quote.source!r} "
                         "(neither its current sha256 nor one of its previous ones)", "snapshot")
        if state in (Anchor.DRIFTED, Anchor.CONFIRMED):
            verdict = Verdict.DRIFTED if state is Anchor.DRIFTED else Verdict.CONFIRMED
            message = (f"drifted evidence: source {quote.source!r} changed (now {source.version!r}) and this "
                       "passage is not in the new version; quote the new version, or confirm that the code "
                       f"stands with: protocoder quote confirm --cell {cell_ref} --reviewer {reviewer}"
                       if state is Anchor.DRIFTED else "")
            if not earlier:
                return Check(verdict, message)
            version = next(v for v in source.previous if v.sha256.startswith(quote.snapshot))
            if self._state(version.sha256, version.media_type):
                return Check(verdict, message)
            try:
                span = place_quote(self.snapshots.haystack(version.sha256, version.media_type), quote)
            except InvalidInput:
                span = None
            return Check(verdict, message, span=span, sha256=version.sha256, media_type=version.media_type)
        problem = self._state(source.sha256, source.media_type)
        if problem == "absent":
            return Check(Verdict.UNCHECKED)
        if problem:
            return Check(Verdict.BAD_SNAPSHOT, f"{problem}: its quotes cannot be checked; restore it, or pin the "
                         f"document again with: protocoder source update {protocol_id} {source.id} FILE", "text")
        try:
            haystack = self.snapshots.haystack(source.sha256, source.media_type)
        except InvalidInput as exc:
            return Check(Verdict.UNREADABLE, f"cannot check this quote: {exc.problems[0].message}")
        span = place_quote(haystack, quote)
        if span is None:
            return Check(Verdict.NOT_FOUND, not_found_message(quote, source, haystack, self.snapshots))
        if quote.exact:
            wrong = self._exact_problem(quote, source)
            if wrong:
                return Check(Verdict.EXACT, wrong[1], wrong[0], span, source.sha256, source.media_type)
        return Check(Verdict.FOUND, span=span, sha256=source.sha256, media_type=source.media_type)

    def _exact_problem(self, quote: Quote, source: Source) -> tuple[str, str] | None:
        """(key, message) when the quote's ``exact`` is not the file's text where its offsets say
        (or, without raw offsets, nowhere in it); None when it is."""
        raw = self.snapshots.raw(source.sha256, source.media_type)
        missing = ("exact", f"the quote's exact text is not in the snapshot of source {source.id!r} as written; "
                   "delete exact, prefix, suffix, raw_start and raw_end (validate finds the quote by its text), or "
                   "quote it again with protocoder quote add")
        if raw is None:  # a PDF: exact is taken from the extracted text
            text = self.snapshots.text(source.sha256, source.media_type).text
            if (quote.start is not None and quote.end is not None and text[quote.start:quote.end] == quote.exact) \
                    or quote.exact in text:
                return None
            return missing
        if source.media_type == "text/markdown" and _CUT_LINK.search(quote.exact):
            return "exact", ("the quote's exact text ends inside a link's URL (…" + quote.exact[-40:].replace("\n", " ")
                             + "): quote the passage again with protocoder quote add, which keeps the whole link, "
                             "or delete exact, prefix, suffix, raw_start and raw_end")
        start, end = quote.raw_start, quote.raw_end
        if start is not None and end is not None and 0 <= start <= end <= len(raw) and raw[start:end] == quote.exact:
            return None
        elsewhere = raw.find(quote.exact)
        if elsewhere < 0:
            return missing
        if start is None and end is None:
            return None
        return "raw_start", (f"the raw file at raw_start {start}, raw_end {end} is not the quote's exact text (that "
                             f"is written at raw_start {elsewhere}, raw_end {elsewhere + len(quote.exact)}): the "
                             "offsets were edited by hand; correct them, or delete exact, prefix, suffix, raw_start "
                             "and raw_end (validate finds the quote by its text), or quote it again with protocoder "
                             "quote add")


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
    """Check every pinned snapshot and every quote of the workspace (see the package docstring)."""
    paths = review.paths
    snapshots = snapshots or Snapshots(paths)
    verifier = Verifier(snapshots)
    result = EvidenceCheck()
    located = _Located(review)
    seen: set[str] = set()
    for protocol in review.protocols:
        protocol_file = paths.show(paths.protocol_file(protocol.id))
        for index, source in enumerate(protocol.sources):
            if not source.has_snapshot or source.sha256 in seen:
                continue
            seen.add(source.sha256)
            state = snapshots.state(source.sha256, source.media_type)
            shown = paths.show(state.file)
            if state.impostor:
                located.add(protocol_file, ["sources", index, "sha256"],
                            f"the snapshot of source {source.id!r} ({shown}) {state.impostor}: its quotes cannot "
                            f"be checked. Put the pinned file back (e.g. git checkout -- {shown}), or pin the "
                            f"document again with: protocoder source update {protocol.id} {source.id} FILE")
            elif state.present and not state.intact:
                located.add(protocol_file, ["sources", index, "sha256"],
                            f"the snapshot of source {source.id!r} ({shown}) has changed: its bytes no longer "
                            "match this SHA-256. Restore the pinned file, or pin the changed one as a new "
                            f"version with: protocoder source update {protocol.id} {source.id} FILE")

    absent_quotes: dict[str, int] = {}
    for ref in all_quotes(review):
        result.quotes += 1
        cell = ref.cell
        sheet = review.sheet(cell.protocol, cell.reviewer)
        shown = paths.show(sheet.path) if sheet is not None else paths.show(
            paths.sheet_file(cell.protocol, cell.reviewer))
        keypath: list[str | int] = ["cells", cell.field, "quotes", ref.index]
        check = verifier.check(ref.quote, ref.source, protocol_id=cell.protocol, cell_ref=ref.key,
                               reviewer=cell.reviewer)
        if check.state == Verdict.NO_SOURCE:
            protocol = review.protocol(cell.protocol)
            ids = ", ".join(s.id for s in protocol.sources if s.id and s.has_snapshot) or "none yet"
            located.add(shown, [*keypath, "source"],
                        f"quote names source {ref.quote.source!r}, which protocol {cell.protocol!r} does not pin "
                        f"(its sources with snapshots: {ids}; add one with protocoder source add)")
        elif check.state == Verdict.DRIFTED:
            result.drifted.append(ref)
            located.add(shown, [*keypath, "text"], check.message, "warning")
        elif check.state == Verdict.CONFIRMED:
            result.confirmed += 1
        elif check.state == Verdict.UNCHECKED:
            assert ref.source is not None
            absent_quotes[ref.source.sha256] = absent_quotes.get(ref.source.sha256, 0) + 1
            result.unchecked += 1
        elif check.state == Verdict.BAD_SNAPSHOT:
            result.unchecked += 1  # reported once, at the source in protocol.yaml
        elif check.refused:
            located.add(shown, [*keypath, check.key], check.message)
        else:
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

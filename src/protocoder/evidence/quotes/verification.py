"""Verification (``validate``): every quote checked against its source's snapshot."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import InvalidInput, Problem
from ...model import Quote, Source
from ...storage.files import read_text
from ...storage.findings import Findings
from ...storage.workspace import Review
from ..snapshots import Snapshots
from .anchors import Anchor, QuoteRef, all_quotes, anchor
from .suggestions import not_found_message


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
            if state.impostor:
                usable[source.sha256] = False
                located.add(protocol_file, ["sources", index, "sha256"],
                            f"the snapshot of source {source.id!r} ({shown}) {state.impostor}: its quotes cannot "
                            f"be checked. Put the pinned file back (e.g. git checkout -- {shown}), or pin the "
                            f"document again with: protocoder source update {protocol.id} {source.id} FILE")
            elif not state.present:
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
        text = snapshots.text(source.sha256, source.media_type).text
        if quote.start is not None and quote.end is not None and text[quote.start:quote.end] == quote.exact:
            return True
        return quote.exact in text
    if quote.raw_start is not None and quote.raw_end is not None and raw[quote.raw_start:quote.raw_end] == quote.exact:
        return True
    return quote.exact in raw

"""Writing the history: corrections and withdrawals of released cells (see :mod:`history` for
reading it, and :mod:`corrections` for the ledger file they are appended to).

After a release, a released cell changes only through a correction, decided under the
workspace lock from the files as they are then: :func:`correct` (the command),
:func:`record_change` (the coding app, after a released cell changed in a reviewer's file),
:func:`pending_correction` / :func:`correction_entry` (an adjudication that changes a released
cell). :func:`withdraw` takes a released protocol out of the current view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput, Rejected
from ..model import Cell, Quote
from ..storage.mappings import check_texts
from ..storage.paths import Paths
from ..storage.store import Store
from ..storage.workspace import Review, load_review
from .cellref import CellRef
from .changes import codes_text, same_as_current
from .consensus import FinalCell, Status
from .corrections import (
    WITHDRAW,
    Correction,
    apply_corrections,
    load_corrections,
    new_entry,
    withdrawn_protocols,
)
from .history import (
    History,
    Released,
    checked_history,
    load_history,
    record_of,
    released_codes,
)
from .journal import finish_pending
from .ledger_writes import append_correction
from .releases import Release, latest_release
from .view import final_cells


def _released(history: History, key: str) -> tuple[Release, Released]:
    release = history.latest
    if release is None:
        raise Rejected("nothing has been released yet: change the cells directly (corrections apply to releases)")
    protocol = key.partition("/")[0]
    if protocol in history.withdrawn():
        raise Rejected(f"protocol {protocol} was withdrawn from release {release.label}: its cells are no longer "
                       "in the tables")
    item = released_codes(history).get(key)
    if item is None:
        raise Rejected(f"{key} was not part of release {release.label}: change it directly")
    return release, item


@dataclass(frozen=True)
class CorrectionResult:
    """A recorded correction and what it changed in the current view."""

    correction: Correction
    code_changed: bool
    evidence: str
    """``given`` (from the options), ``reviewers`` (the reviewers' consensus record) or
    ``released`` (the current record kept)."""


def correct(paths: Paths, cell_key: str, *, reason: str, by: str, code: str | None = None,
            source: str | None = None, basis: str | None = None,
            cites: Sequence[str] | None = None, quotes: Sequence[Quote] = ()) -> CorrectionResult:
    """Record a correction of a released cell (the only way to change one), deciding under the lock.

    * ``code`` with evidence (``source``/``basis``/``cites``): the corrected cell's own record;
      parts left out are empty when the code changes and kept from the current view when not.
    * ``code`` alone: the reviewers' record when their consensus has that code, else the
      current record is kept.
    * evidence alone: a correction of the evidence; the code stays.
    * nothing: the reviewers' consensus (code and record) as it is now.

    ``quotes`` (already checked against their snapshots, see ``protocoder correct --quote``) are
    the passages the corrected cell rests on; they count as evidence given.

    A correction that would change nothing in the current view is refused.
    """
    given = source is not None or basis is not None or cites is not None or bool(quotes)
    with Store(paths).locked():
        finish_pending(paths)
        review = load_review(paths.root)
        rubric = review.require_valid()
        ref = CellRef.parse(cell_key, review)
        key = str(ref)
        history = checked_history(review)
        release, item = _released(history, key)
        current = item.current
        live = next(c for c in final_cells(review) if c.key == key)
        new_code = code
        evidence = "released"
        record: dict[str, Any] = {}
        if new_code is None and not given:
            if live.code is None:
                raise Rejected(_unsettled(key, live))
            new_code, evidence = live.code, "reviewers"
            record = {"source": live.source, "basis": live.basis, "cites": list(live.cites)}
        elif new_code is None:
            new_code = current["code"]
            if new_code is None:
                raise Rejected(f"{key} has no code in the current view ({current['status']}): give --code")
        allowed = rubric.field(ref.field).codes
        if new_code not in allowed:
            raise Rejected(f"code {new_code!r} is not allowed for field {ref.field!r} (allowed: {', '.join(allowed)})")
        if given:
            keep = new_code == current["code"]
            record = _given_record(review, new_code,
                                   source if source is not None else (current["source"] if keep else ""),
                                   basis if basis is not None else (current["basis"] if keep else ""),
                                   list(cites) if cites is not None else (list(current["cites"]) if keep else []))
            evidence = "given"
            if quotes:
                record["quotes"] = tuple(quotes)
        elif evidence == "released" and live.code == new_code:
            record = {"source": live.source, "basis": live.basis, "cites": list(live.cites)}
            evidence = "reviewers"
        after = apply_corrections([current], [_draft(key, new_code, record)])[0]
        if record_of(after) == record_of(current) and _quoted(after) == _quoted(current):
            raise Rejected(f"{key} is already {new_code} with that source, basis and citations in the current view: "
                           "nothing to correct")
        correction = append_correction(paths, release=release.label, cell=key, old=current["code"] or "",
                                       new=new_code, reason=reason, by=by, live=live.record_hash, **record)
    return CorrectionResult(correction, new_code != current["code"], evidence)


def _quoted(cell: dict[str, Any]) -> tuple[tuple[Any, Any], ...]:
    """The passages a view cell shows, for comparing."""
    return tuple((quote.get("source"), " ".join(str(quote.get("text", "")).split()))
                 for quote in cell.get("quotes", ()))


def _draft(key: str, code: str, record: dict[str, Any]) -> Correction:
    return Correction("", key, "", code, "", "", "", "", "", record.get("source", ""), record.get("basis", ""),
                      tuple(record.get("cites", ())), quotes=tuple(record.get("quotes", ())))


def _unsettled(key: str, live: FinalCell) -> str:
    if live.status is Status.UNRESOLVED:
        return (f"{key} is unresolved in the reviewers' files ({codes_text(live.codes)}): decide it with protocoder "
                f"adjudicate --cell {key} --code ... --reason \"...\", or give the corrected code with --code")
    if live.status is Status.INCOMPLETE:
        return (f"{key} is incomplete in the reviewers' files: complete it, or give the corrected code with --code "
                "(and --source/--basis)")
    return f"nobody has coded {key}: give the corrected code with --code (and --source/--basis)"


def _given_record(review: Review, code: str, source: str, basis: str, cites: list[str]) -> dict[str, Any]:
    """The source, basis and citations a correction states, checked as a cell's would be."""
    source, basis = source.strip(), basis.strip()
    check_texts({"the source location": source, "the basis": basis})
    unknown = [key for key in cites if key not in review.bibliography]
    if unknown:
        raise Rejected(f"citation key {unknown[0]!r} is not in {review.paths.show(review.paths.bibliography)}")
    rubric = review.require_valid()
    missing = Cell("", "", "", code, source=source, basis=basis, cites=tuple(cites)).missing(rubric)
    if missing:
        raise Rejected(f"code {code} needs {' and '.join(missing)} (the rubric requires it)")
    return {"source": source, "basis": basis, "cites": cites}


@dataclass(frozen=True)
class PendingCorrection:
    """A released cell whose reviewers' consensus now differs from the current view."""

    release: str
    cell: str
    old: str | None
    new: str
    source: str = ""
    basis: str = ""
    cites: tuple[str, ...] = ()
    live: str = ""


def pending_correction(review: Review, cell_key: str, history: History | None = None,
                       live: FinalCell | None = None) -> PendingCorrection | None:
    """The correction a released cell needs now, or None when the current view already says
    what the reviewers' consensus says, or the consensus is not settled (no final code)."""
    history = history or load_history(review)
    release = history.usable_latest
    if release is None or cell_key.partition("/")[0] in history.withdrawn():
        return None
    item = released_codes(history).get(cell_key)
    if item is None:
        return None
    if live is None:
        live = next((c for c in final_cells(review) if c.key == cell_key), None)
    if live is None or live.code is None or same_as_current(live, item):
        return None
    return PendingCorrection(release.label, cell_key, item.current_code, live.code, live.source, live.basis,
                             tuple(live.cites), live.record_hash)


def correction_entry(history: History, pending: PendingCorrection, *, reason: str, by: str,
                     at: str | None = None) -> Correction:
    """The ledger entry that records ``pending`` after the ledger's head (not yet written)."""
    return new_entry(prev=history.corrections[-1].hash if history.corrections else "", release=pending.release,
                     cell=pending.cell, old=pending.old or "", new=pending.new, reason=reason, by=by, at=at,
                     source=pending.source, basis=pending.basis, cites=pending.cites, live=pending.live)


def record_change(paths: Paths, cell_key: str, *, reason: str, by: str) -> Correction | None:
    """After a released cell changed in the reviewers' files, append the correction it needs
    (deciding under the lock); None when the current view already says it or nothing is settled."""
    with Store(paths).locked():
        finish_pending(paths)
        review = load_review(paths.root)
        review.require_valid()
        history = checked_history(review)
        pending = pending_correction(review, cell_key, history)
        if pending is None:
            return None
        return append_correction(paths, release=pending.release, cell=cell_key, old=pending.old or "",
                                 new=pending.new, reason=reason, by=by, source=pending.source, basis=pending.basis,
                                 cites=pending.cites, live=pending.live)


def withdraw(paths: Paths, protocol_id: str, *, reason: str, by: str) -> Correction:
    """Withdraw a released protocol from the current view: a ledger entry with a reason, after
    which the tables omit it (rows and denominators) and it can be removed."""
    with Store(paths).locked():
        finish_pending(paths)
        review = load_review(paths.root)
        history = checked_history(review)
        release = history.latest
        if release is None:
            raise Rejected(f"nothing has been released yet: remove the protocol directly "
                           f"(protocoder protocol remove {protocol_id})")
        if protocol_id not in {p["id"] for p in release.view().protocols}:
            raise Rejected(f"protocol {protocol_id!r} is not in release {release.label}: remove it directly "
                           f"(protocoder protocol remove {protocol_id})")
        if protocol_id in history.withdrawn():
            raise Rejected(f"protocol {protocol_id} is already withdrawn from release {release.label}")
        return append_correction(paths, release=release.label, cell=protocol_id, old="", new="", reason=reason,
                                 by=by, action=WITHDRAW)


def removal_problem(paths: Paths, protocol_id: str) -> str | None:
    """Why removing a protocol would break the history (None when it would not), naming the way out."""
    release = latest_release(paths)
    if release is None:
        return None
    try:
        protocols = {p["id"] for p in release.view().protocols}
    except InvalidInput as exc:
        return f"{exc.problems[0]}; run protocoder validate"
    if protocol_id not in protocols:
        return None
    corrections, problems = load_corrections(paths)
    if problems:
        return f"{problems[0]}; run protocoder validate"
    since = [c for c in corrections if c.release == release.label]
    if protocol_id in withdrawn_protocols(since):
        return None
    return (f"protocol {protocol_id!r} is in release {release.label}: removing it would take its released cells "
            f"out from under the release. Withdraw it first (protocoder withdraw {protocol_id} --reason \"...\"; "
            "the tables then omit it and list the withdrawal with its reason), then remove it")

"""Adjudicating disagreements: a recorded decision, with a reason, per unresolved cell.

Adjudications live in ``protocols/<id>/consensus.yaml`` as an append-only list: a new
decision for a cell is a new entry, and the consensus rule (:mod:`consensus`) uses the
latest one while the reviewers' codes it resolved are unchanged. Any coded cell may be
decided (again), with a reason: a disagreement, a cell whose adjudication went stale, or
a settled cell the team wants to re-decide. A reviewer's own file is never touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..errors import Rejected
from ..model import Cell, is_slug
from ..storage.mappings import check_texts
from ..storage.paths import Paths
from ..storage.store import Store, now_iso
from ..storage.workspace import Review, load_review
from .amend import correction_entry, pending_correction
from .cellref import CellRef
from .consensus import Adjudication, FinalCell, Status, codes_hash
from .corrections import Correction
from .history import checked_history
from .journal import finish_pending, write_both
from .view import final_cells

__all__ = ["CellRef", "Decision", "adjudicate", "cells_needing_adjudication", "stale_adjudications"]


def cells_needing_adjudication(review: Review) -> list[FinalCell]:
    """Every unresolved cell (including those whose adjudication went stale), in table order."""
    return [cell for cell in final_cells(review) if cell.status is Status.UNRESOLVED]


def stale_adjudications(review: Review) -> list[FinalCell]:
    """Cells whose latest adjudication no longer matches the reviewers' codes, who now disagree."""
    return [cell for cell in final_cells(review) if cell.stale is not None]


@dataclass(frozen=True)
class Decision:
    """A recorded adjudication and, for a released cell whose current view it changed, its correction."""

    adjudication: Adjudication
    correction: Correction | None
    status_before: Status


def adjudicate(paths: Paths, ref: CellRef | str, *, reason: str, by: str, code: str | None = None,
               take_from: str | None = None, keep: Sequence[str] | None = None, basis: str | None = None,
               source: str = "", cites: Sequence[str] = ()) -> Decision:
    """Record a decision for a coded cell (unresolved, or re-deciding any other) and return it.

    A decision is a code and an explicit choice of the evidence it keeps, recorded with it
    (``Adjudication.kept``): ``take_from`` (one reviewer's cell whole: code and evidence),
    ``keep`` (the evidence of one or more reviewers who coded the cell, with ``code``), or
    ``basis`` (the adjudicator's own, with ``source`` and ``cites``). With ``code`` alone the
    choice is the evidence of every reviewer who chose that code, else the reason as the
    adjudicator's own basis. Everything is read and decided under the workspace lock.
    When the cell is in the latest release and the decision changes what the current view
    shows, the correction is recorded with the same reason, in one all-or-nothing operation
    with the adjudication (see :mod:`journal`).

    Raises :class:`Rejected` (nothing written) when nobody has coded the cell, the code is
    not allowed, the reason is empty, more than one kind of evidence is chosen, or a
    reviewer named did not code the cell; and :class:`InvalidInput` when the workspace or its
    history has errors.
    """
    if not reason.strip():
        raise Rejected("an adjudication needs a reason")
    if not is_slug(by):
        raise Rejected(f"adjudicator name {by!r} is not a safe id")
    choices = [name for name, given in (("--take", take_from is not None), ("--keep", bool(keep)),
                                        ("--basis", basis is not None)) if given]
    if len(choices) > 1:
        raise Rejected(f"{' and '.join(choices)} are different choices of evidence: give one")
    if (source.strip() or cites) and basis is None:
        raise Rejected("--source and --cite go with --basis (the adjudicator's own evidence)")
    if basis is not None and not basis.strip():
        raise Rejected("--basis is empty: write the basis the decision rests on")
    store = Store(paths)
    with store.locked():
        finish_pending(paths)
        review = load_review(paths.root)
        rubric = review.require_valid()
        ref = CellRef.parse(ref, review) if isinstance(ref, str) else ref
        history = checked_history(review)
        current = {c.key: c for c in final_cells(review)}[str(ref)]
        cells = {reviewer: cell for reviewer, cell in review.cells(ref.protocol, ref.field).items() if cell.is_coded}
        if not cells:
            raise Rejected(f"nobody has coded {ref} yet: there is nothing to adjudicate")
        coded_by = ", ".join(sorted(cells))
        kept: tuple[str, ...]
        if take_from is not None:
            if take_from not in cells:
                raise Rejected(f"{take_from!r} has not coded {ref} (coded by: {coded_by})")
            taken = cells[take_from]
            if code is not None and code != taken.code:
                raise Rejected(f"{take_from} coded {ref} as {taken.code}, not {code}")
            code = taken.code
            kept = (take_from,)
            source, basis, cites = taken.source, taken.basis, tuple(taken.cites)
        else:
            if code is None:
                raise Rejected("give the decided code (--code) or a reviewer whose cell to take (--take)")
            if not choices:
                # No choice given: the evidence of every reviewer who chose the decided code, or, when
                # nobody did, the reason as the adjudicator's own basis. Recorded as that choice (and
                # said by the command), never copied silently.
                agreeing = [name for name in sorted(cells) if cells[name].code == code]
                keep, basis = (agreeing, None) if agreeing else (None, reason)
            if keep:
                kept = tuple(dict.fromkeys(keep))
                unknown = [name for name in kept if name not in cells]
                if unknown:
                    raise Rejected(f"{', '.join(map(repr, unknown))} did not code {ref} (coded by: {coded_by})")
                source, basis, cites = joined_evidence([cells[name] for name in kept])
            else:
                kept = ()
                assert basis is not None
                basis, source, cites = basis.strip(), source.strip(), tuple(dict.fromkeys(cites))
                unknown_cites = [key for key in cites if key not in review.bibliography]
                if unknown_cites:
                    raise Rejected(f"citation key {unknown_cites[0]!r} is not in references.bib "
                                   "(add it with protocoder cite add)")
        allowed = rubric.field(ref.field).codes
        if code not in allowed:
            raise Rejected(f"code {code!r} is not allowed for field {ref.field!r} (allowed: {', '.join(allowed)})")
        assert code is not None
        resolved = dict(current.codes)
        adjudication = Adjudication(ref.protocol, ref.field, code, reason.strip(), by, now_iso(), resolved,
                                    codes_hash(resolved), source, basis, tuple(cites), take_from or "", kept=kept)
        check_texts({"the reason": adjudication.reason, "the source location": source, "the basis": basis})
        decided = replace(current, status=Status.ADJUDICATED, code=code, source=source, basis=basis,
                          cites=tuple(cites), adjudication=adjudication)
        pending = pending_correction(review, str(ref), history, live=decided)
        if pending is None:
            store.append_adjudication(adjudication)
            return Decision(adjudication, None, current.status)
        correction = correction_entry(history, pending, reason=reason, by=by, at=adjudication.at)
        write_both(paths, adjudication, correction)
        return Decision(adjudication, correction, current.status)


def joined_evidence(cells: Sequence[Cell]) -> tuple[str, str, tuple[str, ...]]:
    """The source, basis and citations of several reviewers' cells as one record: each distinct
    source location and basis once, in the order given (each basis as its reviewer wrote it), and
    every citation once."""
    sources = list(dict.fromkeys(cell.source.strip() for cell in cells if cell.source.strip()))
    bases = list(dict.fromkeys(cell.basis.strip() for cell in cells if cell.basis.strip()))
    cites = tuple(dict.fromkeys(key for cell in cells for key in cell.cites))
    return "; ".join(sources), " ".join(bases), cites

"""Adjudicating disagreements: a recorded decision, with a reason, per unresolved cell.

Adjudications live in ``protocols/<id>/consensus.yaml`` as an append-only list: a new
decision for a cell is a new entry, and the consensus rule (:mod:`consensus`) uses the
latest one while the reviewers' codes it resolved are unchanged. Any coded cell may be
decided (again), with a reason: a disagreement, a cell whose adjudication went stale, or
a settled cell the team wants to re-decide. A reviewer's own file is never touched.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import Rejected
from ..model import is_slug
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
               take_from: str | None = None) -> Decision:
    """Record a decision for a coded cell (unresolved, or re-deciding any other) and return it.

    Everything is read and decided under the workspace lock. When the cell is in the latest
    release and the decision changes what the current view shows, the correction is
    recorded with the same reason, in one all-or-nothing operation with the adjudication
    (see :mod:`journal`).

    Args:
        code: the decided code; may be left out when ``take_from`` is given.
        take_from: a reviewer whose cell (code, source, basis, citations) is taken whole.

    Raises :class:`Rejected` (nothing written) when nobody has coded the cell, the code is
    not allowed, the reason is empty, or ``take_from`` did not code the cell; and
    :class:`InvalidInput` when the workspace or its history has errors.
    """
    if not reason.strip():
        raise Rejected("an adjudication needs a reason")
    if not is_slug(by):
        raise Rejected(f"adjudicator name {by!r} is not a safe id")
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
        if take_from is not None:
            if take_from not in cells:
                raise Rejected(f"{take_from!r} has not coded {ref} (coded by: {', '.join(sorted(cells))})")
            taken = cells[take_from]
            if code is not None and code != taken.code:
                raise Rejected(f"{take_from} coded {ref} as {taken.code}, not {code}")
            code = taken.code
            source, basis, cites = taken.source, taken.basis, taken.cites
        else:
            if code is None:
                raise Rejected("give the decided code (--code) or a reviewer whose cell to take (--take)")
            agreeing = [cell for reviewer, cell in sorted(cells.items()) if cell.code == code]
            if agreeing:
                source, basis, cites = agreeing[0].source, agreeing[0].basis, agreeing[0].cites
            else:
                # A code no reviewer chose: the reason is the only basis there is.
                source, basis, cites = "", reason.strip(), ()
        allowed = rubric.field(ref.field).codes
        if code not in allowed:
            raise Rejected(f"code {code!r} is not allowed for field {ref.field!r} (allowed: {', '.join(allowed)})")
        assert code is not None
        resolved = dict(current.codes)
        adjudication = Adjudication(ref.protocol, ref.field, code, reason.strip(), by, now_iso(), resolved,
                                    codes_hash(resolved), source, basis, tuple(cites), take_from or "")
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

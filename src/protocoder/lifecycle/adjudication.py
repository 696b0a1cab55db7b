"""Adjudicating disagreements: a recorded decision, with a reason, per unresolved cell.

Adjudications live in ``protocols/<id>/consensus.yaml`` as an append-only list: a new
decision for a cell is a new entry, and the consensus rule (:mod:`consensus`) uses the
latest one while the reviewers' codes it resolved are unchanged. A reviewer's own file
is never touched.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import Rejected
from ..model import is_slug
from ..storage.store import Store, now_iso
from ..storage.workspace import Review
from .consensus import Adjudication, FinalCell, Status, codes_hash
from .view import final_cells


@dataclass(frozen=True)
class CellRef:
    """A cell named as ``protocol/field``."""

    protocol: str
    field: str

    @classmethod
    def parse(cls, text: str, review: Review) -> CellRef:
        """Parse and check ``protocol/field`` against the workspace."""
        protocol, sep, field_id = text.strip().partition("/")
        if not sep:
            raise Rejected(f"cell {text!r} must be written PROTOCOL/FIELD, e.g. webarena/open_work")
        if protocol not in {p.id for p in review.protocols}:
            raise Rejected(f"no protocol {protocol!r} in this workspace")
        rubric = review.require_valid()
        if field_id not in rubric.field_ids:
            raise Rejected(f"the rubric has no field {field_id!r} (fields: {', '.join(rubric.field_ids)})")
        return cls(protocol, field_id)

    def __str__(self) -> str:
        return f"{self.protocol}/{self.field}"


def cells_needing_adjudication(review: Review) -> list[FinalCell]:
    """Every unresolved cell (including those whose adjudication went stale), in table order."""
    return [cell for cell in final_cells(review) if cell.status is Status.UNRESOLVED]


def stale_adjudications(review: Review) -> list[FinalCell]:
    """Cells whose latest adjudication no longer matches the reviewers' codes."""
    return [cell for cell in final_cells(review) if cell.stale is not None]


def adjudicate(review: Review, ref: CellRef, *, reason: str, by: str, code: str | None = None,
               take_from: str | None = None) -> Adjudication:
    """Record a decision for an unresolved cell and return it.

    Args:
        code: the decided code; may be left out when ``take_from`` is given.
        take_from: a reviewer whose cell (code, source, basis, citations) is taken whole.

    Raises :class:`Rejected` (nothing written) when the cell is not unresolved, the code is
    not allowed, the reason is empty, or ``take_from`` did not code the cell.
    """
    rubric = review.require_valid()
    if not reason.strip():
        raise Rejected("an adjudication needs a reason")
    if not is_slug(by):
        raise Rejected(f"adjudicator name {by!r} is not a safe id")
    current = {c.key: c for c in final_cells(review)}[str(ref)]
    if current.status is not Status.UNRESOLVED:
        raise Rejected(f"{ref} is {current.status}, not unresolved: there is nothing to adjudicate")
    cells = {reviewer: cell for reviewer, cell in review.cells(ref.protocol, ref.field).items() if cell.is_coded}
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
    resolved = dict(current.codes)
    adjudication = Adjudication(ref.protocol, ref.field, code, reason.strip(), by, now_iso(), resolved,
                                codes_hash(resolved), source, basis, tuple(cites), take_from or "")
    Store(review.paths).append_adjudication(adjudication)
    return adjudication

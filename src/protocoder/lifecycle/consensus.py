"""The consensus rule: how reviewers' independent codes become one final code per cell.

This is the only place the rule is written down:

1. nobody has coded the cell               → ``not coded`` (it stays in every denominator);
2. a current adjudication exists           → ``adjudicated``: the adjudicated code;
3. a reviewer's coded cell lacks what the
   rubric requires for its code            → ``incomplete``: no code (half-done work is
                                             never folded into a final code);
4. exactly one reviewer coded it           → ``single-coded``: that reviewer's code;
5. every reviewer who coded it agrees      → ``agreed``: that code;
6. otherwise                               → ``unresolved``: no code. Never a majority vote.

An adjudication is *current* while the reviewers' codes it resolved are still the codes
on file (compared by hash). When a reviewer changes a code later, the adjudication no
longer counts: if the reviewers now disagree it is *stale* (the cell is unresolved again
until someone adjudicates it anew); otherwise it is *superseded* (the reviewers settled
the cell themselves) and stays in the record without asking anything of anyone.
Agreement statistics never read this module: they use the independent codes only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

# The adjudication record and its hash live with the model (storage reads and writes them);
# they stay importable from here, where the rule that uses them is.
from ..model import Adjudication, Cell, Rubric, canonical_hash, codes_hash

__all__ = ["Adjudication", "FinalCell", "Status", "codes_hash", "decide", "record_hash"]


class Status(StrEnum):
    """How a cell's final code came about."""

    SINGLE = "single-coded"
    AGREED = "agreed"
    ADJUDICATED = "adjudicated"
    INCOMPLETE = "incomplete"
    UNRESOLVED = "unresolved"
    NOT_CODED = "not coded"


@dataclass(frozen=True)
class FinalCell:
    """The final code of one (protocol, field) and the record that supports it."""

    protocol: str
    field: str
    status: Status
    code: str | None
    source: str = ""
    basis: str = ""
    cites: tuple[str, ...] = ()
    codes: Mapping[str, str] = field(default_factory=dict)
    adjudication: Adjudication | None = None
    stale: Adjudication | None = None
    """The latest adjudication, when it no longer counts and the reviewers disagree: decide again."""
    superseded: Adjudication | None = None
    """The latest adjudication, when it no longer counts but the cell needs no new decision."""
    missing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """For an incomplete cell: what each reviewer's cell lacks (``source``, ``basis``, ``cites``)."""

    @property
    def key(self) -> str:
        """``protocol/field``, the way commands name a cell."""
        return f"{self.protocol}/{self.field}"

    @property
    def record_hash(self) -> str:
        """Hash of the final code and the evidence behind it (see :func:`record_hash`)."""
        return record_hash(self.code, self.source, self.basis, self.cites)


def decide(protocol: str, field_id: str, cells: Mapping[str, Cell],
           adjudications: Sequence[Adjudication] = (), rubric: Rubric | None = None) -> FinalCell:
    """Apply the consensus rule to one cell.

    Args:
        cells: each reviewer's cell for this (protocol, field); drafts are ignored.
        adjudications: every adjudication recorded for this cell, oldest first.
        rubric: what each code requires; without it no cell counts as incomplete.
    """
    coded = {reviewer: cell for reviewer, cell in sorted(cells.items()) if cell.code is not None}
    codes = {reviewer: cell.code for reviewer, cell in coded.items() if cell.code is not None}
    latest = adjudications[-1] if adjudications else None
    if latest is not None and coded and latest.is_current(codes):
        return FinalCell(protocol, field_id, Status.ADJUDICATED, latest.code, latest.source,
                         latest.basis, latest.cites, codes, adjudication=latest)
    # Any adjudication left no longer counts: it asks for a new decision only where the
    # reviewers now disagree.
    if not coded:
        return FinalCell(protocol, field_id, Status.NOT_CODED, None, codes=codes, superseded=latest)
    missing = {reviewer: parts for reviewer, cell in coded.items()
               if rubric is not None and (parts := cell.missing(rubric))}
    if missing:
        return FinalCell(protocol, field_id, Status.INCOMPLETE, None, codes=codes, superseded=latest,
                         missing=missing)
    if len(set(codes.values())) > 1:
        return FinalCell(protocol, field_id, Status.UNRESOLVED, None, codes=codes, stale=latest)
    status = Status.SINGLE if len(coded) == 1 else Status.AGREED
    first = next(iter(coded.values()))
    return FinalCell(protocol, field_id, status, first.code, first.source, first.basis, first.cites,
                     codes, superseded=latest)


def record_hash(code: str | None, source: str, basis: str, cites: Sequence[str]) -> str:
    """A stable hash of a final cell's record (code and evidence; not who or when)."""
    return canonical_hash([code, source, basis, list(cites)])
